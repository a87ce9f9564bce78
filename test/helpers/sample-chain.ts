/**
 * The sample chain of openrpc.json (`info.description`), built from its genesis by real signed
 * transactions on a real node whose clock is pinned, so every hash, time and root comes out the
 * same run after run:
 *
 * - genesis: 0x17d8…3bffc (the 2017 manual's demo account) holds 1,000,000,000;
 * - block 1 (written at T0 + 1 s): the protocol.md §1.3 transfer of 100 to 0x000f…3abd, plus two
 *   transfers from 0xb336…96d3 (the JS SDK's fixture account, which holds nothing) that were
 *   discarded: one whose signature is not its sender's (SIGFAILED), one larger than its balance
 *   (OUTOFBALANCE);
 * - block 2 (T0 + 2 s): 0x17d8 deploys SAMPLE_CONTRACT at 0xaeccd2fd1118334402c5de1cb014a9c192c498df
 *   (its first deployment, nonce 0); 0xb336 deploys code whose constructor reverts
 *   (DEPLOY_CONTRACT_FAILED);
 * - block 3 (T0 + 3 s): 0x17d8 calls the contract, which emits one log; 0xb336's call with an
 *   unknown selector reverts (INVOKE_CONTRACT_FAILED) and its freeze of the contract is refused,
 *   not being the deployer (INVALID_PERMISSION);
 * - then one more transfer from 0x17d8 waits in the pool, never ordered.
 *
 * Block boundaries are deterministic: each block is cut by a node started with `batchSize` equal
 * to the block's transaction count and a batch timer that never fires, so the orderer cuts exactly
 * when the block's transactions are all verified. The node is restarted on the same data
 * directory for every block, and finally serves with an orderer that never cuts, so transactions
 * submitted while examples replay stay pending and the chain stays at block 3.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { accountFromPrivateKey } from '../../sdk/src/account.ts'
import { operatorHeaders } from '../../sdk/src/operator.ts'
import { resolveConfig } from '../../src/config.ts'
import { signString2017, signStringFormatA, signStringFormatB, type TxFields } from '../../src/crypto/sign-string.ts'
import { signSecp256k1 } from '../../src/crypto/signature.ts'
import { type KeelNode, type StartOptions, startNode } from '../../src/node.ts'
import { stringifyJson } from '../../src/wire/json.ts'
import { DEMO_ADDRESS, DEMO_PRIVATE_KEY, generatedTransfer2017, SDK_ADDRESS, SDK_PRIVATE_KEY } from '../unit/crypto/vectors.ts'
import { envelope, post } from './node.ts'

export { DEMO_ADDRESS, DEMO_PRIVATE_KEY, SDK_ADDRESS, SDK_PRIVATE_KEY }

export const SECOND = 1_000_000_000n
/** The protocol.md §1.3 transfer's timestamp; every time of the sample chain is counted from it. */
export const T0 = 1_510_000_000_000_000_000n
/** The batch timer of a node that must never cut on time (below setTimeout's 2^31 - 1 ms limit). */
export const NEVER_MS = 2_000_000_000
/** A batch size no test reaches: the orderer of a serving node never cuts. */
export const NEVER_BATCH = 1_000_000

export const RECEIVER = '0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd'
export const CONTRACT_ADDRESS = '0xaeccd2fd1118334402c5de1cb014a9c192c498df'
export const GENESIS_BALANCE = 1_000_000_000n

/** Keccak-256 of `Ping(uint256)`: the topic of the sample contract's only event. */
export const PING_TOPIC = '0x48257dc961b6f792c2b78a080dacfed693b660960a702de21cee364e20270e2f'
/** The selector the sample contract answers (the one protocol.md §1.3's Java SDK vector calls). */
export const PING_SELECTOR = '0xbe1c766b'

/**
 * Runtime code of the sample contract (73 bytes): called with selector 0xbe1c766b it emits
 * `Ping(1)` and returns 42; any other call reverts.
 *
 *   PUSH1 0 CALLDATALOAD PUSH1 0xe0 SHR PUSH4 0xbe1c766b EQ PUSH1 0x13 JUMPI   selector check
 *   PUSH1 0 DUP1 REVERT                                                          otherwise revert
 *   JUMPDEST PUSH1 1 PUSH1 0 MSTORE PUSH32 <Ping topic> PUSH1 0x20 PUSH1 0 LOG1  emit Ping(1)
 *   PUSH1 0x2a PUSH1 0 MSTORE PUSH1 0x20 PUSH1 0 RETURN                          return 42
 */
