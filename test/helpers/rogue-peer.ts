/**
 * A Byzantine VP for process-level tests: not a Keel node but a bare PeerNetwork in the test's own
 * process, started from a VP's real files (its ECert and key, its peerconfig and hosts.toml), so
 * the honest nodes authenticate it exactly as that VP. It speaks the real consensus codec and signs
 * with the VP's real key; what it says is up to the test, including what an honest VP never would.
 */
import { join } from 'node:path'
import { type Body, encodeMessage, type Signed, signingBytes } from '../../src/consensus/bft/messages.ts'
import { createLogger } from '../../src/log.ts'
import { Channel } from '../../src/network/channels.ts'
import { loadPeerConfig } from '../../src/p2p/config.ts'
import { loadNodeIdentity } from '../../src/p2p/identity.ts'
import { createPeerNetwork, type PeerNetwork } from '../../src/p2p/network.ts'

export interface RoguePeer {
  readonly hostname: string
  /** its replica id (peerconfig.toml) */
  readonly id: number
  readonly net: PeerNetwork
  /** the VPs it is linked to right now */
  linkedVps(): string[]
  /** `body` signed with this VP's real key; `from` is what the message claims (its own id by default) */
  sign<T extends Body>(body: T, from?: number): Signed<T>
  /** a consensus message, or raw bytes, on the consensus channel to one peer */
  send(to: string, message: Signed | Uint8Array): boolean
  /** the same to every linked VP; resolves how many took it */
  broadcast(message: Signed | Uint8Array): number
  stop(): Promise<void>
}

export async function startRoguePeer(options: { configDir: string; namespace: string }): Promise<RoguePeer> {
  const config = loadPeerConfig(options.configDir)
  const net = createPeerNetwork({
    config,
    identity: loadNodeIdentity(join(options.configDir, 'certs')),
    namespace: options.namespace,
    log: createLogger({ level: 'silent' }),
  })
  await net.start()
  const bytesOf = (message: Signed | Uint8Array): Uint8Array => (message instanceof Uint8Array ? message : encodeMessage(message))
  return {
    hostname: config.self.hostname,
    id: config.self.id,
    net,
    linkedVps: () =>
      net
        .peers()
        .filter((peer) => peer.vp && peer.status === 0)
        .map((peer) => peer.hostname),
    sign: (body, from = config.self.id) => ({ body, from, sig: Buffer.from(net.sign(signingBytes(from, body))).toString('hex') }),
    send: (to, message) => net.send(to, Channel.consensus, bytesOf(message)),
    broadcast: (message) => net.broadcast(Channel.consensus, bytesOf(message), (peer) => peer.vp),
    stop: () => net.stop(),
  }
}
