/**
 * A Byzantine VP against three honest ones, every honest node its own process (test timers): node4
 * is not a Keel node but a rogue peer in this process holding node4's real ECert and key
 * (test/helpers/rogue-peer.ts), so the honest VPs authenticate it as node4. It votes both ways,
 * forges other replicas' messages, sends garbage and lies about checkpoints, views and its status.
 * With N = 4 (f = 1, quorum 3) the three honest VPs are exactly a quorum: every one of them must
 * keep working. After each step: identical blocks at every height on the honest nodes (I1), one
 * outcome per accepted hash, the same on each (I3), and no honest process has exited.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  type Commit,
  decodeMessage,
  type Hex,
  type Prepare,
  type Signed,
  type Status,
  type ViewChange,
} from '../../src/consensus/bft/messages.ts'
import type { NetworkPlan } from '../../src/devnet/network.ts'
import { Channel } from '../../src/network/channels.ts'
import { pack } from '../../src/wire/binary.ts'
import { assertNoFork, assertSameOutcomes } from '../helpers/audit.ts'
import { packReply } from '../helpers/block-reply.ts'
import { primaryAt, sendTransfers, sleep, waitCommitted } from '../helpers/client-load.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { type RoguePeer, startRoguePeer } from '../helpers/rogue-peer.ts'
import type { Wallet } from '../helpers/wallet.ts'

const net = processNetwork('adversary')
const { dir, processes } = net
const HONEST = ['node1', 'node2', 'node3']
const ZERO_HASH = `0x${'0'.repeat(64)}` as Hex
let plan: NetworkPlan
let funder: Wallet
let rogue: RoguePeer
const accepted: string[] = []

const urlOf = net.urlOf
const honestUrls = () => HONEST.map(urlOf)
/** the honest VPs and the NVP, which links to node4 too and must follow the honest chain alone */
const watchedUrls = () => [...HONEST, 'nvp1'].map(urlOf)
const randomHash = (): Hex => `0x${randomBytes(32).toString('hex')}`

/** what the rogue did, to show the attacks really reached the honest nodes */
const sent = { conflictingVotes: 0, forged: 0, badSignatures: 0, checkpoints: 0, statusLies: 0, garbage: 0, fakeBlocks: 0 }
/** the rogue's status replies claim this height (0: it does not answer status requests) */
let lieAboutHeight = 0

const start = net.start

/** Equivocation and forgery for every batch the primary proposes; lies for every checkpoint and status request. */
function misbehave(from: string, message: Signed): void {
  const body = message.body
  const others = rogue.linkedVps()
  if (body.type === 'pre-prepare') {
    const { view, seq, digest } = body
    const other = randomHash()
    // conflicting prepares: the real digest to one peer, another digest to the rest
    for (const [i, to] of others.entries())
      rogue.send(to, rogue.sign<Prepare>({ type: 'prepare', view, seq, digest: i === 0 ? digest : other }))
    // two different commits for one slot, the wrong one first
    rogue.broadcast(rogue.sign<Commit>({ type: 'commit', view, seq, digest: other }))
    rogue.broadcast(rogue.sign<Commit>({ type: 'commit', view, seq, digest }))
    sent.conflictingVotes += others.length + 2
    // forged: claiming to be each honest replica, signed with node4's key; a commit and a prepare
    // for the wrong digest from all three would be a quorum if a single one got through
    for (const claimed of [1, 2, 3]) {
      rogue.broadcast(rogue.sign<Commit>({ type: 'commit', view, seq, digest: other }, claimed))
      rogue.broadcast(rogue.sign<Prepare>({ type: 'prepare', view, seq, digest: other }, claimed))
      sent.forged += 2
    }
    // its own id with a signature that is not its own
    rogue.broadcast({ body: { type: 'commit', view, seq, digest: other }, from: rogue.id, sig: randomBytes(64).toString('hex') })
    sent.badSignatures++
    // a pre-prepare of its own for the next slot: node4 is not the primary of this view
    const txHashes = [randomHash()]
    rogue.broadcast(rogue.sign({ type: 'pre-prepare', view, seq: seq + 1, timestamp: BigInt(Date.now()) * 1_000_000n, txHashes, digest }))
  } else if (body.type === 'checkpoint') {
    rogue.broadcast(rogue.sign({ type: 'checkpoint', seq: body.seq, blockHash: randomHash() }))
    sent.checkpoints++
  } else if (body.type === 'status-request' && lieAboutHeight > 0) {
    const lie: Status = {
      type: 'status',
      nonce: body.nonce,
      view: 7,
      changing: false,
      stable: { seq: 0, blockHash: ZERO_HASH, proof: [] },
      height: lieAboutHeight,
      heightHash: randomHash(),
    }
    rogue.send(from, rogue.sign(lie))
    sent.statusLies++
  }
}

