/**
 * A VP of a network: the BFT replica (src/consensus/bft) hosted over the node's pieces. The
 * replica decides; this file carries its messages over the peer links (after its records are on
 * disk: outbox.ts), lends it the pool, and turns what it commits into blocks, one at a time and in
 * order, with state transfers queued among them (block-sync.ts). It also serves what peers ask a
 * VP for: relayed and forwarded transactions, a batch's missing transactions, blocks; and pushes
 * each new block to the NVPs linked to it.
 */
import { type KeyObject, X509Certificate } from 'node:crypto'
import type { Chain } from '../chain/index.ts'
import {
  activationBoundary,
  createMembership,
  type Membership,
  type MembershipDecision,
  type MembershipOptions,
  type MembershipSnapshot,
  MIN_VPS,
} from '../consensus/bft/membership.ts'
import { batchDigest, type Commit, decodeMessage, encodeMessage, type MemberVote, type Signed } from '../consensus/bft/messages.ts'
import {
  type ConsensusEvent,
  type ConsensusTimers,
  createReplica,
  type Replica,
  verifyCommitCertificate,
} from '../consensus/bft/replica.ts'
import type { Hex, SignedTx, TxSubmitter } from '../domain.ts'
import { SystemBusy } from '../errors.ts'
import { consensusStatus } from '../events/status.ts'
import type { StatusEvent } from '../events/types.ts'
import type { NodeHooks } from '../governance/execute.ts'
import { GovernanceView, NO_GOVERNANCE, type NodeDecision } from '../governance/state.ts'
import type { Logger } from '../log.ts'
import type { PeerConfig } from '../p2p/config.ts'
import { type NodeIdentity, readVoteCert, verifyWithKey, voteCertOf } from '../p2p/identity.ts'
import { type PeerIdentity, type PeerNetwork, refusedAsDeleted } from '../p2p/network.ts'
import type { Store } from '../store/index.ts'
import { BINARY_TAG, isBinary, packTagged, unpack } from '../wire/binary.ts'
import { parseJson, stringifyJson } from '../wire/json.ts'
import { type AttendContext, checkAttend, encodeAttend } from './attend.ts'
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
  /** the chain's first VP group (keel.toml [network] genesisVps); default: see createVpRole */
  genesisVps?: readonly number[]
  /** keel.toml node.namespace (NODE proposals name it) */
  namespace: string
}

export interface VpRole {
  readonly replica: Replica
  /** the VP group per block (membership.ts) */
  readonly membership: Membership
  /** the VPs by replica id (those of peerconfig.toml, those the chain added, and new VPs asking to join) */
  hostnameOf(id: number): string | undefined
  /** the replica id of a VP's host name (see hostnameOf) */
  idOf(hostname: string): number | undefined
  /**
   * this VP's vote to remove replica `target` (node_deleteVP); throws a message for the client
   * when the vote cannot change anything (not a member, or the group would drop below MIN_VPS)
   */
  voteToRemove(target: number): void
  /** the VP group as NODE proposals see it (docs/governance.md §11) */
  readonly nodeHooks: NodeHooks
  /** admission for this node's clients: -32006 while consensus is not running normally */
  submitter: TxSubmitter
  start(): Promise<void>
  stop(): Promise<void>
}

import { decodeProof, encodeProof, votesOf } from './proof.ts'

export { decodeProof, encodeProof, votesOf }

/**
 * A consensus record (keyspace of writeConsensus) as written: tagged msgpack since protocol 2, JSON
 * in data directories of earlier versions and for the membership snapshot (rare, kept readable).
 */
function readRecord(bytes: Uint8Array): unknown {
  return isBinary(bytes)
    ? unpack(bytes.subarray(1), 'a consensus record')
    : parseJson(Buffer.from(bytes).toString('utf8'), { maxDepth: 64 })
}

const MEMBERSHIP_KEY = 'membership'
/** a new VP asks again this often until its addition is decided (an ATTEND is lost with its link) */
const ATTEND_EVERY_MS = 5000

type MembershipStore = Pick<Store, 'height' | 'getBlockBatch' | 'readConsensus' | 'writeConsensus' | 'state'>

const asMembershipDecision = (decision: NodeDecision): MembershipDecision => ({
  action: decision.action,
  target: decision.id,
  ...(decision.cert === undefined ? {} : { cert: decision.cert }),
})

