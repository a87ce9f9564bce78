/**
 * An NVP orders nothing: a transaction a client sends it is forwarded to one VP, which admits it
 * (every admission check, its pool, its relay to the other VPs) and answers; the NVP's client
 * gets that answer, error codes included (consensus.md §3 step 1, §6). Simulations run on the
 * NVP itself: they change nothing and need no VP.
 */
import type { TxSubmitter } from '../api/submit.ts'
import { admitTransaction } from '../chain/admission.ts'
import { RpcError, SystemBusy } from '../errors.ts'
import type { Logger } from '../log.ts'
import { parseJson, stringifyJson } from '../rpc/json.ts'
import { Channel } from './channels.ts'
import { decodeTxs, encodeTxs } from './tx-relay.ts'

export interface ForwardNetwork {
  onRequest(channel: number, handler: (from: { hostname: string; vp: boolean }, payload: Uint8Array) => Promise<Uint8Array>): void
  request(hostname: string, channel: number, payload: Uint8Array, timeoutMs: number): Promise<Uint8Array>
}

/** how long an NVP waits for a VP to admit a forwarded transaction */
const FORWARD_TIMEOUT_MS = 10_000

type ForwardReply = { hash: string } | { code: number; message: string }

/** VP side: admits transactions NVPs forward, exactly as if their clients had sent them here. */
export function serveForwardedTxs(options: { network: ForwardNetwork; submitter: TxSubmitter; nowNs(): bigint; log: Logger }): void {
  options.network.onRequest(Channel.forwardTx, async (from, payload) => {
    let reply: ForwardReply
    try {
      // the NVP's client is held to the client-facing rules, time window included
      const [tx] = decodeTxs(payload, { nowNs: options.nowNs })
      reply = { hash: await options.submitter.submit(tx.kind, tx.signed) }
    } catch (error) {
      if (error instanceof RpcError) reply = { code: error.code, message: error.message }
      else {
        options.log.warn(`a transaction forwarded by ${from.hostname} could not be admitted`, error)
        reply = { code: -32603, message: 'internal error while admitting the forwarded transaction' }
      }
    }
    return Buffer.from(stringifyJson(reply))
  })
}

/**
 * NVP side: a submitter that hands each transaction to a VP (`pickVp` chooses among the connected
 * ones) and answers what the VP answered. No VP reachable → -32006, so the client retries later;
 * a hash is returned only once a VP has made the transaction durable.
 */
export function forwardingSubmitter(options: {
  network: ForwardNetwork
  pickVp(): string | undefined
  local: TxSubmitter
  nowNs(): bigint
  log: Logger
}): TxSubmitter {
  return {
    async submit(kind, params) {
      // checked here first: a malformed or stale transaction is refused without a round trip
      const tx = admitTransaction(kind, params as Record<string, unknown>, { nowNs: options.nowNs })
      if (tx.simulate) return options.local.submit(kind, params)
      const vp = options.pickVp()
      if (vp === undefined) throw new SystemBusy('system is busy: this NVP is connected to no VP; retry later')
      let text: string
      try {
        text = Buffer.from(await options.network.request(vp, Channel.forwardTx, encodeTxs([tx]), FORWARD_TIMEOUT_MS)).toString()
      } catch (error) {
        options.log.warn(`forwarding a transaction to ${vp} failed`, error)
        throw new SystemBusy(`system is busy: the VP ${vp} did not take the transaction (${(error as Error).message}); retry later`)
      }
      const reply = parseJson(text, { maxDepth: 2 }) as Partial<{ hash: unknown; code: unknown; message: unknown }>
      if (typeof reply.hash === 'string') return reply.hash as `0x${string}`
      if (typeof reply.code === 'number' && typeof reply.message === 'string') throw new RpcError(reply.code, reply.message)
      throw new SystemBusy(`system is busy: the VP ${vp} answered the forwarded transaction with something unreadable; retry later`)
    },
    signHash: (params) => options.local.signHash(params),
  }
}