export const SAMPLE_RUNTIME = `0x60003560e01c63${PING_SELECTOR.slice(2)}14601357600080fd5b60016000527f${PING_TOPIC.slice(2)}60206000a1602a60005260206000f3`
/** Init code: copies the 73 runtime bytes that follow its 12 bytes and returns them. */
export const SAMPLE_CONTRACT = `0x6049600c60003960496000f3${SAMPLE_RUNTIME.slice(2)}`
/** Init code whose constructor reverts: PUSH1 0 DUP1 REVERT. */
export const REVERTING_CONSTRUCTOR = '0x600080fd'

export type TxKind = 'transfer' | 'deploy' | 'invoke' | 'maintain'
export type Outcome = 'valid' | 'SIGFAILED' | 'OUTOFBALANCE' | 'DEPLOY_CONTRACT_FAILED' | 'INVOKE_CONTRACT_FAILED' | 'INVALID_PERMISSION'

/** One signed transaction of the sample chain, as it is sent. */
export interface SampleTx {
  kind: TxKind
  params: Record<string, unknown>
  /** what executing it must give */
  outcome: Outcome
}

export const SUBMIT_METHOD: Record<TxKind, string> = {
  transfer: 'tx_sendTransaction',
  deploy: 'contract_deployContract',
  invoke: 'contract_invokeContract',
  maintain: 'contract_maintainContract',
}

/** Signs `fields` with the 2017 sign string (protocol.md §1.1), RFC 6979 and low-s: deterministic. */
export function sign2017(privateKey: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { ...fields, signature: `0x${signSecp256k1(signString2017(fields as unknown as TxFields), privateKey)}` }
}

/** Signs `fields` with format A (protocol.md §1.2), which covers the opcode the 2017 string leaves out; deterministic too. */
export function signFormatA(privateKey: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { ...fields, signature: `0x${signSecp256k1(signStringFormatA(fields as unknown as TxFields), privateKey)}` }
}

const at = (tenths: number): bigint => T0 + (BigInt(tenths) * SECOND) / 10n

/** One block to write: its transactions by name, in order, and the node clock while it is cut. */
export interface SampleBlock {
  writeTime: bigint
  txs: Record<string, SampleTx>
}

/** The transactions of the sample chain, block by block, each with the time its block is written. */
export const sampleBlocks: SampleBlock[] = [
  {
    writeTime: at(10),
    txs: {
      transfer: {
        kind: 'transfer',
        // protocol.md §1.3 generated vector, sent exactly as published (tx hash 0x8d47de37…, §2)
        params: { ...generatedTransfer2017.tx, signature: generatedTransfer2017.signature },
        outcome: 'valid',
      },
      badSignature: {
        kind: 'transfer',
        // from 0xb336…, signed with 0x17d8…'s key: the signature recovers the wrong address
        params: {
          ...sign2017(DEMO_PRIVATE_KEY, { from: SDK_ADDRESS, to: RECEIVER, value: 100, timestamp: at(2), nonce: 4561234567890123 }),
        },
        outcome: 'SIGFAILED',
      },
      overdrawn: {
        kind: 'transfer',
        params: sign2017(SDK_PRIVATE_KEY, {
          from: SDK_ADDRESS,
          to: RECEIVER,
          value: 1_000_000_000,
          timestamp: at(4),
          nonce: 7894561230147852,
        }),
        outcome: 'OUTOFBALANCE',
      },
    },
  },
  {
    writeTime: at(20),
    txs: {
      deploy: {
        kind: 'deploy',
        params: sign2017(DEMO_PRIVATE_KEY, { from: DEMO_ADDRESS, payload: SAMPLE_CONTRACT, timestamp: at(12), nonce: 5373500328656597 }),
        outcome: 'valid',
      },
      deployReverted: {
        kind: 'deploy',
        params: sign2017(SDK_PRIVATE_KEY, {
          from: SDK_ADDRESS,
          payload: REVERTING_CONSTRUCTOR,
          timestamp: at(14),
          nonce: 3141592653589793,
        }),
        outcome: 'DEPLOY_CONTRACT_FAILED',
      },
    },
  },
  {
    writeTime: at(30),
    txs: {
      call: {
        kind: 'invoke',
        params: sign2017(DEMO_PRIVATE_KEY, {
          from: DEMO_ADDRESS,
          to: CONTRACT_ADDRESS,
          payload: PING_SELECTOR,
          timestamp: at(22),
          nonce: 2472630987523856,
        }),
        outcome: 'valid',
      },
      callReverted: {
        kind: 'invoke',
        // get(): a selector the contract does not answer
        params: sign2017(SDK_PRIVATE_KEY, {
          from: SDK_ADDRESS,
          to: CONTRACT_ADDRESS,
          payload: '0x6d4ce63c',
          timestamp: at(24),
          nonce: 2718281828459045,
        }),
        outcome: 'INVOKE_CONTRACT_FAILED',
      },
      freezeByStranger: {
        kind: 'maintain',
        params: signFormatA(SDK_PRIVATE_KEY, {
          from: SDK_ADDRESS,
          to: CONTRACT_ADDRESS,
          opcode: 2,
          value: 0,
          timestamp: at(26),
          nonce: 1618033988749894,
        }),
        outcome: 'INVALID_PERMISSION',
      },
    },
  },
]

