/**
 * Building a chain for the RPC integration tests: every piece of state comes from real signed
 * transactions sent to a running node (never from writes into its store). Submit and wait for
 * the receipt, send many transactions so that they share a block, compile with solc, deploy,
 * invoke and decode the return data.
 */
import * as assert from 'uvu/assert'
import { accountFromPrivateKey } from '../../sdk/src/account.ts'
import { operatorHeaders } from '../../sdk/src/operator.ts'
import type { KeelNode } from '../../src/node.ts'
import { stringifyJson } from '../../src/wire/json.ts'
import { calldata, compile, selector, topic, word } from '../unit/exec/helpers.ts'
import { envelope, post, startTestNode } from './node.ts'
import { type Wallet, wallet } from './wallet.ts'

export { calldata, selector, topic, word }

/** A Hyperchain reply envelope. */
export interface Reply<T = unknown> {
  jsonrpc: string
  namespace?: string
  id: unknown
  code: number
  message: string
  /** a discarded transaction's reason (tx_getTransactionReceipt) */
  data?: string
  result?: T
}

export interface WireReceipt {
  version: string
  txHash: string
  vmType: string
  contractAddress: string
  gasUsed: number
  ret: string
  log: {
    address: string
    topics: string[]
    data: string
    blockNumber: number
    blockHash: string
    txHash: string
    txIndex: number
    index: number
  }[]
}

export interface WireTx {
  version: string
  hash: string
  blockNumber: string
  blockHash: string
  txIndex: string
  from: string
  to: string
  amount: string
  timestamp: number | bigint
  nonce: number | bigint
  extra: string
  executeTime: string
  payload: string
  invalid?: true
  invalidMsg?: string
}

export interface WireBlock {
  version: string
  number: string
  hash: string
  parentHash: string
  writeTime: number | bigint
  avgTime: string
  txcounts: string
  merkleRoot: string
  transactions?: WireTx[]
}

export interface CallOptions {
  /** sign the request as an operator with this account key (operator methods, rpc/operator-auth.ts) */
  operator?: string
  /** with `operator`: an SM2 key */
  operatorScheme?: 'secp256k1' | 'sm2'
}

/** The operator headers of `body` signed with `privateKey` (keel-client operatorHeaders). */
export function operatorHeadersFor(body: string, privateKey: string, scheme: 'secp256k1' | 'sm2' = 'secp256k1'): Record<string, string> {
  return operatorHeaders(accountFromPrivateKey(privateKey, scheme), body)
}

/** One JSON-RPC call; the whole reply envelope. */
export async function call<T = unknown>(url: string, method: string, params: unknown[] = [], options: CallOptions = {}): Promise<Reply<T>> {
  const text = stringifyJson(envelope(method, params))
  const headers = options.operator === undefined ? {} : operatorHeadersFor(text, options.operator, options.operatorScheme)
  const reply = await post(url, text, { headers })
  assert.is(reply.status, 200, `HTTP status of ${method}`)
  const body = reply.body as Reply<T> | undefined
  if (body === undefined || typeof body !== 'object')
    throw new Error(`${method}: the reply is not a JSON object: ${reply.text.slice(0, 200)}`)
  return body
}

/** One call that must succeed; its result. */
export async function ok<T = unknown>(url: string, method: string, params: unknown[] = [], options: CallOptions = {}): Promise<T> {
  const reply = await call<T>(url, method, params, options)
  if (reply.code !== 0)
    throw new Error(`${method} ${JSON.stringify(params, bigintSafe).slice(0, 200)} failed: ${reply.code} ${reply.message}`)
  assert.is(reply.message, 'SUCCESS')
  return reply.result as T
}

