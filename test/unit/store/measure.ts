/**
 * Store measurements (not a test; run on demand):  npx tsx test/unit/store/measure.ts
 * pool-log appends/s at 1000 concurrent appends, commitBlock of 500-tx blocks, state-root cost per
 * changed key, read cost of a committed tx and a receipt.
 */
import { rmSync } from 'node:fs'
import { Packr } from 'msgpackr' // lmdb's own encoder (a dependency of lmdb), for record sizes
import type { Account, Hex } from '../../../src/domain.ts'
import { openStore } from '../../../src/store/index.ts'
import { encodeAdmitted } from '../../../src/wire/tx-codec.ts'
import { addr, changes, makeTx, nextBlock, tempDir, word } from './fixtures.ts'

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (x: number, digits = 1): string => x.toLocaleString('en-US', { maximumFractionDigits: digits })

const dir = tempDir('measure')
const store = await openStore(dir)
const ACCOUNTS = 10_000
await store.initGenesis(Array.from({ length: ACCOUNTS }, (_, i) => ({ address: addr(`acct${i}`), balance: 10n ** 24n })))

// 1. pool-log appends (group commits), 1000 concurrent
await store.poolLog.compact([])
const pending = []
const putRates: number[] = []
for (let round = 0; round < 12; round++) {
  const txs = Array.from({ length: 1000 }, (_, i) => makeTx(`p${round}:${i}`))
  pending.push(...txs)
  const t = performance.now()
  await Promise.all(txs.map((tx) => store.poolLog.append(encodeAdmitted(tx, true))))
  putRates.push(1000 / ((performance.now() - t) / 1000))
}
console.log(
  `pool-log append, 1000 concurrent: median ${fmt(median(putRates.slice(2)), 0)} puts/s (min ${fmt(Math.min(...putRates.slice(2)), 0)}, max ${fmt(Math.max(...putRates.slice(2)), 0)}) over 10 rounds`,
)
const sequential: number[] = []
for (let i = 0; i < 200; i++) {
  const t = performance.now()
  await store.poolLog.append(encodeAdmitted(makeTx(`seq${i}`), true))
  sequential.push(performance.now() - t)
}
console.log(
  `pool-log append, one at a time: median ${fmt(median(sequential) * 1000, 0)} µs per put (${fmt(1000 / median(sequential), 0)} puts/s)`,
)

// 2. commitBlock, 500-tx blocks: 500 senders + 500 recipients changed
let cursor = 0
const rootMs: number[] = []
const commitMs: number[] = []
const coldCommitMs: number[] = []
for (let b = 0; b < 12; b++) {
  const valid = pending.slice(cursor, cursor + 500)
  cursor += 500
  const accounts: [Hex, Account][] = []
  for (let i = 0; i < 1000; i++)
    accounts.push([addr(`acct${(b * 1000 + i) % ACCOUNTS}`), { balance: 10n ** 24n - BigInt(b + 1), nonce: BigInt(b + 1) }])
  const blockChanges = changes({ accounts })
  let t = performance.now()
  const block = nextBlock(store, { valid, changes: blockChanges }) // calls stateRootAfter
  rootMs.push(performance.now() - t)
  const cold = b % 2 === 1
  if (cold) store.stateRootAfter(changes({})) // forget the plan: commitBlock hashes again
  t = performance.now()
  await store.commitBlock(block)
  ;(cold ? coldCommitMs : commitMs).push(performance.now() - t)
}
console.log(
  `500-tx block (1000 changed accounts, 500 pending removed): stateRootAfter ${fmt(median(rootMs.slice(2)))} ms; ` +
    `commitBlock ${fmt(median(commitMs.slice(1)))} ms after stateRootAfter, ${fmt(median(coldCommitMs.slice(1)))} ms when it must hash again`,
)

// 3. state root cost per changed key
const perKey = (n: number, make: (i: number) => ReturnType<typeof changes>): number => {
  const samples: number[] = []
  for (let r = 0; r < 7; r++) {
    const c = make(r)
    const t = performance.now()
    store.stateRootAfter(c)
    samples.push(((performance.now() - t) * 1000) / n)
  }
  return median(samples)
}
const replaced = perKey(2000, (r) =>
  changes({
    accounts: Array.from({ length: 2000 }, (_, i) => [addr(`acct${i}`), { balance: BigInt(r + 7), nonce: 1n }] as [Hex, Account]),
  }),
)
const inserted = perKey(2000, (r) =>
  changes({ storage: [[addr('c'), Array.from({ length: 2000 }, (_, i) => [word(r * 10_000 + i), word(1)] as [Hex, Hex])]] }),
)
console.log(
  `state root: ${fmt(replaced)} µs per replaced account (old entry out + new in), ${fmt(inserted)} µs per new storage slot (one hash)`,
)

// 4. reads
const hashes = [] as Hex[]
for (let n = 1; n <= store.height(); n++) hashes.push(...store.getBlockTxHashes(n))
const readCost = (fn: (hash: Hex) => unknown): number => {
  const samples: number[] = []
  for (let r = 0; r < 7; r++) {
    const t = performance.now()
    for (let i = 0; i < 20_000; i++) fn(hashes[(i * 7919) % hashes.length])
    samples.push(((performance.now() - t) * 1000) / 20_000)
  }
  return median(samples)
}
const txUs = readCost((h) => store.getTx(h))
const receiptUs = readCost((h) => store.getReceipt(h))
const hasUs = readCost((h) => store.hasTx(h))
console.log(
  `reads over ${hashes.length} committed txs: getTx ${fmt(txUs, 2)} µs, getReceipt ${fmt(receiptUs, 2)} µs, hasTx ${fmt(hasUs, 2)} µs`,
)
const packr = new Packr({ useBigIntExtension: true } as ConstructorParameters<typeof Packr>[0])
console.log(
  `record sizes (msgpack): CommittedTx ${packr.pack(store.getTx(hashes[0])).length} B, Receipt ${packr.pack(store.getReceipt(hashes[0])).length} B`,
)
await store.close()
rmSync(dir, { recursive: true, force: true })
