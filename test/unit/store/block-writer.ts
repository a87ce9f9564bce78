/**
 * Child process of durability.test.ts: commits blocks of 200 txs (each with 400 account changes)
 * in a loop and prints each committed height on stdout, until killed.
 *   node --import tsx block-writer.ts <store dir>
 */
import { openStore } from '../../../src/store/index.ts'
import { addr, changes, commitNext, makeTx } from './fixtures.ts'

const store = await openStore(process.argv[2])
for (;;) {
  const n = store.height() + 1
  const valid = Array.from({ length: 200 }, (_, i) => makeTx(`b${n}:${i}`))
  const accounts = Array.from({ length: 400 }, (_, i) => [addr(`acct${i}`), { balance: BigInt(n * 1000 + i), nonce: BigInt(n) }] as const)
  await commitNext(store, { valid, changes: changes({ accounts: accounts.map(([a, v]) => [a, v]) }) })
  process.stdout.write(`${n}\n`)
}
