/**
 * A VP's part in changes of the VP group (consensus.md §7, §10.10). Joining: a new VP sends ATTEND
 * (attend.ts) until its addition is decided, and each member that accepts it casts an add vote.
 * Leaving: links to VPs that left the group are dropped (node_deleteVP "disconnects the VP peer").
 */
import type { Membership } from '../consensus/bft/membership.ts'
import type { Replica } from '../consensus/bft/types.ts'
import type { Logger } from '../log.ts'
import type { PeerConfig } from '../p2p/config.ts'
import type { NodeIdentity } from '../p2p/identity.ts'
import type { PeerIdentity, PeerNetwork } from '../p2p/network.ts'
import { type AttendContext, checkAttend, encodeAttend } from './attend.ts'
import { Channel } from './channels.ts'
import type { VpRun } from './vp-host.ts'
import type { VpPeers } from './vp-peers.ts'

/** ATTEND sent by a new VP (`attend`) and answered by a member (`onAttend`) */
export function joinRequests(options: {
  peerConfig: PeerConfig
  identity: NodeIdentity
  network: Pick<PeerNetwork, 'send' | 'broadcast' | 'sign' | 'verify'>
  membership: Pick<Membership, 'known' | 'latest' | 'settled' | 'snapshot'>
  peers: Pick<VpPeers, 'hostnameOf' | 'idOf' | 'learn'>
  replica(): Pick<Replica, 'state' | 'voteToAdd'>
  run: Pick<VpRun, 'stopped'>
  log: Pick<Logger, 'info' | 'warn'>
}): { attend(to?: string): void; onAttend(from: PeerIdentity, payload: Uint8Array): void } {
  const { peerConfig, network, membership, peers, run, log } = options
  const self = peerConfig.self.id
  const attendContext: AttendContext = {
    ca: options.identity.ca,
    linkVerify: (hostname, bytes, signature) => network.verify(hostname, bytes, signature),
    hostnameOf: (id) => peers.hostnameOf(id),
    idOf: (hostname) => peers.idOf(hostname),
    highestId: () => Math.max(...peerConfig.nodes.map((node) => node.id), ...membership.snapshot().known),
  }
  /** add votes this VP cast in this run, by id/cert (the replica resends each until it is ordered) */
  const addVotesCast = new Set<string>()
  /** refusals logged once each (bounded: a peer could vary them) */
  const refusedAttends = new Set<string>()
  return {
    // this node asks to be voted in until its addition is decided (then the chain knows it)
    attend(to) {
      if (membership.known(self) || run.stopped) return
      const payload = encodeAttend(self, peerConfig.self.hostname, options.identity.cert, (bytes) => network.sign(bytes))
      if (to !== undefined) network.send(to, Channel.attend, payload)
      else network.broadcast(Channel.attend, payload, (peer) => peer.vp)
    },
    onAttend(from, payload) {
      if (run.stopped) return
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
      if (!peers.learn(id, from.hostname)) return
      if (membership.latest().includes(id) || membership.known(id)) return
      // only a member votes (a VP still joining, or removed, has no say)
      const replica = options.replica()
      if (!replica.state().members.includes(self) || replica.state().phase === 'joining') return
      const vote = { type: 'member-vote' as const, action: 'add' as const, target: id, cert }
      const key = `${id}/${cert}`
      if (addVotesCast.has(key) || membership.settled({ ...vote, from: self })) return
      addVotesCast.add(key)
      log.info(`${from.hostname} (an ECert of the namespace CA, OU=VP) asks to join as VP ${id}: this VP votes to add it`)
      replica.voteToAdd(id, cert)
    },
  }
}

/**
 * Drops the links to VPs that left the group; this VP, if removed, goes idle. Only former members:
 * a new VP asking to join is not a member yet. The link stays for a view-change period so a removed
 * VP still fetching the blocks up to the boundary reaches it and retires (else it stays
 * "recovering" for ever, a few blocks short); a restart forgets at once.
 */
export function groupLeaving(options: {
  self: number
  network: Pick<PeerNetwork, 'forget'>
  membership: Pick<Membership, 'known'>
  peers: Pick<VpPeers, 'entries'>
  viewChangeMs: number
  log: Pick<Logger, 'warn'>
}): { leftGroup(members: readonly number[], forgetAtOnce?: boolean): void; stop(): void } {
  const { network, membership, peers, log } = options
  const forgetTimers: NodeJS.Timeout[] = []
  return {
    leftGroup(members, forgetAtOnce = false) {
      if (!members.includes(options.self)) {
        log.warn('this VP was removed from the group: it takes no part in consensus any more and serves only the blocks it holds')
        return
      }
      for (const [id, hostname] of peers.entries()) {
        if (!membership.known(id) || members.includes(id)) continue
        if (forgetAtOnce) network.forget(hostname)
        else forgetTimers.push(setTimeout(() => network.forget(hostname), options.viewChangeMs))
      }
    },
    stop() {
      for (const timer of forgetTimers) clearTimeout(timer)
    },
  }
}
