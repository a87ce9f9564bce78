/** node_getNodes / node_deleteVP / node_deleteNVP of a node in a network (src/api/node.ts's NodeDirectory). */
import type { PeerInfo } from '../../generated/types.ts'
import type { NodeDirectory, NodeStateReport } from '../api/node.ts'
import { nodeHash } from '../crypto/hash.ts'
import { InvalidParams } from '../errors.ts'
import type { PeerConfig } from '../p2p/config.ts'
import type { PeerNetwork } from '../p2p/network.ts'

export function networkDirectory(options: {
  peerConfig: PeerConfig
  network: PeerNetwork
  namespace: string
  /** host name of the current primary, when this node knows it (a VP does) */
  primary(): string | undefined
  /** this node's part in consensus (node_getConsensusStatus) */
  consensus(): ReturnType<NodeDirectory['consensus']>
  /** a linked peer's own report (node-state.ts); undefined when it does not answer */
  askState(hostname: string): Promise<NodeStateReport | undefined>
  /** a VP's part in removing VPs: the group now (its ids) and its own vote */
  group?: {
    members(): readonly number[]
    voteToRemove(id: number): void
    /** a VP's id, also of VPs the chain added after this node's files were written */
    idOf(hostname: string): number | undefined
    /** the host name of a VP of the group (idOf's reverse) */
    hostnameOf(id: number): string | undefined
  }
}): NodeDirectory {
  const { peerConfig, network, namespace } = options
  const self = peerConfig.self
  const address = peerConfig.hosts.get(self.hostname)
  const peerWithHash = (hash: string, vp: boolean) => network.peers().find((peer) => peer.nodeHash === hash && peer.vp === vp)
  const ids = new Map(peerConfig.nodes.map((node) => [node.hostname, node.id]))
  const idOf = (hostname: string): number | undefined => options.group?.idOf(hostname) ?? ids.get(hostname)
  const isMember = (hostname: string): boolean => {
    const id = idOf(hostname)
    return id !== undefined && options.group?.members().includes(id) === true
  }
  const directory: NodeDirectory = {
    async peerReports() {
      const [, ...peers] = directory.nodes()
      return Promise.all(
        peers.map(async (peer) => ({ peer, report: peer.status === 0 ? await options.askState(peer.hostname) : undefined })),
      )
    },
    nodes(): PeerInfo[] {
      const primary = options.primary()
      return [
        {
          id: self.id,
          ip: address?.ip ?? network.address.ip,
          port: address?.port ?? network.address.port,
          namespace,
          hash: network.self.nodeHash,
          hostname: self.hostname,
          isPrimary: primary === self.hostname,
          isvp: self.vp,
          status: 0,
          delay: 0,
        },
        // a VP that left the group is no longer listed, even before its link is gone
        ...network
          .peers()
          .filter((peer) => !peer.vp || options.group === undefined || isMember(peer.hostname))
          .map((peer) => ({
            id: peer.vp ? (idOf(peer.hostname) ?? peer.id) : peer.id,
            ip: peer.ip,
            port: peer.port,
            namespace,
            hash: peer.nodeHash,
            hostname: peer.hostname,
            isPrimary: primary === peer.hostname,
            isvp: peer.vp,
            status: peer.status,
            delay: peer.delayNs,
          })),
      ]
    },
    deleteVP(hash) {
      if (self.vp && options.group !== undefined) {
        // this VP's vote; the VP leaves once every VP's vote is ordered (consensus.md §10.10, membership.ts)
        // among the members, linked or not: a VP that is down can be voted out too
        const group = options.group
        const id = group.members().find((member) => {
          const hostname = group.hostnameOf(member)
          return hostname !== undefined && nodeHash(hostname, namespace) === hash
        })
        const hostname = id === undefined ? undefined : group.hostnameOf(id)
        if (id === undefined) {
          throw new InvalidParams(
            `no VP with hash ${hash} in this node's group (node_getNodes lists them; node_getNodeHash on a VP gives its hash)`,
          )
        }
        try {
          options.group.voteToRemove(id)
        } catch (error) {
          throw new InvalidParams(`VP ${hostname} (hash ${hash}) cannot be removed: ${(error as Error).message}`)
        }
        return
      }
      const peer = peerWithHash(hash, true)
      if (peer === undefined) throw new InvalidParams(`no VP with hash ${hash} among this node's peers (node_getNodes lists them)`)
      network.forget(peer.hostname)
    },
    consensus: () => options.consensus(),
    deleteNVP(hash) {
      if (!self.vp) throw new InvalidParams('node_deleteNVP is sent to a VP: an NVP has no NVP peers')
      const peer = peerWithHash(hash, false)
      if (peer === undefined) throw new InvalidParams(`no NVP with hash ${hash} among this node's peers (node_getNodes lists them)`)
      network.forget(peer.hostname)
    },
  }
  return directory
}
