/**
 * A node's part in a network, as node.ts starts it: its network files (peerconfig.toml and certs/),
 * the peer links (p2p/), the VP or NVP role, the directory node_ methods read, and the status
 * events of its links.
 */
import type { KeyObject } from 'node:crypto'
import { join, resolve } from 'node:path'
import type { NodeDirectory, NodeStateReport } from '../api/node.ts'
import type { ReceiptSigner } from '../api/tx-records.ts'
import type { Chain } from '../chain/index.ts'
import type { KeelConfig } from '../config.ts'
import { DEFAULT_TIMERS, TEST_TIMERS } from '../consensus/bft/replica.ts'
import type { TxSubmitter } from '../domain.ts'
import type { EventHub } from '../events/hub.ts'
import { p2pStatus } from '../events/status.ts'
import type { NodeHooks } from '../governance/execute.ts'
import type { Logger } from '../log.ts'
import { loadPeerConfig, type PeerConfig, rewriteOneShotFlags } from '../p2p/config.ts'
import { loadNodeIdentity, loadPeerKeys, type NodeIdentity } from '../p2p/identity.ts'
import { createPeerNetwork } from '../p2p/network.ts'
import type { Store } from '../store/index.ts'
import { networkDirectory } from './directory.ts'
import { askNodeState, serveNodeState } from './node-state.ts'
import { createNvpRole } from './nvp.ts'
import { createVpRole } from './vp.ts'

export interface NetworkRole {
  submitter: TxSubmitter
  /** the VP group NODE proposals change (docs/governance.md §11) */
  nodeHooks: NodeHooks
  directory: NodeDirectory
  signer: ReceiptSigner
  /** this node's ECert (PEM): with `signer`, what binds its node account to it (governance.md §17) */
  certPem: string
  /** peers linked now */
  peersConnected(): number
  selfState(): NodeStateReport
  start(): Promise<void>
  stop(): Promise<void>
}

/** The network files of a node: peer configuration and its identity (certs/ under the same directory). */
export function loadNetworkFiles(config: KeelConfig): { peerConfig: PeerConfig; identity: NodeIdentity; peerKeys: Map<string, KeyObject> } {
  const dir = resolve(config.network.configDir)
  const peerConfig = loadPeerConfig(dir)
  if (peerConfig.self.hostname !== config.node.hostname) {
    throw new Error(
      `config: node.hostname is ${JSON.stringify(config.node.hostname)} but ${join(dir, 'peerconfig.toml')} says this node is ${JSON.stringify(peerConfig.self.hostname)}; make them the same`,
    )
  }
  const identity = loadNodeIdentity(join(dir, 'certs'))
  return { peerConfig, identity, peerKeys: loadPeerKeys(join(dir, 'certs'), identity.ca) }
}

/** Starts this node's part in its network: the peer links and the VP or NVP role. */
export function startNetworkRole(options: {
  peerConfig: PeerConfig
  identity: NodeIdentity
  peerKeys: Map<string, KeyObject>
  config: KeelConfig
  store: Store
  chain: Chain
  events: EventHub
  nowNs: () => bigint
  /** what this node says of itself, given its part in consensus (node_getNodeStates, and its peers' requests) */
  stateReport(consensus: { state: string; view: number | bigint }): NodeStateReport
  log: Logger
}): NetworkRole {
  const { peerConfig, config, events, log } = options
  const network = createPeerNetwork({
    config: peerConfig,
    identity: options.identity,
    namespace: config.node.namespace,
    log: log.child('p2p'),
  })
  network.onPeerEvent((event) => {
    if (event.kind === 'refused') return
    const role = event.peer.vp ? 'VP' : 'NVP'
    events.publishStatus(
      event.kind === 'connected'
        ? p2pStatus.connected(event.peer.hostname, role)
        : p2pStatus.lost(event.peer.hostname, role, 'link closed or keepalive missed'),
    )
  })
  const common = {
    peerConfig,
    network,
    peerKeys: options.peerKeys,
    identity: options.identity,
    genesisVps: config.network.genesisVps,
    namespace: config.node.namespace,
    store: options.store,
    chain: options.chain,
    nowNs: options.nowNs,
  }
  const timers = config.network.timers === 'test' ? TEST_TIMERS : DEFAULT_TIMERS
  const vp = peerConfig.self.vp
    ? createVpRole({
        ...common,
        timers,
        batchSize: config.chain.batchSize,
        publishStatus: (event) => events.publishStatus(event),
        log: log.child('consensus'),
      })
    : undefined
  // an NVP forwards a transaction again when it has no outcome after what a view change may take
  const reforwardAfterMs = 2 * timers.requestMs + timers.viewChangeMs
  const nvp =
    vp === undefined
      ? createNvpRole({
          ...common,
          reforwardAfterMs,
          hosts: () => loadPeerConfig(resolve(config.network.configDir)).hosts,
          log: log.child('nvp'),
        })
      : undefined
  const directory = networkDirectory({
    peerConfig,
    network,
    namespace: config.node.namespace,
    askState: (hostname) => askNodeState(network, hostname),
    primary: () => (vp === undefined ? undefined : vp.hostnameOf(vp.replica.state().primary)),
    consensus: () => {
      if (vp === undefined) return { role: 'nvp', state: 'following', view: options.store.getBlockBatch(options.store.height())?.view ?? 0 }
      const state = vp.replica.state()
      const primary = vp.hostnameOf(state.primary)
      return {
        role: 'vp',
        state: state.phase,
        view: state.view,
        ...(primary === undefined ? {} : { primary }),
        stableCheckpoint: state.stable,
      }
    },
    group:
      vp === undefined
        ? undefined
        : {
            members: () => vp.replica.state().members,
            voteToRemove: (id) => vp.voteToRemove(id),
            idOf: (hostname) => vp.idOf(hostname),
            hostnameOf: (id) => vp.hostnameOf(id),
          },
  })
  const selfState = (): NodeStateReport => options.stateReport(directory.consensus())
  serveNodeState(network, selfState)
  return {
    submitter: (vp ?? nvp)!.submitter,
    nodeHooks: (vp ?? nvp)!.nodeHooks,
    directory,
    selfState,
    signer: { hostname: config.node.hostname, sign: async (bytes) => network.sign(bytes) },
    certPem: options.identity.certPem,
    peersConnected: () => network.peers().filter((peer) => peer.status === 0).length,
    async start() {
      await network.start()
      await (vp ?? nvp)!.start()
      // Hyperchain's one-shot flags (consensus.md §7): a later start is a reconnect. Safe once the
      // role started: a new VP saved the group it starts from with its chain (network/vp.ts)
      try {
        if (rewriteOneShotFlags(resolve(config.network.configDir), peerConfig))
          log.info('peerconfig.toml: new = false, org = false, rec = true from now on (a restart reconnects)')
      } catch (error) {
        log.warn(`peerconfig.toml: the one-shot flags could not be rewritten (${(error as Error).message}); a restart reads them again`)
      }
      log.info(
        `${vp === undefined ? 'NVP' : `VP ${peerConfig.self.id} of ${peerConfig.nodes.length}`} ${peerConfig.self.hostname}: peer links on ${network.address.ip}:${network.address.port}`,
      )
    },
    async stop() {
      await vp?.stop()
      nvp?.stop()
      await network.stop()
    },
  }
}
