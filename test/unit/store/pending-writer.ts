/**
 * Child process of durability.test.ts: appends to the pool log in a loop (64 concurrent appends at
 * a time) and prints each hash on stdout once its append resolved, until killed.
 *   node --import tsx pending-writer.ts <store dir>
 */
import { openStore } from '../../../src/store/index.ts'
import { encodeAdmitted } from '../../../src/wire/tx-codec.ts'
import { hexOf, makeTx } from './fixtures.ts'

const store = await openStore(process.argv[2])
await store.poolLog.compact([])
process.stdout.write('ready\n')
for (let round = 0; ; round++) {
  await Promise.all(
    Array.from({ length: 64 }, async (_, i) => {
      const label = `${process.pid}:${round}:${i}`
      const tx = makeTx(label, { signHash: hexOf(`sign:${label}`) })
      await store.poolLog.append(encodeAdmitted(tx, true))
      process.stdout.write(`${tx.hash}\n`)
    }),
  )
}
