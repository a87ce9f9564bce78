/**
 * The load generator: its own process (forked by bench/run.ts), so its CPU is not the node's.
 * Signs every transaction before the clock starts (bench/sdk-tx.ts, as the official SDK signs),
 * submits over JSON-RPC on keep-alive HTTP connections, and learns commits from the node's
 * WebSocket block push (full blocks), so that waiting for receipts does not load the node with
 * polling. At the end of each transaction workload every hash not seen in a block is looked up with
 * tx_getTransactionReceipt, so a discarded transaction is counted, not waited for forever.
 *
 * Messages: the parent sends a Job, the child answers `progress` messages and one `result` (or
 * `error`).
 */
import WebSocket from 'ws'
import { jvmCallPayload, jvmDeployPayload } from '../sdk/src/jvm.ts'
import { stringifyJson } from '../src/wire/json.ts'
import { artifact, calldata } from '../test/helpers/chain.ts'
import { compileJava } from '../test/helpers/jvm.ts'
import { type RawConnection, rawConnection } from './raw-http.ts'
import { READ_METHODS, type ReadMethod } from './read-methods.ts'
import { derivedAccount, type SdkAccount, sdkTransaction } from './sdk-tx.ts'
import { TOKEN_SOURCE } from './token.ts'

/** what both transaction workloads take */
interface TxJob {
  url: string
  submitUrls: string[]
  wsUrl: string
  seed: string
  accounts: number
  count: number
  concurrency: number
  /** offered load in tx/s (submissions paced on a fixed schedule); none: as fast as the node accepts */
  rate?: number
  /** transactions sent first, at the same pace, and waited for, before the clock starts (the node's code warmed up) */
  warmup?: number
}

export type Job =
  | { kind: 'setup'; url: string; seed: string; accounts: number; funderKey?: string; token: boolean; jvmToken?: boolean }
  | ({ kind: 'transfers' } & TxJob)
  | ({ kind: 'erc20'; token: string } & TxJob)
  | ({ kind: 'jvm'; token: string } & TxJob)
  /** issue 28: raw EIP-1559 transfers through eth_sendRawTransaction */
  | ({ kind: 'eth' } & TxJob)
  | {
      kind: 'reads'
      url: string
      seconds: number
      concurrency: number
      hashes: string[]
      only?: ReadMethod
      /** block_getBlockByNumber of these blocks with their transactions (isPlain false) */
      fullBlocks?: { first: number; last: number }
    }
  | { kind: 'logs'; url: string; seconds: number; concurrency: number; token: string; fromBlock: number; toBlock: number; maxRange: number }

export interface TxResult {
  submitted: number
  accepted: number
  rejected: number
  committed: number
  invalid: number
  acceptedPerSecond: number
  committedPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  /** submission → its answer, which the node sends once the transaction is durable: p50/p99 of the accepted ones */
  answerP50Ms: number
  answerP99Ms: number
  wallSeconds: number
  /** the load generator's own CPU over the run (it shares the machine with the node) */
  loadgenCpuPercent: number
  firstBlock: number
  lastBlock: number
  hashes: string[]
  firstRejection?: string
}

export interface ReadResult {
  requests: number
  errors: number
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  wallSeconds: number
  firstError?: string
  /** logs only */
  logsPerSecond?: number
  blocksPerQuery?: number
  /** reads only: the latest block when they started, whose size block_latestBlock's cost follows */
  latestBlock?: { number: number; txs: number; bytes: number }
}

export interface SetupResult {
  token?: string
  /** the Java token's address (the jvm workload) */
  jvmToken?: string
  fundedAccounts: number
}

export type Progress = { done: number; total: number; label: string }

/** a workload's clock starts (after signing): the parent measures the node from here */
function clockStarts(): void {
  process.send?.({ type: 'clock' })
}

/** The same transfer path in Java (vmType JVM): two ledger balances, a Transfer event. */
const JVM_TOKEN_SOURCE = `package bench;

import keel.contract.Contract;

public class Token extends Contract {
  public void onInit() {
    ledger.put(sender(), 1_000_000_000_000_000_000L);
  }

  public boolean transfer(String to, long amount) {
    String from = sender();
    long balance = ledger.getLong(from);
    require(balance >= amount, "balance too low");
    ledger.put(from, balance - amount);
    ledger.put(to, ledger.getLong(to) + amount);
    emit("Transfer", Long.toString(amount), from, to);
    return true;
  }
}
`

