/** Handlers of the `block_` service. */
import type { BlockHandlers } from '../../generated/handlers.ts'
import type { Block, BlockList, BlockNumber, PagedBlocks } from '../../generated/types.ts'
import type { BlockHeader } from '../domain.ts'
import { DataNotFound, InvalidParams, NoBlockGenerated } from '../errors.ts'
import { toHex } from '../wire/format.ts'
import { JsonText, stringifyJson } from '../wire/json.ts'
import type { AnswerCache } from './answers.ts'
import { resolveBlockNumber, resolveBlockRange, resolveTimeRange } from './block-number.ts'
import type { ChainReader } from './chain-reader.ts'
import { notFound } from './not-found.ts'
import { MAX_BATCH_ITEMS, pageOf } from './paging.ts'

/** a block as an object, or the JSON text of a cached full rendering */
type Rendered = Block | JsonText<Block>

/** lists of blocks are written here, as one text, so cached renderings are spliced as they are */
const textOf = <T>(value: unknown): JsonText<T> => new JsonText<T>(stringifyJson(value))

export function createBlockHandlers(modules: { chain: ChainReader; answers: AnswerCache }): BlockHandlers {
  const { chain, answers } = modules

  const header = (number: number): BlockHeader => {
    const found = chain.getBlock(number)
    if (found === undefined) throw new DataNotFound(`Not found block number ${toHex(number)}`)
    return found
  }

  // A committed block never changes, and the newest ones are read over and over (explorers poll
  // block_latestBlock): its text is made once (answers.ts). A full block of 500 transactions costs
  // ~7 ms of record decoding to render and ~2 ms to write. Only blocks found live get here, so an
  // archived block is never answered from the kept text.
  const render = (block: BlockHeader, isPlain: boolean | undefined): Rendered =>
    answers.block(block, isPlain !== true, () =>
      chain.getBlockTxHashes(block.number).map((hash) => {
        const committed = chain.getTx(hash)
        if (committed === undefined) throw new Error(`block ${block.number} lists ${hash}, which the store does not hold`)
        return committed
      }),
    )

  const byNumber = (raw: BlockNumber, isPlain?: boolean): Rendered => render(header(resolveBlockNumber(raw, chain)), isPlain)

  const checkBatch = (count: number): void => {
    if (count > MAX_BATCH_ITEMS) throw new InvalidParams(`too many items: at most ${MAX_BATCH_ITEMS} per call, got ${count}`)
  }

  return {
    block_latestBlock: () => byNumber('latest'),
    block_getBlocks: ([range]) => {
      const { from, to } = resolveBlockRange(range, chain)
      const blocks: Rendered[] = []
      for (let number = to; number >= from; number--) blocks.push(render(header(number), range.isPlain))
      return textOf<BlockList>(blocks)
    },
    block_getBlockByHash: ([hash, isPlain]) => {
      const found = chain.getBlockByHash(hash.toLowerCase())
      if (found === undefined) throw notFound(chain, 'block hash', hash, chain.archivedBlockOfHash(hash.toLowerCase()))
      return render(found, isPlain)
    },
    block_getBlockByNumber: ([number, isPlain]) => byNumber(number, isPlain),
    block_getAvgGenerateTimeByBlockNumber: ([range]) => {
      const { from, to } = resolveBlockRange(range, chain, null)
      if (from === to) return '0x0'
      const elapsedNs = header(to).writeTime - header(from).writeTime
      return toHex(elapsedNs / BigInt(to - from) / 1_000_000n)
    },
    block_getBlocksByTime: ([window]) => {
      const { start, end } = resolveTimeRange(window)
      const found = chain.blocksByTime(start, end)
      return {
        sumOfBlocks: toHex(found.count),
        startBlock: found.first === undefined ? null : toHex(found.first),
        endBlock: found.last === undefined ? null : toHex(found.last),
      }
    },
    block_getGenesisBlock: () => {
      if (chain.height() === 0) throw new NoBlockGenerated()
      return toHex(chain.genesisNumber())
    },
    block_getChainHeight: () => {
      if (chain.height() === 0) throw new NoBlockGenerated()
      return toHex(chain.height())
    },
    block_getBatchBlocksByHash: ([query]) => {
      checkBatch(query.hashes.length)
      const blocks: Rendered[] = []
      for (const hash of query.hashes) {
        const found = chain.getBlockByHash(hash.toLowerCase())
        if (found !== undefined) blocks.push(render(found, query.isPlain))
      }
      return textOf<BlockList>(blocks)
    },
    block_getBatchBlocksByNumber: ([query]) => {
      checkBatch(query.numbers.length)
      return textOf<BlockList>(query.numbers.map((number) => byNumber(number, query.isPlain)))
    },
    block_getBlocksWithLimit: ([query]) => {
      const { from, to } = resolveBlockRange(query, chain)
      const page = pageOf(query.metadata, from, to)
      const blocks: Rendered[] = []
      for (const number of page.numbers) blocks.push(render(header(number), query.isPlain))
      return textOf<PagedBlocks>({ hasmore: page.hasMore, data: blocks })
    },
  }
}
