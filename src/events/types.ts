/** What the event service carries: block events from the chain and system-status events from the modules. */
import type { ArchiveEvent, Block, SystemStatusMessage, Log as WireLog } from '../../generated/types.ts'
import type { Hex } from '../domain.ts'

/** A system-status event as a module raises it (protocol.md §6); `date` is added when it reaches a subscription. */
export interface StatusEvent {
  /** consensus, executor, p2p or jsonrpc */
  module: string
  /** true normal, false exception */
  status: boolean
  subType: string
  /** 0 normal; negative for exceptions (Keel uses the JSON-RPC code closest to the condition) */
  errorCode: number
  message: string
}

export type { ArchiveEvent, SystemStatusMessage, WireLog }

/** One written block as subscribers see it; the wire forms are built once, on first use, and shared. */
export interface BlockEvent {
  readonly number: number
  readonly hash: Hex
  /** the whole Block (with its transactions) in wire form */
  full(): Block
  /** its JSON text, made once per thread whoever asks (WebSocket push, block_* answers) */
  fullText(): string
  /** every Log of the block in block, transaction and log order, in wire form */
  logs(): readonly WireLog[]
}
