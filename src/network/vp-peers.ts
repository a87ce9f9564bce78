/**
 * The VPs a VP knows by replica id (vp.ts): those of peerconfig.toml, those the chain added (host
 * names from the certificates their add votes carried) and new VPs asking to join (attend.ts). A
 * consensus message is taken only from a VP known here, and the replica's sends go to these.
 */
import type { Membership } from '../consensus/bft/membership.ts'
import type { Logger } from '../log.ts'
import type { PeerConfig } from '../p2p/config.ts'

export interface VpPeers {
  hostnameOf(id: number): string | undefined
  idOf(hostname: string): number | undefined
  /** binds a VP the chain added, or a new VP asking to join, to its id (false when either is taken by another) */
  learn(id: number, hostname: string): boolean
  /** binds every VP the chain added so far (call after a block changed the group) */
  learnAdded(): void
  /** the known VPs, by id */
  entries(): IterableIterator<[number, string]>
  /** the host names of every known VP but this node */
  others(): string[]
}

export function createVpPeers(options: {
  peerConfig: PeerConfig
  membership: Pick<Membership, 'snapshot'>
  /** a VP the chain added: its host name from its certificate (vp.ts addedKeys) */
  addedKey(id: number): { hostname: string } | undefined
  log: Pick<Logger, 'warn'>
}): VpPeers {
  const { peerConfig, membership, addedKey, log } = options
  const self = peerConfig.self.id
  const hostnames = new Map(peerConfig.nodes.map((node) => [node.id, node.hostname]))
  const ids = new Map(peerConfig.nodes.map((node) => [node.hostname, node.id]))
  const learn = (id: number, hostname: string): boolean => {
    const known = hostnames.get(id)
    const knownId = ids.get(hostname)
    if (known === hostname && knownId === id) return true
    if ((known !== undefined && known !== hostname) || (knownId !== undefined && knownId !== id)) return false
    hostnames.set(id, hostname)
    ids.set(hostname, id)
    return true
  }
  return {
    hostnameOf: (id) => hostnames.get(id),
    idOf: (hostname) => ids.get(hostname),
    learn,
    learnAdded() {
      for (const id of membership.snapshot().known) {
        const added = addedKey(id)
        if (added !== undefined && !learn(id, added.hostname))
          log.warn(
            `VP ${id} added by the chain is ${added.hostname}, but this node's files bind that id or host to another; its messages are ignored`,
          )
      }
    },
    entries: () => hostnames.entries(),
    others: () => [...hostnames.entries()].filter(([id]) => id !== self).map(([, hostname]) => hostname),
  }
}