/**
 * The changes of the VP group the NODE proposals executed in block `number` decided, read from the
 * committed state right after the block (docs/governance.md §11): one fixed slot when it made none.
 */
export function decisionsAt(store: Pick<Store, 'state'>, number: number): MembershipDecision[] {
  return new GovernanceView(store.state, NO_GOVERNANCE).nodeDecisionsAt(number).map(asMembershipDecision)
}

/**
 * The VP group as NODE proposals see it while a block executes: the group the blocks before it
 * decided, the genesis VPs' host names from the peer files and the added ones' from the
 * certificates the chain carried, the namespace CA. Nothing here depends on this node's own state
 * beyond its chain, so every node executing a block answers alike.
 */
export function nodeHooksOf(options: {
  membership: Membership
  /** the genesis VPs' host names (peer files) */
  genesisHostnames: ReadonlyMap<number, string>
  addedKey(id: number): { hostname: string } | undefined
  ca: X509Certificate
  namespace: string
}): NodeHooks {
  const hostnameOf = (id: number): string => options.addedKey(id)?.hostname ?? options.genesisHostnames.get(id) ?? `replica ${id}`
  return {
    namespace: options.namespace,
    minVps: MIN_VPS,
    vps: () => options.membership.latest().map((id) => ({ id, hostname: hostnameOf(id) })),
    everVps: () => options.membership.snapshot().known.map((id) => ({ id, hostname: hostnameOf(id) })),
    readCert(pem) {
      let cert: string
      try {
        cert = voteCertOf(new X509Certificate(pem))
      } catch (error) {
        return `the public key argument is no PEM certificate (${(error as Error).message}); send the node's ECert (config/certs)`
      }
      try {
        return { hostname: readVoteCert(cert, options.ca).hostname, cert }
      } catch (error) {
        return (error as Error).message
      }
    },
    effectiveFrom: (block) => activationBoundary(block) + 1,
  }
}

/**
 * The group at each block: from the snapshot saved after the last block that ordered votes (keyspace
 * 23; blocks before it may be archived away), or genesis's (the peer configuration's VPs), then
 * every later stored block's votes. The snapshot is written after its block is committed, so a
 * crash in between only means those blocks are read again.
 */
export function membershipFromChain(initial: readonly number[], store: MembershipStore, options: MembershipOptions = {}): Membership {
  let saved = savedMembership(store)
  if (saved !== undefined && saved.height > store.height()) saved = undefined
  const membership = createMembership(initial, saved, options)
  // what NODE proposals decided after the snapshot, by block (the state holds them all)
  const decided = new Map<number, MembershipDecision[]>()
  for (const decision of new GovernanceView(store.state, NO_GOVERNANCE).nodeDecisions()) {
    if (decision.block <= membership.height() || decision.block > store.height()) continue
    decided.set(decision.block, [...(decided.get(decision.block) ?? []), asMembershipDecision(decision)])
  }
  for (let number = membership.height() + 1; number <= store.height(); number++) {
    const votes = votesOf(store.getBlockBatch(number))
    const decisions = decided.get(number) ?? []
    if (votes.length > 0 || decisions.length > 0) membership.record(number, votes, decisions)
  }
  return membership
}

/**
 * Saves the group a node starts from when none is saved yet (its first start, or the first since
 * membership changes exist): later edits of its files, and a new VP's one-shot `new` flag being
 * rewritten, then no longer change which VPs it takes for genesis's.
 */
export async function saveStartingGroup(membership: Membership, store: Pick<Store, 'readConsensus' | 'writeConsensus'>): Promise<void> {
  if (savedMembership(store) !== undefined) return
  await store.writeConsensus([{ key: MEMBERSHIP_KEY, value: Buffer.from(stringifyJson(membership.snapshot())) }])
}

function savedMembership(store: Pick<Store, 'readConsensus'>): MembershipSnapshot | undefined {
  let saved: MembershipSnapshot | undefined
  for (const { key, value } of store.readConsensus(MEMBERSHIP_KEY)) {
    if (key === MEMBERSHIP_KEY) saved = parseJson(Buffer.from(value).toString('utf8'), { maxDepth: 8 }) as unknown as MembershipSnapshot
  }
  return saved
}

