/**
 * Hostile copies of a client's transaction (issue 17 items 1 and 2, ARCHITECTURE.md decision 4):
 * a copy with a garbage signature, or with a field changed, must not keep the genuine one out,
 * whichever arrives first; two valid copies never both commit; and a transaction carrying a field
 * its sign string does not cover is refused (-32602) rather than committed with unsigned content.
 *
 * Two nodes: one serves requests on a request thread (the signature is checked there), the other
 * on the chain thread (the pool checks it, as for transactions NVPs forward). Both batch for
 * 200 ms, so a copy and the genuine transaction sent together usually share a block.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { coverageRefusal, covers, SIGNABLE_FIELDS, type SignableField } from '../../src/crypto/sign-coverage.ts'
import {
  DEFAULT_NODE_TX_VERSION,
  type SignStringKind,
  signString2017,
  signStringFormatA,
  signStringFormatB,
  type TxFields,
} from '../../src/crypto/sign-string.ts'
import { signSecp256k1 } from '../../src/crypto/signature.ts'
import type { KeelNode } from '../../src/node.ts'
import { call, fails, receiptOf, SUBMIT, submit } from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { flippedS, type Wallet, wallet } from '../helpers/wallet.ts'

interface Served {
  name: string
  url: string
  dev: Wallet
}

let nodes: KeelNode[] = []
const served: Served[] = []
const to = wallet().address

test.before(async () => {
  nodes = await Promise.all([
    startTestNode({ chain: { batchTimeoutMs: 200 } }, { verifyWorkers: 1 }),
    startTestNode({ chain: { batchTimeoutMs: 200 }, jsonrpc: { threads: 0 } }, { verifyWorkers: 1 }),
  ])
  served.push(
    { name: 'request thread', url: nodes[0].url, dev: wallet(nodes[0].devAccount?.privateKey) },
    { name: 'chain thread', url: nodes[1].url, dev: wallet(nodes[1].devAccount?.privateKey) },
  )
})

test.after(async () => {
  await Promise.all(nodes.map((node) => node.stop()))
})

/** a well-formed secp256k1 signature (00‖r‖s‖v) that recovers nobody's key in particular */
const garbageSignature = (): string => `0x00${'5a'.repeat(32)}${'3c'.repeat(32)}00`

const outcome = async (url: string, hash: string): Promise<string> => {
  const reply = await receiptOf(url, hash)
  return reply.code === 0 ? 'valid' : reply.message
}

/** the spoiled copies of a genuine transfer: the copy and what it becomes */
const spoilers: { name: string; spoil(tx: Record<string, unknown>): Record<string, unknown> }[] = [
  { name: 'a garbage signature', spoil: (tx) => ({ ...tx, signature: garbageSignature() }) },
  { name: 'a signature of the wrong length', spoil: (tx) => ({ ...tx, signature: `0x00${'77'.repeat(20)}` }) },
  { name: 'the signature of another content', spoil: (tx) => ({ ...tx, signature: wallet().transfer(to, 1).signature }) },
]

for (const spoiler of spoilers) {
  test(`a copy with ${spoiler.name}, sent first, is SIGFAILED and the genuine transaction still commits`, async () => {
    for (const { name, url, dev } of served) {
      const genuine = dev.transfer(to, 3)
      // the copy pending while the genuine one arrives
      const copyHash = await submit(url, SUBMIT.transfer, spoiler.spoil(genuine))
      const hash = await submit(url, SUBMIT.transfer, genuine)
      assert.is(await outcome(url, copyHash), 'SIGFAILED', `${name}: the copy`)
      assert.is(await outcome(url, hash), 'valid', `${name}: the genuine transaction`)
      await fails(url, SUBMIT.transfer, [genuine], -32007, `Repeated transaction ${hash}`)

      // the copy committed (discarded) before the genuine one arrives
      const later = dev.transfer(to, 4)
      const laterCopy = await submit(url, SUBMIT.transfer, spoiler.spoil(later))
      assert.is(await outcome(url, laterCopy), 'SIGFAILED', `${name}: the committed copy`)
      const laterHash = await submit(url, SUBMIT.transfer, later)
      assert.is(await outcome(url, laterHash), 'valid', `${name}: the genuine transaction after its copy's block`)
    }
  })
}

