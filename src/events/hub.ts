/**
 * The event hub of one node: the chain publishes every written block, the modules publish their
 * system-status events, and consumers (polling subscriptions, later WebSocket push) listen. A
 * listener that throws is logged and does not stop the others.
 */
import type { CommittedBlock } from '../domain.ts'
import type { Logger } from '../log.ts'
import { blockEventOf } from './block-event.ts'
import { createListeners } from './listeners.ts'
import { formatStatusDate } from './status.ts'
import type { ArchiveEvent, BlockEvent, StatusEvent, SystemStatusMessage } from './types.ts'

export interface EventHub {
  publishBlock(block: CommittedBlock): void
  publishStatus(event: StatusEvent): void
  /** the outcome of a snapshot, snapshot deletion, archive or restore (src/archive/) */
  publishArchive(event: ArchiveEvent): void
  /** returns a function that removes the listener */
  onBlock(listener: (event: BlockEvent) => void): () => void
  /** `message` carries the date the event reached the hub */
  onStatus(listener: (message: SystemStatusMessage) => void): () => void
  onArchive(listener: (event: ArchiveEvent) => void): () => void
}

export interface EventHubOptions {
  /** node clock in ns, for the status `date` */
  nowNs: () => bigint
  log: Logger
}

export function createEventHub(options: EventHubOptions): EventHub {
  const blockListeners = createListeners<BlockEvent>(options.log)
  const statusListeners = createListeners<SystemStatusMessage>(options.log)
  const archiveListeners = createListeners<ArchiveEvent>(options.log)
  // a status raised while listeners run (e.g. an overflow report) is delivered after them, in order
  const queued: SystemStatusMessage[] = []
  let delivering = false

  return {
    publishBlock(block) {
      if (blockListeners.size > 0) blockListeners.emit(blockEventOf(block))
    },
    publishStatus(event) {
      queued.push({ ...event, date: formatStatusDate(options.nowNs()) })
      if (delivering) return
      delivering = true
      try {
        for (let message = queued.shift(); message !== undefined; message = queued.shift()) statusListeners.emit(message)
      } finally {
        delivering = false
      }
    },
    publishArchive(event) {
      archiveListeners.emit(event)
    },
    onBlock: blockListeners.add,
    onStatus: statusListeners.add,
    onArchive: archiveListeners.add,
  }
}
