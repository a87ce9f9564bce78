/**
 * The consensus replica in a simulated network (sim.ts): real signatures and wire codec, fake
 * time. Each test states what must hold; the fuzz replays many seeds of random loss, delay and
 * crashes and checks that no two honest replicas ever commit different batches at one seq.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { batchDigest, type PrePrepare, type Signed } from '../../../src/consensus/bft/messages.ts'
import { assertNoFork, createSim, type Sim } from './sim.ts'

const everyone = (n: number) => Array.from({ length: n }, (_, i) => i + 1)
const executedEverywhere = (sim: Sim, ids: number[], hashes: string[]) =>
  ids.every((id) => hashes.every((hash) => sim.nodes.get(id)!.executed.has(hash as `0x${string}`)))
const height = (sim: Sim, id: number) => sim.nodes.get(id)!.blocks.length - 1

test('normal case, 4 and 7 replicas: every transaction executed once, the same blocks everywhere', () => {
  for (const n of [4, 7]) {
    const sim = createSim({ n, seed: n })
    sim.run(500)
    const hashes = sim.submit(300)
    sim.run(8000)
    assert.ok(executedEverywhere(sim, everyone(n), hashes), `n=${n}: all executed on all`)
    assertNoFork(sim, everyone(n))
    for (const id of everyone(n)) assert.is(sim.nodes.get(id)!.ran.flat().length, 300, `replica ${id} ran each transaction once`)
    assert.ok(height(sim, 1) >= 30, 'batches of at most 10')
  }
})

test('the primary crashes under load: a new view, progress resumes, no fork', () => {
  const sim = createSim({ n: 4, seed: 11 })
  sim.run(500)
  sim.submit(100)
  sim.run(300)
  sim.crash(1)
  const later = sim.submit(100)
  sim.run(20_000)
  assertNoFork(sim, [2, 3, 4])
  assert.ok(executedEverywhere(sim, [2, 3, 4], later), 'what was sent after the crash is executed')
  assert.ok(sim.nodes.get(2)!.replica.state().view >= 1)
  assert.ok(sim.nodes.get(2)!.events.some((e) => e.kind === 'view-change-finished'))
})

test('f+1 replicas down: no progress and no fork; one returns: progress', () => {
  const sim = createSim({ n: 4, seed: 12 })
  sim.run(500)
  const first = sim.submit(20)
  sim.run(3) // batches in flight when two replicas die
  sim.crash(3)
  sim.crash(4)
  const stuckAt = height(sim, 1)
  const hashes = [...first, ...sim.submit(50)]
  sim.run(15_000)
  assert.is(height(sim, 1), stuckAt, 'two of four cannot commit')
  sim.restart(4)
  sim.run(30_000)
  assertNoFork(sim, [1, 2, 4])
  assert.ok(executedEverywhere(sim, [1, 2, 4], hashes))
})

test('a restarted backup catches up (state transfer at a checkpoint) and never contradicts its votes', () => {
  const sim = createSim({ n: 4, seed: 13 })
  sim.run(500)
  sim.submit(100)
  sim.run(3000)
  sim.crash(4)
  const during = sim.submit(200)
  sim.run(5000)
  sim.restart(4)
  const after = sim.submit(100)
  sim.run(20_000)
  assertNoFork(sim, everyone(4))
  assert.ok(executedEverywhere(sim, everyone(4), [...during, ...after]))
  // no replica ever sent two different digests for one (view, seq)
  for (const node of sim.nodes.values()) {
    const votes = new Map<string, string>()
    for (const m of node.sent) {
      const b = m.body as { type: string; view?: number; seq?: number; digest?: string }
      if (b.type !== 'prepare' && b.type !== 'commit' && b.type !== 'pre-prepare') continue
      const key = `${b.view}/${b.seq}`
      const earlier = votes.get(key)
      assert.ok(earlier === undefined || earlier === b.digest, `replica ${node.id} contradicted itself at ${key}`)
      votes.set(key, b.digest as string)
    }
  }
})

test('a partitioned replica does not fork and catches up after the partition heals', () => {
  const sim = createSim({ n: 4, seed: 14 })
  sim.run(500)
  sim.isolate(3)
  const during = sim.submit(150)
  sim.run(10_000)
  sim.heal()
  const after = sim.submit(50)
  sim.run(30_000)
  assertNoFork(sim, everyone(4))
  assert.ok(executedEverywhere(sim, everyone(4), [...during, ...after]), 'all four hold everything once healed')
})

test('Byzantine primary sending conflicting batches to different backups: replaced, no fork', () => {
  const sim = createSim({ n: 4, seed: 15 })
  sim.run(500)
  const primary = sim.nodes.get(1)!
  primary.tamper = (to, message) => {
    if (message.body.type !== 'pre-prepare' || to !== 4) return message
    // node 4 gets another batch for the same seq, signed with the primary's own key
    const pp = message.body as PrePrepare
    const txHashes = pp.txHashes.slice(1)
    return sim.signAs(1, { ...pp, txHashes, digest: batchDigest(pp.seq, pp.timestamp, txHashes) })
  }
  const hashes = sim.submit(60)
  sim.run(30_000)
  assertNoFork(sim, [2, 3, 4])
  assert.ok(executedEverywhere(sim, [2, 3, 4], hashes))
})

test('forged sender ids, bad signatures and garbage are dropped', () => {
  const sim = createSim({ n: 4, seed: 16 })
  sim.run(500)
  const replica2 = sim.nodes.get(2)!.replica
  const before = replica2.state()
  const forged = { from: 1, sig: '00', body: { type: 'heartbeat', view: 0, seq: 0 } } as Signed
  replica2.receive(3, forged) // claims 1, came from 3
  replica2.receive(1, forged) // bad signature
  replica2.receive(1, {
    from: 1,
    sig: 'ab',
    body: { type: 'view-change', view: 5, stable: { seq: 0, blockHash: `0x${'0'.repeat(64)}`, proof: [] }, prepared: [] },
  } as Signed)
  assert.equal(replica2.state(), before)
  const hashes = sim.submit(30)
  sim.run(5000)
  assert.ok(executedEverywhere(sim, everyone(4), hashes))
})

test('a replica lying about its height in status replies does not hold a restarting one in a state transfer', () => {
  const sim = createSim({ n: 4, seed: 17 })
  sim.run(500)
  sim.nodes.get(4)!.tamper = (_to, message) =>
    message.body.type === 'status' ? sim.signAs(4, { ...message.body, height: 1_000_000 }) : message
  sim.submit(20)
  sim.run(3000)
  sim.crash(3)
  sim.run(100)
  // replica 1 out of reach while 3 restarts: the quorum − 1 status replies it waits for are 2's and the liar's
  sim.cutLink(1, 3)
  sim.restart(3)
  sim.run(1000)
  sim.heal()
  const hashes = sim.submit(20)
  sim.run(10_000)
  assertNoFork(sim, everyone(4))
  assert.ok(executedEverywhere(sim, everyone(4), hashes), 'replica 3 took part again')
})

test('a primary whose heartbeats claim a seq nobody reached does not hold the backups in a state transfer', () => {
  const sim = createSim({ n: 4, seed: 19 })
  sim.run(500)
  sim.nodes.get(1)!.tamper = (_to, message) =>
    message.body.type === 'heartbeat' ? sim.signAs(1, { ...message.body, seq: 1_000_000 }) : message
  sim.run(10_000) // idle: heartbeats only
  const hashes = sim.submit(30)
  sim.run(20_000)
  assertNoFork(sim, everyone(4))
  assert.ok(executedEverywhere(sim, everyone(4), hashes), 'the backups took part again')
})

test('the primary cut off with transactions of its own: the others move on; healed, it rejoins their view and nothing it took is lost', () => {
  const sim = createSim({ n: 4, seed: 18 })
  sim.run(500)
  sim.isolate(1)
  const alone = sim.submit(10, 1)
  const during = sim.submit(40, 2)
  sim.run(15_000)
  assert.ok(executedEverywhere(sim, [2, 3, 4], during), 'the others went on')
  sim.heal()
  const after = sim.submit(20)
  sim.run(30_000)
  assertNoFork(sim, everyone(4))
  assert.is(sim.nodes.get(1)!.replica.state().view, sim.nodes.get(2)!.replica.state().view, 'replica 1 is in the view of the others')
  assert.ok(executedEverywhere(sim, everyone(4), [...alone, ...during, ...after]), 'all four hold everything once healed')
})

test('the primary cut off with transactions of its own while the others go on under load: healed, it fetches their blocks past its own batches (state transfer at a checkpoint), and what only it held is still ordered', () => {
  const sim = createSim({ n: 4, seed: 21 })
  sim.run(500)
  sim.isolate(1)
  const alone = sim.submit(10, 1)
  sim.submit(40, 2)
  sim.run(15_000)
  sim.heal()
  // checkpoints keep coming while it is still in the old view: they bring it past the seqs of the
  // batches it proposed alone, which the others filled with their own
  for (let i = 0; i < 60; i++) {
    sim.submit(5, 2)
    sim.run(100)
  }
  sim.run(30_000)
  assertNoFork(sim, everyone(4))
  assert.ok(sim.nodes.get(1)!.fetched.size > 0, 'replica 1 caught up by state transfer')
  assert.ok(executedEverywhere(sim, everyone(4), alone), 'what only replica 1 held is executed on all four')
})

test('every replica killed at once with batches in flight (F3): restarted, the primary is bound by its votes for those seqs and takes nothing it cannot propose; what only it held is executed everywhere', () => {
  const sim = createSim({ n: 4, seed: 20 })
  sim.run(500)
  // sent to the primary, which proposes batches at once; all four die before its relays and
  // pre-prepares arrive: these transactions are in its pool (its log) only, its votes on disk
  const onlyAtPrimary = sim.submit(25, 1)
  sim.run(3)
  assert.ok(
    sim.nodes.get(1)!.sent.some((m) => m.body.type === 'pre-prepare'),
    'the primary proposed before the crash',
  )
  for (const id of everyone(4)) sim.crash(id)
  sim.run(100) // what was in flight is lost
  for (const id of everyone(4)) sim.restart(id)
  sim.run(30_000)
  assertNoFork(sim, everyone(4))
  assert.ok(executedEverywhere(sim, everyone(4), onlyAtPrimary), 'every transaction only the primary held is executed on all four')
})

test('fuzz: 150 seeds of loss, delay and crash/restart of at most f replicas: never a fork, and everything executed in the end', () => {
  for (let seed = 100; seed < 250; seed++) {
    const sim = createSim({ n: 4, seed, drop: 0.05, maxDelayMs: 40, batchSize: 5 })
    sim.run(300)
    sim.submit(20)
    const victim = 1 + (seed % 4)
    sim.run(500 + (seed % 7) * 200)
    sim.crash(victim)
    sim.submit(20)
    sim.run(3000)
    sim.restart(victim)
    sim.submit(10)
    sim.run(6000)
    assertNoFork(sim, everyone(4))
    // still losing 5% of messages: lagging replicas catch up (heartbeats, checkpoints, status)
    sim.run(20_000)
    assertNoFork(sim, everyone(4))
    assert.ok(executedEverywhere(sim, everyone(4), sim.allTxs), `seed ${seed}: every transaction executed on every replica`)
  }
})

test.run()