/** Frames no honest VP sends: every one must be dropped without harm. */
function sendGarbage(): void {
  const garbage: Uint8Array[] = [
    randomBytes(200),
    Buffer.from('{}'),
    Buffer.from('{"from":4,"sig":"00","body":{"type":"launch-missiles","view":0}}'),
    Buffer.from(`{"from":4,"sig":"00","body":{"type":"commit","view":1e400,"seq":-1,"digest":"0x00"}}`),
    Buffer.from(`${'['.repeat(5000)}${']'.repeat(5000)}`),
    Buffer.from('\xff\xfe not utf-8', 'latin1'),
    // the wire is msgpack (protocol 2): the same lies packed, and lists nested too deep to decode
    pack({ from: 4, sig: '00', body: { type: 'launch-missiles', view: 0 } }),
    pack({ from: 4, sig: '00', body: { type: 'commit', view: 1e300, seq: -1, digest: '0x00' } }),
    new Uint8Array(100_001).fill(0x91),
  ]
  for (const bytes of garbage) rogue.broadcast(bytes)
  // channels nothing listens on, and malformed requests and relays on the ones that do
  rogue.net.broadcast(4242, randomBytes(64), (peer) => peer.vp)
  rogue.net.broadcast(Channel.tx, pack([['transfer', { from: 1 }]]), (peer) => peer.vp)
  rogue.net.broadcast(Channel.blockPush, randomBytes(100), (peer) => peer.vp)
  // ATTENDs (a new VP asking to be voted in): garbage, and node4 asking for a second id
  rogue.net.broadcast(Channel.attend, randomBytes(80), (peer) => peer.vp)
  rogue.net.broadcast(Channel.attend, Buffer.from('null'), (peer) => peer.vp)
  rogue.net.broadcast(Channel.attend, Buffer.from('{"id":5,"cert":"AAAAAAAAAAAAAAAAAAAA","sig":"00"}'), (peer) => peer.vp)
  for (const to of rogue.linkedVps()) {
    rogue.net.request(to, Channel.fetchBlocks, pack([-5, 'all']), 5000).catch(() => {})
    rogue.net.request(to, Channel.fetchTxs, randomBytes(50), 5000).catch(() => {})
    rogue.net.request(to, Channel.forwardTx, Buffer.from('null'), 5000).catch(() => {})
  }
  sent.garbage += garbage.length + 6
}

/** Blocks node4 pushes to the NVP: garbage, and a well-formed block far ahead that no proof backs. */
function pushFakeBlocks(): void {
  const far = {
    number: 1_000_000,
    hash: randomHash(),
    parentHash: randomHash(),
    timestamp: Date.now() * 1_000_000,
    view: 0,
    proof: randomBytes(64),
    txHashes: [],
    txs: [],
  }
  rogue.net.send('nvp1', Channel.blockPush, randomBytes(300))
  rogue.net.send('nvp1', Channel.blockPush, packReply([far]))
  sent.fakeBlocks += 2
}

test.before(async () => {
  ;({ plan, funder } = await net.create({ vps: 4, nvps: 1 }))
  rogue = await startRoguePeer({ configDir: join(dir, 'node4', 'config'), namespace: plan.namespace })
  rogue.net.on(Channel.consensus, (from, payload) => {
    let message: Signed
    try {
      message = decodeMessage(payload)
    } catch {
      return
    }
    misbehave(from.hostname, message)
  })
  await Promise.all([...HONEST, 'nvp1'].map(start))
})

test.after(async () => {
  await net.killAll()
  await rogue?.stop()
})