/** Submitted once block 3 is written; it stays in the pool of the serving node. */
export const pendingTransfer: SampleTx = {
  kind: 'transfer',
  params: sign2017(DEMO_PRIVATE_KEY, { from: DEMO_ADDRESS, to: RECEIVER, value: 100, timestamp: at(32), nonce: 1123581321345589 }),
  outcome: 'valid',
}

/** The clock of the serving node: one second after block 3. */
export const SERVE_TIME = at(40)

/** Block 4 of the chain "after contract_maintainContract with opcode 2": the deployer freezes the contract. */
export const freezeBlock: SampleBlock = {
  writeTime: at(50),
  txs: {
    freeze: {
      kind: 'maintain',
      params: signFormatA(DEMO_PRIVATE_KEY, {
        from: DEMO_ADDRESS,
        to: CONTRACT_ADDRESS,
        opcode: 2,
        value: 0,
        timestamp: at(42),
        nonce: 1414213562373095,
      }),
      outcome: 'valid',
    },
  },
}

/**
 * Signs `fields` as the JS SDK does (sign string format B, version 4.1, every section; sdk-wire.md
 * §4.1), so the extra ids are signed too; the SDK's defaults fill what `fields` leaves out.
 */
export function signSdk(privateKey: string, fields: Record<string, unknown>): Record<string, unknown> {
  const tx: Record<string, unknown> = {
    opCode: 0,
    gasPrice: 0,
    gasLimit: 1_000_000_000,
    expirationTimestamp: BigInt(fields.timestamp as bigint) + 300n * SECOND,
    version: '4.1',
    ...fields,
  }
  const text = signStringFormatB({ ...tx, opcode: tx.opCode } as unknown as TxFields, { version: '4.1', sections: 'all' })
  return { ...tx, signature: signSecp256k1(text, privateKey) }
}

/**
 * Block 4 of the chain "with extra ids": three transactions of 0x17d8… that carry extra ids (a
 * transfer tagged [7, "lot-42"], a call of the sample contract tagged [7, 8], a transfer tagged
 * ["lot-42", "batch-9"]), signed as the JS SDK signs them.
 */
export const extraIdBlock: SampleBlock = {
  writeTime: at(50),
  txs: {
    taggedTransfer: {
      kind: 'transfer',
      params: signSdk(DEMO_PRIVATE_KEY, {
        from: DEMO_ADDRESS,
        to: RECEIVER,
        value: 1,
        type: 'TRANSFER',
        timestamp: at(42),
        nonce: 1732050807568877,
        extraIdInt64: [7],
        extraIdString: ['lot-42'],
      }),
      outcome: 'valid',
    },
    taggedCall: {
      kind: 'invoke',
      params: signSdk(DEMO_PRIVATE_KEY, {
        from: DEMO_ADDRESS,
        to: CONTRACT_ADDRESS,
        payload: PING_SELECTOR,
        type: 'EVM',
        timestamp: at(44),
        nonce: 2236067977499789,
        extraIdInt64: [7, 8],
      }),
      outcome: 'valid',
    },
    taggedLot: {
      kind: 'transfer',
      params: signSdk(DEMO_PRIVATE_KEY, {
        from: DEMO_ADDRESS,
        to: RECEIVER,
        value: 2,
        type: 'TRANSFER',
        timestamp: at(46),
        nonce: 2645751311064590,
        extraIdString: ['lot-42', 'batch-9'],
      }),
      outcome: 'valid',
    },
  },
}

