/** A committed block → the shared, lazily formatted BlockEvent every subscriber reads. */
import type { Block, Log as WireLog } from '../../generated/types.ts'
import type { CommittedBlock } from '../domain.ts'
import { formatBlock, formatReceipt } from '../wire/format.ts'
import type { BlockEvent } from './types.ts'

export function blockEventOf(block: CommittedBlock): BlockEvent {
  let full: Block | undefined
  let logs: WireLog[] | undefined
  return {
    number: block.header.number,
    hash: block.header.hash,
    full: () => {
      full ??= formatBlock(block.header, block.txs)
      return full
    },
    logs: () => {
      logs ??= block.receipts.flatMap((receipt) => formatReceipt(receipt).log)
      return logs
    },
  }
}
