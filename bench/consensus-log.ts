/**
 * `npx tsx bench/consensus-log.ts`: how long a VP waits before it may send a vote (its consensus
 * records written and synced, consensus.md §10.2) while the ledger is busy with blocks and pooled
 * transactions, as on a VP under load. Prints p50/p99 of the wait, for the log in the ledger's own
 * environment (keyspace 23, the older layout) and in an environment of its own (the current one).
 */
import { join } from 'node:path'
import { open } from 'lmdb'
import { scratchDir } from './scratch.ts'

const ROUNDS = 200
const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

async function measure(separate: boolean): Promise<string> {
  const dir = scratchDir('keel-consensus-log-')
  const ledger = open({ path: join(dir, 'ledger'), maxDbs: 4 })
  const blocks = ledger.openDB({ name: 'blocks', encoding: 'binary' })
  const logEnv = separate ? open({ path: join(dir, 'consensus'), encoding: 'binary' }) : ledger
  const log = separate ? logEnv : ledger.openDB({ name: 'consensus', encoding: 'binary' })
  // the ledger's load: a 500-transaction block's worth of records every 20 ms, pooled transactions in between
  let busy = true
  let block = 0
  const load = (async () => {
    while (busy) {
      const at = block++
      ledger.transaction(() => {
        for (let i = 0; i < 2000; i++) blocks.putSync(`b${at}/${i}`, Buffer.alloc(200, i))
      })
      for (let i = 0; i < 50; i++) blocks.put(`p${at}/${i}`, Buffer.alloc(300, i))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  const waits: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now()
    await logEnv.transaction(() => {
      log.putSync(`vote/${round}`, Buffer.alloc(300, round))
    })
    await logEnv.flushed
    waits.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  busy = false
  await load
  if (separate) await logEnv.close()
  await ledger.close()
  waits.sort((a, b) => a - b)
  return `${separate ? 'own environment   ' : 'ledger keyspace 23'}: wait before a vote may leave p50 ${quantile(waits, 0.5).toFixed(1)} ms, p99 ${quantile(waits, 0.99).toFixed(1)} ms (${ROUNDS} votes, ${block} blocks written meanwhile)`
}

console.log(await measure(false))
console.log(await measure(true))