/** A node clock the test sets; it never moves on its own. */
export class PinnedClock {
  constructor(public ns: bigint) {}
  readonly nowNs = (): bigint => this.ns
  set(ns: bigint): void {
    this.ns = ns
  }
}

export const sampleGenesis = { accounts: [{ address: DEMO_ADDRESS, balance: GENESIS_BALANCE.toString() }] }

export interface ChainNodeOptions {
  dataDir: string
  clock: PinnedClock
  batchSize: number
  batchTimeoutMs?: number
  poolCapacity?: number
  genesis?: { accounts: { address: string; balance: string }[] }
  /** the node's compilers (default every installed solc release; `packages: []` none) */
  compiler?: StartOptions['compiler']
}

/**
 * A silent node on 127.0.0.1:0 serving `dataDir`, with the pinned clock and in-thread signature
 * checks (no worker start-up); its batch timer never fires unless `batchTimeoutMs` is given.
 */
export function startChainNode(options: ChainNodeOptions): Promise<KeelNode> {
  const config = resolveConfig({
    node: { dataDir: options.dataDir },
    jsonrpc: { port: 0 },
    log: { level: 'silent' },
    genesis: options.genesis ?? sampleGenesis,
    chain: {
      batchSize: options.batchSize,
      batchTimeoutMs: options.batchTimeoutMs ?? NEVER_MS,
      ...(options.poolCapacity === undefined ? {} : { poolCapacity: options.poolCapacity }),
    },
  })
  // tx_sendTransactionReturnReceipt gives up after 1 s on these nodes (the examples of openrpc.json say so)
  return startNode(config, { nowNs: options.clock.nowNs, verifyWorkers: 0, compiler: options.compiler, receiptWaitMs: 1000 })
}

interface Reply {
  code: number
  message: string
  result?: unknown
}

/** One call; `operator`: sign it as an operator with this account key (operator methods, rpc/operator-auth.ts). */
export async function rpc(url: string, method: string, params: unknown[] = [], operator?: string): Promise<Reply> {
  const body = stringifyJson(envelope(method, params))
  const headers = operator === undefined ? {} : operatorHeaders(accountFromPrivateKey(operator), body)
  return (await post(url, body, { headers })).body as Reply
}

/** Submits a transaction and returns its hash; throws on any error reply. */
export async function submit(url: string, tx: SampleTx): Promise<string> {
  const reply = await rpc(url, SUBMIT_METHOD[tx.kind], [tx.params])
  if (reply.code !== 0) throw new Error(`${SUBMIT_METHOD[tx.kind]}: ${reply.code} ${reply.message}`)
  return reply.result as string
}

