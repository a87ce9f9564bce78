/**
 * What a VP lends its BFT replica (consensus/bft/types.ts ReplicaHost), in three parts that each
 * take only the modules they use: its messages, written before they are sent (outbox.ts); the pool
 * it orders from; and the blocks it makes of committed batches, one at a time and in order, with
 * state transfers queued among them (block-sync.ts). vp.ts assembles them.
 */
import type { Chain } from '../chain/index.ts'
import type { Membership } from '../consensus/bft/membership.ts'
import { encodeMessage, type MemberVote, type Signed } from '../consensus/bft/messages.ts'
import type { Replica, ReplicaHost } from '../consensus/bft/types.ts'
import type { Hex, SignedTx } from '../domain.ts'
import type { Logger } from '../log.ts'
import type { PeerNetwork } from '../p2p/network.ts'
import type { Store } from '../store/index.ts'
import { BINARY_TAG, packTagged } from '../wire/binary.ts'
import { createBlockSync, type SyncedBlock } from './block-sync.ts'
import { Channel } from './channels.ts'
import { createOutbox } from './outbox.ts'
import { encodeProof, votesOf } from './proof.ts'
import { applyBlock, readyTxs } from './replay.ts'
import { fetchMissingTxs } from './tx-fetch.ts'
import type { VpPeers } from './vp-peers.ts'

/** whether this VP still takes part: it stops for good when stopped, or when a failure leaves its votes or chain in doubt */
export interface VpRun {
  readonly stopped: boolean
  stop(): void
  /** logs `logged` with the error, stops taking part, and halts the chain with `haltReason` */
  fail(logged: string, haltReason: string, error: unknown): void
}

export function createVpRun(options: { chain: Pick<Chain, 'halt'>; log: Pick<Logger, 'error'> }): VpRun {
  let stopped = false
  return {
    get stopped() {
      return stopped
    },
    stop() {
      stopped = true
    },
    fail(logged, haltReason, error) {
      options.log.error(logged, error)
      stopped = true
      options.chain.halt(haltReason)
    },
  }
}

const messageOf = (error: unknown): string => (error as Error).message ?? String(error)

/**
 * The replica's records and messages: persist-before-send through the outbox (consensus.md §10.2),
 * to the VPs known by id only; nothing goes out once the VP stopped.
 */
export function consensusMessages(options: {
  store: Pick<Store, 'writeConsensus'>
  network: Pick<PeerNetwork, 'send' | 'broadcast'>
  peers: Pick<VpPeers, 'hostnameOf' | 'idOf'>
  run: VpRun
}): Pick<ReplicaHost, 'persist' | 'send' | 'broadcast'> & { drained(): Promise<void> } {
  const { store, network, peers, run } = options
  type Send = { to: string | undefined; message: Signed }
  const outbox = createOutbox<{ key: string; value: unknown }, Send>({
    persist: (writes) =>
      store.writeConsensus(
        writes.map(({ key, value }) => ({ key, value: value === undefined ? undefined : packTagged(BINARY_TAG, value) })),
      ),
    transmit: ({ to, message }) => {
      const bytes = encodeMessage(message)
      if (to !== undefined) network.send(to, Channel.consensus, bytes)
      else network.broadcast(Channel.consensus, bytes, (peer) => peer.vp && peers.idOf(peer.hostname) !== undefined)
    },
    // the replica's votes may not be remembered: it must not take part any more
    fail: (error) =>
      run.fail(
        'consensus records could not be written; this VP stops voting (restart it once the disk is fixed)',
        `consensus records could not be written (${messageOf(error)}); restart the node once the disk is fixed`,
        error,
      ),
  })
  return {
    persist: (key, value) => outbox.write({ key, value }),
    send: (to, message) => {
      const hostname = peers.hostnameOf(to)
      if (hostname !== undefined && !run.stopped) outbox.send({ to: hostname, message })
    },
    broadcast: (message) => {
      if (!run.stopped) outbox.send({ to: undefined, message })
    },
    drained: () => outbox.drained(),
  }
}

