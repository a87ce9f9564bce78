/**
 * A request thread's link to the chain thread, and its submission door.
 *
 * A submission's params go to the verify pool, where it is decoded and hashed (chain/admission.ts,
 * the same checks as everywhere), its signature verified and its record encoded
 * (front/admission-job.ts); the record goes to the chain thread, which reserves, logs and answers
 * once it is on disk; only then does the client get the hash. Transactions of one turn travel
 * together in groups, both to the verify pool and to the chain thread. A simulation is decoded here
 * and executed on the chain thread.
 */
import { admitTransaction, signHashOf } from '../chain/admission.ts'
import type { VerifyPool } from '../crypto/verify-pool.ts'
import type { Hex, TxKind, TxSubmitter } from '../domain.ts'
import { RpcError } from '../errors.ts'
import type { StatusEvent, SystemStatusMessage } from '../events/types.ts'
import type { CallContext } from '../rpc/context.ts'
import type { StoreTip } from '../store/index.ts'
import { packFrames } from '../wire/frames.ts'
import { JsonText } from '../wire/json.ts'
import { encodeTx } from '../wire/tx-codec.ts'
import { ADMIT_JOB, admissionAnswer, admissionRequest, admitHere } from './admission-job.ts'
import type { Simulated, ToChain, ToChainControl, ToFront } from './messages.ts'

/**
 * A turn's submissions leave for the verify pool and the chain thread in groups of at most this
 * many, not all at the turn's end: when a burst of requests fills one turn, the verify workers and
 * the chain thread start on its first group while this thread is still parsing the rest. Each
 * group is a message that may wake a sleeping thread (~100 µs of CPU on this kind of machine,
 * docs/pipeline.md): at 16, full load sent bursts of ~16 and woke the node's threads 0.46–0.48
 * times per transfer; at 64, 0.35–0.41 (issue 27, sixth session).
 */
export const GROUP_SIZE = 64

/** Gathers the items of one turn and hands them to `send` together: at the turn's end, or as soon as GROUP_SIZE have gathered. */
function turnGroups<T>(send: (items: T[]) => void): (item: T) => void {
  let group: T[] | undefined
  const flush = (): void => {
    if (group === undefined) return
    const items = group
    group = undefined
    send(items)
  }
  return (item) => {
    if (group === undefined) {
      group = []
      setImmediate(flush)
    }
    group.push(item)
    if (group.length >= GROUP_SIZE) flush()
  }
}

/** a turn with fewer submissions than this admits them on the request thread, not on the verify workers */
const BURST = 4

type Admitted = { hash: Hex; record: Uint8Array }

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

/** A namespace's link talks over its port; the thread's control link (its port to the chain thread) serves only `scrape`. */
export function createChainLink(
  port: { postMessage(message: ToChain | ToChainControl, transfer?: readonly ArrayBuffer[]): void },
  reader: { follow(tip: StoreTip): void },
): ChainLink {
  let nextId = 1
  const admissions = new Map<number, Waiting<void>>()
  const calls = new Map<number, Waiting<JsonText>>()
  const simulations = new Map<number, Waiting<Simulated>>()
  const scrapes = new Map<number, Waiting<{ contentType: string; text: string }>>()
  const blockListeners = new Set<(number: number, hash: Hex) => void>()
  const statusListeners: ((message: SystemStatusMessage) => void)[] = []
  const sendAdmission = turnGroups<{ id: number; record: Uint8Array }>((group) => {
    // one buffer, transferred: an array of records would be structured-cloned one backing store each
    const records = packFrames(group.map((item) => item.record))
    port.postMessage({ t: 'admit', ids: group.map((item) => item.id), records }, [records.buffer as ArrayBuffer])
  })

  return {
    admit(record) {
      const id = nextId++
      sendAdmission({ id, record })
      return new Promise((resolve, reject) => admissions.set(id, { resolve, reject }))
    },
    simulate(tx) {
      const id = nextId++
      port.postMessage({ t: 'simulate', id, tx })
      return new Promise((resolve, reject) => simulations.set(id, { resolve, reject }))
    },
    forward: (name) => (params, context) => {
      const id = nextId++
      port.postMessage({
        t: 'call',
        id,
        method: name,
        params,
        namespace: context.namespace,
        headers: { ...context.headers },
        operator: context.operator,
      })
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
export function createFrontSubmitter(options: { link: ChainLink; verifier: VerifyPool; nodeVersion?: string; nowNs?: () => bigint }): {
  submitter: TxSubmitter
  simulation(hash: Hex): Simulated | undefined
} {
  const { link, verifier, nodeVersion } = options
  const nowNs = options.nowNs ?? systemNowNs
  const simulated = new Map<Hex, Simulated>()
  /**
   * A turn's submissions: a burst goes to the verify workers in one message, as before; a lone one
   * (or two, three) is admitted here — at half load each request arrives alone, and handing it to a
   * sleeping worker and back costs two wake-ups, more CPU than its signature check.
   */
  const admitGroup = turnGroups<{ kind: TxKind; params: object; waiting: Waiting<Admitted> }>((group) => {
    if (verifier.mode === 'in-thread' || group.length < BURST) {
      const at = nowNs()
      for (const { kind, params, waiting } of group) {
        try {
          waiting.resolve(admitHere(kind, params as Record<string, unknown>, at, nodeVersion))
        } catch (error) {
          waiting.reject(error as Error)
        }
      }
      return
    }
    verifier
      .runJob(
        ADMIT_JOB,
        group.map((item) => admissionRequest(item.kind, item.params)),
        { nowNs: nowNs() },
      )
      .then(
        (answers) => {
          for (const [i, { waiting }] of group.entries()) {
            const answer = admissionAnswer(answers[i])
            if ('refusal' in answer) waiting.reject(answer.refusal)
            else if ('unexpected' in answer) waiting.reject(answer.unexpected)
            else waiting.resolve(answer)
          }
        },
        (error: Error) => {
          for (const { waiting } of group) waiting.reject(error)
        },
      )
  })

  /** a submission decoded, hashed, verified and encoded (front/admission-job.ts), grouped with the others of this turn */
  const admit = (kind: TxKind, params: object): Promise<Admitted> =>
    new Promise((resolve, reject) => admitGroup({ kind, params, waiting: { resolve, reject } }))

  const submitter: TxSubmitter = {
    async submit(kind, params) {
      if ((params as { simulate?: unknown }).simulate === true) {
        const tx = admitTransaction(kind, params as Record<string, unknown>, { nowNs })
        const outcome = await link.simulate(encodeTx(tx))
        if (simulated.size >= MAX_SIMULATIONS) simulated.delete(simulated.keys().next().value as Hex)
        simulated.set(tx.hash, outcome)
        return tx.hash
      }
      const { hash, record } = await admit(kind, params)
      await link.admit(record)
      return hash
    },
    async admit(checked) {
      await link.admit(checked.record)
      return checked.tx.hash
    },
    signHash: (params) => signHashOf(params as Record<string, unknown>),
  }
  return { submitter, simulation: (hash) => simulated.get(hash) }
}
