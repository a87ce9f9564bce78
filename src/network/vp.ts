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
import { batchDigest, type Commit, decodeMessage, type MemberVote, type Signed } from '../consensus/bft/messages.ts'
import {
  type ConsensusEvent,
  type ConsensusTimers,
  createReplica,
  type Replica,
  verifyCommitCertificate,
} from '../consensus/bft/replica.ts'
import type { Restored } from '../consensus/bft/types.ts'
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
import { isBinary, unpack } from '../wire/binary.ts'
import { parseJson, stringifyJson } from '../wire/json.ts'
import { type SyncedBlock, serveBlocks } from './block-sync.ts'
import { Channel } from './channels.ts'
import { serveForwardedTxs } from './forward.ts'
import { pushBlock } from './nvp-feed.ts'
import { serveTxFetches } from './tx-fetch.ts'
import { createTxRelay, type TxRelay } from './tx-relay.ts'
import { groupLeaving, joinRequests } from './vp-group.ts'
import { blockSteps, consensusMessages, createVpRun, poolLending, type VpRun } from './vp-host.ts'
import { createVpPeers, type VpPeers } from './vp-peers.ts'

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

/**
 * A VP's role: the replica, assembled from the parts of its host (vp-host.ts), the VPs it knows by
 * id (vp-peers.ts), its part in group changes (vp-group.ts) and the gate its clients' transactions
 * pass (vpSubmitter); start() links them to the network.
 */
export function createVpRole(options: VpRoleOptions): VpRole {
  const { peerConfig, network, store, chain, log } = options
  const self = peerConfig.self.id
  const ca = options.identity.ca
  // the group it starts from is saved at its first start (start()), so a new VP's restart after the
  // one-shot flag is rewritten still knows it
  const membership = membershipFromChain(genesisGroup(peerConfig, options.genesisVps), store, { admit: admitAddVote(ca) })
  const addedKey = addedKeys(membership, ca)
  const peers = createVpPeers({ peerConfig, membership, addedKey, log })
  peers.learnAdded()
  /** records a block's votes (before the replica hears it is executed) and logs what they decide */
  const recordVotes = (number: number, votes: readonly Signed<MemberVote>[]): void => {
    if (recordMembership(membership, store, number, votes, log)) peers.learnAdded()
  }
  const verify = replicaVerifier({
    hostnameOf: peers.hostnameOf,
    addedKey,
    network,
    peerKeys: options.peerKeys,
    own: { id: self, key: options.identity.cert.publicKey },
  })
  const committed = (hash: Hex): SignedTx | undefined => (store.getTx(hash) ?? store.getInvalidTx(hash))?.tx
  const run = createVpRun({ chain, log })
  const messages = consensusMessages({ store, network, peers, run })
  const blocks = blockSteps({
    store,
    chain,
    committed,
    network,
    membership,
    proofValid: (block, members) => blockProofValid(block, members, verify),
    recordVotes,
    peers,
    replica: () => replica,
    run,
    nowNs: options.nowNs,
    log,
  })
  const leaving = groupLeaving({ self, network, membership, peers, viewChangeMs: options.timers.viewChangeMs, log })
  const { persist, send, broadcast } = messages
  const replica = createReplica({
    self,
    n: peerConfig.nodes.length,
    membership,
    // not in the genesis group: a new VP, which follows the chain until its addition takes effect
    joining: !membership.epochs()[0].members.includes(self),
    batchSize: options.batchSize,
    timers: options.timers,
    host: {
      sign: (bytes) => network.sign(bytes),
      verify,
      persist,
      send,
      broadcast,
      ...poolLending({ pool: chain.pool, committed, network, peers, nowNs: options.nowNs, log }),
      deliver: blocks.deliver,
      stateTransfer: blocks.stateTransfer,
      event: (event: ConsensusEvent) => {
        if (event.kind === 'membership-changed') leaving.leftGroup(event.members)
        options.publishStatus(statusOf(event, self, log, peers))
      },
      now: () => Date.now(),
      log,
    },
  })
  const joining = joinRequests({ peerConfig, identity: options.identity, network, membership, peers, replica: () => replica, run, log })
  const relay = createTxRelay({ network, pool: chain.pool, nowNs: options.nowNs, log })
  const submitter = vpSubmitter({ local: chain.submitter, pool: chain.pool, relay, replica })

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
    hostnameOf: peers.hostnameOf,
    idOf: peers.idOf,
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
      listen({ network, peerConfig, peers, replica, joining, run, log })
      serveBlocks(network, store)
      serveTxFetches(network, { pooled: (hash) => chain.pool.get(hash)?.tx, committed })
      serveForwardedTxs({ network, submitter, nowNs: options.nowNs, log })
      chain.onBlock((block) => pushBlock(network, store, block.header.number))
      chain.pool.onReady(() => replica.txArrived())
      replica.start(restoredFrom(store))
      // a restart after a group change: the blocks said who is in it
      if (membership.epochs().length > 1) leaving.leftGroup(replica.state().members, true)
      let ticks = 0
      const regossipEvery = Math.max(1, Math.round(options.timers.requestMs / options.timers.tickMs))
      const attendEvery = Math.max(1, Math.round(ATTEND_EVERY_MS / options.timers.tickMs))
      ticker = setInterval(() => {
        if (run.stopped) return
        replica.tick()
        if (ticks % attendEvery === 0) joining.attend()
        if (++ticks % regossipEvery === 0) relay.regossip(options.timers.requestMs)
      }, options.timers.tickMs)
    },
    async stop() {
      run.stop()
      clearInterval(ticker)
      leaving.stop()
      await messages.drained()
      await blocks.drained()
    },
  }
}

