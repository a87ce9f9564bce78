/**
 * Membership changes (issue 6, consensus.md §10.10) in the simulated network (sim.ts): real
 * signatures and codec, fake time. Votes travel inside batches; every replica (and a restarted
 * one, from its blocks) computes the same group for every seq.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { activationBoundary, createMembership } from '../../../src/consensus/bft/membership.ts'
import { batchDigest, type MemberVote, type PrePrepare, type Signed } from '../../../src/consensus/bft/messages.ts'
import { assertNoFork, createSim, type Sim } from './sim.ts'

const height = (sim: Sim, id: number) => sim.nodes.get(id)!.blocks.length - 1
const executedEverywhere = (sim: Sim, ids: number[], hashes: string[]) =>
  ids.every((id) => hashes.every((hash) => sim.nodes.get(id)!.executed.has(hash as `0x${string}`)))

/** keeps clients busy for `ms`: blocks keep coming, so the boundary L blocks later is reached */
const load = (sim: Sim, ms: number, perQuarterSecond = 15): string[] => {
  const sent: string[] = []
  for (let t = 0; t < ms; t += 250) {
    sent.push(...sim.submit(perQuarterSecond))
    sim.run(250)
  }
  return sent
}

/** the seqs at which each replica's group changed, and to what */
/** every one of the five replicas votes to remove `target` */
const allVoteToRemove = (sim: Sim, target: number) => {
  for (const id of [1, 2, 3, 4, 5]) sim.nodes.get(id)!.replica.voteToRemove(target)
}
const epochsOf = (sim: Sim, id: number) => JSON.stringify(sim.nodes.get(id)!.membership.epochs())

const vote = (from: number, target: number): Signed<MemberVote> => ({
  from,
  sig: '00',
  body: { type: 'member-vote', action: 'delete', target },
})

test('the membership log: all current members must vote; the change waits for the boundary L later; never below 4', () => {
  const five = createMembership([1, 2, 3, 4, 5])
  assert.equal(five.record(3, [vote(1, 5), vote(2, 5), vote(3, 5), vote(4, 5)]), [], 'four of five votes decide nothing')
  assert.equal(five.record(7, [vote(9, 5), vote(5, 7)]), [], 'a stranger votes, a vote about a non-member: ignored')
  const [outcome] = five.record(12, [vote(5, 5)])
  assert.equal(outcome, { kind: 'scheduled', action: 'delete', target: 5, decidedAt: 12, from: 61, members: [1, 2, 3, 4] })
  assert.is(activationBoundary(12), 60)
  assert.equal(five.at(60), [1, 2, 3, 4, 5], 'the old group orders up to the boundary')
  assert.equal(five.at(61), [1, 2, 3, 4])
  assert.ok(five.settled({ type: 'member-vote', action: 'delete', target: 5, from: 1 }), 'decided: nothing to resend')
  const again = createMembership([9], JSON.parse(JSON.stringify(five.snapshot())))
  assert.equal(again.epochs(), five.epochs(), 'a snapshot gives the same group back (blocks before it may be archived)')
  assert.is(again.height(), 12)
  assert.equal(again.record(12, [vote(1, 4)]), [], 'blocks up to the snapshot are not counted twice')
  const four = createMembership([1, 2, 3, 4])
  const refused = four.record(1, [vote(1, 2), vote(2, 2), vote(3, 2), vote(4, 2)])
  assert.is(refused[0].kind, 'refused')
  assert.equal(four.at(1000), [1, 2, 3, 4])
})

