/**
 * An NVP of a network: it orders nothing. It follows the chain from the VPs' pushes (nvp-feed.ts),
 * accepting a block only with a quorum commit proof and only if replaying it here gives the same
 * hash; it hands its clients' transactions to a VP (forward.ts) and answers every query itself.
 */
import type { TxSubmitter } from '../api/submit.ts'
import type { Chain } from '../chain/index.ts'
import type { ReadyTx } from '../chain/pool.ts'
import type { Hex } from '../chain/types.ts'
import type { Logger } from '../log.ts'
import type { PeerConfig } from '../p2p/config.ts'
import type { PeerNetwork } from '../p2p/network.ts'
import type { Store } from '../store/index.ts'
import { createBlockSync } from './block-sync.ts'
import { forwardingSubmitter } from './forward.ts'
import { createNvpFeed } from './nvp-feed.ts'
import { blockProofValid } from './vp.ts'

export interface NvpRoleOptions {
  peerConfig: PeerConfig
  network: PeerNetwork
  store: Store
  chain: Chain
  nowNs(): bigint
  log: Logger
}

export interface NvpRole {
  submitter: TxSubmitter
  start(): Promise<void>
}

export function createNvpRole(options: NvpRoleOptions): NvpRole {
  const { peerConfig, network, store, chain, log } = options
  const n = peerConfig.nodes.length
  const ids = new Map(peerConfig.nodes.map((node) => [node.hostname, node.id]))
  const verify = (replica: number, bytes: Uint8Array, signature: Uint8Array): boolean => {
    const hostname = peerConfig.nodes.find((node) => node.id === replica)?.hostname
    return hostname !== undefined && network.verify(hostname, bytes, signature)
  }
  /** the VPs linked now, in a random order (a forwarded transaction goes to any of them) */
  const linkedVps = (): string[] =>
    network
      .peers()
      .filter((peer) => peer.vp && peer.status === 0 && ids.has(peer.hostname))
      .map((peer) => peer.hostname)
      .sort(() => Math.random() - 0.5)
  const tip = () => {
    const number = store.height()
    return { number, hash: (store.getBlock(number)?.hash ?? `0x${'0'.repeat(64)}`) as Hex }
  }
  const apply = async (block: Parameters<Parameters<typeof createBlockSync>[0]['apply']>[0]): Promise<void> => {
    const committed = (hash: Hex) => store.getTx(hash) !== undefined || store.getInvalidTx(hash) !== undefined
    const bodies = new Map(block.txs.map((tx) => [tx.hash, tx]))
    const seen = new Set<Hex>()
    const txs = block.txHashes.filter((hash) => !committed(hash) && !seen.has(hash) && seen.add(hash) !== undefined)
    const valid = await chain.verifier.verify(txs.map((hash) => bodies.get(hash)!))
    const ready: ReadyTx[] = txs.map((hash, i) => ({ tx: bodies.get(hash)!, signatureValid: valid[i] }))
    await chain.produce(ready, {
      timestamp: block.timestamp,
      batch: { view: block.view, txHashes: block.txHashes, proof: block.proof },
      expectHash: block.hash,
    })
  }
  const sync = createBlockSync({ network, tip, verify: (block) => blockProofValid(block, n, verify), apply, nowNs: options.nowNs, log })
  const submitter = forwardingSubmitter({ network, pickVp: () => linkedVps()[0], local: chain.submitter, nowNs: options.nowNs, log })
  return {
    submitter,
    async start() {
      createNvpFeed({
        network,
        tip,
        verify: (block) => blockProofValid(block, n, verify),
        apply,
        sync,
        vps: linkedVps,
        nowNs: options.nowNs,
        log,
      })
    },
  }
}
