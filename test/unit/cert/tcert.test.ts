/** Reading the public key of a cert_getTCert request, issuing, and the header checks, without a node. */
import { generateKeyPairSync, sign } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadOrCreateNodeCa } from '../../../src/cert/ca.ts'
import { issueTcert, parseTcertPublicKey, UNUSABLE_KEY } from '../../../src/cert/tcert.ts'
import { x509 } from '../../../src/cert/x509.ts'
import { InvalidParams, TcertFailed } from '../../../src/errors.ts'
import {
  checkTimestamp,
  createTcertCheck,
  hexHeaderBytes,
  MAX_CLOCK_SKEW_MS,
  type SignedRequest,
  signedBytes,
  verifyHeaderSignature,
} from '../../../src/rpc/tcert-check.ts'

const hex = (text: string): string => Buffer.from(text, 'latin1').toString('hex')
const spkiPem = (curve: string): string =>
  generateKeyPairSync('ec', { namedCurve: curve }).publicKey.export({ type: 'spki', format: 'pem' }) as string

/** The error parseTcertPublicKey throws for `pubkeyHex`, as code and message. */
function refusal(pubkeyHex: string): { code: number; message: string } {
  try {
    parseTcertPublicKey(pubkeyHex)
  } catch (error) {
    assert.ok(error instanceof InvalidParams || error instanceof TcertFailed, String(error))
    return { code: (error as TcertFailed).code, message: (error as TcertFailed).message }
  }
  return assert.unreachable('expected a refusal') as never
}

/** The message of a -32099 refusal, after checking the code and the common start. */
function unusable(pubkeyHex: string): string {
  const { code, message } = refusal(pubkeyHex)
  assert.is(code, -32099, message)
  assert.ok(message.startsWith(`${UNUSABLE_KEY} (`) && message.endsWith(')'), message)
  return message
}

test('parseTcertPublicKey: P-256, P-384, P-521 SPKI in PEM; label ignored; CRLF and upper-case hex accepted', () => {
  assert.is(parseTcertPublicKey(hex(spkiPem('prime256v1'))).curve, 'P-256')
  assert.is(parseTcertPublicKey(hex(spkiPem('secp384r1'))).curve, 'P-384')
  assert.is(parseTcertPublicKey(hex(spkiPem('secp521r1'))).curve, 'P-521')
  const pem = spkiPem('prime256v1')
  const { spki } = parseTcertPublicKey(hex(pem.replaceAll('PUBLIC KEY', 'ECDSA PUBLIC KEY').replaceAll('\n', '\r\n')).toUpperCase())
  assert.ok(spki.equals(parseTcertPublicKey(hex(pem)).spki))
})

test('parseTcertPublicKey: odd hex digits → -32602; hex that is no usable key → -32099 saying what is wrong', () => {
  const odd = refusal('abc')
  assert.is(odd.code, -32602)
  assert.match(odd.message, /^invalid argument 0 \(request\) at \/pubkey: odd number of hex digits \(3\); send whole bytes$/)
  assert.is(UNUSABLE_KEY, 'generated tcert failed: the pubkey is not a PEM SubjectPublicKeyInfo of an ECDSA P-256/P-384/P-521 key')
  assert.match(unusable(hex('hello')), /\(the hex does not decode to a PEM block; send the hex of the whole PEM text/)
  assert.match(unusable('00'.repeat(40)), /does not decode to a PEM block/, 'zero bytes')
  assert.match(unusable(hex('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END OTHER-----\n')), /does not decode to a PEM block/)
  assert.match(
    unusable(hex('-----BEGIN PUBLIC KEY-----\n%%%%\n-----END PUBLIC KEY-----\n')),
    /the body of the PEM block "PUBLIC KEY" is not base64/,
  )
  const point = Buffer.alloc(65, 4).toString('base64')
  assert.match(
    unusable(hex(`-----BEGIN PUBLIC KEY-----\n${point}\n-----END PUBLIC KEY-----\n`)),
    /holds no SubjectPublicKeyInfo, e\.g\. a bare EC point; export the public key as SPKI/,
  )
  assert.match(
    unusable(hex(spkiPem('secp256k1'))),
    /unsupported key type ec on curve secp256k1; use an ECDSA key on P-256, P-384 or P-521\)$/,
  )
  const x25519 = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }) as string
  assert.match(unusable(hex(x25519)), /unsupported key type x25519/)
})

