/** node_getNodes / node_deleteVP / node_deleteNVP of a node in a network (src/api/node.ts's NodeDirectory). */
import type { PeerInfo } from '../../generated/types.ts'
import type { NodeDirectory } from '../api/node.ts'
import { InvalidParams, MethodNotFound } from '../errors.ts'
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
}): NodeDirectory {
  const { peerConfig, network, namespace } = options
  const self = peerConfig.self
  const address = peerConfig.hosts.get(self.hostname)
  const peerWithHash = (hash: string, vp: boolean) => network.peers().find((peer) => peer.nodeHash === hash && peer.vp === vp)
  return {
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
        ...network.peers().map((peer) => ({
          id: peer.id,
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
      if (self.vp) {
        // TODO(issue 6): membership changes (consensus.md §10.10)
        throw new MethodNotFound(
          'node_deleteVP on a VP (removing a VP from the consensus group) is not implemented yet (planned in issue 6); sent to an NVP it disconnects that NVP from the VP',
        )
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
}
