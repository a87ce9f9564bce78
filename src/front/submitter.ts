/**
 * A request thread's link to the chain thread, and its submission door.
 *
 * A submission is decoded and hashed here (chain/admission.ts, the same checks as everywhere),
 * encoded once (wire/tx-codec.ts), its signature verified on the verify pool from those bytes, and
 * the checked bytes go to the chain thread, which reserves, logs and answers once the record is on
 * disk; only then does the client get the hash. Transactions of one turn travel together, both to
 * the verify pool and to the chain thread.
 */
import { admitTransaction, signHashOf } from '../chain/admission.ts'
import type { TxFields } from '../crypto/sign-string.ts'
import { SignatureVerdict } from '../crypto/signature.ts'
import type { VerifyPool } from '../crypto/verify-pool.ts'
import type { Hex, TxSubmitter } from '../domain.ts'
import { InvalidParams, RpcError } from '../errors.ts'
import type { StatusEvent, SystemStatusMessage } from '../events/types.ts'
import type { CallContext } from '../rpc/context.ts'
import type { StoreTip } from '../store/index.ts'
import { packFrames } from '../wire/frames.ts'
import { JsonText } from '../wire/json.ts'
import { admittedRecord, encodeTx } from '../wire/tx-codec.ts'
import type { Simulated, ToChain, ToFront } from './messages.ts'

/**
 * A turn's submissions leave for the verify pool and the chain thread in groups of at most this
 * many, not all at the turn's end: when a burst of requests fills one turn, the verify workers and
 * the chain thread start on its first group while this thread is still decoding the rest.
 */
const GROUP_SIZE = 16

/** simulated outcomes kept for tx_getTransactionReceipt (as the chain thread keeps its own) */
const MAX_SIMULATIONS = 10_000

const systemNowNs = (): bigint => BigInt(Date.now()) * 1_000_000n + BigInt(process.hrtime.bigint() % 1_000_000n)

interface Waiting<T> {
  resolve(value: T): void
  reject(error: Error): void
}

export interface ChainLink {
  /** resolves once the chain thread made the checked transaction durable (and relayed it, in a network) */
  admit(record: Uint8Array): Promise<void>
  simulate(tx: Uint8Array): Promise<Simulated>
  /** a handler that runs method `name` on the chain thread; its result arrives as JSON text */
  forward(name: string): (params: unknown[], context: CallContext) => Promise<JsonText>
  publishStatus(event: StatusEvent): void
  /** the node's metrics, every thread's merged by the chain thread (GET /metrics) */
  scrape(): Promise<{ contentType: string; text: string }>
  /** returns the unsubscribe function */
  onBlock(listener: (number: number, hash: Hex) => void): () => void
  onStatus(listener: (message: SystemStatusMessage) => void): void
  /** a message from the chain thread */
  receive(message: ToFront): void
}

