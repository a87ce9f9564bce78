/**
 * A VP of a network: the BFT replica (src/consensus/bft) hosted over the node's pieces. The
 * replica decides; this file carries its messages over the peer links (after its records are on
 * disk: outbox.ts), lends it the pool, and turns what it commits into blocks, one at a time and in
 * order, with state transfers queued among them (block-sync.ts). It also serves what peers ask a
 * VP for: relayed and forwarded transactions, a batch's missing transactions, blocks; and pushes
 * each new block to the NVPs linked to it.
 */
import { type KeyObject, verify as verifySignature } from 'node:crypto'
import type { TxSubmitter } from '../api/submit.ts'
import type { Chain } from '../chain/index.ts'
import type { Hex, SignedTx } from '../chain/types.ts'
import { batchDigest, type Commit, decodeMessage, encodeMessage, type Signed } from '../consensus/bft/messages.ts'
import {
  type ConsensusEvent,
  type ConsensusTimers,
  createReplica,
  type Replica,
  verifyCommitCertificate,
} from '../consensus/bft/replica.ts'
import { SystemBusy } from '../errors.ts'
import { consensusStatus } from '../events/status.ts'
import type { StatusEvent } from '../events/types.ts'
import type { Logger } from '../log.ts'
import type { PeerConfig } from '../p2p/config.ts'
import type { NodeIdentity } from '../p2p/identity.ts'
import type { PeerNetwork } from '../p2p/network.ts'
import { parseJson, stringifyJson } from '../rpc/json.ts'
import type { Store } from '../store/index.ts'
import { createBlockSync, type SyncedBlock, serveBlocks } from './block-sync.ts'
import { Channel } from './channels.ts'
import { serveForwardedTxs } from './forward.ts'
import { pushBlock } from './nvp-feed.ts'
import { createOutbox } from './outbox.ts'
import { applyBlock, readyTxs } from './replay.ts'
import { fetchMissingTxs, serveTxFetches } from './tx-fetch.ts'
import { createTxRelay } from './tx-relay.ts'

export interface VpRoleOptions {
  peerConfig: PeerConfig
  network: PeerNetwork
  /** the VPs' keys from their certificates (certs/peers/): a signer that is down is still checked */
  peerKeys: ReadonlyMap<string, KeyObject>
  /** this node's own key, to check its own signatures inside proofs */
  identity: NodeIdentity
  store: Store
  chain: Chain
  timers: ConsensusTimers
  batchSize: number
  nowNs(): bigint
  publishStatus(event: StatusEvent): void
  log: Logger
}

export interface VpRole {
  readonly replica: Replica
  /** the VPs by replica id */
  hostnameOf(id: number): string | undefined
  /** admission for this node's clients: -32006 while consensus is not running normally */
  submitter: TxSubmitter
  start(): Promise<void>
  stop(): Promise<void>
}

/** A P1363 ECDSA-SHA256 signature (the p2p layer's) checked with a known key. */
export function verifyWithKey(key: KeyObject | undefined, bytes: Uint8Array, signature: Uint8Array): boolean {
  if (key === undefined) return false
  try {
    return verifySignature('sha256', bytes, { key, dsaEncoding: 'ieee-p1363' }, signature)
  } catch {
    return false
  }
}

/** The commit certificate as kept with a block (keyspace 24) and carried by block sync. */
export const encodeCertificate = (certificate: readonly Signed<Commit>[]): Uint8Array => Buffer.from(stringifyJson(certificate))

/** true when `block`'s proof shows a quorum of the VPs committed its batch */
export function blockProofValid(
  block: SyncedBlock,
  n: number,
  verify: (replica: number, bytes: Uint8Array, sig: Uint8Array) => boolean,
): boolean {
  let certificate: Signed<Commit>[]
  try {
    const parsed = parseJson(Buffer.from(block.proof).toString('utf8'), { maxDepth: 6 })
    if (!Array.isArray(parsed) || parsed.length > 4 * n) return false
    certificate = parsed.map((item) => decodeMessage(Buffer.from(stringifyJson(item))) as Signed<Commit>)
  } catch {
    return false
  }
  const digest = batchDigest(block.number, block.timestamp, block.txHashes)
  return verifyCommitCertificate(certificate, { seq: block.number, digest, n }, verify)
}

