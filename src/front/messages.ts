/**
 * What the chain thread and a request thread say to each other over their message port. A
 * transaction crosses as bytes (wire/tx-codec.ts encodeAdmitted: decoded, hashed and
 * signature-checked already), never as a JSON re-encoding; a forwarded method's result crosses as
 * the JSON text the request thread splices into its reply.
 */
import type { AddressInfo } from 'node:net'
import type { MessagePort } from 'node:worker_threads'
import type { SolcPoolOptions } from '../compile/solc-pool.ts'
import type { KeelConfig } from '../config.ts'
import type { InvalidTx, Receipt } from '../domain.ts'
import type { StatusEvent, SystemStatusMessage } from '../events/types.ts'
import type { LogLevel } from '../log.ts'
import type { MetricsSnapshot } from '../metrics/registry.ts'
import type { OperatorProof } from '../rpc/context.ts'
import type { StoreTip } from '../store/index.ts'

/** What a request thread starts with (its workerData); it serves no namespace until it is told to open one (`open`). */
export interface FrontStart {
  config: KeelConfig
  txVersion: string
  /** contract_compileContract's compilers (the request thread compiles: src/compile/solc-pool.ts) */
  compiler: Omit<SolcPoolOptions, 'log'>
  /** tx_sendTransactionReturnReceipt's bound, when not the default */
  receiptWaitMs?: number
  /** to the chain thread: what concerns the thread (listening, metrics, logs, namespaces opened); each namespace has a port of its own */
  chain: MessagePort
  /** to each verify worker (verify-pool.ts connect) */
  verify: MessagePort[]
  verifyBackend: string
  threadName: string
}

/** A simulated transaction's outcome, kept by the request thread for tx_getTransactionReceipt. */
export interface Simulated {
  receipt?: Receipt
  invalid?: InvalidTx
}

/**
 * A namespace for a request thread to serve: it opens the ledger for reading and talks to that
 * namespace's chain over `port` (admissions, forwarded calls, blocks), so nothing of one namespace
 * crosses into another.
 */
export interface FrontNamespaceStart {
  name: string
  /** the namespace's data directory (its node CA lives there) */
  dataDir: string
  /** its ledger's LMDB environment, opened here for reading */
  ledgerPath: string
  port: MessagePort
  tip: StoreTip
}

/** What crosses a namespace's port towards its chain (the chain thread serves each port with that namespace's doors). */
export type ToChain =
  /**
   * transactions to admit, their records (wire/tx-codec.ts admittedRecord) in one transferred
   * buffer (wire/frames.ts packFrames): answered by one `admitted` per group of outcomes
   */
  | { t: 'admit'; ids: number[]; records: Uint8Array }
  /** a method only the chain thread serves (api/index.ts isChainThreadMethod), params already checked */
  | {
      t: 'call'
      id: number
      method: string
      params: unknown[]
      namespace: string
      headers: Record<string, string | string[] | undefined>
      /** what the request's operator headers prove, verified on the request thread (rpc/operator-auth.ts) */
      operator?: OperatorProof
    }
  /** a simulation: executed there, changing nothing */
  | { t: 'simulate'; id: number; tx: Uint8Array }
  /** a status event this thread raises (a cut-off WebSocket reader): the chain's hub publishes it */
  | { t: 'status'; event: StatusEvent }

/** What crosses the control port towards the chain thread. */
export type ToChainControl =
  | { t: 'log'; level: Exclude<LogLevel, 'silent'>; component: string; message: string; stack?: string; detail?: string }
  /** answer to `go`: listening (fd: its socket, for the next thread), or why not */
  | { t: 'listening'; address?: AddressInfo; fd?: number; error?: string }
  /** GET /metrics on this thread: the node's metrics, every thread's merged, answered by `scraped` */
  | { t: 'scrape'; id: number }
  /** this thread's metrics, answering `snapshot` */
  | { t: 'snapshot'; id: number; snapshot: MetricsSnapshot }
  | { t: 'stopped' }
  /** answer to `open` / `close`: the namespace is served (or no longer), or why it could not be opened */
  | { t: 'opened'; name: string; error?: string }
  | { t: 'closed'; name: string }

/** What crosses a namespace's port towards the request thread. */
export type ToFront =
  /** code 0: durable and answered; else the JSON-RPC error */
  | { t: 'admitted'; ids: number[]; codes: number[]; messages: string[] }
  | { t: 'reply'; id: number; tip: StoreTip; text?: string; code?: number; message?: string }
  | { t: 'simulated'; id: number; outcome?: Simulated; code?: number; message?: string }
  /** a block committed: reads may see it from now on */
  | { t: 'block'; number: number; hash: string; tip: StoreTip }
  | { t: 'status'; message: SystemStatusMessage }
  /** the store moved without a block (an archive or restore finished in the background) */
  | { t: 'tip'; tip: StoreTip }
  /** the merged metrics, or why they could not be collected (on the control port) */
  | { t: 'scraped'; id: number; contentType: string; text: string; error?: string }

/** What crosses the control port towards the request thread. */
export type ToFrontControl =
  /** the chain thread is ready: listen (on the first thread's socket `fd`, for the others) */
  | { t: 'go'; fd?: number }
  /** serve one more namespace (at start, and when an operator starts one) */
  | ({ t: 'open' } & FrontNamespaceStart)
  /** stop serving a namespace: its requests answer -32010 from now on */
  | { t: 'close'; name: string }
  /** send this thread's metrics (a scrape on any thread collects every thread's) */
  | { t: 'snapshot'; id: number }
  /** a port to a verify worker started since (a dead one's replacement: verify-pool.ts onWorker) */
  | { t: 'verifier'; port: MessagePort }
  | { t: 'scraped'; id: number; contentType: string; text: string; error?: string }
  | { t: 'stop' }
