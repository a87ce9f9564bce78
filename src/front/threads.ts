/**
 * The chain thread's side of the request threads (thread.ts): starts them, admits the transactions
 * they hand over, answers the methods only it serves, and tells them of each block and status
 * event. The first thread opens the JSON-RPC port; the others listen on its socket (serve.ts
 * listeningFd), so the kernel spreads connections over them.
 *
 * Admission outcomes are sent back in groups: a pool-log group commit resolves many admissions in
 * one turn, and their answers leave in one message.
 */
import type { AddressInfo } from 'node:net'
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads'
import type { VerifyPool } from '../crypto/verify-pool.ts'
import type { SignedTx, TxSubmitter } from '../domain.ts'
import { InternalError, RpcError } from '../errors.ts'
import type { EventHub } from '../events/hub.ts'
import type { Logger } from '../log.ts'
import { type MetricsSnapshot, mergeMetrics } from '../metrics/registry.ts'
import type { CallContext } from '../rpc/context.ts'
import type { StoreTip } from '../store/index.ts'
import { unpackFrames } from '../wire/frames.ts'
import { stringifyJson } from '../wire/json.ts'
import { decodeAdmitted, decodeTx } from '../wire/tx-codec.ts'
import { startWorker } from '../workers/start.ts'
import type { FrontStart, Simulated, ToChain, ToFront } from './messages.ts'

/** What the chain thread lends its request threads. */
export interface ChainDoors {
  submitter: TxSubmitter
  simulate(tx: SignedTx): Promise<Simulated>
  /** every handler, for the methods a request thread forwards (api/index.ts isChainThreadMethod) */
  handlers: Readonly<Record<string, unknown>>
  events: EventHub
  tip(): StoreTip
  /** the chain thread's own metrics; a scrape merges them with every request thread's */
  metricsSnapshot(): Promise<MetricsSnapshot>
  log: Logger
  /**
   * A request thread died: the node cannot serve on its share of the port, so it must stop and exit
   * non-zero for its supervisor to restart it (docs/reliability.md "Threads that die").
   */
  fatal(reason: string, cause: Error | undefined): void
}

export interface RequestThreads {
  readonly address: AddressInfo
  readonly count: number
  stop(): Promise<void>
}

/** how long a request thread may take to load and listen (tsx compiles its modules first) */
const START_TIMEOUT_MS = 60_000

type Handler = (params: unknown[], context: CallContext) => unknown

/** Request threads loaded and waiting for `open`. */
export interface LoadedRequestThreads {
  /** how many loaded */
  readonly count: number
  /** serves their ports with `doors` and lets them listen; the first opens the port, the others take its socket */
  open(doors: ChainDoors): Promise<RequestThreads>
  /** the node did not get as far as opening them */
  discard(): Promise<void>
}

/**
 * Starts `count` request threads. They load their modules while the chain thread finishes its own
 * start (a request thread compiles and loads as much as the chain thread does), and listen only on
 * `open`, once the chain can take what they hand over. Undefined when the first cannot start: the
 * caller then serves requests on its own thread.
 */