test('a Byzantine node4 equivocates, forges and sends garbage: the three honest VPs commit one chain', async () => {
  const deadline = Date.now() + 20_000
  const nvpLinked = () => rogue.net.peers().some((peer) => peer.hostname === 'nvp1' && peer.status === 0)
  while (rogue.linkedVps().length < 3 || !nvpLinked()) {
    assert.ok(Date.now() < deadline, `the rogue linked to ${rogue.linkedVps().join(', ')} only (nvp1: ${nvpLinked()})`)
    await sleep(100)
  }
  // the first batches already meet the rogue; the primary they settle on (nodes starting seconds
  // apart on a busy machine may change view once) is the one the attacks below must not move
  const warmUp = await sendTransfers(funder, honestUrls(), 10)
  accepted.push(...warmUp)
  await waitCommitted(warmUp, watchedUrls(), 60_000)
  const primary = await primaryAt(urlOf('node1'))
  sendGarbage()
  pushFakeBlocks()
  // alone, a view change (even a valid one) moves nobody: it takes f + 1 = 2 replicas
  const viewChange = (view: number) =>
    rogue.sign<ViewChange>({ type: 'view-change', view, stable: { seq: 0, blockHash: ZERO_HASH, proof: [] }, prepared: [] })
  rogue.broadcast(viewChange(5))
  rogue.broadcast(viewChange(1_000_000))
  const started = Date.now()
  // the NVP forwards its clients' transfers to a VP it picks, node4 among them: a refusal is "busy", retried
  const hashes = await sendTransfers(funder, watchedUrls(), 90)
  accepted.push(...hashes)
  sendGarbage()
  pushFakeBlocks()
  const ms = await waitCommitted(hashes, watchedUrls(), 60_000)
  const height = await assertNoFork(watchedUrls())
  console.log(
    `  90 transfers committed on the 3 honest VPs and the NVP in ${Date.now() - started} ms (${ms} ms after the last was accepted), height ${height}; ` +
      `node4 sent ${sent.conflictingVotes} conflicting votes, ${sent.forged} forged, ${sent.badSignatures} badly signed, ` +
      `${sent.checkpoints} false checkpoints, ${sent.garbage} garbage frames, ${sent.fakeBlocks} fake block pushes to the NVP`,
  )
  assert.ok(sent.conflictingVotes > 0 && sent.forged > 0, 'the rogue saw pre-prepares and attacked them')
  for (const hostname of HONEST) {
    assert.is(await primaryAt(urlOf(hostname)), primary, `${hostname}: node4 alone could not force a view change`)
    const node = processes.get(hostname)!
    assert.not.ok(node.hasExited(), `${hostname} is still running`)
    const log = node.output()
    assert.match(log, 'with a bad signature dropped', `${hostname} saw the badly signed commits`)
    assert.match(log, 'dropped a malformed consensus message from node4', `${hostname} saw the garbage`)
    assert.match(log, 'node4 asks to join the VP group: refused, the ATTEND is not JSON', `${hostname} refused the garbage ATTEND`)
    assert.not.match(log, 'votes to add', `${hostname} voted nobody in`)
  }
  const nvp = processes.get('nvp1')!
  assert.not.ok(nvp.hasExited(), 'nvp1 is still running')
  assert.match(nvp.output(), 'dropped a malformed block push from node4', 'nvp1 saw the garbage push')
  assert.match(nvp.output(), 'block 1000000 pushed by node4 not applied', 'nvp1 refused the block far ahead')
})

test('an honest VP restarts while node4 lies about its status (height, view): it rejoins and the chain goes on', async () => {
  lieAboutHeight = 1_000_000
  await processes.get('node3')!.kill('SIGKILL')
  // node1 and node2 alone are not a quorum: the transfers wait for node3
  const waiting = await sendTransfers(funder, [urlOf('node1'), urlOf('node2')], 10)
  accepted.push(...waiting)
  const restartedAt = Date.now()
  await start('node3')
  const ms = await waitCommitted(waiting, watchedUrls(), 60_000).catch((error) => {
    // what node3 did about the lie is the first thing to look at when this fails
    const recovery = (line: string) => /transfer|recover|sync|view/.test(line)
    console.log(processes.get('node3')!.output().split('\n').filter(recovery).slice(-30).join('\n'))
    throw error
  })
  const more = await sendTransfers(funder, honestUrls(), 30)
  accepted.push(...more)
  await waitCommitted(more, watchedUrls(), 60_000)
  console.log(
    `  restarted node3 rejoined despite ${sent.statusLies} false status replies: the waiting transfers committed ${ms} ms after it started (${Date.now() - restartedAt} ms for all)`,
  )
  assert.ok(sent.statusLies > 0, 'node3 asked the rogue for its status')
  await assertNoFork(watchedUrls())
  await assertSameOutcomes(watchedUrls(), accepted)
  for (const hostname of [...HONEST, 'nvp1']) assert.not.ok(processes.get(hostname)!.hasExited(), `${hostname} is still running`)
})

test.run()
