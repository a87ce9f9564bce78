/**
 * System-status events raised by Keel's own modules (protocol.md §6 shape), and their `date`.
 *
 * | module   | status | subType        | errorCode                     | when |
 * |----------|--------|----------------|-------------------------------|------|
 * | executor | false  | `timeout`      | the discard code (e.g. -32005) | a transaction ran out of its execution budget |
 * | executor | false  | `failure`      | the discard code (-32002…-32008) | any other transaction discarded in a block |
 * | jsonrpc  | true   | `start`/`stop` | 0                             | the JSON-RPC server started / is stopping |
 * | jsonrpc  | false  | `overload`     | -32006                        | a subscription was refused: too many active |
 * | jsonrpc  | false  | `overflow`     | -32006                        | a subscription's cache was full and lost its oldest items |
 * | jsonrpc  | false  | `slowConsumer` | -32006                        | a WebSocket reader fell too far behind and was disconnected |
 * | archive  | true   | `progress`     | 0                             | a batch of an archive or restore is done (counts in the message) |
 * | consensus | false | `viewchange`   | -1                            | this VP asked for a view change (the reason in the message) |
 * | consensus | true  | `viewchange`   | 0                             | a view change finished (Hyperchain's message: replica, primary, view, height) |
 * | consensus | false | `recovery`     | -1                            | this VP is recovering (restart, lag, or a checkpoint it disagrees with) |
 * | consensus | true  | `recovery`     | 0                             | recovery finished; the VP takes part again |
 * | consensus | false | `stopped`      | -32006                        | ordering stopped for good (a block could not be committed, consensus records could not be written); new transactions are refused until a restart |
 * | governance | true | `proposal`     | 0                             | a proposal was created, voted, rejected, cancelled or executed (docs/governance.md) |
 * | p2p      | true   | `connected`    | 0                             | a peer connected and proved its identity |
 * | p2p      | false  | `lost`         | -1                            | a peer stopped answering or disconnected |
 */
import type { CommittedBlock } from '../domain.ts'
import { InvalidReason } from '../domain.ts'
import { BUDGET_EXHAUSTED } from '../exec/executor.ts'
import { PROPOSAL_TOPIC } from '../governance/execute.ts'
import type { ProposalRecord } from '../governance/state.ts'
import { BuiltinAddress } from '../governance/wire.ts'
import type { StatusEvent } from './types.ts'

/** RFC 3339 in UTC with nanoseconds, e.g. 2017-11-06T20:27:10.123456789Z. */
export function formatStatusDate(ns: bigint): string {
  const seconds = ns / 1_000_000_000n
  const nanos = ns % 1_000_000_000n
  const iso = new Date(Number(seconds) * 1000).toISOString() // …T20:27:10.000Z
  return `${iso.slice(0, 19)}.${nanos.toString().padStart(9, '0')}Z`
}

/** One executor event per transaction the block discarded, in block order. */
export function executorStatuses(block: CommittedBlock): StatusEvent[] {
  return block.invalid.map((invalid) => {
    const timedOut = invalid.detail.startsWith(BUDGET_EXHAUSTED)
    return {
      module: 'executor',
      status: false,
      subType: timedOut ? 'timeout' : 'failure',
      errorCode: InvalidReason[invalid.invalidMsg],
      message: `transaction ${invalid.tx.hash} discarded in block ${block.header.number}: ${invalid.invalidMsg} (${invalid.detail})`,
    }
  })
}

/** One governance event per proposal change a block made (the Proposal contract's logs), in block order. */
export function governanceStatuses(block: CommittedBlock): StatusEvent[] {
  const events: StatusEvent[] = []
  for (const receipt of block.receipts)
    for (const log of receipt.logs) {
      if (log.address !== BuiltinAddress.proposal || log.topics[0] !== PROPOSAL_TOPIC) continue
      const proposal = JSON.parse(Buffer.from(log.data.replace(/^0x/, ''), 'hex').toString('utf8')) as ProposalRecord
      events.push({
        module: 'governance',
        status: true,
        subType: 'proposal',
        errorCode: 0,
        message: `proposal ${proposal.id} (${proposal.type}) is ${proposal.status} after transaction ${receipt.txHash} in block ${block.header.number}: ${proposal.score} of ${proposal.threshold} votes for, ${proposal.objector.length} against`,
      })
    }
  return events
}

export const consensusStatus = {
  viewChangeStarted: (toView: number, reason: string): StatusEvent => ({
    module: 'consensus',
    status: false,
    subType: 'viewchange',
    errorCode: -1,
    message: `required viewchange to view ${toView}: ${reason}`,
  }),
  viewChangeFinished: (replica: number, primary: number, view: number, height: number): StatusEvent => ({
    module: 'consensus',
    status: true,
    subType: 'viewchange',
    errorCode: 0,
    message: `Replica ${replica} finished viewChange, primary=${primary}, view=${view}/height=${height}`,
  }),
  recoveryStarted: (reason: string): StatusEvent => ({
    module: 'consensus',
    status: false,
    subType: 'recovery',
    errorCode: -1,
    message: `recovering: ${reason}`,
  }),
  recoveryFinished: (view: number, height: number): StatusEvent => ({
    module: 'consensus',
    status: true,
    subType: 'recovery',
    errorCode: 0,
    message: `recovered at view ${view}, height ${height}`,
  }),
  orderingStopped: (reason: string): StatusEvent => ({
    module: 'consensus',
    status: false,
    subType: 'stopped',
    errorCode: -32006,
    message: `ordering stopped: ${reason}; new transactions are refused until the node is restarted`,
  }),
  membershipChanged: (from: number, members: readonly string[]): StatusEvent => ({
    module: 'consensus',
    status: true,
    subType: 'membership',
    errorCode: 0,
    message: `the VP group from block ${from} on: ${members.join(', ')}`,
  }),
}

export const p2pStatus = {
  connected: (hostname: string, role: 'VP' | 'NVP'): StatusEvent => ({
    module: 'p2p',
    status: true,
    subType: 'connected',
    errorCode: 0,
    message: `${role} ${hostname} connected`,
  }),
  lost: (hostname: string, role: 'VP' | 'NVP', reason: string): StatusEvent => ({
    module: 'p2p',
    status: false,
    subType: 'lost',
    errorCode: -1,
    message: `${role} ${hostname} lost: ${reason}`,
  }),
}

export const jsonrpcStatus = {
  start: (url: string): StatusEvent => ({
    module: 'jsonrpc',
    status: true,
    subType: 'start',
    errorCode: 0,
    message: `JSON-RPC listening on ${url}`,
  }),
  stop: (): StatusEvent => ({ module: 'jsonrpc', status: true, subType: 'stop', errorCode: 0, message: 'JSON-RPC server stopping' }),
  overload: (message: string): StatusEvent => ({ module: 'jsonrpc', status: false, subType: 'overload', errorCode: -32006, message }),
  overflow: (id: string, capacity: number, bytes: number): StatusEvent => ({
    module: 'jsonrpc',
    status: false,
    subType: 'overflow',
    errorCode: -32006,
    message: `subscription ${id} is not polled in time: its cache of ${capacity} items or ${bytes} bytes is full and loses its oldest items until it is polled`,
  }),
  slowConsumer: (message: string): StatusEvent => ({
    module: 'jsonrpc',
    status: false,
    subType: 'slowConsumer',
    errorCode: -32006,
    message,
  }),
}

export const archiveStatus = {
  progress: (message: string): StatusEvent => ({ module: 'archive', status: true, subType: 'progress', errorCode: 0, message }),
}