export async function loadRequestThreads(options: {
  count: number
  start: Omit<FrontStart, 'chain' | 'verify' | 'threadName' | 'verifyBackend'>
  verifyPool: VerifyPool
  log: Logger
}): Promise<LoadedRequestThreads | undefined> {
  const loading = Array.from({ length: options.count }, async (_, index) => {
    // the `thread` label of its metrics, and its name in the bench's loop statistics
    const name = `rpc-${index + 1}`
    const channel = new MessageChannel()
    const verify = options.verifyPool.connect()
    const start: FrontStart = {
      ...options.start,
      chain: channel.port2,
      verify,
      verifyBackend: options.verifyPool.backend,
      threadName: name,
    }
    const started = await startWorker<{ ready: true }>(
      new URL('./thread.ts', import.meta.url),
      start as unknown as Record<string, unknown>,
      START_TIMEOUT_MS,
      name,
      [channel.port2, ...verify],
    )
    if (started === undefined) {
      channel.port1.close()
      return undefined
    }
    let cause: Error | undefined
    started.worker.on('error', (error) => {
      cause = error
      options.log.error(`request thread ${name} failed`, error)
    })
    return { worker: started.worker, port: channel.port1, name, cause: () => cause }
  })
  const loaded = (await Promise.all(loading)).filter((thread) => thread !== undefined)
  if (loaded.length === 0) return undefined
  if (loaded.length < options.count)
    options.log.warn(`${options.count - loaded.length} request thread(s) did not start; serving with ${loaded.length}`)
  return {
    count: loaded.length,
    discard: async () => {
      for (const { worker } of loaded) await worker.terminate()
    },
    async open(doors) {
      const threads: { worker: Worker; port: MessagePort; off(): void; exited?: boolean }[] = []
      let stopping = false
      const snapshots = new Map<number, (snapshot: MetricsSnapshot) => void>()
      let nextSnapshot = 1
      /** the chain thread's metrics and every request thread's, merged: what GET /metrics answers on any of them */
      const scrape = async (): Promise<{ contentType: string; text: string }> => {
        const asked = threads.map(
          ({ port }) =>
            new Promise<MetricsSnapshot>((resolve) => {
              const id = nextSnapshot++
              // a thread that does not answer within a second (stopping) is left out of this scrape
              const timer = setTimeout(() => {
                snapshots.delete(id)
                resolve([])
              }, 1000)
              snapshots.set(id, (snapshot) => {
                clearTimeout(timer)
                resolve(snapshot)
              })
              port.postMessage({ t: 'snapshot', id } satisfies ToFront)
            }),
        )
        return mergeMetrics([await doors.metricsSnapshot(), ...(await Promise.all(asked))])
      }
      const onSnapshot = (id: number, snapshot: MetricsSnapshot): void => {
        snapshots.get(id)?.(snapshot)
        snapshots.delete(id)
      }
      let address: AddressInfo | undefined
      let fd: number | undefined
      for (const [i, { worker, port, name, cause }] of loaded.entries()) {
        if (i > 0 && fd === undefined) {
          // no socket to share (not Node's own net handle): one thread serves
          await worker.terminate()
          continue
        }
        const listening = new Promise<Extract<ToChain, { t: 'listening' }>>((resolve) => {
          const onListening = (message: ToChain): void => {
            if (message.t !== 'listening') return
            port.off('message', onListening)
            resolve(message)
          }
          port.on('message', onListening)
          worker.once('exit', (code) => resolve({ t: 'listening', error: `request thread ${name} stopped (exit code ${code})` }))
        })
        const off = serveFront(port, doors, { scrape, onSnapshot })
        port.postMessage({ t: 'go', tip: doors.tip(), fd } satisfies ToFront)
        const answer = await listening
        if (answer.error !== undefined) {
          // the threads stop on purpose: not a death
          stopping = true
          off()
          for (const thread of [...threads, { worker }]) await thread.worker.terminate()
          for (const later of loaded.slice(i + 1)) await later.worker.terminate()
          const { host, port: wanted } = options.start.config.jsonrpc
          throw new Error(`JSON-RPC cannot listen on ${host}:${wanted}: ${answer.error}`)
        }
        if (i === 0) {
          address = answer.address
          fd = answer.fd
        }
        const thread: (typeof threads)[number] = { worker, port, off }
        threads.push(thread)
        worker.once('exit', (code) => {
          thread.exited = true
          if (stopping) return
          doors.fatal(`request thread ${name} stopped unexpectedly (exit code ${code})`, cause())
        })
        // a verify worker restarted later: this thread gets a port to it too
        const offVerifier = options.verifyPool.onWorker((verifier) =>
          port.postMessage({ t: 'verifier', port: verifier } satisfies ToFront, [verifier]),
        )
        worker.once('exit', offVerifier)
      }
      return {
        address: address as AddressInfo,
        count: threads.length,
        async stop() {
          stopping = true
          await Promise.all(
            threads.map(
              ({ worker, port, off, exited }) =>
                new Promise<void>((resolve) => {
                  if (exited) {
                    off()
                    return resolve()
                  }
                  const timer = setTimeout(() => void worker.terminate().then(() => resolve()), 5000)
                  port.on('message', (message: ToChain) => {
                    if (message.t !== 'stopped') return
                    clearTimeout(timer)
                    off()
                    void worker.terminate().then(() => resolve())
                  })
                  port.postMessage({ t: 'stop' } satisfies ToFront)
                }),
            ),
          )
        },
      }
    },
  }
}

