/** A committed block → the shared, lazily formatted BlockEvent every subscriber reads. */
import type { Block, Log as WireLog } from '../../generated/types.ts'
import type { CommittedBlock } from '../domain.ts'
import { formatBlock, formatReceipt } from '../wire/format.ts'
import { stringifyJson } from '../wire/json.ts'
import type { BlockEvent } from './types.ts'

export function blockEventOf(block: CommittedBlock): BlockEvent {
  let full: Block | undefined
  let text: string | undefined
  let logs: WireLog[] | undefined
  const event: BlockEvent = {
    number: block.header.number,
    hash: block.header.hash,
    full: () => {
      full ??= formatBlock(block.header, block.txs)
      return full
    },
    fullText: () => {
      text ??= stringifyJson(event.full())
      return text
    },
    logs: () => {
      logs ??= block.receipts.flatMap((receipt) => formatReceipt(receipt).log)
      return logs
    },
  }
  return event
}
