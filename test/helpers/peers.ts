/**
 * The peer links of a local network in one process: `createNetwork` writes the files (CA, ECerts,
 * peer configuration) as `npm run network` does, and each node's PeerNetwork is started from them,
 * real TLS on loopback. For tests of what runs over the links.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createNetwork, type NetworkPlan } from '../../src/devnet/network.ts'
import { createLogger } from '../../src/log.ts'
import { loadPeerConfig } from '../../src/p2p/config.ts'
import { loadNodeIdentity } from '../../src/p2p/identity.ts'
import { createPeerNetwork, type PeerNetwork } from '../../src/p2p/network.ts'

export interface LinkedPeers {
  plan: NetworkPlan
  dir: string
  nets: Map<string, PeerNetwork>
  stop(): Promise<void>
}

/** Starts every node's PeerNetwork and resolves once each VP is linked to every other node it dials. */
export async function linkedPeers(vps: number, nvps: number): Promise<LinkedPeers> {
  const dir = join(mkdtempSync(join(tmpdir(), 'keel-peers-')), 'network')
  const plan = await createNetwork(dir, { vps, nvps, jsonrpcPort: 0, p2pPort: 0 })
  const nets = new Map<string, PeerNetwork>()
  for (const node of plan.nodes) {
    const configDir = join(dir, node.hostname, 'config')
    const net = createPeerNetwork({
      config: loadPeerConfig(configDir),
      identity: loadNodeIdentity(join(configDir, 'certs')),
      namespace: plan.namespace,
      log: createLogger({ level: 'silent' }),
    })
    nets.set(node.hostname, net)
  }
  await Promise.all([...nets.values()].map((net) => net.start()))
  const everyoneLinked = () =>
    [...nets.values()].every(
      (net) => net.peers().filter((peer) => peer.status === 0).length === (net.self.vp ? plan.nodes.length - 1 : vps),
    )
  const deadline = Date.now() + 20_000
  while (!everyoneLinked()) {
    if (Date.now() > deadline) throw new Error('the peers did not all link within 20 s')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { plan, dir, nets, stop: async () => void (await Promise.all([...nets.values()].map((net) => net.stop()))) }
}