/** One request thread's port, served here; returns what stops listening to the hub. */
function serveFront(
  port: MessagePort,
  doors: ChainDoors,
  metrics: { scrape(): Promise<{ contentType: string; text: string }>; onSnapshot(id: number, snapshot: MetricsSnapshot): void },
): () => void {
  const post = (message: ToFront): void => port.postMessage(message)
  let answered: { ids: number[]; codes: number[]; messages: string[] } | undefined
  const answer = (id: number, code: number, message: string): void => {
    if (answered === undefined) {
      answered = { ids: [], codes: [], messages: [] }
      // the outcomes of one group commit resolve together: they leave in one message
      setImmediate(() => {
        const group = answered as NonNullable<typeof answered>
        answered = undefined
        post({ t: 'admitted', ...group })
      })
    }
    answered.ids.push(id)
    answered.codes.push(code)
    answered.messages.push(message)
  }
  const failure = (error: unknown, what: string): RpcError => {
    if (error instanceof RpcError) return error
    doors.log.error(`${what} failed`, error)
    return new InternalError()
  }

  const admit = (ids: number[], packed: Uint8Array): void => {
    let records: (Uint8Array | undefined)[]
    try {
      records = unpackFrames(packed)
    } catch (error) {
      const refused = failure(error, 'reading the records a request thread admitted')
      for (const id of ids) answer(id, refused.code, refused.message)
      return
    }
    for (const [i, id] of ids.entries()) {
      const record = records[i]
      let checked: ReturnType<typeof decodeAdmitted>
      try {
        if (record === undefined) throw new RangeError('a request thread admitted fewer records than ids')
        checked = decodeAdmitted(record)
      } catch (error) {
        const refused = failure(error, 'decoding a transaction a request thread admitted')
        answer(id, refused.code, refused.message)
        continue
      }
      doors.submitter.admit({ ...checked, record }).then(
        () => answer(id, 0, ''),
        (error: unknown) => {
          const refused = failure(error, `admitting ${checked.tx.hash}`)
          answer(id, refused.code, refused.message)
        },
      )
    }
  }

  const call = async (message: Extract<ToChain, { t: 'call' }>): Promise<void> => {
    const handler = Object.hasOwn(doors.handlers, message.method) ? (doors.handlers[message.method] as Handler) : undefined
    try {
      if (handler === undefined) throw new InternalError()
      const result = await handler(message.params, {
        namespace: message.namespace,
        method: message.method,
        headers: message.headers,
        operator: message.operator,
      })
      if (result === undefined) throw new Error(`handler of ${message.method} returned no result`)
      post({ t: 'reply', id: message.id, tip: doors.tip(), text: stringifyJson(result) })
    } catch (error) {
      const refused = failure(error, message.method)
      post({ t: 'reply', id: message.id, tip: doors.tip(), code: refused.code, message: refused.message })
    }
  }

  port.on('message', (message: ToChain) => {
    switch (message.t) {
      case 'admit':
        return admit(message.ids, message.records)
      case 'call':
        return void call(message)
      case 'simulate':
        doors.simulate(decodeTx(message.tx)).then(
          (outcome) => post({ t: 'simulated', id: message.id, outcome }),
          (error: unknown) => {
            const refused = failure(error, 'a simulation')
            post({ t: 'simulated', id: message.id, code: refused.code, message: refused.message })
          },
        )
        return
      case 'status':
        return doors.events.publishStatus(message.event)
      case 'scrape':
        metrics.scrape().then(
          (scraped) => post({ t: 'scraped', id: message.id, ...scraped }),
          (error: unknown) => post({ t: 'scraped', id: message.id, contentType: '', text: '', error: String(error) }),
        )
        return
      case 'snapshot':
        return metrics.onSnapshot(message.id, message.snapshot)
      case 'log': {
        const log = doors.log.child(message.component)
        const detail = message.stack === undefined ? message.detail : Object.assign(new Error(message.message), { stack: message.stack })
        return log[message.level](message.message, detail)
      }
    }
  })
  const offBlock = doors.events.onBlock((event) => post({ t: 'block', number: event.number, hash: event.hash, tip: doors.tip() }))
  const offStatus = doors.events.onStatus((message) => post({ t: 'status', message }))
  const offArchive = doors.events.onArchive(() => post({ t: 'tip', tip: doors.tip() }))
  return () => {
    offBlock()
    offStatus()
    offArchive()
  }
}
