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
import { copyWith } from '../copy-with.ts'
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
import type { FrontStart, Simulated, ToChain, ToChainControl, ToFront, ToFrontControl } from './messages.ts'

/** What one namespace's chain lends the request threads (each thread reaches it over a port of its own). */
export interface NamespaceDoors {
  name: string
  /** its data directory and ledger, which the request threads open for reading */
  dataDir: string
  ledgerPath: string
  submitter: TxSubmitter
  simulate(tx: SignedTx): Promise<Simulated>
  /** every handler, for the methods a request thread forwards (api/index.ts isChainThreadMethod) */
  handlers: Readonly<Record<string, unknown>>
  events: EventHub
  tip(): StoreTip
  log: Logger
}

/** What the chain thread lends its request threads. */
export interface ChainDoors {
  /** the namespaces served from the start, the default one first */
  namespaces: NamespaceDoors[]
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
  /** every thread serves one more namespace (an operator started it); rejects when a thread cannot open it */
  openNamespace(doors: NamespaceDoors): Promise<void>
  /** no thread serves the namespace any more: its requests answer -32010 */
  closeNamespace(name: string): Promise<void>
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
    // Long because: a thread's whole life on this side — its answers to what it was told, opening on its socket in turn, its namespaces, its death and its stop — shares the threads list and the stopping flag.
    async open(doors) {
      const threads: ServedThread[] = []
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
              port.postMessage({ t: 'snapshot', id } satisfies ToFrontControl)
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
        const thread: ServedThread = { worker, port, name, namespaces: new Map(), off: () => undefined }
        thread.off = serveControl(thread, doors, { scrape, onSnapshot })
        // the namespaces first: the thread opens them, in order, before it listens
        const opening = doors.namespaces.map((namespace) => openOn(thread, namespace))
        const listening = answerOf(thread, 'listening', (message) => message, `request thread ${name} stopped`)
        port.postMessage({ t: 'go', fd } satisfies ToFrontControl)
        const answer = await listening
        const refused = (await Promise.all(opening)).find((error) => error !== undefined)
        const error = answer.error ?? refused
        if (error !== undefined) {
          // the threads stop on purpose: not a death
          stopping = true
          thread.off()
          for (const running of [...threads, thread]) await running.worker.terminate()
          for (const later of loaded.slice(i + 1)) await later.worker.terminate()
          if (refused !== undefined && answer.error === undefined) throw new Error(`request thread ${name} cannot serve: ${refused}`)
          const { host, port: wanted } = options.start.config.jsonrpc
          throw new Error(`JSON-RPC cannot listen on ${host}:${wanted}: ${error}`)
        }
        if (i === 0) {
          address = answer.address
          fd = answer.fd
        }
        threads.push(thread)
        worker.once('exit', (code) => {
          thread.exited = true
          if (stopping) return
          doors.fatal(`request thread ${name} stopped unexpectedly (exit code ${code})`, cause())
        })
        // a verify worker restarted later: this thread gets a port to it too
        const offVerifier = options.verifyPool.onWorker((verifier) =>
          port.postMessage({ t: 'verifier', port: verifier } satisfies ToFrontControl, [verifier]),
        )
        worker.once('exit', offVerifier)
      }
      return {
        address: address as AddressInfo,
        count: threads.length,
        async openNamespace(namespace) {
          const refused = (await Promise.all(threads.map((thread) => openOn(thread, namespace)))).find((error) => error !== undefined)
          if (refused === undefined) return
          await Promise.all(threads.map((thread) => closeOn(thread, namespace.name)))
          throw new Error(`the request threads cannot serve namespace ${namespace.name}: ${refused}`)
        },
        async closeNamespace(name) {
          await Promise.all(threads.map((thread) => closeOn(thread, name)))
        },
        async stop() {
          stopping = true
          await Promise.all(
            threads.map(async (thread) => {
              const { worker, port, exited } = thread
              if (!exited) {
                const stopped = answerOf(thread, 'stopped', () => undefined, '')
                port.postMessage({ t: 'stop' } satisfies ToFrontControl)
                await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, 5000))])
              }
              thread.off()
              for (const served of thread.namespaces.values()) served.off()
              await worker.terminate()
            }),
          )
        },
      }
    },
  }
}