// ---- JSON-RPC over keep-alive connections (bench/raw-http.ts) ----

let nextId = 1

interface Reply {
  code: number
  message: string
  result?: unknown
}

/**
 * Unmeasured calls (set-up, lookups after a workload) go one at a time over one connection per
 * node, opened again when the node has closed it (it closes keep-alive connections idle for a few
 * seconds, e.g. while a workload runs on the others).
 */
const controlConnections = new Map<string, RawConnection>()

async function rpc(url: string, method: string, paramsJson: string): Promise<Reply> {
  let connection = controlConnections.get(url)
  if (connection === undefined || connection.closed) {
    connection = await rawConnection(url)
    controlConnections.set(url, connection)
  }
  return rpcOn(connection, method, paramsJson)
}

/** The measured path: one raw keep-alive connection per concurrent client (bench/raw-http.ts). */
async function rpcOn(connection: RawConnection, method: string, paramsJson: string): Promise<Reply> {
  const body = `{"jsonrpc":"2.0","namespace":"global","id":${nextId++},"method":"${method}","params":${paramsJson}}`
  const reply = JSON.parse(await connection.post(body)) as Reply & { error?: { code: number; message: string } }
  // issue 28: an Ethereum-dialect method answers in plain JSON-RPC 2.0 (`result` or `error`)
  if (reply.code === undefined) return reply.error === undefined ? { ...reply, code: 0, message: 'SUCCESS' } : { ...reply, ...reply.error }
  return reply
}

/** Runs `client` once per connection, `count` connections at once (spread over `urls` in turn), and closes them after. */
async function onConnections(
  urls: string | readonly string[],
  count: number,
  client: (connection: RawConnection) => Promise<void>,
): Promise<void> {
  const spread = typeof urls === 'string' ? [urls] : urls
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const connection = await rawConnection(spread[i % spread.length])
      try {
        await client(connection)
      } finally {
        connection.close()
      }
    }),
  )
}

async function ok(url: string, method: string, params: unknown[]): Promise<unknown> {
  const reply = await rpc(url, method, stringifyJson(params))
  if (reply.code !== 0) throw new Error(`${method}: ${reply.code} ${reply.message}`)
  return reply.result
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]
const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits

/** CPU of this process since `cpu` was read at `at` (performance.now()), in % of one core */
const cpuPercentSince = (cpu: NodeJS.CpuUsage, at: number): number => {
  const used = process.cpuUsage(cpu)
  return Math.round((used.user + used.system) / 10 / (performance.now() - at))
}

function report(progress: Progress): void {
  process.send?.({ type: 'progress', progress })
}

// ---- commits from WebSocket block push ----

interface CommitWatch {
  /** commit time (performance.now()) of each hash seen in a block */
  seen: Map<string, number>
  blocks: number[]
  blockTimes: [number, number, number][]
  /** why the block push stopped before close() (commits after it are not seen) */
  lost: string | undefined
  close(): void
}

/**
 * Its own socket rather than sdk/src/ws-transport.ts: full blocks arrive at megabytes a second, and
 * JSON.parse reads them several times faster than the lossless parser the transport uses (only
 * hashes and numbers are needed here).
 */
async function watchCommits(wsUrl: string): Promise<CommitWatch> {
  const socket = new WebSocket(wsUrl, { maxPayload: 256 * 1024 * 1024 })
  const seen = new Map<string, number>()
  const blocks: number[] = []
  const blockTimes: [number, number, number][] = []
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', (error) => reject(new Error(`cannot open WebSocket ${wsUrl} for block push: ${error.message}`)))
  })
  const subscribed = new Promise<void>((resolve, reject) => {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as {
        id?: number
        code?: number
        message?: string
        params?: { result: { number: string; transactions?: { hash: string }[] } }
      }
      if (message.id === 1) {
        if (message.code === 0) resolve()
        else reject(new Error(`sub_subscribe: ${message.code} ${message.message}`))
        return
      }
      const block = message.params?.result
      if (block === undefined) return
      const now = performance.now()
      blocks.push(Number(block.number))
      blockTimes.push([Number(block.number), now, block.transactions?.length ?? 0])
      for (const tx of block.transactions ?? []) seen.set(tx.hash, now)
    })
  })
  socket.send(JSON.stringify({ jsonrpc: '2.0', namespace: 'global', id: 1, method: 'sub_subscribe', params: ['block', true] }))
  await subscribed
  let closing = false
  const watch: CommitWatch = {
    seen,
    blocks,
    blockTimes,
    lost: undefined,
    close: () => {
      closing = true
      socket.close()
    },
  }
  socket.on('close', (code, reason) => {
    if (!closing)
      watch.lost = `the node closed the block push (${code} ${reason.toString() || 'no reason'}) after block ${Math.max(0, ...blocks)}`
  })
  return watch
}

