/**
 * An NVP of a network: it orders nothing. It follows the chain from the VPs' pushes (nvp-feed.ts),
 * accepting a block only with a quorum commit proof and only if replaying it here gives the same
 * hash; it hands its clients' transactions to a VP (forward.ts) and answers every query itself.
 */
import type { KeyObject } from 'node:crypto'
import type { Chain } from '../chain/index.ts'
import type { Hex, TxSubmitter } from '../domain.ts'
import type { NodeHooks } from '../governance/execute.ts'
import type { Logger } from '../log.ts'
import type { PeerConfig } from '../p2p/config.ts'
import type { NodeIdentity } from '../p2p/identity.ts'
import type { PeerNetwork } from '../p2p/network.ts'
import type { Store } from '../store/index.ts'
import { createBlockSync, type SyncedBlock } from './block-sync.ts'
import { forwardingSubmitter } from './forward.ts'
import { createNvpFeed } from './nvp-feed.ts'
import { applyBlock } from './replay.ts'
import {
  addedKeys,
  admitAddVote,
  blockProofValid,
  genesisGroup,
  membershipFromChain,
  nodeHooksOf,
  recordMembership,
  replicaVerifier,
  saveStartingGroup,
  votesOf,
} from './vp.ts'

export interface NvpRoleOptions {
  peerConfig: PeerConfig
  network: PeerNetwork
  peerKeys: ReadonlyMap<string, KeyObject>
  /** the namespace CA checks the certificates of the VPs the chain adds (vp.ts admitAddVote) */
  identity: Pick<NodeIdentity, 'ca'>
  /** the chain's first VP group (keel.toml [network] genesisVps); default: the VPs of peerconfig.toml */
  genesisVps?: readonly number[]
  store: Store
  chain: Chain
  /** hosts.toml now: where a VP the chain added listens (read again when one appears; operators add its line) */
  hosts?(): ReadonlyMap<string, { ip: string; port: number }>
  /** forward.ts DEFAULT_REFORWARD_AFTER_MS unless given */
  reforwardAfterMs?: number
  /** keel.toml node.namespace (NODE proposals name it) */
  namespace: string
  nowNs(): bigint
  log: Logger
}

export interface NvpRole {
  submitter: TxSubmitter
  /** the VP group as NODE proposals see it: an NVP executes them too */
  readonly nodeHooks: NodeHooks
  start(): Promise<void>
  stop(): void
}

export function createNvpRole(options: NvpRoleOptions): NvpRole {
  const { peerConfig, network, store, chain, log } = options
  // the VP group per block, from the votes the blocks ordered (membership.ts): proofs are checked
  // against the group of their block, and a VP that left the group is no longer followed
  const membership = membershipFromChain(genesisGroup(peerConfig, options.genesisVps), store, {
    admit: admitAddVote(options.identity.ca),
  })
  const addedKey = addedKeys(membership, options.identity.ca)
  const hostnames = new Map(peerConfig.nodes.map((node) => [node.id, node.hostname]))
  // a VP the chain added after this node's files were written is known by the certificate its add votes carried
  const hostnameOf = (id: number): string | undefined => hostnames.get(id) ?? addedKey(id)?.hostname
  const isMember = (hostname: string): boolean => membership.latest().some((id) => hostnameOf(id) === hostname)
  const verify = replicaVerifier({
    hostnameOf,
    addedKey,
    network,
    peerKeys: options.peerKeys,
  })
  /** the VPs linked now, in a random order (a forwarded transaction goes to any of them) */
  const linkedVps = (): string[] =>
    network
      .peers()
      .filter((peer) => peer.vp && peer.status === 0 && isMember(peer.hostname))
      .map((peer) => peer.hostname)
      .sort(() => Math.random() - 0.5)
  const tip = () => {
    const number = store.height()
    return { number, hash: (store.getBlock(number)?.hash ?? `0x${'0'.repeat(64)}`) as Hex }
  }
  const replayDeps = { chain, committed: (hash: Hex) => store.getTx(hash) !== undefined || store.getInvalidTx(hash) !== undefined }
  // a VP the chain added lists this NVP nowhere, so this NVP dials it: its host name comes from the
  // certificate its add votes carried, its address from hosts.toml (read again, at most every 30 s)
  const dialledAdded = new Set<string>()
  let hostsReadAt = 0
  const dialAddedVps = (): void => {
    const missing = membership
      .latest()
      .filter((id) => !hostnames.has(id))
      .map(hostnameOf)
      .filter((hostname): hostname is string => hostname !== undefined && !dialledAdded.has(hostname))
    if (missing.length === 0 || options.hosts === undefined || Date.now() - hostsReadAt < 30_000) return
    hostsReadAt = Date.now()
    let hosts: ReadonlyMap<string, { ip: string; port: number }>
    try {
      hosts = options.hosts()
    } catch (error) {
      log.warn(`cannot read hosts.toml to reach the VPs the chain added (${missing.join(', ')}): ${(error as Error).message}`)
      return
    }
    for (const hostname of missing) {
      const address = hosts.get(hostname)
      if (address === undefined) {
        log.warn(`the chain added VP ${hostname} but hosts.toml has no line for it: add its address so this NVP can reach it`)
        continue
      }
      dialledAdded.add(hostname)
      network.addPeer(hostname, address)
    }
  }
  const apply = async (block: SyncedBlock): Promise<void> => {
    await applyBlock(block, replayDeps)
    recordMembership(membership, store, block.number, votesOf(block), log)
    dialAddedVps()
  }
  const verifyBlock = (block: SyncedBlock): boolean => blockProofValid(block, membership.at(block.number), verify)
  const sync = createBlockSync({ network, tip, verify: verifyBlock, apply, nowNs: options.nowNs, log })
  const submitter = forwardingSubmitter({
    network,
    pickVp: (except) => linkedVps().find((hostname) => hostname !== except),
    local: chain.submitter,
    committed: (hash) => replayDeps.committed(hash as Hex),
    reforwardAfterMs: options.reforwardAfterMs,
    nowNs: options.nowNs,
    log,
  })
  return {
    submitter,
    nodeHooks: nodeHooksOf({
      membership,
      genesisHostnames: new Map(peerConfig.nodes.map((node) => [node.id, node.hostname])),
      addedKey,
      ca: options.identity.ca,
      namespace: options.namespace,
    }),
    async start() {
      await saveStartingGroup(membership, store)
      dialAddedVps()
      createNvpFeed({
        network,
        tip,
        verify: verifyBlock,
        apply,
        sync,
        vps: linkedVps,
        nowNs: options.nowNs,
        log,
      })
    },
    stop: () => submitter.stop(),
  }
}
