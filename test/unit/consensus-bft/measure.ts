/**
 * Latency and view-change figures of the simulated network under message loss (issue 6: lost
 * consensus messages resent). Shared by resend.test.ts, which asserts on them; run this file on its
 * own to print them:
 *
 *   node --import tsx test/unit/consensus-bft/measure.ts [firstSeed] [seeds]
 */
import type { Hex } from '../../../src/consensus/bft/messages.ts'
import { TEST_TIMERS } from '../../../src/consensus/bft/replica.ts'
import { createSim, type Sim } from './sim.ts'

export interface RunFigures {
  /** per slot and replica: its execution there (ordered, or fetched by state transfer) minus its first pre-prepare (ms) */
  slotLatencies: number[]
  /** per lone transaction: executed on the replica it was sent to minus its submission (ms) */
  txLatencies: number[]
  /** highest view any replica reached */
  maxView: number
  /** view changes started, summed over replicas */
  viewChangesStarted: number
  /** blocks replicas fetched by state transfer rather than ordered themselves */
  transferred: number
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

export function summary(values: number[]): { n: number; p50: number; p90: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b)
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? 0,
  }
}

const collect = (sim: Sim, n: number, txLatencies: number[]): RunFigures => {
  const slotLatencies: number[] = []
  let maxView = 0
  let viewChangesStarted = 0
  let transferred = 0
  for (let id = 1; id <= n; id++) {
    const node = sim.nodes.get(id)!
    maxView = Math.max(maxView, node.replica.state().view)
    viewChangesStarted += node.events.filter((e) => e.kind === 'view-change-started').length
    for (let seq = 1; seq < node.executedAt.length; seq++) {
      const proposed = sim.proposedAt.get(seq)
      if (node.fetched.has(seq)) transferred++
      if (proposed !== undefined) slotLatencies.push(node.executedAt[seq] - proposed)
    }
  }
  return { slotLatencies, txLatencies, maxView, viewChangesStarted, transferred }
}

/** 4 replicas, `drop` loss, steady load of `perQuarterSecond` transactions every 250 ms for `ms` */
export function loadRun(seed: number, drop = 0.05, ms = 15_000, perQuarterSecond = 3): RunFigures {
  const n = 4
  const sim = createSim({ n, seed, drop, maxDelayMs: 40, batchSize: 5 })
  sim.run(500)
  for (let t = 0; t < ms; t += 250) {
    sim.submit(perQuarterSecond)
    sim.run(250)
  }
  sim.run(10_000)
  return collect(sim, n, [])
}

/** 4 replicas, `drop` loss, one transaction a second, each sent to the next replica in turn, the first at `firstAt` ms */
export function loneRun(seed: number, drop = 0.05, count = 20, firstAt = 500): RunFigures {
  const n = 4
  const sim = createSim({ n, seed, drop, maxDelayMs: 40, batchSize: 5 })
  sim.run(firstAt)
  const sent: { hash: Hex; at: number; entry: number }[] = []
  for (let i = 0; i < count; i++) {
    const entry = 1 + (i % n)
    const [hash] = sim.submit(1, entry)
    sent.push({ hash, at: sim.now, entry })
    sim.run(1000)
  }
  sim.run(10_000)
  const txLatencies: number[] = []
  for (const { hash, at, entry } of sent) {
    const node = sim.nodes.get(entry)!
    const seq = node.ran.findIndex((ran) => ran.includes(hash))
    txLatencies.push(seq < 0 ? Number.POSITIVE_INFINITY : node.executedAt[seq] - at)
  }
  return collect(sim, n, txLatencies)
}

export function aggregate(runs: RunFigures[]) {
  return {
    runs: runs.length,
    runsWithViewChange: runs.filter((r) => r.maxView > 0).length,
    viewChangesStartedPerRun: runs.reduce((a, r) => a + r.viewChangesStarted, 0) / runs.length,
    transferredPerRun: runs.reduce((a, r) => a + r.transferred, 0) / runs.length,
    slot: summary(runs.flatMap((r) => r.slotLatencies)),
    tx: summary(runs.flatMap((r) => r.txLatencies)),
  }
}

if (process.argv[1]?.endsWith('measure.ts')) {
  // NO_RESEND=1: as if nothing were sent again (the figures before issue 6, lone transactions proposed at once)
  if (process.env.NO_RESEND === '1') TEST_TIMERS.retransmitMs = 1e9
  const first = Number(process.argv[2] ?? 100)
  const seeds = Number(process.argv[3] ?? 20)
  const started = performance.now()
  const load: RunFigures[] = []
  const lone: RunFigures[] = []
  const startLone: RunFigures[] = []
  for (let seed = first; seed < first + seeds; seed++) {
    load.push(loadRun(seed))
    lone.push(loneRun(seed))
    // the first transaction while the replicas still recover at start, no loss
    startLone.push(loneRun(seed, 0, 3, 5 + (seed % 10) * 5))
  }
  console.log('5% loss, steady load:', JSON.stringify(aggregate(load)))
  console.log('5% loss, lone transactions:', JSON.stringify(aggregate(lone)))
  console.log('no loss, first transaction at start:', JSON.stringify(aggregate(startLone)))
  console.log(`${Math.round(performance.now() - started)} ms`)
}
