/** Handlers of the `node_` service. */
import type { NodeHandlers } from '../../generated/handlers.ts'
import type { ConsensusStatus, NamespaceStatus, NodeState, PeerInfo } from '../../generated/types.ts'
import { nodeHash } from '../crypto/hash.ts'
import { InvalidParams } from '../errors.ts'

export interface NodeIdentity {
  hostname: string
  namespace: string
}

/**
 * The nodes of the namespace as this node sees them; the network layer implements it. A node
 * running alone has none: node_getNodes then lists only itself, and the deletions say there is
 * no such peer.
 */
export interface NodeDirectory {
  /** every node this one knows, itself first (delay 0) */
  nodes(): PeerInfo[]
  /** starts removing the VP with this hash (consensus.md §7); throws an RpcError the client can act on */
  deleteVP(hash: string): void
  /** disconnects the NVP with this hash from this VP */
  deleteNVP(hash: string): void
  /** this node's part in consensus (node_getConsensusStatus adds the height) */
  consensus(): Omit<ConsensusStatus, 'height'>
  /** what each other node says of itself (node_getNodeStates); undefined: it did not answer */
  peerReports?(): Promise<{ peer: PeerInfo; report?: NodeStateReport }[]>
}

/** How a node is, in its own words: its answer to a peer's Channel.nodeState request (network/node-state.ts). */
export interface NodeStateReport {
  /** its consensus state (ConsensusStatus.state) */
  state: string
  view: number
  height: number
  /** hash of its latest block (the zero hash before the first) */
  hash: string
  /** the versions it runs (version_getVersions' ChainVersion) */
  versions: Record<string, string>
}

/**
 * The namespaces of this process (issue 30; node.ts), for node_getNamespaces, node_startNamespace
 * and node_stopNamespace. Their refusals are RpcErrors the client can act on.
 */
export interface NamespaceControl {
  list(): NamespaceStatus[]
  start(name: string): Promise<NamespaceStatus>
  stop(name: string): Promise<NamespaceStatus>
}

/** node_getNodeStates' status of a node that did not answer, from its link (PeerInfo.status). */
const UNANSWERED = ['UNREACHABLE', 'PENDING', 'STOPPED'] as const

function nodeState(peer: PeerInfo, report: NodeStateReport | undefined): NodeState {
  const base = { id: peer.id, hash: peer.hash, hostname: peer.hostname }
  if (report === undefined) return { ...base, status: UNANSWERED[peer.status] }
  return {
    ...base,
    status: report.state.toUpperCase(),
    view: report.view,
    blockHeight: `0x${report.height.toString(16)}`,
    blockHash: report.hash,
  }
}

export function createNodeHandlers(modules: {
  identity: NodeIdentity
  directory?: NodeDirectory
  chain: { height(): number }
  /** why ordering stopped for good, once it has (src/chain/index.ts Chain.halted) */
  ordering?: { halted(): string | undefined }
  /** this node's own report (what it answers its peers too) */
  selfState(): NodeStateReport
  /** the namespaces of the process; absent: handlers built for one namespace alone (it is the only one, and none starts) */
  namespaces?: NamespaceControl
}): NodeHandlers {
  const hash = nodeHash(modules.identity.hostname, modules.identity.namespace)
  const directory = modules.directory ?? aloneDirectory(modules.identity)
  return {
    node_getNodes: () => directory.nodes(),
    node_getNodeStates: async () => {
      const [self] = directory.nodes()
      const peers = (await directory.peerReports?.()) ?? []
      return [nodeState(self, modules.selfState()), ...peers.map(({ peer, report }) => nodeState(peer, report))]
    },
    node_getNodeHash: () => hash,
    node_getConsensusStatus: () => {
      const reason = modules.ordering?.halted()
      return {
        ...directory.consensus(),
        ...(reason === undefined ? {} : { state: 'stopped' as const, reason }),
        height: modules.chain.height(),
      }
    },
    node_deleteVP: ([{ nodehash }]) => {
      directory.deleteVP(nodehash.toLowerCase())
      return `successful request to delete vp node, hash ${nodehash.toLowerCase()}`
    },
    node_deleteNVP: ([{ nodehash }]) => {
      directory.deleteNVP(nodehash.toLowerCase())
      return `successful request to delete nvp node, hash ${nodehash.toLowerCase()}`
    },
    node_getNamespaces: () =>
      modules.namespaces?.list() ?? [
        { name: modules.identity.namespace, state: 'running', isDefault: true, height: modules.chain.height() },
      ],
    node_startNamespace: ([name]) => namespacesOf(modules.namespaces).start(name),
    node_stopNamespace: ([name]) => namespacesOf(modules.namespaces).stop(name),
  }
}

function namespacesOf(control: NamespaceControl | undefined): NamespaceControl {
  if (control === undefined) throw new InvalidParams('these handlers serve one namespace alone: no namespace starts or stops here')
  return control
}

/** A node with no network configured: the only VP, its own primary, with no peer port. */
export function aloneDirectory(identity: NodeIdentity): NodeDirectory {
  const hash = nodeHash(identity.hostname, identity.namespace)
  const noPeer = (kind: string, wanted: string): never => {
    throw new InvalidParams(
      `no ${kind} with hash ${wanted} among this node's peers: it runs alone (no [network] configDir), so node_getNodes lists only itself`,
    )
  }
  return {
    nodes: () => [
      {
        id: 1,
        ip: '127.0.0.1',
        port: 0,
        namespace: identity.namespace,
        hash,
        hostname: identity.hostname,
        isPrimary: true,
        isvp: true,
        status: 0,
        delay: 0,
      },
    ],
    deleteVP: (wanted) => noPeer('VP', wanted),
    deleteNVP: (wanted) => noPeer('NVP', wanted),
    consensus: () => ({ role: 'solo', state: 'normal', view: 0, primary: identity.hostname }),
  }
}