/** One call that must fail with `code` (and `message`, when given: exact string or pattern). */
export async function fails(
  url: string,
  method: string,
  params: unknown[],
  code: number,
  message?: string | RegExp,
  options: CallOptions = {},
): Promise<Reply> {
  const reply = await call(url, method, params, options)
  const what = `${method} ${JSON.stringify(params, bigintSafe).slice(0, 160)}`
  assert.is(reply.code, code, `code of ${what}: ${reply.message}`)
  assert.not.ok('result' in reply, `a failure of ${what} carries no result`)
  if (typeof message === 'string') assert.is(reply.message, message, `message of ${what}`)
  else if (message !== undefined) assert.match(reply.message, message, `message of ${what}`)
  return reply
}

export function bigintSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}

/** The submission method of each kind of transaction. */
export const SUBMIT = {
  transfer: 'tx_sendTransaction',
  deploy: 'contract_deployContract',
  invoke: 'contract_invokeContract',
  maintain: 'contract_maintainContract',
} as const
export type SubmitMethod = (typeof SUBMIT)[keyof typeof SUBMIT]

/** Submits one signed transaction; its hash (the submission must be accepted). */
export async function submit(url: string, method: string, tx: Record<string, unknown>): Promise<string> {
  const hash = await ok<string>(url, method, [tx])
  assert.match(hash, /^0x[0-9a-f]{64}$/, `${method} returns a tx hash`)
  return hash
}