test("a NODE proposal decision needs no votes: recorded before the block's votes, scheduled at the boundary, its certificate kept; pending votes for it are moot", () => {
  const four = createMembership([1, 2, 3, 4])
  const add = (from: number): Signed<MemberVote> => ({
    from,
    sig: '00',
    body: { type: 'member-vote', action: 'add', target: 5, cert: 'b' },
  })
  assert.equal(four.record(2, [add(1), add(2)]), [], 'two of four add votes (another certificate) wait')
  const outcomes = four.record(5, [add(3), add(4)], [{ action: 'add', target: 5, cert: 'a' }])
  assert.equal(outcomes, [
    { kind: 'scheduled', action: 'add', target: 5, decidedAt: 5, from: 51, members: [1, 2, 3, 4, 5], byProposal: true },
  ])
  assert.is(four.certOf(5), 'a', "the proposal's certificate, not the votes'")
  assert.equal(four.snapshot().pending, [], 'the votes for the same change are dropped')
  assert.ok(four.known(5))
  const [removal, again] = four.record(
    7,
    [],
    [
      { action: 'delete', target: 1 },
      { action: 'delete', target: 1 },
    ],
  )
  assert.equal(removal, { kind: 'scheduled', action: 'delete', target: 1, decidedAt: 7, from: 51, members: [2, 3, 4, 5], byProposal: true })
  assert.equal(again, { kind: 'refused', action: 'delete', target: 1, decidedAt: 7, reason: 'it is no member', byProposal: true })
  const [tooFew] = four.record(8, [], [{ action: 'delete', target: 2 }])
  assert.equal(tooFew, {
    kind: 'refused',
    action: 'delete',
    target: 2,
    decidedAt: 8,
    reason: 'the group would drop below 4 VPs',
    byProposal: true,
  })
})

test('all five vote to remove the primary: every replica switches at the same seq, the next primary takes over, 4 go on (and tolerate f = 1 of them down)', () => {
  const sim = createSim({ n: 5, seed: 51 })
  sim.run(500)
  load(sim, 2000)
  allVoteToRemove(sim, 1)
  load(sim, 12_000)
  const epochs = sim.nodes.get(2)!.membership.epochs()
  assert.is(epochs.length, 2, 'the group changed once')
  assert.equal(epochs[1].members, [2, 3, 4, 5])
  assert.is((epochs[1].from - 1) % 10, 0, 'at a checkpoint boundary')
  for (const id of [1, 3, 4, 5]) assert.is(epochsOf(sim, id), epochsOf(sim, 2), `replica ${id} switches at the same seq`)
  const boundary = epochs[1].from - 1
  for (const id of [2, 3, 4, 5]) {
    assert.ok(height(sim, id) > boundary + 20, `replica ${id} commits past the boundary (${height(sim, id)})`)
    assert.equal(sim.nodes.get(id)!.replica.state().members, [2, 3, 4, 5])
  }
  // the removed replica goes idle at the boundary: it orders nothing of the new group
  assert.ok(height(sim, 1) <= boundary + 1, `the removed replica stops (${height(sim, 1)} vs boundary ${boundary})`)
  assert.is(sim.nodes.get(2)!.replica.state().primary, 2, 'view 0 of the new group: its first member leads')
  assertNoFork(sim, [1, 2, 3, 4, 5])
  // with 4, f = 1 and the quorum is 3: one more down still commits (with 5 it would need 4 of the 4 left up)
  sim.crash(5)
  const late = load(sim, 8000)
  sim.run(5000)
  assert.ok(executedEverywhere(sim, [2, 3, 4], late), 'three of the four commit')
  assertNoFork(sim, [2, 3, 4])
})

test('an idle network: the primary orders empty batches up to the boundary, so a decided change takes effect without transactions', () => {
  const sim = createSim({ n: 5, seed: 52 })
  sim.run(500)
  allVoteToRemove(sim, 5)
  sim.run(20_000)
  const epochs = sim.nodes.get(1)!.membership.epochs()
  assert.is(epochs.length, 2, 'the change was decided')
  for (const id of [1, 2, 3, 4]) {
    assert.equal(sim.nodes.get(id)!.replica.state().members, [1, 2, 3, 4], `replica ${id} runs with the new group`)
    assert.ok(height(sim, id) >= epochs[1].from - 1, `replica ${id} reached the boundary (${height(sim, id)})`)
  }
  const reached = height(sim, 1)
  sim.run(5000)
  assert.is(height(sim, 1), reached, 'no empty batch after the boundary')
  assertNoFork(sim, [1, 2, 3, 4])
})