/** what the replica persisted (keyspace of writeConsensus) and the chain's height, for its start */
function restoredFrom(store: Pick<Store, 'readConsensus' | 'height' | 'getBlock'>): Restored {
  const records = new Map<string, unknown>()
  for (const { key, value } of store.readConsensus()) records.set(key, readRecord(value))
  const height = store.height()
  const header = store.getBlock(height)
  return { records, height, heightHash: (header?.hash ?? `0x${'0'.repeat(64)}`) as Hex, heightTime: header?.writeTime ?? 0n }
}

/** the channels a VP listens on: ATTEND, consensus messages, and peers' link events */
function listen(options: {
  network: PeerNetwork
  peerConfig: PeerConfig
  peers: Pick<VpPeers, 'idOf'>
  replica: Pick<Replica, 'receive' | 'removedBy'>
  joining: { attend(to?: string): void; onAttend(from: PeerIdentity, payload: Uint8Array): void }
  run: Pick<VpRun, 'stopped'>
  log: Pick<Logger, 'warn'>
}): void {
  const { network, peers, replica, joining, run, log } = options
  network.on(Channel.attend, joining.onAttend)
  network.onPeerEvent((event) => {
    if (event.kind === 'connected' && event.peer.vp) joining.attend(event.peer.hostname)
    if (event.kind === 'refused' && refusedAsDeleted(event.reason, options.peerConfig.self.hostname)) {
      const id = peers.idOf(event.peer.hostname)
      if (id !== undefined) replica.removedBy(id)
    }
  })
  network.on(Channel.consensus, (from, payload) => {
    const id = peers.idOf(from.hostname)
    // only VPs known by id take part (this node's files', the chain's, new ones asking to join,
    // which the replica ignores until the chain adds them); an NVP's or a stranger's are dropped
    if (!from.vp || id === undefined || run.stopped) return
    let message: Signed
    try {
      message = decodeMessage(payload)
    } catch (error) {
      log.warn(`dropped a malformed consensus message from ${from.hostname}: ${(error as Error).message}`)
      return
    }
    replica.receive(id, message)
  })
}

/**
 * Admission for a VP's clients: -32006 while consensus is not running normally (a simulation
 * passes), and a transaction this VP admitted goes to every other VP (consensus.md §3 step 2).
 */
function vpSubmitter(options: {
  local: TxSubmitter
  pool: Pick<Chain['pool'], 'get'>
  relay: Pick<TxRelay, 'relay'>
  replica: Pick<Replica, 'state' | 'txArrived'>
}): TxSubmitter {
  const { local, pool, relay, replica } = options
  const refuseUnlessNormal = (): void => {
    if (!replica.state().normal) throw SystemBusy.because('consensus is changing view or recovering; retry shortly')
  }
  const relayAdmitted = (hash: Hex): Hex => {
    const pooled = pool.get(hash)
    if (pooled !== undefined) {
      relay.relay(pooled.tx)
      replica.txArrived()
    }
    return hash
  }
  return {
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
}

function statusOf(event: ConsensusEvent, self: number, log: Logger, peers: Pick<VpPeers, 'hostnameOf'>): StatusEvent {
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
        event.members.map((id) => peers.hostnameOf(id) ?? `replica ${id}`),
      )
  }
}