async function waitForHeight(url: string, height: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const reply = await rpc(url, 'block_getChainHeight')
    if (reply.code === 0 && Number(BigInt(reply.result as string)) >= height) return
    if (Date.now() > deadline) throw new Error(`the chain did not reach height ${height} in ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const RECEIPT_CODES: Record<Exclude<Outcome, 'valid'>, number> = {
  OUTOFBALANCE: -32002,
  SIGFAILED: -32003,
  DEPLOY_CONTRACT_FAILED: -32004,
  INVOKE_CONTRACT_FAILED: -32005,
  INVALID_PERMISSION: -32008,
}

/**
 * Writes one block holding exactly `block.txs`, in this order, at `block.writeTime`: a node is
 * started on `dataDir` with batchSize = the number of transactions and no batch timer, the
 * transactions are submitted one after the other, and the node stops once the block is written.
 * Checks that the block holds them all and that each had its expected outcome.
 */
export async function commitBlock(dataDir: string, block: SampleBlock, genesis = sampleGenesis): Promise<Record<string, string>> {
  const clock = new PinnedClock(block.writeTime)
  const txs = Object.entries(block.txs)
  const node = await startChainNode({ dataDir, clock, batchSize: txs.length, genesis })
  try {
    const height = Number(BigInt(((await rpc(node.url, 'block_getChainHeight')).result as string | undefined) ?? '0x0'))
    const hashes: Record<string, string> = {}
    for (const [name, tx] of txs) hashes[name] = await submit(node.url, tx)
    await waitForHeight(node.url, height + 1)
    const written = (await rpc(node.url, 'block_getBlockByNumber', [height + 1, true])).result as { txcounts: string; writeTime: unknown }
    const valid = txs.filter(([, tx]) => tx.outcome === 'valid').length
    if (Number(BigInt(written.txcounts)) !== valid || BigInt(written.writeTime as bigint) !== block.writeTime)
      throw new Error(
        `block ${height + 1} holds ${written.txcounts} valid transactions written at ${written.writeTime}, expected ${valid} at ${block.writeTime}`,
      )
    for (const [name, tx] of txs) {
      const reply = await rpc(node.url, 'tx_getTransactionReceipt', [hashes[name]])
      const expected = tx.outcome === 'valid' ? 0 : RECEIPT_CODES[tx.outcome]
      if (reply.code !== expected)
        throw new Error(`${name} (${hashes[name]}): receipt ${reply.code} ${reply.message}, expected ${tx.outcome}`)
    }
    return hashes
  } finally {
    await node.stop()
  }
}

export interface SampleChain {
  /** the serving node: sample chain at block 3, orderer that never cuts, `pending` in its pool */
  node: KeelNode
  clock: PinnedClock
  dataDir: string
  /** tx hash of every sample transaction by name (see sampleBlocks), plus `pending` */
  hashes: Record<string, string>
  stop(): Promise<void>
}

/** Writes blocks 1 to 3 of the sample chain into `dataDir` (a fresh directory when omitted). */
export async function writeSampleBlocks(
  dataDir = mkdtempSync(join(tmpdir(), 'keel-sample-')),
): Promise<{ dataDir: string; hashes: Record<string, string> }> {
  const hashes: Record<string, string> = {}
  for (const block of sampleBlocks) Object.assign(hashes, await commitBlock(dataDir, block))
  return { dataDir, hashes }
}

/** Copies a stopped node's data directory, e.g. to extend the sample chain without rebuilding it. */
export function copyDataDir(dataDir: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'keel-sample-'))
  cpSync(dataDir, copy, { recursive: true })
  return copy
}

/** Starts a node that serves `dataDir` without ever cutting a block. */
export function serve(
  dataDir: string,
  clock: PinnedClock,
  options: { poolCapacity?: number; compiler?: StartOptions['compiler'] } = {},
): Promise<KeelNode> {
  return startChainNode({ dataDir, clock, batchSize: NEVER_BATCH, ...options })
}

/**
 * Serves the sample chain, with the pending transfer in the pool: blocks 1-3 written by
 * writeSampleBlocks, or written here into a fresh directory that stop() removes.
 */
export async function buildSampleChain(written?: { dataDir: string; hashes: Record<string, string> }): Promise<SampleChain> {
  const { dataDir, hashes } = written ?? (await writeSampleBlocks())
  const clock = new PinnedClock(SERVE_TIME)
  const node = await serve(dataDir, clock)
  const pending = await submit(node.url, pendingTransfer)
  const stop = async (): Promise<void> => {
    await node.stop()
    if (written === undefined) rmSync(dataDir, { recursive: true, force: true })
  }
  return { node, clock, dataDir, hashes: { ...hashes, pending }, stop }
}

/**
 * Writes `blocks` blocks of one transfer each (0x17d8… sends 1 to 0x000f…3abd per block) into
 * `dataDir`: batchSize 1, so every verified transaction is cut into its own block at once.
 */
export async function writeLongChain(
  dataDir: string,
  clock: PinnedClock,
  blocks: number,
  options: { concurrency?: number } = {},
): Promise<void> {
  const node = await startChainNode({ dataDir, clock, batchSize: 1 })
  const concurrency = options.concurrency ?? 1
  try {
    const transfer = (i: number) =>
      sign2017(DEMO_PRIVATE_KEY, {
        from: DEMO_ADDRESS,
        to: RECEIVER,
        value: 1,
        timestamp: clock.ns - SECOND + BigInt(i),
        nonce: i + 1,
      })
    for (let i = 0; i < blocks; i += concurrency) {
      const window = Array.from({ length: Math.min(concurrency, blocks - i) }, (_, k) => transfer(i + k))
      await Promise.all(window.map((params) => submit(node.url, { kind: 'transfer', params, outcome: 'valid' })))
    }
    await waitForHeight(node.url, blocks, 120_000)
  } finally {
    await node.stop()
  }
}
