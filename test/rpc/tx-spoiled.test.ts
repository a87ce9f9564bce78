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
import type { KeelNode } from '../../src/node.ts'
import { call, fails, receiptOf, SUBMIT, submit } from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

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

/** the other valid signature of the same content: (r, n − s), recovery bit flipped */
function flipS(signature: string): string {
  const sig = signature.slice(2)
  const s = BigInt(`0x${sig.slice(66, 130)}`)
  const v = Number.parseInt(sig.slice(130, 132), 16)
  return `0x${sig.slice(0, 66)}${(SECP256K1_N - s).toString(16).padStart(64, '0')}${(v ^ 1).toString(16).padStart(2, '0')}`
}

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
    const twin = { ...genuine, signature: flipS(genuine.signature as string) }
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

test.run()
