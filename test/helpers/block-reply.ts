/** Block-sync replies (src/network/block-sync.ts) opened and packed again, so tests can forge one. */
import { pack, unpack } from '../../src/wire/binary.ts'

export type ReplyBlock = Record<string, unknown>

export const openReply = (bytes: Uint8Array): ReplyBlock[] =>
  (unpack(bytes, 'a block list') as Uint8Array[]).map((block) => unpack(block, 'a block') as ReplyBlock)

export const packReply = (blocks: readonly ReplyBlock[]): Uint8Array => pack(blocks.map((block) => pack(block)))
