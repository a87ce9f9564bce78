/**
 * Child process of durability.test.ts: putPending in a loop (64 concurrent puts at a time) and
 * print each hash on stdout once its putPending resolved, until killed.
 *   node --import tsx pending-writer.ts <store dir>
 */
import { openStore } from '../../../src/store/index.ts'
import { hexOf, makeTx } from './fixtures.ts'

const store = await openStore(process.argv[2])
process.stdout.write('ready\n')
for (let round = 0; ; round++) {
  await Promise.all(
    Array.from({ length: 64 }, async (_, i) => {
      const label = `${process.pid}:${round}:${i}`
      const tx = makeTx(label, { signHash: hexOf(`sign:${label}`) })
      await store.putPending(tx)
      process.stdout.write(`${tx.hash}\n`)
    }),
  )
}