/** Polls tx_getTransactionReceipt while it answers -32001; the final reply (success or the failure code). */
export async function receiptOf(url: string, hash: string, timeoutMs = 15_000): Promise<Reply<WireReceipt>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const reply = await call<WireReceipt>(url, 'tx_getTransactionReceipt', [hash])
    if (reply.code !== -32001) return reply
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash} after ${timeoutMs} ms`)
    await sleep(10)
  }
}

/** The chain height, 0 while no block exists. */
export async function heightNow(url: string): Promise<number> {
  const reply = await call<string>(url, 'block_getChainHeight')
  return reply.code === 0 ? Number(reply.result) : 0
}

/**
 * Waits until the blocks holding `hashes` are visible to the block queries: the height reaches
 * the highest block of the valid ones, and passes `before` (the height read before submitting;
 * a discarded transaction shows no block number). Needed because the node can answer a receipt
 * a moment before its height moves (a store race, asserted on its own in block.test.ts); without
 * this, unrelated tests that read the latest block right after a receipt would be flaky.
 */
export async function settle(url: string, hashes: string[], before: number): Promise<void> {
  let target = before + 1
  for (const hash of hashes) {
    const reply = await call<WireTx>(url, 'tx_getTransactionByHash', [hash])
    if (reply.code === 0 && reply.result?.invalid !== true) target = Math.max(target, Number(reply.result?.blockNumber))
  }
  await waitForHeight(url, target)
}

/** Submits and waits for the outcome (and its block); the receipt reply may be a failure (-32002…-32008). */
export async function send(url: string, method: string, tx: Record<string, unknown>): Promise<{ hash: string; reply: Reply<WireReceipt> }> {
  const before = await heightNow(url)
  const hash = await submit(url, method, tx)
  const reply = await receiptOf(url, hash)
  await settle(url, [hash], before)
  return { hash, reply }
}

/** Submits, waits, and requires success; the receipt. */
export async function commit(url: string, method: string, tx: Record<string, unknown>): Promise<WireReceipt & { hash: string }> {
  const { hash, reply } = await send(url, method, tx)
  if (reply.code !== 0) throw new Error(`${method} ${hash} failed in its receipt: ${reply.code} ${reply.message}`)
  return { ...(reply.result as WireReceipt), hash }
}

/**
 * Submits all transactions at once (concurrently) and waits for every outcome. With a node whose
 * `batchTimeoutMs` is longer than the submission burst they land in one block; `sameBlock` asserts it.
 */
export async function sendAll(
  url: string,
  items: { method: string; tx: Record<string, unknown> }[],
  options: { sameBlock?: boolean } = {},
): Promise<{ hashes: string[]; replies: Reply<WireReceipt>[]; blocks: number[] }> {
  const before = await heightNow(url)
  const hashes = await Promise.all(items.map((item) => submit(url, item.method, item.tx)))
  const replies = await Promise.all(hashes.map((hash) => receiptOf(url, hash)))
  await settle(url, hashes, before)
  const blocks = await Promise.all(
    hashes.map(async (hash) => {
      const tx = await ok<WireTx>(url, 'tx_getTransactionByHash', [hash])
      return tx.invalid === true ? -1 : Number(tx.blockNumber)
    }),
  )
  if (options.sameBlock === true) {
    const valid = blocks.filter((b) => b !== -1)
    assert.ok(new Set(valid).size <= 1, `the burst shares one block: ${blocks.join(',')}`)
  }
  return { hashes, replies, blocks }
}

/** `count` transfers of `value` from `from`, all submitted at once; their receipts must succeed. */
export async function transfers(
  url: string,
  from: Wallet,
  to: string | string[],
  count: number,
  value: number | bigint = 1,
  options: { sameBlock?: boolean } = {},
): Promise<{ hashes: string[]; blocks: number[] }> {
  const targets = Array.isArray(to) ? to : Array.from({ length: count }, () => to)
  const { hashes, replies, blocks } = await sendAll(
    url,
    targets.slice(0, count).map((target) => ({ method: SUBMIT.transfer, tx: from.transfer(target, value) })),
    options,
  )
  for (const [i, reply] of replies.entries()) assert.is(reply.code, 0, `transfer ${hashes[i]}: ${reply.message}`)
  return { hashes, blocks }
}

/** Waits until the chain height reaches `height`. */
export async function waitForHeight(url: string, height: number, timeoutMs = 15_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const now = await heightNow(url)
    if (now >= height) return now
    if (Date.now() > deadline) throw new Error(`height ${now} after ${timeoutMs} ms, waiting for ${height}`)
    await sleep(10)
  }
}

export async function height(url: string): Promise<number> {
  return Number(await ok<string>(url, 'block_getChainHeight'))
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

// ---- contracts ----

export interface Artifact {
  /** init code, what the SDK deploys */
  bin: string
  /** runtime code as solc reports it */
  runtime: string
}

const compiled = new Map<string, Record<string, Artifact>>()

/** Compiles with solc-js (cached per source); one contract by name. */
export function artifact(source: string, name: string): Artifact {
  let all = compiled.get(source)
  if (all === undefined) {
    all = compile(source)
    compiled.set(source, all)
  }
  const found = all[name]
  if (found === undefined) throw new Error(`no contract ${name} in the source`)
  return found
}

export interface Deployed {
  address: string
  hash: string
  receipt: WireReceipt
}

/** Deploys `bin` (plus encoded constructor arguments) from `from`; the receipt must succeed. */
export async function deploy(url: string, from: Wallet, bin: string): Promise<Deployed> {
  const receipt = await commit(url, SUBMIT.deploy, from.deploy(bin))
  assert.match(receipt.contractAddress, /^0x[0-9a-f]{40}$/)
  assert.is.not(receipt.contractAddress, `0x${'00'.repeat(20)}`, 'a deployment has a contract address')
  return { address: receipt.contractAddress, hash: receipt.hash, receipt }
}

/** Invokes `signature(args)` on `to`; the receipt reply (success or failure). */
export async function invoke(
  url: string,
  from: Wallet,
  to: string,
  signature: string,
  ...args: (bigint | string)[]
): Promise<{ hash: string; reply: Reply<WireReceipt> }> {
  return send(url, SUBMIT.invoke, from.invoke(to, calldata(signature, ...args)))
}

/** Invokes and requires success; the decoded first return word. */
export async function invokeUint(url: string, from: Wallet, to: string, signature: string, ...args: (bigint | string)[]): Promise<bigint> {
  const { hash, reply } = await invoke(url, from, to, signature, ...args)
  if (reply.code !== 0) throw new Error(`${signature} on ${to} (${hash}) failed: ${reply.code} ${reply.message}`)
  return decodeUint((reply.result as WireReceipt).ret)
}

/** The first 32-byte word of return data as an unsigned integer. */
export function decodeUint(ret: string, wordIndex = 0): bigint {
  const hex = ret.startsWith('0x') ? ret.slice(2) : ret
  const slice = hex.slice(wordIndex * 64, wordIndex * 64 + 64)
  if (slice.length !== 64) throw new Error(`return data ${ret} has no word ${wordIndex}`)
  return BigInt(`0x${slice}`)
}

/** An address word of return data. */
export function decodeAddress(ret: string, wordIndex = 0): string {
  return `0x${decodeUint(ret, wordIndex).toString(16).padStart(40, '0')}`
}

/** ABI-decodes a single dynamic `string` return value. */
export function decodeString(ret: string): string {
  const hex = ret.startsWith('0x') ? ret.slice(2) : ret
  const offset = Number(decodeUint(ret, 0)) * 2
  const length = Number(BigInt(`0x${hex.slice(offset, offset + 64)}`))
  return Buffer.from(hex.slice(offset + 64, offset + 64 + length * 2), 'hex').toString('utf8')
}

/** Go's time.Time.String() of a UTC instant in ns, written independently of src/api for checking it. */
export function goUtcString(ns: bigint): string {
  const seconds = ns / 1_000_000_000n
  const date = new Date(Number(seconds) * 1000)
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0')
  const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`
  const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`
  let fraction = pad(Number(ns % 1_000_000_000n), 9)
  while (fraction.endsWith('0')) fraction = fraction.slice(0, -1)
  return `${day} ${time}${fraction === '' ? '' : `.${fraction}`} +0000 UTC`
}

/**
 * The contracts the tests deploy. `Store` keeps a number and logs its writes; `spin` never ends
 * (out of gas); `StoreV2` is the upgrade target (same storage layout, different `get`).
 */
export const STORE_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

contract Store {
    uint256 public value;
    address public lastWriter;
    event Set(address indexed who, uint256 value);

    constructor() {
        value = 7;
    }

    function set(uint256 v) public {
        value = v;
        lastWriter = msg.sender;
        emit Set(msg.sender, v);
    }

    function get() public view returns (uint256) {
        return value;
    }

    function add(uint256 a, uint256 b) public pure returns (uint256) {
        return a + b;
    }

    function greet() public pure returns (string memory) {
        return "hello keel";
    }

    function spin() public {
        while (true) {
            value = value + 1;
        }
    }

    function fail() public pure {
        revert("always fails");
    }
}

contract StoreV2 {
    uint256 public value;
    address public lastWriter;

    function get() public view returns (uint256) {
        return value + 1000;
    }

    function version() public pure returns (uint256) {
        return 2;
    }
}

contract Broken {
    constructor() {
        revert("cannot be deployed");
    }
}
`

/**
 * The two nodes the tx_ and block_ tests share a shape of: A cuts a block 300 ms after the first
 * waiting transaction (bursts share a block), B cuts one block per transaction (cheap long chains).
 */
export async function startBatchingPair(): Promise<{ nodes: KeelNode[]; a: string; b: string; dev: Wallet; devB: Wallet }> {
  const [nodeA, nodeB] = await Promise.all([
    startTestNode({ chain: { batchTimeoutMs: 300 } }, { verifyWorkers: 1 }),
    startTestNode({ chain: { batchSize: 1, batchTimeoutMs: 1 } }, { verifyWorkers: 1 }),
  ])
  return {
    nodes: [nodeA, nodeB],
    a: nodeA.url,
    b: nodeB.url,
    dev: wallet(nodeA.devAccount?.privateKey),
    devB: wallet(nodeB.devAccount?.privateKey),
  }
}
