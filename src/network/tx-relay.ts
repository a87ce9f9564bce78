/**
 * Transactions between nodes. A VP relays every client transaction it admitted to every other
 * VP, so each holds it before a batch names it by hash (consensus.md §3 step 2). On the wire a
 * transaction is the client's own params object, as signed: the receiver checks it against the
 * submitting method's params schema (openrpc.json, the same validator a client request meets),
 * runs the same admission checks (hash recomputed, once per VP) and its pool verifies the
 * signature, so a peer can relay only what a client could have sent.
 *
 * The wire form is msgpack of `[[kind, params], …]` (wire/binary.ts: bigints kept), so a relayed
 * transaction costs a binary decode at every VP, not a JSON parse. Peers of an earlier version
 * (which sent JSON) are refused at the p2p hello (PROTOCOL_VERSION 2), so no JSON is read here.
 */
import { methods, schemas } from '../../generated/methods.ts'
import { admitTransaction } from '../chain/admission.ts'
import type { TxPool } from '../chain/pool.ts'
import type { SignedTx, TxKind } from '../domain.ts'
import { SUBMIT_METHOD } from '../domain.ts'
import { DuplicateTransaction } from '../errors.ts'
import { ethereumTxFromSigned } from '../eth/transaction.ts'
import type { Logger } from '../log.ts'
import { compileParamChecker, type ParamChecker } from '../rpc/params.ts'
import { pack, unpack } from '../wire/binary.ts'
import { Channel } from './channels.ts'

/** the part of the peer network the relay uses (src/p2p's PeerNetwork has it) */
export interface RelayNetwork {
  broadcast(channel: number, payload: Uint8Array, to?: (peer: { vp: boolean }) => boolean): void
  on(channel: number, handler: (from: { hostname: string; vp: boolean }, payload: Uint8Array) => void): void
}

const checkers = new Map<TxKind, ParamChecker>()
const checkerOf = (kind: TxKind): ParamChecker => {
  let checker = checkers.get(kind)
  if (checker === undefined) {
    const method = SUBMIT_METHOD[kind]
    checker = compileParamChecker(method, methods[method as keyof typeof methods], schemas as Record<string, unknown>)
    checkers.set(kind, checker)
  }
  return checker
}
/** what a relay, a fetch reply or a synced block carries per transaction: what its client signed */
export type WireTx = [kind: TxKind, params: Record<string, unknown>]

export const wireTxs = (txs: readonly SignedTx[]): WireTx[] => txs.map((tx) => [tx.kind, tx.signed])

export function encodeTxs(txs: readonly SignedTx[]): Uint8Array {
  return pack(wireTxs(txs))
}

/**
 * The transactions of a payload `encodeTxs` wrote (or of wireTxs' list inside another message),
 * admitted again. `timeWindow: false` for relayed and fetched ones (the window is a client-facing
 * rule). Throws on anything malformed.
 */
export function decodeTxs(payload: Uint8Array | unknown[], options: { nowNs(): bigint; timeWindow?: boolean }): SignedTx[] {
  const items = payload instanceof Uint8Array ? unpack(payload, 'a transaction list') : payload
  if (!Array.isArray(items)) throw new Error('a transaction list must be a list')
  return items.map((item: unknown, index) => {
    const [kind, params] = Array.isArray(item) && item.length === 2 ? item : []
    if (typeof kind !== 'string' || !Object.hasOwn(SUBMIT_METHOD, kind)) {
      throw new Error(`transaction ${index}: unknown kind ${String(kind).slice(0, 32)}`)
    }
    if (params === null || typeof params !== 'object' || Array.isArray(params))
      throw new Error(`transaction ${index}: params must be an object`)
    // issue 28: an Ethereum transaction travels as its raw bytes and admission time, and is decoded and checked again
    if (typeof (params as Record<string, unknown>).ethereum === 'string') return ethereumTxFromSigned(params as Record<string, unknown>)
    const [checked] = checkerOf(kind as TxKind).check([params])
    const tx = admitTransaction(kind as TxKind, checked as Record<string, unknown>, options)
    if (tx.simulate) throw new Error(`transaction ${index}: a simulation is never relayed`)
    return tx
  })
}

export interface TxRelay {
  /** sends a transaction this node admitted to every other VP (gathered per event-loop turn) */
  relay(tx: SignedTx): void
  /**
   * sends again what has waited in the pool longer than `olderThanMs`: a relay lost to a VP that was
   * down or cut off must not leave a transaction only here (consensus.md §10.8)
   */
  regossip(olderThanMs: number): void
}

/** most transactions one re-gossip round sends */
const REGOSSIP_MAX = 1000

export function createTxRelay(options: { network: RelayNetwork; pool: TxPool; nowNs(): bigint; log: Logger }): TxRelay {
  const { network, pool, log } = options
  let outgoing: SignedTx[] = []

  network.on(Channel.tx, (from, payload) => {
    // an NVP hands its clients' transactions to one VP with a forward request, never relays
    if (!from.vp) {
      log.warn(`dropped a transaction relay from ${from.hostname}, which is not a VP`)
      return
    }
    let txs: SignedTx[]
    try {
      txs = decodeTxs(payload, { nowNs: options.nowNs, timeWindow: false })
    } catch (error) {
      log.warn(`dropped a malformed transaction relay from ${from.hostname}: ${(error as Error).message}`)
      return
    }
    // A relayed transaction whose signature fails is pooled like any other: each node checks the
    // signature itself (pool, or replay.ts for one it did not hold), so every node records the same
    // SIGFAILED outcome in the block (consensus.md §10.15). Dropping it here would leave it unordered
    // whenever the VP its client chose is not the primary: the client would never see an outcome.
    // test/network/sdk.test.ts (step 10) checks the one outcome on all five nodes.
    for (const tx of txs) {
      pool.add(tx, { fromPeer: true }).catch((error: unknown) => {
        if (!(error instanceof DuplicateTransaction)) log.warn(`could not pool ${tx.hash} relayed by ${from.hostname}`, error)
      })
    }
  })

  return {
    regossip(olderThanMs) {
      const waiting = pool.waiting(olderThanMs, REGOSSIP_MAX)
      if (waiting.length > 0) network.broadcast(Channel.tx, encodeTxs(waiting), (peer) => peer.vp)
    },
    relay(tx) {
      outgoing.push(tx)
      if (outgoing.length > 1) return
      setImmediate(() => {
        const batch = outgoing
        outgoing = []
        network.broadcast(Channel.tx, encodeTxs(batch), (peer) => peer.vp)
      })
    },
  }
}