export function createVpRole(options: VpRoleOptions): VpRole {
  const { peerConfig, network, store, chain, log } = options
  const n = peerConfig.nodes.length
  const self = peerConfig.self.id
  const hostnames = new Map(peerConfig.nodes.map((node) => [node.id, node.hostname]))
  const ids = new Map(peerConfig.nodes.map((node) => [node.hostname, node.id]))
  const others = (): string[] => [...hostnames.entries()].filter(([id]) => id !== self).map(([, hostname]) => hostname)
  const verify = (replica: number, bytes: Uint8Array, signature: Uint8Array): boolean => {
    const hostname = hostnames.get(replica)
    if (hostname === undefined) return false
    if (replica === self) return verifyWithKey(options.identity.cert.publicKey, bytes, signature)
    return network.verify(hostname, bytes, signature) || verifyWithKey(options.peerKeys.get(hostname), bytes, signature)
  }
  const committed = (hash: Hex): SignedTx | undefined => (store.getTx(hash) ?? store.getInvalidTx(hash))?.tx

  type Send = { to: string | undefined; message: Signed }
  const outbox = createOutbox<{ key: string; value: unknown }, Send>({
    persist: (writes) =>
      store.writeConsensus(
        writes.map(({ key, value }) => ({ key, value: value === undefined ? undefined : Buffer.from(stringifyJson(value)) })),
      ),
    transmit: ({ to, message }) => {
      const bytes = encodeMessage(message)
      if (to !== undefined) network.send(to, Channel.consensus, bytes)
      else network.broadcast(Channel.consensus, bytes, (peer) => peer.vp && ids.has(peer.hostname))
    },
    fail: (error) => {
      // the replica's votes may not be remembered: it must not take part any more
      log.error('consensus records could not be written; this VP stops voting (restart it once the disk is fixed)', error)
      stopped = true
    },
  })
  let stopped = false

  // deliveries and state transfers run one after another, in the order the replica asks
  let work: Promise<void> = Promise.resolve()
  const queue = (what: string, job: () => Promise<void>): void => {
    work = work.then(job).catch((error: unknown) => {
      log.error(`${what} failed; consensus on this VP is stuck until it is restarted`, error)
      stopped = true
    })
  }

  const replayDeps = { chain, committed: (hash: Hex) => committed(hash) !== undefined }

  const sync = createBlockSync({
    network,
    tip: () => {
      const number = store.height()
      return { number, hash: (store.getBlock(number)?.hash ?? `0x${'0'.repeat(64)}`) as Hex }
    },
    verify: (block) => blockProofValid(block, n, verify),
    apply: (block) => applyBlock(block, replayDeps),
    nowNs: options.nowNs,
    log: log.child('sync'),
  })

  const replica = createReplica({
    self,
    n,
    batchSize: options.batchSize,
    timers: options.timers,
    host: {
      sign: (bytes) => network.sign(bytes),
      verify,
      persist: (key, value) => outbox.write({ key, value }),
      send: (to, message) => {
        const hostname = hostnames.get(to)
        if (hostname !== undefined && !stopped) outbox.send({ to: hostname, message })
      },
      broadcast: (message) => {
        if (!stopped) outbox.send({ to: undefined, message })
      },
      takeBatch: (max) => chain.pool.take(max).map((ready) => ready.tx.hash),
      pendingCount: () => chain.pool.readyCount(),
      oldestPendingAgeMs: () => {
        const oldest = chain.pool.oldestArrival()
        return oldest === undefined ? undefined : Date.now() - oldest
      },
      missingTxs: (txHashes) => txHashes.filter((hash) => chain.pool.get(hash) === undefined && committed(hash) === undefined),
      fetchTxs: (from, txHashes, done) => {
        const first = hostnames.get(from)
        const peers = [...(first === undefined ? [] : [first]), ...others().filter((hostname) => hostname !== first)]
        fetchMissingTxs({ network, pool: chain.pool, peers, hashes: txHashes, nowNs: options.nowNs, log }).then(
          (missing) => done(missing.length === 0),
          () => done(false),
        )
      },
      returnToPool: (txHashes) => chain.pool.requeue(txHashes),
      deliver: (batch) =>
        queue(`block ${batch.seq}`, async () => {
          if (batch.seq <= store.height()) return
          const ready = await readyTxs(batch.txHashes, new Map(), replayDeps)
          const block = await chain.produce(ready, {
            timestamp: batch.timestamp,
            batch: { view: batch.view, txHashes: batch.txHashes, proof: encodeCertificate(batch.certificate) },
          })
          replica.executed(batch.seq, block.header.hash as Hex)
        }),
      stateTransfer: (target) =>
        queue(`state transfer to block ${target.seq}`, async () => {
          const peers = target.replicas.map((id) => hostnames.get(id)).filter((h): h is string => h !== undefined)
          for (;;) {
            try {
              await sync.syncTo({ number: target.seq, hash: target.blockHash }, peers.length > 0 ? peers : others())
              break
            } catch (error) {
              if (target.claimed) {
                // one replica's word only: what the peers could bring is what there is (a Byzantine
                // replica must not hold this one here by claiming blocks nobody has)
                log.warn(`state transfer towards block ${target.seq} stopped at ${store.height()}: ${(error as Error).message}`)
                break
              }
              log.warn(`state transfer to block ${target.seq} failed (${(error as Error).message}); retrying in 1 s`)
              if (stopped) return
              await new Promise((resolve) => setTimeout(resolve, 1000))
            }
          }
          const height = store.height()
          replica.stateTransferred(height, store.getBlock(height)?.hash as Hex)
        }),
      event: (event: ConsensusEvent) => options.publishStatus(statusOf(event, self, log)),
      now: () => Date.now(),
      log,
    },
  })

  const relay = createTxRelay({ network, pool: chain.pool, nowNs: options.nowNs, log })
  const local = chain.submitter
  const submitter: TxSubmitter = {
    async submit(kind, params) {
      if ((params as { simulate?: unknown }).simulate !== true && !replica.state().normal) {
        throw new SystemBusy('System is too busy to response: consensus is changing view or recovering; retry shortly')
      }
      const hash = await local.submit(kind, params)
      const pooled = chain.pool.get(hash)
      if (pooled !== undefined) {
        relay.relay(pooled.tx)
        replica.txArrived()
      }
      return hash
    },
    signHash: (params) => local.signHash(params),
  }

  let ticker: NodeJS.Timeout | undefined
  return {
    replica,
    hostnameOf: (id) => hostnames.get(id),
    submitter,
    async start() {
      network.on(Channel.consensus, (from, payload) => {
        const id = ids.get(from.hostname)
        // only the VPs of this node's files take part; an NVP's or a stranger's messages are dropped
        if (!from.vp || id === undefined || stopped) return
        let message: Signed
        try {
          message = decodeMessage(payload)
        } catch (error) {
          log.warn(`dropped a malformed consensus message from ${from.hostname}: ${(error as Error).message}`)
          return
        }
        replica.receive(id, message)
      })
      serveBlocks(network, store)
      serveTxFetches(network, { pooled: (hash) => chain.pool.get(hash)?.tx, committed })
      serveForwardedTxs({ network, submitter, nowNs: options.nowNs, log })
      chain.onBlock((block) => pushBlock(network, store, block.header.number))
      chain.pool.onReady(() => replica.txArrived())
      const records = new Map<string, unknown>()
      for (const { key, value } of store.readConsensus()) records.set(key, parseJson(Buffer.from(value).toString('utf8'), { maxDepth: 64 }))
      const height = store.height()
      const header = store.getBlock(height)
      replica.start({
        records,
        height,
        heightHash: (header?.hash ?? `0x${'0'.repeat(64)}`) as Hex,
        heightTime: header?.writeTime ?? 0n,
      })
      let ticks = 0
      const regossipEvery = Math.max(1, Math.round(options.timers.requestMs / options.timers.tickMs))
      ticker = setInterval(() => {
        if (stopped) return
        replica.tick()
        if (++ticks % regossipEvery === 0) relay.regossip(options.timers.requestMs)
      }, options.timers.tickMs)
    },
    async stop() {
      stopped = true
      clearInterval(ticker)
      await outbox.drained()
      await work
    },
  }
}

function statusOf(event: ConsensusEvent, self: number, log: Logger): StatusEvent {
  switch (event.kind) {
    case 'view-change-started':
      log.info(`view change to ${event.view}: ${event.reason}`)
      return consensusStatus.viewChangeStarted(event.view, event.reason)
    case 'view-change-finished':
      return consensusStatus.viewChangeFinished(self, event.primary, event.view, event.height)
    case 'recovery-started':
      log.info(`recovering: ${event.reason}`)
      return consensusStatus.recoveryStarted(event.reason)
    case 'recovery-finished':
      return consensusStatus.recoveryFinished(event.view, event.height)
  }
}