/** the pool the replica orders from (as primary) and fills (missing transactions of a batch, dropped batches) */
export function poolLending(options: {
  pool: Chain['pool']
  committed(hash: Hex): SignedTx | undefined
  network: PeerNetwork
  peers: Pick<VpPeers, 'hostnameOf' | 'others'>
  nowNs(): bigint
  log: Logger
}): Pick<ReplicaHost, 'takeBatch' | 'pendingCount' | 'oldestPendingAgeMs' | 'missingTxs' | 'fetchTxs' | 'returnToPool'> {
  const { pool, committed, network, peers, nowNs, log } = options
  return {
    takeBatch: (max) => pool.take(max).map((ready) => ready.tx.hash),
    pendingCount: () => pool.readyCount(),
    oldestPendingAgeMs: () => {
      const oldest = pool.oldestArrival()
      return oldest === undefined ? undefined : Date.now() - oldest
    },
    missingTxs: (txHashes) => txHashes.filter((hash) => pool.get(hash) === undefined && committed(hash) === undefined),
    fetchTxs: (from, txHashes, done) => {
      const first = peers.hostnameOf(from)
      const asked = [...(first === undefined ? [] : [first]), ...peers.others().filter((hostname) => hostname !== first)]
      fetchMissingTxs({ network, pool, peers: asked, hashes: txHashes, nowNs, log }).then(
        (missing) => done(missing.length === 0),
        () => done(false),
      )
    },
    returnToPool: (txHashes) => pool.requeue(txHashes),
  }
}

/**
 * Committed batches become blocks, and state transfers bring blocks from peers, one job after
 * another in the order the replica asks; a job that fails stops this VP (its chain is in doubt).
 * Each block's votes are recorded (`recordVotes`) before the replica hears it is executed.
 */
export function blockSteps(options: {
  store: Pick<Store, 'height' | 'getBlock'>
  /** replays a block's transactions (replay.ts) */
  chain: Chain
  committed(hash: Hex): SignedTx | undefined
  network: PeerNetwork
  membership: Pick<Membership, 'at'>
  /** true when a block's proof shows a quorum of its group committed it (vp.ts blockProofValid) */
  proofValid(block: SyncedBlock, members: readonly number[]): boolean
  recordVotes(number: number, votes: readonly Signed<MemberVote>[]): void
  peers: Pick<VpPeers, 'hostnameOf' | 'others'>
  /** the replica told of each block (created after its host) */
  replica(): Pick<Replica, 'executed' | 'stateTransferred'>
  run: VpRun
  nowNs(): bigint
  log: Logger
}): Pick<ReplicaHost, 'deliver' | 'stateTransfer'> & { drained(): Promise<void> } {
  const { store, chain, network, membership, peers, run, log } = options
  let work: Promise<void> = Promise.resolve()
  const queue = (what: string, job: () => Promise<void>): void => {
    work = work
      .then(job)
      .catch((error: unknown) =>
        run.fail(`${what} failed; consensus on this VP is stuck until it is restarted`, `${what} failed (${messageOf(error)})`, error),
      )
  }
  const replayDeps = { chain, committed: (hash: Hex) => options.committed(hash) !== undefined }
  const sync = createBlockSync({
    network,
    tip: () => {
      const number = store.height()
      return { number, hash: (store.getBlock(number)?.hash ?? `0x${'0'.repeat(64)}`) as Hex }
    },
    verify: (block) => options.proofValid(block, membership.at(block.number)),
    apply: async (block) => {
      await applyBlock(block, replayDeps)
      options.recordVotes(block.number, votesOf(block))
    },
    nowNs: options.nowNs,
    log: log.child('sync'),
  })
  return {
    deliver: (batch) =>
      queue(`block ${batch.seq}`, async () => {
        if (batch.seq <= store.height()) return
        const ready = await readyTxs(batch.txHashes, new Map(), replayDeps)
        const block = await chain.produce(ready, {
          timestamp: batch.timestamp,
          batch: { view: batch.view, txHashes: batch.txHashes, proof: encodeProof(batch.certificate, batch.votes) },
        })
        options.recordVotes(batch.seq, batch.votes)
        options.replica().executed(batch.seq, block.header.hash as Hex)
      }),
    stateTransfer: (target) =>
      queue(`state transfer to block ${target.seq}`, async () => {
        const asked = target.replicas.map((id) => peers.hostnameOf(id)).filter((h): h is string => h !== undefined)
        for (;;) {
          try {
            await sync.syncTo({ number: target.seq, hash: target.blockHash }, asked.length > 0 ? asked : peers.others())
            break
          } catch (error) {
            if (target.claimed) {
              // one replica's word only: what the peers could bring is what there is (a Byzantine
              // replica must not hold this one here by claiming blocks nobody has)
              log.warn(`state transfer towards block ${target.seq} stopped at ${store.height()}: ${(error as Error).message}`)
              break
            }
            log.warn(`state transfer to block ${target.seq} failed (${(error as Error).message}); retrying in 1 s`)
            if (run.stopped) return
            await new Promise((resolve) => setTimeout(resolve, 1000))
          }
        }
        const height = store.height()
        options.replica().stateTransferred(height, store.getBlock(height)?.hash as Hex)
      }),
    drained: () => work,
  }
}
