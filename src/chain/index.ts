/**
 * The chain of one VP node with solo ordering: admission → pool (signature checked, then durable in
 * the pool log, then answered) → solo orderer → block producer (execute, roots, one LMDB
 * transaction).
 */
import type { TxFields } from '../crypto/sign-string.ts'
import type { VerifyPool } from '../crypto/verify-pool.ts'
import {
  type CommittedBlock,
  type ExecutionOutcome,
  type Hex,
  type InvalidTx,
  type Receipt,
  type SignedTx,
  type StateReader,
  type TxSubmitter,
  ZERO_HASH,
} from '../domain.ts'
import { InvalidPermission, SystemBusy } from '../errors.ts'
import { isEthereumTx } from '../eth/transaction.ts'
import { refusalOf } from '../governance/permission.ts'
import { type GenesisGovernance, type GovernanceConfig, GovernanceView, NO_GOVERNANCE } from '../governance/state.ts'
import type { Logger } from '../log.ts'
import type { ChainMetrics } from '../metrics/registry.ts'
import type { StateHasher } from '../store/state-hasher.ts'
import { admitTransaction, signHashOf } from './admission.ts'
import { createNonceGate } from './eth-nonce-gate.ts'
import { createTxPool, type PendingStore, type ReadyTx, type SignatureVerifier, type TxPool } from './pool.ts'
import { type BlockExecutor, type BlockStore, createBlockProducer, type ProduceOptions, receiptOf } from './producer.ts'
import { createRateLimit } from './rate-limit.ts'
import { createSoloOrderer } from './solo.ts'

export interface ChainStore extends BlockStore, PendingStore {}

export interface SimulatingExecutor extends BlockExecutor {
  simulate(state: StateReader, tx: SignedTx, context: { number: number; timestamp: bigint }): Promise<ExecutionOutcome>
}

export interface ChainOptions {
  store: ChainStore
  executor: SimulatingExecutor
  verifyPool: VerifyPool
  stateHasher: StateHasher
  batchSize: number
  batchTimeoutMs: number
  poolCapacity: number
  /** the admission rate limit for clients' transactions ([chain] txRatePerSecond, txRateBurst); off when absent */
  txRate?: { perSecond: number; burst: number }
  nowNs: () => bigint
  log: Logger
  /**
   * 'solo' (the default): this node orders alone. 'consensus': a network role decides what is
   * produced and when (chain.produce); no orderer runs here.
   */
  ordering?: 'solo' | 'consensus'
  /** told once when ordering stops for good (see Chain.halt) */
  onHalt?: (reason: string) => void
  /** the genesis governance (src/governance/state.ts): account statuses are checked at admission */
  governance?: GenesisGovernance
  /** told of each client's admission outcome and of each committed block (src/metrics/registry.ts) */
  metrics?: Pick<ChainMetrics, 'observeAdmission' | 'observeBlock'>
}

/** Outcomes of simulated transactions, kept in memory for tx_getTransactionReceipt; bounded. */
const MAX_SIMULATIONS = 10_000

export interface Chain {
  readonly submitter: TxSubmitter
  readonly pool: TxPool
  readonly verifier: SignatureVerifier
  /** produces and commits the next block from `batch`, then settles the pool and tells the block listeners */
  produce(batch: ReadyTx[], options?: ProduceOptions): Promise<CommittedBlock>
  /** receipt or discard record of a simulated transaction */
  simulation(hash: Hex): { receipt?: Receipt; invalid?: InvalidTx } | undefined
  /** executes a simulated transaction against the latest state (nothing changes); its outcome */
  simulate(tx: SignedTx): Promise<{ receipt?: Receipt; invalid?: InvalidTx }>
  onBlock(listener: (block: CommittedBlock) => void): void
  /**
   * Ordering stopped for good (a block could not be committed, consensus records could not be
   * written): new transactions are refused with -32006 saying why, rather than answered with a
   * hash this node will not order; what the pool holds stays in the store for the next start.
   */
  halt(reason: string): void
  /** why ordering stopped, once it has */
  halted(): string | undefined
  start(): Promise<void>
  stop(): Promise<void>
}

export function signatureVerifier(verifyPool: VerifyPool): SignatureVerifier {
  return {
    async verify(txs) {
      // issue 28: an Ethereum transaction's `from` is the address its signature recovers (src/eth/transaction.ts
      // derives it so, wherever the record is built), so it is valid by construction; the rest go to the pool
      const hyperchain = txs.filter((tx) => !isEthereumTx(tx))
      const results = await verifyPool.verify(
        hyperchain.map((tx, id) => ({ id, tx: tx.signed as unknown as TxFields, signature: tx.signature })),
      )
      let next = 0
      return txs.map((tx) => {
        if (isEthereumTx(tx)) return { valid: true }
        const { valid, uncovered } = results[next++]
        return uncovered === undefined ? { valid } : { valid, uncovered }
      })
    },
  }
}

