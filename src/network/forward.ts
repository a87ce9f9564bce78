/**
 * An NVP orders nothing: a transaction a client sends it is forwarded to one VP, which admits it
 * (every admission check, its pool, its relay to the other VPs) and answers; the NVP's client
 * gets that answer, error codes included (consensus.md §3 step 1, §6), and the NVP forwards it
 * again to another VP while it has no outcome. Simulations run on the NVP itself: they change
 * nothing and need no VP.
 */

import { admitTransaction } from '../chain/admission.ts'
import type { Hex, SignedTx, TxSubmitter } from '../domain.ts'
import { DuplicateTransaction, RpcError, SystemBusy } from '../errors.ts'
import { isEthereumTx } from '../eth/transaction.ts'
import type { Logger } from '../log.ts'
import { parseJson, stringifyJson } from '../wire/json.ts'
import { encodeAdmitted } from '../wire/tx-codec.ts'
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
      // issue 28: an Ethereum transaction was decoded and its signature recovered by decodeTxs: admitted as checked
      reply = isEthereumTx(tx)
        ? { hash: await options.submitter.admit({ tx, signatureValid: true, record: encodeAdmitted(tx, true) }) }
        : { hash: await options.submitter.submit(tx.kind, tx.signed) }
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

/** how long a forwarded transaction may stay without an outcome on the NVP before it is forwarded again */
export const DEFAULT_REFORWARD_AFTER_MS = 20_000
/** forwarded transactions watched for an outcome at most; beyond it the oldest are no longer watched */
const MAX_WATCHED = 100_000
/** a VP admits a transaction up to a day after its timestamp (admission.ts): re-forwarding after that is pointless */
const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000

export interface ForwardingSubmitter extends TxSubmitter {
  /** forwarded transactions still waiting for an outcome on this NVP */
  watched(): number
  stop(): void
}

/**
 * NVP side: a submitter that hands each transaction to a VP (`pickVp` chooses among the connected
 * ones, never `except`) and answers what the VP answered. No VP reachable → -32006, so the client
 * retries later; a hash is returned only once a VP has made the transaction durable, and only the
 * hash this NVP computed itself.
 *
 * A VP that answers with the hash and then drops the transaction (Byzantine, or crashed before it
 * relayed it) must not leave the client's hash without an outcome: until the transaction is in a
 * block this NVP holds (`committed`), it is forwarded again to another VP every `reforwardAfterMs`.
 * A VP that already holds it answers "duplicate", which is the expected answer then.
 */
export function forwardingSubmitter(options: {
  network: ForwardNetwork
  pickVp(except?: string): string | undefined
  local: TxSubmitter
  /** true once the transaction has an outcome (a receipt or an invalid record) on this node */
  committed(hash: string): boolean
  reforwardAfterMs?: number
  nowNs(): bigint
  log: Logger
}): ForwardingSubmitter {
  const { network, log } = options
  const reforwardAfterMs = options.reforwardAfterMs ?? DEFAULT_REFORWARD_AFTER_MS
  /** hash → what to send again, to whom it went last and when (insertion order: oldest first) */
  const watched = new Map<string, { payload: Uint8Array; vp: string; at: number; since: number }>()

  /** the VP's answer: the hash (checked against ours) or the VP's error */
  const forward = async (vp: string, payload: Uint8Array, hash: string): Promise<string> => {
    let text: string
    try {
      text = Buffer.from(await network.request(vp, Channel.forwardTx, payload, FORWARD_TIMEOUT_MS)).toString()
    } catch (error) {
      log.warn(`forwarding a transaction to ${vp} failed`, error)
      throw new SystemBusy(`system is busy: the VP ${vp} did not take the transaction (${(error as Error).message}); retry later`)
    }
    const reply = parseJson(text, { maxDepth: 2 }) as Partial<{ hash: unknown; code: unknown; message: unknown }>
    if (reply.hash === hash) return hash
    if (typeof reply.hash === 'string') {
      log.warn(`the VP ${vp} answered a forwarded transaction with the hash ${reply.hash.slice(0, 66)} instead of ${hash}`)
      throw new SystemBusy(`system is busy: the VP ${vp} answered the forwarded transaction with a wrong hash; retry later`)
    }
    if (typeof reply.code === 'number' && typeof reply.message === 'string') throw new RpcError(reply.code, reply.message)
    throw new SystemBusy(`system is busy: the VP ${vp} answered the forwarded transaction with something unreadable; retry later`)
  }

  const reforwardDue = (): void => {
    const due = Date.now() - reforwardAfterMs
    for (const [hash, entry] of watched) {
      if (entry.at > due) break // the rest are younger
      watched.delete(hash)
      if (options.committed(hash)) continue
      if (Date.now() - entry.since > GIVE_UP_AFTER_MS) {
        log.error(
          `${hash}, forwarded ${Math.round((Date.now() - entry.since) / 3_600_000)} h ago, never got an outcome: no longer forwarded`,
        )
        continue
      }
      const vp = options.pickVp(entry.vp) ?? entry.vp
      // back at the end of the queue whatever the answer: only an outcome in a block ends the watch
      watched.set(hash, { ...entry, vp, at: Date.now() })
      forward(vp, entry.payload, hash).then(
        () => log.info(`forwarded ${hash} again, to ${vp}: no outcome ${Math.round(reforwardAfterMs / 1000)} s after ${entry.vp} took it`),
        (error: Error) => {
          if (error instanceof RpcError && error.code === DuplicateTransaction.code) return // the VP holds it: ordering is under way
          log.warn(`forwarding ${hash} again to ${vp} failed: ${error.message}`)
        },
      )
    }
  }
  const timer = setInterval(reforwardDue, Math.max(10, Math.floor(reforwardAfterMs / 4)))
  timer.unref()

  const forwardTx = async (tx: SignedTx): Promise<Hex> => {
    const vp = options.pickVp()
    if (vp === undefined) throw new SystemBusy('system is busy: this NVP is connected to no VP; retry later')
    const payload = encodeTxs([tx])
    const hash = await forward(vp, payload, tx.hash)
    if (watched.size >= MAX_WATCHED) {
      const [oldest] = watched.keys()
      watched.delete(oldest)
      log.warn(`more than ${MAX_WATCHED} forwarded transactions without an outcome: ${oldest} is no longer watched`)
    }
    watched.set(hash, { payload, vp, at: Date.now(), since: Date.now() })
    return hash as `0x${string}`
  }

  return {
    async submit(kind, params) {
      // checked here first: a malformed or stale transaction is refused without a round trip
      const tx = admitTransaction(kind, params as Record<string, unknown>, { nowNs: options.nowNs })
      if (tx.simulate) return options.local.submit(kind, params)
      return forwardTx(tx)
    },
    // a request thread checked it already (the VP checks it again, as every forwarded one)
    admit: ({ tx }) => forwardTx(tx),
    signHash: (params) => options.local.signHash(params),
    watched: () => watched.size,
    stop: () => clearInterval(timer),
  }
}