/** A request thread as the chain thread serves it: its control port, and a port per namespace it serves. */
interface ServedThread {
  worker: Worker
  port: MessagePort
  name: string
  namespaces: Map<string, { port: MessagePort; off(): void }>
  /** stops serving its control port */
  off(): void
  exited?: boolean
  /** who waits for the thread's answer of a kind (`listening`, `opened` per namespace, …) */
  waiting?: Map<string, (message: ToChainControl) => void>
}

/** The thread's next answer of kind `t` (for `opened`/`closed`: of that namespace), or `gone` if its thread exits first. */
function answerOf<K extends ToChainControl['t'], R>(
  thread: ServedThread,
  t: K,
  read: (message: Extract<ToChainControl, { t: K }>) => R,
  gone: string,
  namespace = '',
): Promise<R> {
  thread.waiting ??= new Map()
  const waiting = thread.waiting
  const key = `${t}:${namespace}`
  return new Promise<R>((resolve) => {
    const onExit = (code: number): void => {
      waiting.delete(key)
      resolve(read({ t, error: `${gone} (exit code ${code})`, name: namespace } as unknown as Extract<ToChainControl, { t: K }>))
    }
    thread.worker.once('exit', onExit)
    waiting.set(key, (message) => {
      thread.worker.off('exit', onExit)
      resolve(read(message as Extract<ToChainControl, { t: K }>))
    })
  })
}

/** Tells a thread to serve a namespace over a new port, served here with the namespace's doors; its refusal, if any. */
function openOn(thread: ServedThread, doors: NamespaceDoors): Promise<string | undefined> {
  const channel = new MessageChannel()
  const off = serveNamespace(channel.port1, doors)
  thread.namespaces.set(doors.name, { port: channel.port1, off })
  const opened = answerOf(thread, 'opened', (message) => message.error, `request thread ${thread.name} stopped`, doors.name)
  const message: ToFrontControl = {
    t: 'open',
    name: doors.name,
    dataDir: doors.dataDir,
    ledgerPath: doors.ledgerPath,
    port: channel.port2,
    tip: doors.tip(),
  }
  thread.port.postMessage(message, [channel.port2])
  return opened.then((error) => {
    if (error !== undefined) {
      off()
      channel.port1.close()
      thread.namespaces.delete(doors.name)
    }
    return error
  })
}

/** Tells a thread to stop serving a namespace, and stops serving its port here. */
async function closeOn(thread: ServedThread, name: string): Promise<void> {
  const served = thread.namespaces.get(name)
  if (served === undefined) return
  thread.namespaces.delete(name)
  if (!thread.exited) {
    const closed = answerOf(thread, 'closed', () => undefined, '', name)
    thread.port.postMessage({ t: 'close', name } satisfies ToFrontControl)
    await closed
  }
  served.off()
  served.port.close()
}

/** A request thread's control port, served here: its answers, metrics and log lines; returns what stops serving it. */
function serveControl(
  thread: ServedThread,
  doors: Pick<ChainDoors, 'log'>,
  metrics: { scrape(): Promise<{ contentType: string; text: string }>; onSnapshot(id: number, snapshot: MetricsSnapshot): void },
): () => void {
  const { port } = thread
  const onMessage = (message: ToChainControl): void => {
    switch (message.t) {
      case 'scrape':
        metrics.scrape().then(
          (scraped) => port.postMessage({ t: 'scraped', id: message.id, ...scraped } satisfies ToFrontControl),
          (error: unknown) =>
            port.postMessage({ t: 'scraped', id: message.id, contentType: '', text: '', error: String(error) } satisfies ToFrontControl),
        )
        return
      case 'snapshot':
        metrics.onSnapshot(message.id, message.snapshot)
        return
      case 'log': {
        const log = doors.log.child(message.component)
        const detail = message.stack === undefined ? message.detail : Object.assign(new Error(message.message), { stack: message.stack })
        log[message.level](message.message, detail)
        return
      }
      default: {
        const key = `${message.t}:${'name' in message ? message.name : ''}`
        const waiting = thread.waiting?.get(key)
        thread.waiting?.delete(key)
        waiting?.(message)
      }
    }
  }
  port.on('message', onMessage)
  return () => port.off('message', onMessage)
}

/** One namespace's port of a request thread, served here with the namespace's doors; returns what stops listening to its hub. */
function serveNamespace(port: MessagePort, doors: NamespaceDoors): () => void {
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
      doors.submitter.admit(copyWith(checked, { record })).then(
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