/**
 * The membership rule every node applies to an add vote (MembershipOptions.admit): it carries the
 * new VP's ECert, issued by the namespace CA with OU=VP (identity.ts readVoteCert). The result
 * depends on the vote and the CA only, so every node replaying the chain decides alike.
 */
export const admitAddVote =
  (ca: X509Certificate) =>
  (vote: MemberVote): string | undefined => {
    if (vote.cert === undefined) return "an add vote must carry the new VP's certificate"
    try {
      readVoteCert(vote.cert, ca)
      return undefined
    } catch (error) {
      return (error as Error).message
    }
  }

/** the keys of the VPs the chain added, from the certificates their add votes carried (parsed once) */
export function addedKeys(membership: Membership, ca: X509Certificate): (id: number) => { hostname: string; key: KeyObject } | undefined {
  const cache = new Map<number, { hostname: string; key: KeyObject }>()
  return (id) => {
    const cached = cache.get(id)
    if (cached !== undefined) return cached
    const cert = membership.certOf(id)
    if (cert === undefined) return undefined
    try {
      const read = readVoteCert(cert, ca)
      const entry = { hostname: read.hostname, key: read.cert.publicKey }
      cache.set(id, entry)
      return entry
    } catch {
      return undefined
    }
  }
}

/**
 * The chain's first VP group: genesis configuration, like the genesis accounts — keel.toml
 * `genesisVps`, by default the VPs of peerconfig.toml less this node when it is a new VP
 * (`new = true`: its files list it, the chain does not yet). Files that list VPs added later (a
 * second new VP's, an NVP set up afterwards) need genesisVps (`npm run network -- add-vp` writes
 * it); a node given another group refuses the chain's proofs and says so (block-sync.ts PROOF_HINT).
 */
export function genesisGroup(peerConfig: PeerConfig, genesisVps: readonly number[] | undefined): readonly number[] {
  if (genesisVps !== undefined && genesisVps.length > 0) return genesisVps
  const isNew = peerConfig.self.new && peerConfig.self.vp
  return peerConfig.nodes.map((node) => node.id).filter((id) => !isNew || id !== peerConfig.self.id)
}

/**
 * How a VP or NVP checks a replica's signature: its own with its own key; a VP the chain added
 * with the key its add votes carried, and no other; any other VP with its link's key or its
 * certificate in certs/peers/ (so a signer that is down is still checked).
 */
export function replicaVerifier(options: {
  hostnameOf(id: number): string | undefined
  addedKey(id: number): { key: KeyObject } | undefined
  network: Pick<PeerNetwork, 'verify'>
  peerKeys: ReadonlyMap<string, KeyObject>
  own?: { id: number; key: KeyObject }
}): (replica: number, bytes: Uint8Array, signature: Uint8Array) => boolean {
  return (replica, bytes, signature) => {
    const hostname = options.hostnameOf(replica)
    if (hostname === undefined) return false
    if (replica === options.own?.id) return verifyWithKey(options.own.key, bytes, signature)
    const added = options.addedKey(replica)
    if (added !== undefined) return verifyWithKey(added.key, bytes, signature)
    return options.network.verify(hostname, bytes, signature) || verifyWithKey(options.peerKeys.get(hostname), bytes, signature)
  }
}

/**
 * records what a committed block decided about the group (the NODE proposals it executed, then its
 * batch's votes) and, when it decided anything, saves the group's snapshot (see membershipFromChain);
 * true when it did
 */
export function recordMembership(
  membership: Membership,
  store: MembershipStore,
  number: number,
  votes: readonly Signed<MemberVote>[],
  log: Logger,
): boolean {
  const decided = decisionsAt(store, number)
  if (votes.length === 0 && decided.length === 0) return false
  for (const outcome of membership.record(number, votes, decided)) {
    const by = outcome.byProposal === true ? ' by a NODE proposal' : ''
    if (outcome.kind === 'refused')
      log.warn(
        `${outcome.action === 'add' ? 'adding' : 'removing'} replica ${outcome.target} (decided at block ${outcome.decidedAt}${by}) refused: ${outcome.reason}`,
      )
    else
      log.info(
        `replica ${outcome.target} ${outcome.action === 'add' ? 'joins' : 'leaves'} the group (decided at block ${outcome.decidedAt}${by}); from block ${outcome.from} the group is ${outcome.members.join(', ')}`,
      )
  }
  store
    .writeConsensus([{ key: MEMBERSHIP_KEY, value: Buffer.from(stringifyJson(membership.snapshot())) }])
    .catch((error: unknown) => log.warn(`the VP group's snapshot could not be saved; a restart reads the blocks again: ${error}`))
  return true
}