test('votes from fewer than all five: nothing changes', () => {
  const sim = createSim({ n: 5, seed: 52 })
  sim.run(500)
  for (const id of [1, 2, 3, 4]) sim.nodes.get(id)!.replica.voteToRemove(5)
  const sent = load(sim, 10_000)
  sim.run(3000)
  for (const id of [1, 2, 3, 4, 5]) {
    assert.is(sim.nodes.get(id)!.membership.epochs().length, 1, `replica ${id}: one group all along`)
    assert.equal(sim.nodes.get(id)!.replica.state().members, [1, 2, 3, 4, 5])
  }
  // the four votes are ordered (and kept pending), the chain goes on
  assert.ok(sim.nodes.get(1)!.votes.flat().length >= 4, 'the votes were ordered')
  assert.ok(executedEverywhere(sim, [1, 2, 3, 4, 5], sent))
})

test('a group of 4 never shrinks: all four vote, the change is refused in the log', () => {
  const sim = createSim({ n: 4, seed: 53 })
  sim.run(500)
  for (const id of [1, 2, 3, 4]) sim.nodes.get(id)!.replica.voteToRemove(4)
  const sent = load(sim, 8000)
  sim.run(3000)
  for (const id of [1, 2, 3, 4]) assert.equal(sim.nodes.get(id)!.replica.state().members, [1, 2, 3, 4])
  assert.ok(sim.nodes.get(1)!.votes.flat().length >= 4, 'all four votes were ordered')
  assert.ok(executedEverywhere(sim, [1, 2, 3, 4], sent))
})

test('replicas restarted after the change know the group: one down across it (state transfer), one restarted after it', () => {
  const sim = createSim({ n: 5, seed: 54 })
  sim.run(500)
  load(sim, 1000)
  allVoteToRemove(sim, 5)
  load(sim, 3000)
  sim.crash(3) // misses the rest of the votes' effect and the switch
  load(sim, 10_000)
  const boundary = sim.nodes.get(1)!.membership.epochs()[1]?.from
  assert.ok(boundary !== undefined && height(sim, 1) > boundary + 10, 'the group changed while replica 3 was down')
  sim.restart(3)
  sim.crash(2)
  sim.restart(2) // restarts after the change: its group comes from its blocks
  const sent = load(sim, 8000)
  sim.run(8000)
  for (const id of [1, 2, 3, 4]) {
    assert.equal(sim.nodes.get(id)!.replica.state().members, [1, 2, 3, 4], `replica ${id}`)
    assert.is(epochsOf(sim, id), epochsOf(sim, 1), `replica ${id}: the same switch seq`)
  }
  assert.ok(executedEverywhere(sim, [1, 2, 3, 4], sent), 'the restarted replicas take part again')
  assertNoFork(sim, [1, 2, 3, 4, 5])
})

test('a VP whose removal it missed while down: f + 1 members saying they removed it retire it; one (perhaps the faulty one) does not', () => {
  const sim = createSim({ n: 5, seed: 7 })
  sim.run(500)
  load(sim, 1000)
  const five = sim.nodes.get(5)!.replica
  five.removedBy(1)
  five.removedBy(1)
  five.removedBy(9) // no member
  five.removedBy(5) // itself
  assert.is.not(five.state().phase, 'retired')
  five.removedBy(2)
  assert.is(five.state().phase, 'retired')
  const stoppedAt = height(sim, 5)
  const sent = load(sim, 3000)
  assert.ok(executedEverywhere(sim, [1, 2, 3, 4], sent), 'the other four go on')
  assert.is(height(sim, 5), stoppedAt, 'the retired VP orders nothing any more')
  assertNoFork(sim, [1, 2, 3, 4, 5])
})