test('A24: a signature that is not hex is refused at submission (-32602), and the genuine transaction still commits', async () => {
  for (const { name, url, dev } of served) {
    const genuine = dev.transfer(to, 2)
    await fails(url, SUBMIT.transfer, [{ ...genuine, signature: '0xnot-hex' }], -32602, /signature/)
    assert.is(await outcome(url, await submit(url, SUBMIT.transfer, genuine)), 'valid', name)
  }
})

test('a spoiled copy sent after the genuine transaction changes nothing', async () => {
  for (const { name, url, dev } of served) {
    const genuine = dev.transfer(to, 5)
    const hash = await submit(url, SUBMIT.transfer, genuine)
    const copy = await call<string>(url, SUBMIT.transfer, [{ ...genuine, signature: garbageSignature() }])
    // refused as a repeat while the genuine one holds its (from, sign hash), or admitted and discarded
    if (copy.code === 0) assert.is(await outcome(url, copy.result as string), 'SIGFAILED', `${name}: the late copy`)
    else assert.is(copy.code, -32007, `${name}: ${copy.message}`)
    assert.is(await outcome(url, hash), 'valid', `${name}: the genuine transaction`)
    const after = await call(url, SUBMIT.transfer, [{ ...genuine, signature: garbageSignature().replace('5a', '5b') }])
    assert.is(after.code, -32007, `${name}: a copy after the commit: ${after.message}`)
  }
})

test('a copy with `extra` changed cannot cancel a transaction whose sign string covers extra (format A)', async () => {
  for (const { name, url, dev } of served) {
    for (const order of ['copy first', 'genuine first'] as const) {
      const genuine = dev.transfer(to, 6, { extra: 'invoice 17' })
      const copy = { ...genuine, extra: 'invoice 18' }
      const first = order === 'copy first' ? copy : genuine
      const second = order === 'copy first' ? genuine : copy
      const firstReply = await call<string>(url, SUBMIT.transfer, [first])
      const secondReply = await call<string>(url, SUBMIT.transfer, [second])
      const genuineReply = order === 'copy first' ? secondReply : firstReply
      const copyReply = order === 'copy first' ? firstReply : secondReply
      assert.is(genuineReply.code, 0, `${name}, ${order}: the genuine one is admitted: ${genuineReply.message}`)
      assert.is(await outcome(url, genuineReply.result as string), 'valid', `${name}, ${order}: the genuine one commits`)
      if (copyReply.code === 0) assert.is(await outcome(url, copyReply.result as string), 'SIGFAILED', `${name}, ${order}: the copy`)
      else assert.is(copyReply.code, -32007, `${name}, ${order}: the copy: ${copyReply.message}`)
    }
  }
})

test('two valid copies (the flipped-s signature) sent together: exactly one is admitted and commits', async () => {
  for (const { name, url, dev } of served) {
    const genuine = dev.transfer(to, 7)
    const twin = { ...genuine, signature: flippedS(genuine.signature as string) }
    const replies = await Promise.all([call<string>(url, SUBMIT.transfer, [genuine]), call<string>(url, SUBMIT.transfer, [twin])])
    const admitted = replies.filter((reply) => reply.code === 0)
    assert.is(admitted.length, 1, `${name}: ${replies.map((reply) => `${reply.code} ${reply.message}`).join('; ')}`)
    const refused = replies.find((reply) => reply.code !== 0)
    assert.is(refused?.code, -32007, `${name}: ${refused?.message}`)
    assert.is(await outcome(url, admitted[0].result as string), 'valid', name)
    const again = await call(url, SUBMIT.transfer, [replies[0].code === 0 ? twin : genuine])
    assert.is(again.code, -32007, `${name}: the other copy after the commit: ${again.message}`)
  }
})

