/**
 * The events a request thread pushes to its WebSocket subscribers, as the chain thread announces
 * them: a block by number and hash (its wire forms are read from this thread's reader on first use
 * and shared by every subscriber), status messages as they are. A status this thread raises goes to
 * the chain thread's hub, which publishes it to everyone, this thread included.
 */
import type { Block, Log as WireLog } from '../../generated/types.ts'
import type { AnswerCache } from '../api/answers.ts'
import type { BlockHeader, CommittedTx } from '../domain.ts'
import type { EventHub } from '../events/hub.ts'
import { createListeners } from '../events/listeners.ts'
import type { BlockEvent, SystemStatusMessage } from '../events/types.ts'
import type { Logger } from '../log.ts'
import type { StoreReads } from '../store/index.ts'
import { formatReceipt } from '../wire/format.ts'
import { parseJson } from '../wire/json.ts'
import type { ChainLink } from './submitter.ts'

export function createFrontEvents(
  reader: StoreReads,
  link: ChainLink,
  answers: AnswerCache,
  log: Pick<Logger, 'error'>,
): Pick<EventHub, 'onBlock' | 'onStatus' | 'publishStatus'> {
  const blockListeners = createListeners<BlockEvent>(log)
  const statusListeners = createListeners<SystemStatusMessage>(log)

  link.onBlock((number, hash) => {
    if (blockListeners.size > 0) blockListeners.emit(blockEventFrom(reader, answers, number, hash))
  })
  link.onStatus(statusListeners.emit)

  return {
    onBlock: blockListeners.add,
    onStatus: statusListeners.add,
    publishStatus: (event) => link.publishStatus(event),
  }
}

/** A committed block as subscribers see it, read from the store on first use. */
function blockEventFrom(reader: StoreReads, answers: AnswerCache, number: number, hash: string): BlockEvent {
  let logs: WireLog[] | undefined
  const hashes = (): string[] => reader.getBlockTxHashes(number)
  const header = (): BlockHeader => {
    const found = reader.getBlock(number)
    if (found === undefined) throw new Error(`block ${number} was announced but this thread cannot read it`)
    return found
  }
  // the same text block_getBlockByNumber answers with: made once in this thread
  const text = (): string => answers.block(header(), true, () => hashes().map((txHash) => reader.getTx(txHash) as CommittedTx)).text
  return {
    number,
    hash,
    full: () => parseJson(text(), { maxDepth: 64 }) as unknown as Block,
    fullText: text,
    logs: () => {
      logs ??= hashes().flatMap((txHash) => {
        const receipt = reader.getReceipt(txHash)
        return receipt === undefined ? [] : formatReceipt(receipt).log
      })
      return logs
    },
  }
}