export function createChainLink(
  port: { postMessage(message: ToChain, transfer?: readonly ArrayBuffer[]): void },
  reader: { follow(tip: StoreTip): void },
): ChainLink {
  let nextId = 1
  const admissions = new Map<number, Waiting<void>>()
  const calls = new Map<number, Waiting<JsonText>>()
  const simulations = new Map<number, Waiting<Simulated>>()
  const scrapes = new Map<number, Waiting<{ contentType: string; text: string }>>()
  const blockListeners = new Set<(number: number, hash: Hex) => void>()
  const statusListeners: ((message: SystemStatusMessage) => void)[] = []
  let outgoing: { ids: number[]; records: Uint8Array[] } | undefined
  const sendAdmissions = (): void => {
    if (outgoing === undefined) return
    // one buffer, transferred: an array of records would be structured-cloned one backing store each
    const records = packFrames(outgoing.records)
    port.postMessage({ t: 'admit', ids: outgoing.ids, records }, [records.buffer as ArrayBuffer])
    outgoing = undefined
  }

  return {
    admit(record) {
      const id = nextId++
      if (outgoing === undefined) {
        outgoing = { ids: [], records: [] }
        setImmediate(sendAdmissions)
      }
      outgoing.ids.push(id)
      outgoing.records.push(record)
      if (outgoing.ids.length >= GROUP_SIZE) sendAdmissions()
      return new Promise((resolve, reject) => admissions.set(id, { resolve, reject }))
    },
    simulate(tx) {
      const id = nextId++
      port.postMessage({ t: 'simulate', id, tx })
      return new Promise((resolve, reject) => simulations.set(id, { resolve, reject }))
    },
    forward: (name) => (params, context) => {
      const id = nextId++
      port.postMessage({ t: 'call', id, method: name, params, namespace: context.namespace, headers: { ...context.headers } })
      return new Promise((resolve, reject) => calls.set(id, { resolve, reject }))
    },
    publishStatus: (event) => port.postMessage({ t: 'status', event }),
    scrape() {
      const id = nextId++
      port.postMessage({ t: 'scrape', id })
      return new Promise((resolve, reject) => scrapes.set(id, { resolve, reject }))
    },
    onBlock(listener) {
      blockListeners.add(listener)
      return () => blockListeners.delete(listener)
    },
    onStatus: (listener) => void statusListeners.push(listener),
    receive(message) {
      switch (message.t) {
        case 'admitted':
          for (const [i, id] of message.ids.entries()) {
            const waiting = admissions.get(id)
            admissions.delete(id)
            if (message.codes[i] === 0) waiting?.resolve()
            else waiting?.reject(new RpcError(message.codes[i], message.messages[i]))
          }
          return
        case 'reply': {
          // a forwarded method may have moved the chain (an archive): reads from now on see it
          reader.follow(message.tip)
          const waiting = calls.get(message.id)
          calls.delete(message.id)
          if (message.text !== undefined) waiting?.resolve(new JsonText(message.text))
          else waiting?.reject(new RpcError(message.code as number, message.message as string))
          return
        }
        case 'simulated': {
          const waiting = simulations.get(message.id)
          simulations.delete(message.id)
          if (message.outcome !== undefined) waiting?.resolve(message.outcome)
          else waiting?.reject(new RpcError(message.code as number, message.message as string))
          return
        }
        case 'block':
          reader.follow(message.tip)
          for (const listener of [...blockListeners]) listener(message.number, message.hash)
          return
        case 'status':
          for (const listener of statusListeners) listener(message.message)
          return
        case 'tip':
          reader.follow(message.tip)
          return
        case 'scraped': {
          const waiting = scrapes.get(message.id)
          scrapes.delete(message.id)
          if (message.error === undefined) waiting?.resolve({ contentType: message.contentType, text: message.text })
          else waiting?.reject(new Error(message.error))
          return
        }
      }
    },
  }
}

/** The submission door of a request thread, and the simulated outcomes it keeps. */
export function createFrontSubmitter(options: { link: ChainLink; verifier: VerifyPool; nowNs?: () => bigint }): {
  submitter: TxSubmitter
  simulation(hash: Hex): Simulated | undefined
} {
  const { link, verifier } = options
  const nowNs = options.nowNs ?? systemNowNs
  const simulated = new Map<Hex, Simulated>()
  let toVerify: { txs: Uint8Array[]; waiting: Waiting<number>[] } | undefined
  const sendToVerify = (): void => {
    if (toVerify === undefined) return
    const batch = toVerify
    toVerify = undefined
    verifier.verifyEncoded(batch.txs).then(
      (valid) => {
        for (const [i, waiting] of batch.waiting.entries()) waiting.resolve(valid[i])
      },
      (error: Error) => {
        for (const waiting of batch.waiting) waiting.reject(error)
      },
    )
  }

  /** the signature check of one transaction's bytes, batched with the others of this turn: its SignatureVerdict */
  const check = (encoded: Uint8Array): Promise<number> =>
    new Promise((resolve, reject) => {
      if (toVerify === undefined) {
        toVerify = { txs: [], waiting: [] }
        setImmediate(sendToVerify)
      }
      toVerify.txs.push(encoded)
      toVerify.waiting.push({ resolve, reject })
      if (toVerify.txs.length >= GROUP_SIZE) sendToVerify()
    })

  const submitter: TxSubmitter = {
    async submit(kind, params) {
      const tx = admitTransaction(kind, params as Record<string, unknown>, { nowNs })
      const encoded = encodeTx(tx)
      if (tx.simulate) {
        const outcome = await link.simulate(encoded)
        if (simulated.size >= MAX_SIMULATIONS) simulated.delete(simulated.keys().next().value as Hex)
        simulated.set(tx.hash, outcome)
        return tx.hash
      }
      const verdict = await check(encoded)
      if (verdict === SignatureVerdict.uncovered) {
        throw new InvalidParams(
          verifier.refusal(tx.signed as unknown as TxFields, tx.signature) ?? 'a field is not covered by the signature',
        )
      }
      await link.admit(admittedRecord(encoded, verdict === SignatureVerdict.valid))
      return tx.hash
    },
    async admit(checked) {
      await link.admit(checked.record)
      return checked.tx.hash
    },
    signHash: (params) => signHashOf(params as Record<string, unknown>),
  }
  return { submitter, simulation: (hash) => simulated.get(hash) }
}