// ---- transaction workloads ----

/**
 * Sends `signed` (the first `job.warmup` of them before the clock starts, at the same pace, and
 * waits for them to commit) and measures the rest.
 */
async function runTransactions(
  job: { url: string; submitUrls: string[]; wsUrl: string; concurrency: number; rate?: number; warmup?: number },
  method: string,
  signed: (Record<string, unknown> | string)[],
  label: string,
  /** issue 28: the signed items are raw transactions (hex), sent as they are */
  raw = false,
): Promise<TxResult> {
  const bodies = signed.map((tx) => (raw ? `["${tx as string}"]` : stringifyJson([tx])))
  const warm = Math.min(job.warmup ?? 0, bodies.length - 1)
  if (warm > 0) await sendAndWatch(job, method, bodies.slice(0, warm), `${label}: warm-up`, false)
  return sendAndWatch(job, method, bodies.slice(warm), label, true)
}

async function sendAndWatch(
  job: { url: string; submitUrls: string[]; wsUrl: string; concurrency: number; rate?: number },
  method: string,
  bodies: string[],
  label: string,
  /** false: a warm-up, before the clock starts */
  measured: boolean,
): Promise<TxResult> {
  const signed = bodies
  const watch = await watchCommits(job.wsUrl)
  const submittedAt = new Map<string, number>()
  const answeredAt = new Map<string, number>()
  const answerTimes: number[] = []
  let accepted = 0
  let rejected = 0
  let firstRejection: string | undefined
  let next = 0
  let lastAccept = 0
  const progress = setInterval(() => report({ label, done: watch.seen.size, total: signed.length }), 500)
  if (measured) clockStarts()
  const startedCpu = process.cpuUsage()
  const started = performance.now()
  // submissions spread over every node given; commits are watched on the first (every node holds the same blocks)
  await onConnections(job.submitUrls, job.concurrency, async (connection) => {
    while (next < bodies.length) {
      const index = next++
      const body = bodies[index]
      if (job.rate !== undefined) {
        // open loop: transaction i leaves at i/rate s whatever the node's pace (up to `concurrency` in flight)
        const due = started + (index * 1000) / job.rate
        const wait = due - performance.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      }
      const sentAt = performance.now()
      const reply = await rpcOn(connection, method, body)
      if (reply.code === 0) {
        submittedAt.set(reply.result as string, sentAt)
        answeredAt.set(reply.result as string, performance.now())
        accepted++
        lastAccept = performance.now()
        answerTimes.push(lastAccept - sentAt)
      } else {
        rejected++
        firstRejection ??= `${reply.code} ${reply.message}`
      }
    }
  })
  // wait for every accepted hash to be seen in a block; stop when nothing new arrives for 10 s
  let lastCount = -1
  let lastChange = performance.now()
  const outstanding = (): number => [...submittedAt.keys()].filter((hash) => !watch.seen.has(hash)).length
  while (outstanding() > 0 && performance.now() - lastChange < 10_000 && watch.lost === undefined) {
    if (watch.seen.size !== lastCount) {
      lastCount = watch.seen.size
      lastChange = performance.now()
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  clearInterval(progress)
  watch.close()
  if (watch.lost !== undefined) throw new Error(`${label}: ${watch.lost}; ${outstanding()} accepted transactions not seen committed`)
  const latencies: number[] = []
  let lastCommit = started
  for (const [hash, sentAt] of submittedAt) {
    const committedAt = watch.seen.get(hash)
    if (committedAt === undefined) continue
    latencies.push(committedAt - sentAt)
    if (committedAt > lastCommit) lastCommit = committedAt
  }
  // hashes never seen in a block: discarded (an invalid record) or lost
  const unseen = outstanding()
  if (unseen > 0)
    console.error(`${label}: ${unseen} accepted transactions not seen in a block 10 s after the last commit; looking up their receipts`)
  let invalid = 0
  for (const [hash] of submittedAt) {
    if (watch.seen.has(hash)) continue
    const reply = await rpc(job.url, 'tx_getTransactionReceipt', JSON.stringify([hash]))
    if (reply.code !== 0 && reply.code !== -32001) invalid++
    else if (reply.code === -32001)
      throw new Error(`transaction ${hash} was accepted but has no receipt and no invalid record 10 s after the last commit`)
  }
  // KEEL_BENCH_TRACE=<file>: each transaction's send, answer and commit times (ms from the clock's
  // start) and each block's arrival, for finding when in a run its tail happened
  if (process.env.KEEL_BENCH_TRACE && measured) {
    const { writeFileSync } = await import('node:fs')
    const rows = [...submittedAt].map(([hash, sentAt]) => [
      sentAt - started,
      (answeredAt.get(hash) ?? 0) - started,
      (watch.seen.get(hash) ?? 0) - started,
    ])
    writeFileSync(process.env.KEEL_BENCH_TRACE, JSON.stringify({ rows, blocks: watch.blockTimes.map(([n, t, c]) => [n, t - started, c]) }))
  }
  latencies.sort((a, b) => a - b)
  answerTimes.sort((a, b) => a - b)
  return {
    submitted: signed.length,
    accepted,
    rejected,
    committed: latencies.length,
    invalid,
    acceptedPerSecond: round(accepted / ((lastAccept - started) / 1000)),
    committedPerSecond: round(latencies.length / ((lastCommit - started) / 1000)),
    latencyP50Ms: round(percentile(latencies, 50)),
    latencyP99Ms: round(percentile(latencies, 99)),
    answerP50Ms: round(percentile(answerTimes, 50), 2),
    answerP99Ms: round(percentile(answerTimes, 99), 2),
    wallSeconds: round((lastCommit - started) / 1000, 2),
    loadgenCpuPercent: cpuPercentSince(startedCpu, started),
    firstBlock: Math.min(...watch.blocks),
    lastBlock: Math.max(...watch.blocks),
    hashes: [...submittedAt.keys()],
    firstRejection,
  }
}

function accountsOf(seed: string, count: number): SdkAccount[] {
  return Array.from({ length: count }, (_, i) => derivedAccount(seed, i))
}

/** Signs `count` transactions round-robin over the accounts, reporting progress. */
function signAll(count: number, label: string, make: (i: number) => Record<string, unknown>): Record<string, unknown>[] {
  const signed: Record<string, unknown>[] = []
  for (let i = 0; i < count; i++) {
    signed.push(make(i))
    if (i % 2000 === 0) report({ label: `${label}: signing`, done: i, total: count })
  }
  return signed
}

async function waitForReceipt(url: string, hash: string): Promise<Reply> {
  for (let tries = 0; tries < 3000; tries++) {
    const reply = await rpc(url, 'tx_getTransactionReceipt', JSON.stringify([hash]))
    if (reply.code !== -32001) return reply
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no receipt for ${hash} after 30 s`)
}

/** Funds the accounts (only when the node was not started with them in its genesis) and deploys the token. */
async function setup(job: Extract<Job, { kind: 'setup' }>): Promise<SetupResult> {
  const accounts = accountsOf(job.seed, job.accounts)
  const deployer = accounts[0]
  let fundedAccounts = 0
  if (job.funderKey !== undefined) {
    const { addressFromPrivateKey } = await import('../src/crypto/signature.ts')
    const funder = { privateKey: job.funderKey, address: addressFromPrivateKey(job.funderKey) }
    const hashes: string[] = []
    for (const account of accounts) {
      hashes.push(
        (await ok(job.url, 'tx_sendTransaction', [
          sdkTransaction(funder, { kind: 'transfer', to: account.address, value: 1_000_000_000 }),
        ])) as string,
      )
    }
    for (const hash of hashes) await waitForReceipt(job.url, hash)
    fundedAccounts = accounts.length
  }
  const token = job.token
    ? await deployToken(job.url, deployer, accounts, 'EVM', artifact(TOKEN_SOURCE, 'BenchToken').bin, (to) =>
        calldata('transfer(address,uint256)', to as `0x${string}`, 10n ** 24n),
      )
    : undefined
  const jvmToken = job.jvmToken
    ? await deployToken(
        job.url,
        deployer,
        accounts,
        'JVM',
        jvmDeployPayload(await compileJava({ 'bench/Token.java': JVM_TOKEN_SOURCE }, 'bench.Token')),
        (to) => jvmCallPayload('transfer', to, 10n ** 12n),
      )
    : undefined
  return { token, jvmToken, fundedAccounts }
}

/** Deploys a token from the first account and gives every other account a share; its address. */
async function deployToken(
  url: string,
  deployer: SdkAccount,
  accounts: SdkAccount[],
  vmType: 'EVM' | 'JVM',
  code: string,
  share: (to: string) => string,
): Promise<string> {
  const deployed = await waitForReceipt(
    url,
    (await ok(url, 'contract_deployContract', [sdkTransaction(deployer, { kind: 'deploy', payload: code, vmType })])) as string,
  )
  if (deployed.code !== 0) throw new Error(`${vmType} token deployment failed: ${deployed.code} ${deployed.message}`)
  const token = (deployed.result as { contractAddress: string }).contractAddress
  const hashes: string[] = []
  for (const account of accounts.slice(1)) {
    hashes.push(
      (await ok(url, 'contract_invokeContract', [
        sdkTransaction(deployer, { kind: 'invoke', to: token, payload: share(account.address), vmType }),
      ])) as string,
    )
  }
  for (const hash of hashes) {
    const reply = await waitForReceipt(url, hash)
    if (reply.code !== 0) throw new Error(`${vmType} token distribution failed: ${reply.code} ${reply.message}`)
  }
  return token
}

// ---- read workloads ----

async function runReads(
  url: string,
  concurrency: number,
  seconds: number,
  label: string,
  request: (i: number) => [string, string],
  count?: (reply: Reply) => number,
): Promise<ReadResult> {
  const latencies: number[] = []
  let errors = 0
  let firstError: string | undefined
  let items = 0
  let issued = 0
  clockStarts()
  const started = performance.now()
  const deadline = started + seconds * 1000
  const progress = setInterval(() => report({ label, done: latencies.length, total: 0 }), 500)
  await onConnections(url, concurrency, async (connection) => {
    while (performance.now() < deadline) {
      const [method, params] = request(issued++)
      const sentAt = performance.now()
      const reply = await rpcOn(connection, method, params).catch((error: Error) => ({ code: -1, message: error.message }) as Reply)
      latencies.push(performance.now() - sentAt)
      if (reply.code !== 0) {
        errors++
        firstError ??= `${method}: ${reply.code} ${reply.message}`
      } else if (count !== undefined) items += count(reply)
    }
  })
  clearInterval(progress)
  const wallSeconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    requests: latencies.length,
    errors,
    requestsPerSecond: round(latencies.length / wallSeconds),
    latencyP50Ms: round(percentile(latencies, 50), 2),
    latencyP99Ms: round(percentile(latencies, 99), 2),
    wallSeconds: round(wallSeconds, 2),
    firstError,
    ...(count === undefined ? {} : { logsPerSecond: round(items / wallSeconds) }),
  }
}

async function run(job: Job): Promise<unknown> {
  switch (job.kind) {
    case 'setup':
      return setup(job)
    case 'transfers': {
      const accounts = accountsOf(job.seed, job.accounts)
      const signed = signAll(job.count + (job.warmup ?? 0), 'transfers', (i) =>
        sdkTransaction(accounts[i % accounts.length], { kind: 'transfer', to: accounts[(i * 7 + 1) % accounts.length].address, value: 1 }),
      )
      return runTransactions(job, 'tx_sendTransaction', signed, 'transfers')
    }
    case 'eth': {
      // issue 28: each account sends its transfers with its next Ethereum nonces (its account nonce
      // counts the token deployment too); signed before the clock starts, like the other workloads
      const accounts = accountsOf(job.seed, job.accounts).slice(0, Math.min(job.accounts, job.count + (job.warmup ?? 0)))
      // one at a time: rpc() shares one connection per node once an earlier workload opened it
      const nonces: bigint[] = []
      for (const account of accounts)
        nonces.push(BigInt((await rpc(job.url, 'eth_getTransactionCount', JSON.stringify([account.address, 'latest']))).result as string))
      const chainId = Number(BigInt((await rpc(job.url, 'eth_chainId', '[]')).result as string))
      const { Wallet } = await import('ethers')
      const wallets = accounts.map((account) => new Wallet(account.privateKey))
      const raws: string[] = []
      for (let i = 0; i < job.count + (job.warmup ?? 0); i++) {
        const from = i % accounts.length
        raws.push(
          await wallets[from].signTransaction({
            type: 2,
            chainId,
            nonce: Number(nonces[from]) + Math.floor(i / accounts.length),
            to: accounts[(i * 7 + 1) % accounts.length].address,
            value: 1n,
            gasLimit: 21_000n,
            maxFeePerGas: 0n,
            maxPriorityFeePerGas: 0n,
          }),
        )
        if (i % 2000 === 0) report({ label: 'eth: signing', done: i, total: job.count })
      }
      return runTransactions(job, 'eth_sendRawTransaction', raws, 'eth', true)
    }
    case 'erc20':
    case 'jvm': {
      // the same token transfer among the accounts, in Solidity or in Java
      const accounts = accountsOf(job.seed, job.accounts)
      const payload = (to: string): string =>
        job.kind === 'erc20' ? calldata('transfer(address,uint256)', to as `0x${string}`, 1n) : jvmCallPayload('transfer', to, 1)
      const vmType = job.kind === 'erc20' ? 'EVM' : 'JVM'
      const signed = signAll(job.count + (job.warmup ?? 0), job.kind, (i) =>
        sdkTransaction(accounts[i % accounts.length], {
          kind: 'invoke',
          to: job.token,
          payload: payload(accounts[(i * 7 + 1) % accounts.length].address),
          vmType,
        }),
      )
      return runTransactions(job, 'contract_invokeContract', signed, job.kind)
    }
    case 'reads': {
      const latestBlock = (await ok(job.url, 'block_latestBlock', [])) as { number: string; transactions?: unknown[] }
      const latest = Number(latestBlock.number)
      const latestSize = { number: latest, txs: latestBlock.transactions?.length ?? 0, bytes: JSON.stringify(latestBlock).length }
      const hashes = job.hashes
      const hashAt = (i: number): string => hashes[(i * 7919) % hashes.length]
      const requests: Record<ReadMethod, (i: number) => string> = {
        tx_getTransactionByHash: (i) => `["${hashAt(i)}"]`,
        tx_getTransactionReceipt: (i) => `["${hashAt(i)}"]`,
        block_latestBlock: () => '[]',
        // isPlain: a block of 500 transactions would make this a bulk transfer, not a lookup
        block_getBlockByNumber:
          job.fullBlocks === undefined
            ? (i) => `[${1 + ((i * 31) % latest)},true]`
            : (i) => `[${job.fullBlocks!.first + ((i * 31) % (job.fullBlocks!.last - job.fullBlocks!.first + 1))},false]`,
      }
      const methods = job.only === undefined ? READ_METHODS : [job.only]
      const result = await runReads(job.url, job.concurrency, job.seconds, job.only ?? 'reads', (i) => {
        const method = methods[i % methods.length]
        return [method, requests[method](i)]
      })
      return { ...result, latestBlock: latestSize }
    }
    case 'logs': {
      // whole-range scans split into the node's largest allowed window, plus selective filters
      const windows: [number, number][] = []
      for (let from = job.fromBlock; from <= job.toBlock; from += job.maxRange)
        windows.push([from, Math.min(job.toBlock, from + job.maxRange - 1)])
      const result = await runReads(
        job.url,
        job.concurrency,
        job.seconds,
        'logs',
        (i) => {
          const [from, to] = windows[i % windows.length]
          return ['sub_getLogs', JSON.stringify([{ fromBlock: from, toBlock: to, addresses: [job.token] }])]
        },
        (reply) => (reply.result as unknown[]).length,
      )
      return { ...result, blocksPerQuery: round((job.toBlock - job.fromBlock + 1) / windows.length) }
    }
  }
}

process.on('message', (job: Job) => {
  run(job).then(
    (result) => process.send?.({ type: 'result', result }),
    (error: Error) => process.send?.({ type: 'error', message: error.stack ?? error.message }),
  )
})