test('a Byzantine primary cannot order votes the voters did not sign: its batch is refused, the group stays', () => {
  const sim = createSim({ n: 5, seed: 55 })
  sim.nodes.get(1)!.tamper = (_to, message) => {
    if (message.body.type !== 'pre-prepare') return message
    const pp = message.body as PrePrepare
    // every member's "vote" to remove replica 5, but signed with replica 1's key
    const votes = [1, 2, 3, 4, 5].map(
      (id) => ({ ...sim.signAs(1, { type: 'member-vote', action: 'delete', target: 5 }), from: id }) as Signed<MemberVote>,
    )
    const forged: PrePrepare = { ...pp, votes, digest: batchDigest(pp.seq, pp.timestamp, pp.txHashes, votes) }
    return sim.signAs(1, forged)
  }
  sim.run(500)
  const sent = load(sim, 20_000)
  sim.run(5000)
  for (const id of [2, 3, 4, 5]) {
    assert.is(sim.nodes.get(id)!.membership.epochs().length, 1, `replica ${id}: the group is unchanged`)
    assert.is(sim.nodes.get(id)!.votes.flat().length, 0, `replica ${id}: no vote ordered`)
  }
  assert.ok(sim.nodes.get(2)!.replica.state().view >= 1, 'the primary was replaced')
  assert.ok(executedEverywhere(sim, [2, 3, 4, 5], sent))
  assertNoFork(sim, [2, 3, 4, 5])
})

test('adding a VP: the 4 members vote, the new one follows the chain, all switch to 5 at the same seq, and it takes part', () => {
  const sim = createSim({ n: 5, seed: 56, group: [1, 2, 3, 4] })
  sim.run(500)
  load(sim, 2000)
  assert.is(sim.nodes.get(5)!.replica.state().normal, false, 'the new VP only follows')
  for (const id of [1, 2, 3, 4]) sim.nodes.get(id)!.replica.voteToAdd(5)
  load(sim, 12_000)
  sim.run(5000)
  const epochs = sim.nodes.get(1)!.membership.epochs()
  assert.is(epochs.length, 2, 'the group changed once')
  assert.equal(epochs[1].members, [1, 2, 3, 4, 5])
  for (const id of [2, 3, 4, 5]) assert.is(epochsOf(sim, id), epochsOf(sim, 1), `replica ${id} switches at the same seq`)
  for (const id of [1, 2, 3, 4, 5]) assert.equal(sim.nodes.get(id)!.replica.state().members, [1, 2, 3, 4, 5], `replica ${id}`)
  assert.ok(sim.nodes.get(5)!.replica.state().normal, 'the new VP runs normally')
  // with 5 the quorum is 4: with replica 1 down, the new one is needed for every commit
  sim.crash(1)
  const later = load(sim, 6000)
  sim.run(20_000)
  assert.ok(executedEverywhere(sim, [2, 3, 4, 5], later), 'the four left, the new one included, commit')
  assertNoFork(sim, [1, 2, 3, 4, 5])
})

test('fuzz: 15 seeds of loss, delay and one crash/restart around a removal: every replica switches at the same seq, no fork', () => {
  for (let seed = 300; seed < 315; seed++) {
    const sim = createSim({ n: 5, seed, drop: 0.05, maxDelayMs: 40, batchSize: 5 })
    sim.run(300)
    load(sim, 1000, 4)
    const target = 1 + (seed % 5)
    allVoteToRemove(sim, target)
    const victim = 1 + ((seed + 2) % 5)
    sim.run((seed % 7) * 300)
    sim.crash(victim)
    load(sim, 4000, 4)
    sim.restart(victim)
    load(sim, 16_000, 4)
    sim.run(60_000)
    const stay = [1, 2, 3, 4, 5].filter((id) => id !== target)
    assertNoFork(sim, [1, 2, 3, 4, 5])
    const reference = epochsOf(sim, stay[0])
    assert.ok(sim.nodes.get(stay[0])!.membership.epochs().length === 2, `seed ${seed}: the group changed`)
    for (const id of stay) {
      assert.is(epochsOf(sim, id), reference, `seed ${seed}: replica ${id} switches at the same seq`)
      assert.equal(sim.nodes.get(id)!.replica.state().members, stay, `seed ${seed}: replica ${id}`)
    }
    assert.ok(executedEverywhere(sim, stay, sim.allTxs), `seed ${seed}: every transaction executed on the 4 left`)
  }
})

test.run()