test('hexHeaderBytes: optional 0x, any case; anything else is no value', () => {
  assert.equal([...(hexHeaderBytes('0xAbCd') ?? [])], [0xab, 0xcd])
  assert.equal([...(hexHeaderBytes(' abcd ') ?? [])], [0xab, 0xcd])
  for (const bad of ['', '0x', 'abc', 'zz', '0x0x00']) assert.is(hexHeaderBytes(bad), undefined, bad)
})

test('issueTcert + the check, with a node CA in a scratch directory', async () => {
  const ca = await loadOrCreateNodeCa(mkdtempSync(join(tmpdir(), 'keel-ca-')), { hostname: 'unit' })
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const now = new Date('2030-01-01T00:00:00.500Z')
  const issued = await issueTcert(ca, publicKey.export({ type: 'spki', format: 'der' }), now)
  assert.is(issued.notBefore.toISOString(), '2029-12-31T23:00:00.000Z')
  assert.is(issued.notAfter.toISOString(), '2130-01-01T00:00:00.000Z')
  const certificate = new x509.X509Certificate(issued.pem)
  assert.is(certificate.serialNumber, issued.serial)
  assert.is(certificate.notAfter.toISOString(), issued.notAfter.toISOString(), 'GeneralizedTime after 2049')

  const body = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion"}')
  const signature = sign('sha256', body, { key: privateKey, dsaEncoding: 'der' })
  assert.ok(verifyHeaderSignature(certificate, body, signature))
  assert.not.ok(verifyHeaderSignature(certificate, Buffer.from('other'), signature))
  assert.not.ok(verifyHeaderSignature(certificate, body, Buffer.from('not der')))

  const clock = new Date('2031-06-01T00:00:00Z')
  const recorded = new Set<string>([hex(issued.pem)])
  const check = createTcertCheck({
    ca,
    isIssued: (pemBytes) => recorded.has(Buffer.from(pemBytes).toString('hex')),
    enrollmentCas: [],
    isGetTcert: (method) => method === 'cert_getTCert',
    now: () => clock,
  })
  const headersFor = (timestampMs: number, content: Uint8Array | string) => {
    const timestamp = String(timestampMs)
    return {
      tcert: `0x${hex(issued.pem)}`,
      timestamp,
      signature: sign('sha256', signedBytes(timestamp, content), { key: privateKey, dsaEncoding: 'der' }).toString('hex'),
    }
  }
  const parsed = { jsonrpc: '2.0', id: 1, method: 'tx_getTransactionsVersion' }
  const request = { body, parsed }
  const message = async (headers: Record<string, string>, on: SignedRequest = request): Promise<string> =>
    (await check.check(headers, on))?.message ?? 'accepted'
  const headers = headersFor(clock.getTime(), body)
  assert.is(await check.check(headers, request), undefined)
  assert.is(await message(headersFor(clock.getTime() - MAX_CLOCK_SKEW_MS, body)), 'accepted', '5 minutes old')
  assert.is(await message(headersFor(clock.getTime() + MAX_CLOCK_SKEW_MS, body)), 'accepted', '5 minutes ahead')
  assert.match(await message(headersFor(clock.getTime() - MAX_CLOCK_SKEW_MS - 1, body)), /is 300 s behind the node's clock/)
  assert.match(await message(headersFor(clock.getTime() + MAX_CLOCK_SKEW_MS + 1, body)), /is 300 s ahead of the node's clock/)
  assert.match(await message(headersFor(clock.getTime(), Buffer.from('{}'))), /header `signature` does not verify/, 'another body')
  assert.match(await message({ ...headers, timestamp: String(clock.getTime() + 1) }), /does not verify/, 'another timestamp')
  const { timestamp: _, ...untimed } = headers
  assert.match(await message(untimed), /missing HTTP header `timestamp`/)
  assert.match(await message({ ...headers, msg: '00' }), /header `msg` is not accepted/)
  const { signature: __, ...unsigned } = headers
  assert.match(await message(unsigned), /missing HTTP header `signature`; sign `<timestamp>\\n` followed by the request body/)

  const upgrade = { upgradePath: '/' }
  assert.is(await message(headersFor(clock.getTime(), '/'), upgrade), 'accepted', 'upgrade signed over its path')
  assert.match(await message(headersFor(clock.getTime(), ''), upgrade), /followed by the upgrade request's path \("\/"\)/, 'upgrade, empty')
  assert.match(await message({}, upgrade), /missing HTTP header `tcert`/, 'an upgrade is never a cert_getTCert call')

  assert.match(await message({}), /missing HTTP header `tcert`/)
  const only = (elements: unknown): Promise<unknown> => check.check({}, { body, parsed: elements })
  assert.is(await only({ ...parsed, method: 'cert_getTCert' }), undefined, 'cert_getTCert exempt')
  assert.is(await only([{ method: 'cert_getTCert' }, { method: 'cert_getTCert' }]), undefined, 'batch of them')
  assert.ok(await only([{ method: 'cert_getTCert' }, parsed]), 'mixed batch checked')
  assert.ok(await only([]), 'an empty batch is no cert_getTCert call')
  recorded.clear()
  assert.match(await message(headers), /not one this node issued/)

  const late = createTcertCheck({
    ca,
    isIssued: () => true,
    enrollmentCas: [],
    isGetTcert: () => false,
    now: () => new Date('2131-01-01T00:00:00Z'),
  })
  const lateHeaders = headersFor(new Date('2131-01-01T00:00:00Z').getTime(), body)
  assert.match(
    (await late.check(lateHeaders, request))?.message ?? '',
    /valid from 2029-12-31T23:00:00.000Z to 2130-01-01T00:00:00.000Z, not now/,
  )
  assert.is((await late.check(lateHeaders, request))?.code, -32098)
})

test('checkTimestamp: decimal milliseconds within 5 minutes either way; each refusal says what is wrong', () => {
  const now = new Date('2030-01-01T00:00:00.000Z')
  const t = now.getTime()
  const refusal = (value: string | undefined): string => {
    const outcome = checkTimestamp(value, now)
    return 'refusal' in outcome ? outcome.refusal : (assert.unreachable(`accepted ${value}`) as never)
  }
  assert.equal(checkTimestamp(String(t), now), { ms: t })
  assert.equal(checkTimestamp(String(t - 300_000), now), { ms: t - 300_000 })
  assert.equal(checkTimestamp(String(t + 300_000), now), { ms: t + 300_000 })
  assert.equal(checkTimestamp(`00${t}`, now), { ms: t }, 'leading zeros: still the same time; the signature covers the header as sent')
  assert.match(
    refusal(undefined),
    /^missing HTTP header `timestamp`; send the time of signing as decimal milliseconds since the Unix epoch/,
  )
  assert.match(refusal(' '), /^missing HTTP header `timestamp`/)
  for (const bad of [`${t}.5`, `-${t}`, `+${t}`, `0x${t.toString(16)}`, '1e12', String(t * 1_000_000), now.toISOString()])
    assert.match(refusal(bad), /^header `timestamp` is not decimal milliseconds since the Unix epoch \(got "/, bad)
  assert.is(
    refusal(String(t - 360_000)),
    "header `timestamp` (2029-12-31T23:54:00.000Z) is 360 s behind the node's clock (2030-01-01T00:00:00.000Z); a signature is accepted for 5 minutes either side of its timestamp, so sign the request again with the current time (and check the client's clock)",
  )
  assert.match(refusal(String(t + 300_001)), /is 300 s ahead of the node's clock/)
})

test('signedBytes: UTF-8 of `<timestamp>\\n`, then the content', () => {
  assert.equal([...signedBytes('12', Buffer.from([0, 255]))], [0x31, 0x32, 0x0a, 0, 255])
  assert.is(signedBytes('12', '/é').toString('utf8'), '12\n/é')
})

test.run()
