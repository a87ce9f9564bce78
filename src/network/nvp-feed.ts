/**
 * How NVPs follow the chain (consensus.md §6, with §10.9's fix): each VP pushes every block it
 * commits, with its commit proof, to the NVPs linked to it; an NVP applies the next block from
 * whichever VP pushes it first, after checking the proof against the VP set and replaying it.
 * A pushed block beyond the next one means the NVP missed some: it syncs up to the pushed block's
 * parent from the VPs (block-sync.ts), then applies the pushed block. The NVP trusts no single VP:
 * the proof and the replay decide.
 */
import type { Hex } from '../domain.ts'
import type { Logger } from '../log.ts'
import { type BlockSource, type BlockSync, decodeBlocks, PROOF_HINT, readBlocks, type SyncedBlock } from './block-sync.ts'
import { Channel } from './channels.ts'

export interface PushNetwork {
  broadcast(channel: number, payload: Uint8Array, to?: (peer: { vp: boolean }) => boolean): void
  peers(): readonly { vp: boolean; status: number }[]
}

/** VP side: sends a committed block to every NVP linked to this VP. */
export function pushBlock(network: PushNetwork, source: BlockSource, number: number): void {
  // reading and encoding a full block costs the main thread ~3% of a 4-VP network's load: only for a listener
  if (!network.peers().some((peer) => !peer.vp && peer.status === 0)) return
  network.broadcast(Channel.blockPush, readBlocks(source, number, number), (peer) => !peer.vp)
}

export interface NvpFeedOptions {
  network: { on(channel: number, handler: (from: { hostname: string; vp: boolean }, payload: Uint8Array) => void): void }
  tip(): { number: number; hash: Hex }
  verify(block: SyncedBlock): boolean
  apply(block: SyncedBlock): Promise<void>
  sync: BlockSync
  /** the VPs to sync from, in the order to ask them */
  vps(): string[]
  nowNs(): bigint
  log: Logger
}

export interface NvpFeed {
  /** resolves when every push received so far has been handled */
  idle(): Promise<void>
}

export function createNvpFeed(options: NvpFeedOptions): NvpFeed {
  const { log } = options
  // pushes are handled one at a time, in arrival order: applying is asynchronous
  let queue: Promise<void> = Promise.resolve()

  const handle = async (from: string, block: SyncedBlock): Promise<void> => {
    const tip = options.tip()
    if (block.number <= tip.number) return
    if (block.number > tip.number + 1) {
      log.info(`block ${block.number} pushed by ${from}, this NVP is at ${tip.number}: syncing the blocks between`)
      await options.sync.syncTo({ number: block.number - 1, hash: block.parentHash }, [from, ...options.vps().filter((vp) => vp !== from)])
    }
    const now = options.tip()
    if (block.parentHash !== now.hash) throw new Error(`block ${block.number} from ${from} does not follow this NVP's block ${now.number}`)
    if (!options.verify(block)) throw new Error(`block ${block.number} from ${from} has no valid commit proof${PROOF_HINT}`)
    await options.apply(block)
  }

  options.network.on(Channel.blockPush, (from, payload) => {
    if (!from.vp) {
      log.warn(`dropped a block push from ${from.hostname}, which is not a VP`)
      return
    }
    let blocks: SyncedBlock[]
    try {
      blocks = decodeBlocks(payload, options.nowNs)
    } catch (error) {
      log.warn(`dropped a malformed block push from ${from.hostname}: ${(error as Error).message}`)
      return
    }
    for (const block of blocks) {
      queue = queue.then(() =>
        handle(from.hostname, block).catch((error: unknown) => {
          log.warn(`block ${block.number} pushed by ${from.hostname} not applied: ${(error as Error).message}`)
        }),
      )
    }
  })

  return { idle: () => queue }
}