/** true when `block`'s proof shows a quorum of the VP group of its seq committed its batch */
export function blockProofValid(
  block: SyncedBlock,
  members: readonly number[],
  verify: (replica: number, bytes: Uint8Array, sig: Uint8Array) => boolean,
): boolean {
  let proof: { commits: Signed<Commit>[]; votes: Signed<MemberVote>[] }
  try {
    proof = decodeProof(block.proof)
    if (proof.commits.length > 4 * members.length) return false
  } catch {
    return false
  }
  const digest = batchDigest(block.number, block.timestamp, block.txHashes, proof.votes)
  return verifyCommitCertificate(proof.commits, { seq: block.number, digest, members }, verify)
}

export function createVpRole(options: VpRoleOptions): VpRole {
  const { peerConfig, network, store, chain, log } = options
  const n = peerConfig.nodes.length
  const self = peerConfig.self.id
  const ca = options.identity.ca
  // the group it starts from is saved at its first start (start()), so a new VP's restart after the
  // one-shot flag is rewritten still knows it
  const membership = membershipFromChain(genesisGroup(peerConfig, options.genesisVps), store, { admit: admitAddVote(ca) })
  const hostnames = new Map(peerConfig.nodes.map((node) => [node.id, node.hostname]))
  const ids = new Map(peerConfig.nodes.map((node) => [node.hostname, node.id]))
  /** binds a VP the chain added, or a new VP asking to join, to its id (false when either is taken by another) */
  const learn = (id: number, hostname: string): boolean => {
    const known = hostnames.get(id)
    const knownId = ids.get(hostname)
    if (known === hostname && knownId === id) return true
    if ((known !== undefined && known !== hostname) || (knownId !== undefined && knownId !== id)) return false
    hostnames.set(id, hostname)
    ids.set(hostname, id)
    return true
  }
  const addedKey = addedKeys(membership, ca)
  /** the VPs the chain added: their host names (from the certificates their add votes carried) */
  const learnAdded = (): void => {
    for (const id of membership.snapshot().known) {
      const added = addedKey(id)
      if (added !== undefined && !learn(id, added.hostname))
        log.warn(
          `VP ${id} added by the chain is ${added.hostname}, but this node's files bind that id or host to another; its messages are ignored`,
        )
    }
  }
  learnAdded()
  /** records a block's votes (before the replica hears it is executed) and logs what they decide */
  const recordVotes = (number: number, votes: readonly Signed<MemberVote>[]): void => {
    if (recordMembership(membership, store, number, votes, log)) learnAdded()
  }
  const others = (): string[] => [...hostnames.entries()].filter(([id]) => id !== self).map(([, hostname]) => hostname)
  const verify = replicaVerifier({
    hostnameOf: (id) => hostnames.get(id),
    addedKey,
    network,
    peerKeys: options.peerKeys,
    own: { id: self, key: options.identity.cert.publicKey },
  })
  const committed = (hash: Hex): SignedTx | undefined => (store.getTx(hash) ?? store.getInvalidTx(hash))?.tx

  type Send = { to: string | undefined; message: Signed }
  const outbox = createOutbox<{ key: string; value: unknown }, Send>({
    persist: (writes) =>
      store.writeConsensus(
        writes.map(({ key, value }) => ({ key, value: value === undefined ? undefined : packTagged(BINARY_TAG, value) })),
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
      chain.halt(
        `consensus records could not be written (${(error as Error).message ?? String(error)}); restart the node once the disk is fixed`,
      )
    },
  })
  let stopped = false

  // deliveries and state transfers run one after another, in the order the replica asks
  let work: Promise<void> = Promise.resolve()
  const queue = (what: string, job: () => Promise<void>): void => {
    work = work.then(job).catch((error: unknown) => {
      log.error(`${what} failed; consensus on this VP is stuck until it is restarted`, error)
      stopped = true
      chain.halt(`${what} failed (${(error as Error).message ?? String(error)})`)
    })
  }

  const replayDeps = { chain, committed: (hash: Hex) => committed(hash) !== undefined }

  const sync = createBlockSync({
    network,
    tip: () => {
      const number = store.height()
      return { number, hash: (store.getBlock(number)?.hash ?? `0x${'0'.repeat(64)}`) as Hex }
    },
    verify: (block) => blockProofValid(block, membership.at(block.number), verify),
    apply: async (block) => {
      await applyBlock(block, replayDeps)
      recordVotes(block.number, votesOf(block))
    },
    nowNs: options.nowNs,
    log: log.child('sync'),
  })

  const replica = createReplica({
    self,
    n,
    membership,
    // not in the genesis group: a new VP, which follows the chain until its addition takes effect
    joining: !membership.epochs()[0].members.includes(self),
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
            batch: { view: batch.view, txHashes: batch.txHashes, proof: encodeProof(batch.certificate, batch.votes) },
          })
          recordVotes(batch.seq, batch.votes)
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
      event: (event: ConsensusEvent) => {
        if (event.kind === 'membership-changed') leftGroup(event.members)
        options.publishStatus(statusOf(event, self, log, hostnames))
      },
      now: () => Date.now(),
      log,
    },
  })

  /** a VP that left the group is no longer linked (node_deleteVP "disconnects the VP peer"); this one, if removed, goes idle */
  const leftGroup = (members: readonly number[], forgetAtOnce = false): void => {
    if (!members.includes(self)) {
      log.warn('this VP was removed from the group: it takes no part in consensus any more and serves only the blocks it holds')
      return
    }
    // only former members: a new VP asking to join is not a member yet. The link stays for a
    // view-change period so a removed VP still fetching the blocks up to the boundary reaches it and
    // retires (else it stays "recovering" for ever, a few blocks short); a restart forgets at once.
    for (const [id, hostname] of hostnames) {
      if (!membership.known(id) || members.includes(id)) continue
      if (forgetAtOnce) network.forget(hostname)
      else forgetTimers.push(setTimeout(() => network.forget(hostname), options.timers.viewChangeMs))
    }
  }
  const forgetTimers: NodeJS.Timeout[] = []

  // ---- adding a VP (consensus.md §7, §10.10): ATTEND, then each member's add vote ----

  /** this node asks to be voted in until its addition is decided (then the chain knows it) */
  const attending = (): boolean => !membership.known(self)
  const attend = (to?: string): void => {
    if (!attending() || stopped) return
    const payload = encodeAttend(self, peerConfig.self.hostname, options.identity.cert, (bytes) => network.sign(bytes))
    if (to !== undefined) network.send(to, Channel.attend, payload)
    else network.broadcast(Channel.attend, payload, (peer) => peer.vp)
  }
  const attendContext: AttendContext = {
    ca,
    linkVerify: (hostname, bytes, signature) => network.verify(hostname, bytes, signature),
    hostnameOf: (id) => hostnames.get(id),
    idOf: (hostname) => ids.get(hostname),
    highestId: () => Math.max(...peerConfig.nodes.map((node) => node.id), ...membership.snapshot().known),
  }
  /** add votes this VP cast in this run, by id/cert (the replica resends each until it is ordered) */
  const addVotesCast = new Set<string>()
  /** refusals logged once each (bounded: a peer could vary them) */
  const refusedAttends = new Set<string>()
  const onAttend = (from: PeerIdentity, payload: Uint8Array): void => {
    if (stopped) return
    const checked = checkAttend(from, payload, attendContext)
    if (typeof checked === 'string') {
      const key = `${from.hostname}: ${checked}`
      if (!refusedAttends.has(key)) log.warn(`${from.hostname} asks to join the VP group: refused, ${checked}`)
      if (refusedAttends.size >= 1000) refusedAttends.clear()
      refusedAttends.add(key)
      return
    }
    const { id, cert } = checked
    // linked by id from now on: it receives the group's checkpoints and follows the chain
    if (!learn(id, from.hostname)) return
    if (membership.latest().includes(id) || membership.known(id)) return
    // only a member votes (a VP still joining, or removed, has no say)
    if (!replica.state().members.includes(self) || replica.state().phase === 'joining') return
    const vote = { type: 'member-vote' as const, action: 'add' as const, target: id, cert }
    const key = `${id}/${cert}`
    if (addVotesCast.has(key) || membership.settled({ ...vote, from: self })) return
    addVotesCast.add(key)
    log.info(`${from.hostname} (an ECert of the namespace CA, OU=VP) asks to join as VP ${id}: this VP votes to add it`)
    replica.voteToAdd(id, cert)
  }

  const relay = createTxRelay({ network, pool: chain.pool, nowNs: options.nowNs, log })
  const local = chain.submitter
  const refuseUnlessNormal = (): void => {
    if (!replica.state().normal) throw SystemBusy.because('consensus is changing view or recovering; retry shortly')
  }
  /** a transaction this VP admitted goes to every other VP (consensus.md §3 step 2) */
  const relayAdmitted = (hash: Hex): Hex => {
    const pooled = chain.pool.get(hash)
    if (pooled !== undefined) {
      relay.relay(pooled.tx)
      replica.txArrived()
    }
    return hash
  }
  const submitter: TxSubmitter = {
    async submit(kind, params) {
      if ((params as { simulate?: unknown }).simulate !== true) refuseUnlessNormal()
      return relayAdmitted(await local.submit(kind, params))
    },
    async admit(checked) {
      refuseUnlessNormal()
      return relayAdmitted(await local.admit(checked))
    },
    signHash: (params) => local.signHash(params),
  }

  let ticker: NodeJS.Timeout | undefined
  return {
    replica,
    membership,
    nodeHooks: nodeHooksOf({
      membership,
      genesisHostnames: new Map(peerConfig.nodes.map((node) => [node.id, node.hostname])),
      addedKey,
      ca,
      namespace: options.namespace,
    }),
    hostnameOf: (id) => hostnames.get(id),
    idOf: (hostname) => ids.get(hostname),
    voteToRemove(target) {
      const members = membership.latest()
      if (!members.includes(target)) throw new Error(`replica ${target} is not in the VP group (${members.join(', ')}) any more`)
      if (members.length - 1 < MIN_VPS)
        throw new Error(`the group has ${members.length} VPs; removing one would leave fewer than ${MIN_VPS}, which BFT consensus needs`)
      replica.voteToRemove(target)
    },
    submitter,
    async start() {
      // a new VP's starting group must outlive the one-shot `new` flag (node.ts rewrites it after start)
      await saveStartingGroup(membership, store)
      network.on(Channel.attend, onAttend)
      network.onPeerEvent((event) => {
        if (event.kind === 'connected' && event.peer.vp) attend(event.peer.hostname)
        if (event.kind === 'refused' && refusedAsDeleted(event.reason, peerConfig.self.hostname)) {
          const id = ids.get(event.peer.hostname)
          if (id !== undefined) replica.removedBy(id)
        }
      })
      network.on(Channel.consensus, (from, payload) => {
        const id = ids.get(from.hostname)
        // only VPs known by id take part (this node's files', the chain's, new ones asking to join,
        // which the replica ignores until the chain adds them); an NVP's or a stranger's are dropped
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
      for (const { key, value } of store.readConsensus()) records.set(key, readRecord(value))
      const height = store.height()
      const header = store.getBlock(height)
      replica.start({
        records,
        height,
        heightHash: (header?.hash ?? `0x${'0'.repeat(64)}`) as Hex,
        heightTime: header?.writeTime ?? 0n,
      })
      // a restart after a group change: the blocks said who is in it
      if (membership.epochs().length > 1) leftGroup(replica.state().members, true)
      let ticks = 0
      const regossipEvery = Math.max(1, Math.round(options.timers.requestMs / options.timers.tickMs))
      const attendEvery = Math.max(1, Math.round(ATTEND_EVERY_MS / options.timers.tickMs))
      ticker = setInterval(() => {
        if (stopped) return
        replica.tick()
        if (ticks % attendEvery === 0) attend()
        if (++ticks % regossipEvery === 0) relay.regossip(options.timers.requestMs)
      }, options.timers.tickMs)
    },
    async stop() {
      stopped = true
      clearInterval(ticker)
      for (const timer of forgetTimers) clearTimeout(timer)
      await outbox.drained()
      await work
    },
  }
}

function statusOf(event: ConsensusEvent, self: number, log: Logger, hostnames: ReadonlyMap<number, string>): StatusEvent {
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
    case 'membership-changed':
      return consensusStatus.membershipChanged(
        event.from,
        event.members.map((id) => hostnames.get(id) ?? `replica ${id}`),
      )
  }
}
