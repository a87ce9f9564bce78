/**
 * The operator check (src/rpc/operator-auth.ts): what the transport reads from the headers and the
 * body, and what the guard lets through. The same check on a node and a network: test/rpc/node.test.ts,
 * test/rpc/archive.test.ts, test/network/membership.test.ts.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { accountFromPrivateKey, generateAccount } from '../../../sdk/src/account.ts'
import { operatorHeaders, operatorSignedText } from '../../../sdk/src/operator.ts'
import type { CallContext, OperatorProof } from '../../../src/rpc/context.ts'
import { createOperatorGuard, readOperatorProof, signerOf } from '../../../src/rpc/operator-auth.ts'

const admin = generateAccount()
const smAdmin = generateAccount('sm2')
const stranger = generateAccount()
const admins = new Set([admin.address, smAdmin.address])
const NOW = Date.UTC(2026, 10, 28, 7, 0, 0)
const body = '{"jsonrpc":"2.0","namespace":"global","id":1,"method":"node_deleteVP","params":[{"nodehash":"ab"}]}'
const bytes = (text: string) => new TextEncoder().encode(text)

function proofOf(headers: Record<string, string>, text = body, now = NOW): OperatorProof | undefined {
  return readOperatorProof(headers, bytes(text), new Date(now))
}

function guarded(nowMs = () => NOW) {
  let calls = 0
  const handler = createOperatorGuard({ isAdmin: (address) => admins.has(address), nowMs }).guard(
    (_params: never, _context: CallContext) => ++calls,
  )
  const run = (proof: OperatorProof | undefined, params: unknown[] = [{ nodehash: 'ab' }], method = 'node_deleteVP'): number =>
    handler(params as never, { namespace: 'global', method, headers: {}, operator: proof }) as number
  return { run, calls: () => calls }
}

function refusal(run: () => unknown, pattern: RegExp): void {
  try {
    run()
  } catch (error) {
    assert.is((error as { code?: number }).code, -32008)
    assert.match((error as Error).message, pattern)
    return
  }
  assert.unreachable('the call was not refused')
}

test('a request without operator headers carries no proof, and the guard refuses it naming the headers', () => {
  assert.is(proofOf({}), undefined)
  const { run, calls } = guarded()
  refusal(() => run(undefined), /node_deleteVP is an operator method .*`operator-timestamp`.*`operator-signature`/)
  assert.is(calls(), 0)
})

test('an admin (secp256k1 and SM2) signing the exact body at the current time is let through once', () => {
  const { run, calls } = guarded()
  for (const account of [admin, smAdmin]) {
    const proof = proofOf(operatorHeaders(account, body, NOW - 1000))
    assert.equal(proof, { address: account.address, timestampMs: NOW - 1000, signature: (proof as { signature: string }).signature })
    run(proof)
  }
  assert.is(calls(), 2)
})

test('signerOf recovers the secp256k1 signer and checks an SM2 signature against its key', () => {
  const text = operatorSignedText('1', body)
  assert.is(signerOf(bytes(text), Buffer.from(admin.sign(text), 'hex')), admin.address)
  assert.is(signerOf(bytes(text), Buffer.from(smAdmin.sign(text), 'hex')), smAdmin.address)
  assert.is(signerOf(bytes(`${text} `), Buffer.from(smAdmin.sign(text), 'hex')), undefined)
})

test('a non-admin key, and an admin signature over an altered body (another signer is recovered), are refused', () => {
  const { run, calls } = guarded()
  refusal(
    () => run(proofOf(operatorHeaders(stranger, body, NOW))),
    new RegExp(`${stranger.address}, whose key signed this request, is not one`),
  )
  const altered = body.replace('"ab"', '"cd"')
  const proof = proofOf(operatorHeaders(admin, body, NOW), altered)
  assert.is.not((proof as { address: string }).address, admin.address)
  refusal(() => run(proof), /is not one \(account_getAccountsByRole/)
  // an SM2 signature over another body does not verify at all
  refusal(() => run(proofOf(operatorHeaders(smAdmin, body, NOW), altered)), /no valid secp256k1 or SM2 signature/)
  assert.is(calls(), 0)
})

test('a stale or future timestamp (past 5 minutes), a missing or malformed header are refused', () => {
  const { run, calls } = guarded()
  refusal(() => run(proofOf(operatorHeaders(admin, body, NOW - 5 * 60_000 - 1000))), /`operator-timestamp` .* is 301 s behind/)
  refusal(() => run(proofOf(operatorHeaders(admin, body, NOW + 6 * 60_000))), /`operator-timestamp` .* is 360 s ahead of/)
  const headers = operatorHeaders(admin, body, NOW)
  refusal(() => run(proofOf({ 'operator-signature': headers['operator-signature'] })), /missing HTTP header `operator-timestamp`/)
  refusal(() => run(proofOf({ 'operator-timestamp': headers['operator-timestamp'] })), /missing HTTP header `operator-signature`/)
  refusal(() => run(proofOf({ ...headers, 'operator-timestamp': '1.5e12' })), /not decimal milliseconds/)
  refusal(() => run(proofOf({ ...headers, 'operator-signature': 'zz' })), /not hex bytes/)
  // the timestamp is signed: another value in the header recovers another signer
  refusal(() => run(proofOf({ ...headers, 'operator-timestamp': String(NOW + 1) })), /is not one/)
  assert.is(calls(), 0)
})

test('replay: the same signed call is refused within the window, accepted again never; other calls of one signed batch pass', () => {
  let now = NOW
  const { run, calls } = guarded(() => now)
  const proof = proofOf(operatorHeaders(admin, body, NOW))
  run(proof)
  refusal(() => run(proof), /already accepted by this node/)
  now = NOW + 5 * 60_000
  refusal(() => run(proof), /already accepted by this node/)
  // one signature over a batch: each distinct call in it is accepted once
  run(proof, [{ nodehash: 'cd' }])
  run(proof, [1], 'archive_snapshot')
  refusal(() => run(proof, [1], 'archive_snapshot'), /already accepted/)
  assert.is(calls(), 3)
  // past the window the transport refuses the timestamp before the guard forgets the call
  assert.match((proofOf(operatorHeaders(admin, body, NOW), body, NOW + 5 * 60_000 + 1) as { refusal: string }).refusal, /behind/)
})

test('keel-client operatorHeaders: the account signs `<timestamp>\\n` followed by the body', () => {
  const account = accountFromPrivateKey(admin.privateKey)
  const headers = operatorHeaders(account, body, 1234)
  assert.is(headers['operator-timestamp'], '1234')
  assert.is(headers['operator-signature'], account.sign(`1234\n${body}`))
})

test.run()