// ---- item 2: content the signature does not cover ----

/** A sign string a client may have signed, and how to build it. */
interface SignedAs {
  name: string
  kind: SignStringKind
  /** the `version` the client sends, if any */
  version?: string
  text(tx: TxFields): string
}

const signedAs: SignedAs[] = [
  { name: '2017', kind: { format: '2017' }, text: (tx) => signString2017(tx) },
  { name: 'format A', kind: { format: 'A' }, text: (tx) => signStringFormatA(tx) },
  ...(['2.0', '2.1', '2.2', '3.6'] as const).map(
    (version): SignedAs => ({
      name: `format B ${version}`,
      kind: { format: 'B', version, sections: 'implied' },
      version,
      text: (tx) => signStringFormatB(tx, { version, sections: 'implied' }),
    }),
  ),
  {
    name: 'format B 4.1 (the JS SDK: every section)',
    kind: { format: 'B', version: '4.1', sections: 'all' },
    version: '4.1',
    text: (tx) => signStringFormatB(tx, { version: '4.1', sections: 'all' }),
  },
  {
    name: 'format B of the node version, no version sent, before 3.6',
    kind: { format: 'B', version: DEFAULT_NODE_TX_VERSION, sections: 'before3.6' },
    text: (tx) => signStringFormatB(tx, { version: DEFAULT_NODE_TX_VERSION, sections: 'before3.6' }),
  },
]

const base64Address = (): string => Buffer.from(wallet().address.slice(2), 'hex').toString('base64')

/** Every field of protocol.md §1 with a value a client might carry (a contract call, so `value` is the amount beside a payload). */
const carried: Record<SignableField, unknown> = {
  value: 5,
  opcode: 1,
  extra: '{"note":"added after signing"}',
  type: 'JVM',
  version: '9.9',
  extraIdInt64: [42],
  extraIdString: ['lot-7'],
  cname: 'Ledger',
  gasPrice: 3,
  gasLimit: 21_000,
  expirationTimestamp: 0n,
  participant: { initiator: base64Address(), withholding: [base64Address()] },
}
/** fields every sign string covers: changed after signing, the signature fails (SIGFAILED) */
const alwaysCovered = ['from', 'to', 'payload', 'timestamp', 'nonce'] as const

test('item 2: every sign string × every field of protocol.md §1: uncovered content is refused -32602 naming the field and a sign string that covers it', async () => {
  const contract = wallet().address
  const admitted: { url: string; hash: string; what: string }[] = []
  let refusals = 0
  for (const { name: node, url, dev } of served) {
    for (const signed of signedAs) {
      for (const field of SIGNABLE_FIELDS) {
        const timestamp = BigInt(Date.now()) * 1_000_000n
        const tx: Record<string, unknown> = {
          from: dev.address,
          to: contract,
          payload: '0xbe1c766b',
          timestamp,
          nonce: BigInt(Math.floor(Math.random() * 2 ** 48)) + 1n,
          ...(signed.version === undefined ? {} : { version: signed.version }),
          [field]: field === 'expirationTimestamp' ? timestamp + 60_000_000_000n : carried[field],
        }
        if (field === 'version' && signed.version !== undefined) tx.version = signed.version
        const fields = { ...tx, opcode: tx.opcode } as unknown as TxFields
        tx.signature = `0x${signSecp256k1(signed.text(fields), dev.privateKey)}`
        const what = `${node}, signed with ${signed.name}, carrying ${field}`
        const method = field === 'opcode' ? SUBMIT.maintain : SUBMIT.invoke
        const reply = await call<string>(url, method, [tx])
        const expected = coverageRefusal(fields, signed.kind)
        if (covers(signed.kind, field, fields) || (field === 'version' && signed.version !== undefined)) {
          assert.is(reply.code, 0, `${what}: covered, so admitted: ${reply.message}`)
          admitted.push({ url, hash: reply.result as string, what })
        } else {
          assert.is(reply.code, -32602, `${what}: ${reply.message}`)
          assert.is(reply.message, expected, what)
          assert.match(
            reply.message,
            new RegExp(
              `^${field} is not covered by the .*sign string.* this signature verifies under; sign with the \\S+ sign string.*, which covers ${field}$`,
            ),
          )
          refusals++
        }
      }
    }
  }
  // the 2017 string alone leaves out 12 fields; every format leaves out something but the JS SDK's
  assert.ok(refusals >= 2 * 30, `refusals: ${refusals}`)
  for (const { url, hash, what } of admitted) assert.is.not(await outcome(url, hash), 'SIGFAILED', `${what}: its signature verifies`)
})