export function createChain(options: ChainOptions): Chain {
  const { store, executor, log } = options
  const verifier = signatureVerifier(options.verifyPool)
  const pool = createTxPool({
    store,
    verifier,
    capacity: options.poolCapacity,
    verifyBatch: 512,
    log: log.child('pool'),
    observeAdmission: options.metrics?.observeAdmission,
    rateLimit: options.txRate === undefined ? undefined : createRateLimit(options.txRate),
    // issue 28: an Ethereum transaction waits for its sender's earlier nonces
    gate: createNonceGate((address) => store.state.getAccount(address)?.nonce ?? 0n),
  })
  const producer = createBlockProducer({ store, executor, hasher: options.stateHasher, nowNs: options.nowNs, log: log.child('producer') })
  const listeners: ((block: CommittedBlock) => void)[] = []
  const simulations = new Map<Hex, { receipt?: Receipt; invalid?: InvalidTx }>()

  const produce = async (batch: ReadyTx[], produceOptions?: ProduceOptions): Promise<CommittedBlock> => {
    const started = performance.now()
    const block = await producer.produce(batch, produceOptions)
    options.metrics?.observeBlock({
      valid: block.txs.length,
      discardReasons: block.invalid.map((discarded) => discarded.invalidMsg),
      seconds: (performance.now() - started) / 1000,
    })
    pool.settle(batch.map((item) => item.tx.hash))
    for (const listener of listeners) {
      try {
        listener(block)
      } catch (error) {
        log.error('a block listener failed', error)
      }
    }
    return block
  }

  let haltReason: string | undefined
  const halt = (reason: string): void => {
    if (haltReason !== undefined) return
    haltReason = reason
    log.error(`ordering stopped: ${reason}; new transactions are refused until the node is restarted`)
    options.onHalt?.(reason)
  }

  const orderer =
    options.ordering === 'consensus'
      ? undefined
      : createSoloOrderer({
          pool,
          batchSize: options.batchSize,
          batchTimeoutMs: options.batchTimeoutMs,
          log: log.child('solo'),
          produce,
          onStopped: (error) => halt(`block ${store.height() + 1} could not be committed (${(error as Error).message ?? String(error)})`),
        })

  const simulate = async (tx: SignedTx): Promise<{ receipt?: Receipt; invalid?: InvalidTx }> => {
    const [{ valid: signatureValid }] = await verifier.verify([tx])
    const number = store.height() + 1
    const outcome: ExecutionOutcome = signatureValid
      ? await executor.simulate(store.state, tx, { number, timestamp: options.nowNs() })
      : { ok: false, invalidMsg: 'SIGFAILED', detail: 'signature does not recover `from`', gasUsed: 0, executeTimeNs: 0 }
    const simulated = outcome.ok
      ? { receipt: receiptOf(tx, outcome, { blockNumber: number, blockHash: ZERO_HASH, txIndex: 0 }) }
      : { invalid: { tx, invalidMsg: outcome.invalidMsg, detail: outcome.detail, blockNumber: number } }
    if (simulations.size >= MAX_SIMULATIONS) simulations.delete(simulations.keys().next().value as Hex)
    simulations.set(tx.hash, simulated)
    return simulated
  }

  const refuseWhenHalted = (): void => {
    if (haltReason !== undefined)
      throw SystemBusy.because(
        `this node stopped ordering transactions (${haltReason}); it needs a restart, send transactions to another node meanwhile`,
      )
  }

  /**
   * An abandoned or frozen account's transactions are refused here, against the committed state;
   * one pooled before its account changed is discarded at execution (src/exec/executor.ts).
   */
  let settings: { height: number; config: GovernanceConfig } | undefined
  const refuseUnpermitted = (tx: SignedTx): void => {
    const view = new GovernanceView(store.state, options.governance ?? NO_GOVERNANCE)
    // the settings change only in blocks: read once per height
    const height = store.height()
    if (settings?.height !== height) settings = { height, config: view.config() }
    const refusal = refusalOf(view, settings.config, tx)
    if (refusal !== undefined) throw new InvalidPermission(refusal)
  }

  return {
    pool,
    verifier,
    produce,
    submitter: {
      async submit(kind, params) {
        const tx = admitTransaction(kind, params as Record<string, unknown>, { nowNs: options.nowNs })
        if (tx.simulate) {
          refuseUnpermitted(tx)
          await simulate(tx)
          return tx.hash
        }
        refuseWhenHalted()
        // judged once its signature and what the signature covers are checked, as a request thread's admission is
        await pool.add(tx, { permit: refuseUnpermitted })
        return tx.hash
      },
      async admit({ tx, signatureValid, record }) {
        refuseWhenHalted()
        refuseUnpermitted(tx)
        await pool.add(tx, { signatureValid, record })
        return tx.hash
      },
      signHash: (params) => signHashOf(params as Record<string, unknown>),
    },
    simulation: (hash) => simulations.get(hash),
    simulate,
    onBlock(listener) {
      listeners.push(listener)
    },
    halt,
    halted: () => haltReason,
    async start() {
      const restored = await pool.restore()
      if (restored > 0) log.info(`restored ${restored} pending transactions from the store`)
      orderer?.start()
    },
    async stop() {
      await orderer?.stop()
    },
  }
}
