/** Turning a batch (committed here, or a proven block from a peer) into the producer's input. */
import type { Chain } from '../chain/index.ts'
import type { ReadyTx } from '../chain/pool.ts'
import type { Hex, SignedTx } from '../domain.ts'
import type { SyncedBlock } from './block-sync.ts'

/**
 * The transactions a batch executes, in its order: those already committed (or named twice) are
 * skipped, alike on every node; bodies come from the pool or from `bodies`; signatures the pool
 * has not checked yet are checked here.
 */
export async function readyTxs(
  txHashes: readonly Hex[],
  bodies: ReadonlyMap<Hex, SignedTx>,
  deps: { chain: Chain; committed(hash: Hex): boolean },
): Promise<ReadyTx[]> {
  const seen = new Set<Hex>()
  const ready: ReadyTx[] = []
  const unverified: { index: number; tx: SignedTx }[] = []
  for (const hash of txHashes) {
    if (seen.has(hash) || deps.committed(hash)) continue
    seen.add(hash)
    const pooled = deps.chain.pool.get(hash)
    const tx = pooled?.tx ?? bodies.get(hash)
    if (tx === undefined) throw new Error(`batch transaction ${hash} is held neither here nor in the batch`)
    if (pooled?.signatureValid !== undefined) ready.push({ tx, signatureValid: pooled.signatureValid })
    else {
      unverified.push({ index: ready.length, tx })
      ready.push({ tx, signatureValid: false })
    }
  }
  if (unverified.length > 0) {
    const results = await deps.chain.verifier.verify(unverified.map((item) => item.tx))
    for (const [i, item] of unverified.entries()) ready[item.index].signatureValid = results[i].valid
  }
  return ready
}

/** Replays a proven block from a peer and commits it; throws (committing nothing) when its hash comes out different. */
export async function applyBlock(block: SyncedBlock, deps: { chain: Chain; committed(hash: Hex): boolean }): Promise<void> {
  const ready = await readyTxs(block.txHashes, new Map(block.txs.map((tx) => [tx.hash, tx])), deps)
  await deps.chain.produce(ready, {
    timestamp: block.timestamp,
    batch: { view: block.view, txHashes: block.txHashes, proof: block.proof },
    expectHash: block.hash,
  })
}