test('item 2: a field every sign string covers, changed after signing, fails the signature (SIGFAILED), whatever the sign string', async () => {
  const pending: { url: string; hash: string; what: string }[] = []
  const { url, dev } = served[0]
  for (const signed of signedAs) {
    for (const field of alwaysCovered) {
      const timestamp = BigInt(Date.now()) * 1_000_000n
      const tx: Record<string, unknown> = {
        from: dev.address,
        to: wallet().address,
        payload: '0xbe1c766b',
        timestamp,
        nonce: BigInt(Math.floor(Math.random() * 2 ** 48)) + 1n,
        ...(signed.version === undefined ? {} : { version: signed.version }),
      }
      tx.signature = `0x${signSecp256k1(signed.text(tx as unknown as TxFields), dev.privateKey)}`
      const changed: Record<string, unknown> = {
        from: wallet().address,
        to: wallet().address,
        payload: '0xbe1c766c',
        timestamp: timestamp - 1n,
        nonce: (tx.nonce as bigint) + 1n,
      }
      const hash = await submit(url, SUBMIT.invoke, { ...tx, [field]: changed[field] })
      pending.push({ url, hash, what: `${signed.name}, ${field} changed` })
    }
  }
  for (const { url, hash, what } of pending) assert.is(await outcome(url, hash), 'SIGFAILED', what)
})

test('item 2: the issue case: a 2017-signed transfer with `extra` added after signing is refused, not committed', async () => {
  for (const { name, url, dev } of served) {
    const genuine = dev.transfer(to, 2)
    await fails(
      url,
      SUBMIT.transfer,
      [{ ...genuine, extra: 'added by a relay' }],
      -32602,
      'extra is not covered by the 2017 sign string this signature verifies under; sign with the 4.1 sign string (or format A), which covers extra',
    )
    // the genuine one is untouched by the refused copy
    assert.is(await outcome(url, await submit(url, SUBMIT.transfer, genuine)), 'valid', name)
  }
})

test('A25–A27: uniqueness is by hash and signed content, not by nonce: the same (from, nonce) with other content, and the same content with a new timestamp, both commit', async () => {
  for (const { name, url, dev } of served) {
    const first = dev.transfer(to, 8)
    const sameNonce = dev.transfer(to, 9, { nonce: BigInt(first.nonce as bigint) })
    const newTime = dev.transfer(to, 8, { timestamp: BigInt(first.timestamp as bigint) + 1n, nonce: BigInt(first.nonce as bigint) })
    const hashes = [
      await submit(url, SUBMIT.transfer, first),
      await submit(url, SUBMIT.transfer, sameNonce),
      await submit(url, SUBMIT.transfer, newTime),
    ]
    for (const hash of hashes) assert.is(await outcome(url, hash), 'valid', `${name}: ${hash}`)
    await fails(url, SUBMIT.transfer, [sameNonce], -32007, `Repeated transaction ${hashes[1]}`)
  }
})

test.run()
