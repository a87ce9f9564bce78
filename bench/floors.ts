/**
 * The floor of each stage of the pipeline (issue 27): the node's own code for that stage, run alone
 * in this process on the same kind of transaction the bench sends, with no other stage, thread hop,
 * load generator or second thread beside it. `npm run bench -- --ledger` prints each stage of the
 * node beside these.
 *
 *   npx tsx bench/floors.ts [--workload transfers|erc20] [--count 2000] [--rate tx/s] [--json]
 *
 * CPU is read from /proc: this thread's own (/proc/thread-self/schedstat, ns) for the stages that
 * run on one thread, and the process's (every thread) where a stage hands work to another thread
 * of its own (LMDB's write transaction, the pool log's fdatasync on libuv's pool).
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { aliases, methods, schemas } from '../generated/methods.ts'
import { admitTransaction } from '../src/chain/admission.ts'
import { createTxPool, type ReadyTx } from '../src/chain/pool.ts'
import { createBlockProducer } from '../src/chain/producer.ts'
import { type CommandSpec, parseOrExit } from '../src/command-line.ts'
import type { TxFields } from '../src/crypto/sign-string.ts'
import { checkTransactionSignature } from '../src/crypto/signature.ts'
import type { SignedTx } from '../src/domain.ts'
import { createExecutor } from '../src/exec/executor.ts'
import { admissionRequest } from '../src/front/admission-job.ts'
import type { ToFront } from '../src/front/messages.ts'
import { createChainLink, GROUP_SIZE } from '../src/front/submitter.ts'
import { createLogger } from '../src/log.ts'
import { compileParamChecker } from '../src/rpc/params.ts'
import { openStore, type Store } from '../src/store/index.ts'
import { openPoolLog } from '../src/store/pool-log.ts'
import { createStateHasher } from '../src/store/state-hasher.ts'
import { unpack } from '../src/wire/binary.ts'
import { parseJson, stringifyJson } from '../src/wire/json.ts'
import { admittedRecord, decodeAdmitted, encodeTx } from '../src/wire/tx-codec.ts'
import { artifact, calldata } from '../test/helpers/chain.ts'
import type { Floors } from './ledger.ts'
import { scratchDir } from './scratch.ts'
import { derivedAccount, type SdkAccount, sdkTransaction } from './sdk-tx.ts'
import { TOKEN_SOURCE } from './token.ts'

export const floorsCommand = {
  name: 'keel bench floors',
  synopsis: '[options]',
  summary: "Measures each pipeline stage's floor alone (the node's code on the bench's transactions) and prints them.",
  options: {
    workload: { type: 'string', value: 'name', default: 'transfers', description: 'transfers or erc20 (the workloads with floors so far)' },
    count: { type: 'string', value: 'n', default: '2000', description: 'transactions measured (blocks of 500)' },
    json: { type: 'boolean', default: false, description: 'print the floors as JSON (what bench/run.ts reads)' },
    rate: {
      type: 'string',
      value: 'tx/s',
      default: '0',
      description: "the bench's offered load (--rate): the HTTP floor's requests arrive at that rate, each alone",
    },
    'verify-hop': {
      type: 'boolean',
      default: false,
      description: "the node ran verify workers: the hop floor counts their round trip beside the chain thread's link",
    },
  },
} satisfies CommandSpec

const BLOCK = 500
const ACCOUNTS = 1000
const TX_VERSION = '4.1'

/** CPU ns of this thread so far (the scheduler's own count, not ticks) */
function threadNs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0])
}

/** CPU ns of every thread of this process so far */
function processNs(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) * 1000
}

/**
 * CPU of this process's other threads (V8's GC and compiler helpers for the work measured here,
 * LMDB's write transactions, the pool log's fsync) while the floors below ran, ns: the floor of
 * the node's "other threads" row is the same work's
 */
let offThreadNs = 0

/** µs of this thread's CPU per item, `run` called once per item, after a warm-up on the first fifth */
function perItem<T>(items: readonly T[], run: (item: T) => unknown): number {
  for (const item of items.slice(0, Math.ceil(items.length / 5))) run(item)
  const started = threadNs()
  const startedProcess = processNs()
  for (const item of items) run(item)
  const used = threadNs() - started
  offThreadNs += processNs() - startedProcess - used
  return used / 1000 / items.length
}

/** The load generator's envelope (bench/loadgen.ts rpcOn) around the SDK's JSON of each transaction. */
const bodiesOf = (method: string, params: readonly Record<string, unknown>[]): string[] =>
  params.map((tx, i) => `{"jsonrpc":"2.0","namespace":"global","id":${i + 1},"method":"${method}","params":${stringifyJson([tx])}}`)

/**
 * node:http's server for one small POST and its small reply, with a handler that does nothing
 * else: the server thread's CPU per request while 64 keep-alive connections (a worker thread of
 * this process, so its CPU is not the server's) send the bench's bodies — as fast as answered, or,
 * with `rate`, at that many requests per second, each alone (the bench's `--rate`: at half load a
 * request finds the node's thread asleep, and its wake-up is part of what the request costs).
 */
async function httpFloor(bodies: readonly string[], rate = 0): Promise<number> {
  const reply =
    '{"jsonrpc":"2.0","namespace":"global","id":1,"code":0,"message":"SUCCESS","result":"0x0000000000000000000000000000000000000000000000000000000000000000"}'
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) })
      response.end(reply)
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const requests = rate > 0 ? bodies.length : bodies.length * 4
  // the client: raw keep-alive requests, one in flight per connection, each reply read whole by its
  // known length; paced, a request leaves when its time has come (an open loop, as the bench's)
  const client = new Worker(
    `const net = require('node:net'); const { workerData, parentPort } = require('node:worker_threads');
     const { port, bodies, requests, connections, rate } = workerData; let sent = 0, done = 0; const idle = [];
     const head = (b) => 'POST / HTTP/1.1\\r\\nhost: x\\r\\ncontent-type: application/json\\r\\ncontent-length: ' + Buffer.byteLength(b) + '\\r\\n\\r\\n' + b;
     const send = (socket) => socket.write(head(bodies[sent++ % bodies.length]));
     let due = 0; const gap = rate > 0 ? 1000 / rate : 0;
     const pump = () => { const now = performance.now(); if (due === 0) due = now;
       while (sent < requests && idle.length > 0 && now >= due) { send(idle.pop()); due += gap }
       if (sent < requests) setImmediate(pump) };
     const next = (socket) => { if (sent >= requests) { socket.end(); return } if (rate > 0) idle.push(socket); else send(socket) };
     let opened = 0;
     for (let c = 0; c < connections; c++) {
       const socket = net.connect(port, '127.0.0.1'); socket.setNoDelay(true); let buffered = '';
       socket.on('connect', () => { next(socket); if (++opened === connections && rate > 0) pump() });
       socket.on('data', (data) => { buffered += data.toString('latin1');
         for (;;) { const end = buffered.indexOf('\\r\\n\\r\\n'); if (end < 0) return;
           const length = Number(/content-length: (\\d+)/i.exec(buffered.slice(0, end))[1]);
           if (buffered.length < end + 4 + length) return; buffered = buffered.slice(end + 4 + length);
           if (++done === requests) parentPort.postMessage('done'); next(socket) } });
     }`,
    { eval: true, workerData: { port, bodies, requests, connections: 64, rate } },
  )
  const started = threadNs()
  await new Promise<void>((resolve, reject) => {
    client.once('message', () => resolve())
    client.once('error', reject)
  })
  const used = threadNs() - started
  await client.terminate()
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return used / 1000 / requests
}

/**
 * A transaction's thread hops alone: the node's own link from a request thread to the chain thread
 * (front/submitter.ts createChainLink: admissions grouped per turn, their records packed into one
 * transferred buffer, one `admitted` answer per group) against a worker that only unpacks the
 * frames and answers, as the chain thread's side does (front/threads.ts), 128 in flight like the
 * bench. Both threads' CPU per transaction. A node with verify workers makes a round trip to them
 * with the same bytes in the same groups, taken as the same cost (`--verify-hop`: the floor is twice
 * the link's).
 */
async function hopFloor(records: readonly Uint8Array[]): Promise<number> {
  const chainSide = new Worker(
    `const { parentPort } = require('node:worker_threads'); const { readFileSync } = require('node:fs');
     const threadNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
     let began = 0, answered;
     parentPort.on('message', (m) => {
       if (m.t === 'begin') { began = threadNs(); return }
       if (m.t === 'end') { parentPort.postMessage({ t: 'cpu', ns: threadNs() - began }); return }
       const view = new DataView(m.records.buffer, m.records.byteOffset, m.records.byteLength); const frames = []; let at = 0;
       while (at < m.records.length) { const n = view.getUint32(at); at += 4; frames.push(m.records.subarray(at, at + n)); at += n }
       for (const id of m.ids) {
         if (answered === undefined) { answered = { ids: [], codes: [], messages: [] };
           setImmediate(() => { const group = answered; answered = undefined; parentPort.postMessage({ t: 'admitted', ...group }) }) }
         answered.ids.push(id); answered.codes.push(0); answered.messages.push('')
       }
     })`,
    { eval: true },
  )
  const link = createChainLink(chainSide as unknown as Parameters<typeof createChainLink>[0], { follow: () => {} })
  chainSide.on('message', (message: ToFront | { t: 'cpu' }) => {
    if (message.t !== 'cpu') link.receive(message as ToFront)
  })
  const inFlight = 128
  const run = async (items: readonly Uint8Array[]): Promise<void> => {
    for (let i = 0; i < items.length; i += inFlight) {
      // a copy each, as each record arrives from its own verify answer
      await Promise.all(items.slice(i, i + inFlight).map((record) => link.admit(record.slice())))
    }
  }
  await run(records.slice(0, Math.ceil(records.length / 5)))
  chainSide.postMessage({ t: 'begin' })
  const started = threadNs()
  const rounds = 4
  for (let round = 0; round < rounds; round++) await run(records)
  const requestSide = threadNs() - started
  const chainSideNs = await new Promise<number>((resolve) => {
    chainSide.on('message', (message: { t: string; ns?: number }) => {
      if (message.t === 'cpu') resolve(message.ns as number)
    })
    chainSide.postMessage({ t: 'end' })
  })
  await chainSide.terminate()
  return (requestSide + chainSideNs) / 1000 / (records.length * rounds)
}

/** the floors' clock: every transaction they make is signed and admitted now */
const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n

/**
 * A block producer over `store` with the executor and an in-thread state hasher, timing execution,
 * the state root and the commit apart (this thread's CPU; the process's too for the commit, whose
 * LMDB write transaction runs on another thread). `spent` adds up ns as blocks are made; `produce`
 * makes a block and throws if any of its transactions was invalid (the floors are of valid ones).
 */
async function measuredProducer(store: Store) {
  const executor = createExecutor({})
  const hasher = await createStateHasher({ worker: false })
  const spent = { execution: 0, stateRoot: 0, commitThread: 0, commitProcess: 0 }
  const timed = async <T>(key: 'execution' | 'stateRoot', run: () => Promise<T>): Promise<T> => {
    const started = threadNs()
    const result = await run()
    spent[key] += threadNs() - started
    return result
  }
  const producer = createBlockProducer({
    store: {
      height: () => store.height(),
      findBySignHash: (from, signHash) => store.findBySignHash(from, signHash),
      getBlock: (number) => store.getBlock(number),
      get state() {
        return store.state
      },
      stateRootAfterOn: (on, changes) => timed('stateRoot', () => store.stateRootAfterOn(on, changes)),
      async commitBlock(block) {
        const thread = threadNs()
        const whole = processNs()
        await store.commitBlock(block)
        spent.commitThread += threadNs() - thread
        spent.commitProcess += processNs() - whole
      },
    },
    executor: { executeBlock: (state, batch, context) => timed('execution', () => executor.executeBlock(state, batch, context)) },
    hasher,
    nowNs,
    log: createLogger({ level: 'silent' }),
  })
  const produce = async (batch: ReadyTx[]) => {
    const block = await producer.produce(batch)
    if (block.invalid.length > 0) throw new Error(`floors: ${block.invalid[0].invalidMsg}: ${block.invalid[0].detail}`)
    return block
  }
  return { produce, spent, hasher }
}

/** A workload as the load generator sends it, and a ledger on which each of its transactions is admissible and executes. */
interface FloorWorkload {
  kind: 'transfer' | 'invoke'
  method: 'tx_sendTransaction' | 'contract_invokeContract'
  params: Record<string, unknown>[]
  store: Store
  /** transactions made into blocks before the measured ones: they warm the code paths (and a contract's code cache) as a running node's are */
  warmUp: number
  /** what the execution floor ran */
  executes: string
}

/**
 * Every stage's floor for one workload, in the order a transaction meets them: the request side
 * (HTTP, envelope, params, decode + hashes, signature, hops, pool log) on the workload's own
 * requests, then the pool's admission and blocks of 500 made from the pool on its ledger.
 */
async function measureWorkload(workload: FloorWorkload): Promise<Floors> {
  const { kind, method, params, store } = workload
  const floors: Floors = {}
  const bodies = bodiesOf(method, params)

  const fast = await httpFloor(bodies)
  floors.http =
    offeredRate > 0
      ? {
          us: await httpFloor(bodies, offeredRate),
          what: `node:http request + its small reply, empty handler, 64 keep-alive connections, ${offeredRate.toLocaleString('en')} requests/s each alone (as fast as answered: ${fast.toFixed(1)})`,
        }
      : { us: fast, what: 'node:http request + its small reply, empty handler, 64 keep-alive connections' }
  floors.envelope = { us: perItem(bodies, (body) => parseJson(body, { maxDepth: 64 })), what: 'parseJson of the request' }
  const checker = compileParamChecker(method, methods[aliases[method] ?? method], schemas)
  floors.params = { us: perItem(params, (tx) => checker.check([tx])), what: `${method}'s params check` }

  let txs: SignedTx[] = []
  const decodeUs = perItem(params, (tx) => txs.push(admitTransaction(kind, tx, { nowNs })))
  txs = txs.slice(-params.length)
  const records = txs.map((tx) => admittedRecord(encodeTx(tx), true))
  const encodeUs = perItem(txs, (tx) => admittedRecord(encodeTx(tx), true))
  const decodeRecordUs = perItem(records, (record) => decodeAdmitted(record))
  // a node with a verify worker sends it each submission as msgpack [kind, params] (front/admission-job.ts)
  const requestUs = verifyHop ? perItem(params, (tx) => unpack(admissionRequest(kind, tx), 'an admission request')) : 0
  floors.decode = {
    us: decodeUs + encodeUs + decodeRecordUs + requestUs,
    what: `once each: decode + 2 hashes ${decodeUs.toFixed(1)}, record encode ${encodeUs.toFixed(1)}, record decode ${decodeRecordUs.toFixed(1)}${verifyHop ? `, the verify worker's request packed and unpacked ${requestUs.toFixed(1)}` : ''}`,
  }
  floors.signature = {
    us: perItem(txs, (tx) => checkTransactionSignature(tx.signed as unknown as TxFields, tx.signature, { nodeVersion: TX_VERSION })),
    what: 'sign string + Keccak + secp256k1 recovery',
  }
  const link = await hopFloor(records)
  floors.hop = {
    us: verifyHop ? 2 * link : link,
    what: `the node's link request thread ↔ chain thread alone, groups of ≤ ${GROUP_SIZE}, both threads' CPU${verifyHop ? ", × 2 for the verify pool's round trip" : ' (no verify worker in this layout)'}`,
  }

  // the pool log alone: records appended as the chain thread does, each group written and fsynced together
  const logDir = scratchDir('keel-floors-log-')
  const log = openPoolLog(logDir)
  const logThread = threadNs()
  const logProcess = processNs()
  for (let i = 0; i < records.length; i += 32) await Promise.all(records.slice(i, i + 32).map((record) => log.append(record)))
  const poolLogThreadUs = (threadNs() - logThread) / 1000 / records.length
  const poolLogOffThreadUs = (processNs() - logProcess) / 1000 / records.length - poolLogThreadUs
  await log.close()
  floors.poolLog = { us: poolLogThreadUs, what: 'append in groups of 32, this thread' }

  // admission on the workload's ledger (duplicate checks and the pool log), then blocks of 500
  const pool = createTxPool({
    store,
    verifier: { verify: async () => Promise.reject(new Error('every transaction arrives verified')) },
    capacity: params.length * 2,
    verifyBatch: 512,
    log: createLogger({ level: 'silent' }),
  })
  // the transactions as the chain thread has them: decoded from the records a verify worker made
  const admitted = records.map((record) => decodeAdmitted(record).tx)
  const admitThread = threadNs()
  const admitProcess = processNs()
  for (let i = 0; i < admitted.length; i += 32) {
    await Promise.all(admitted.slice(i, i + 32).map((tx, j) => pool.add(tx, { signatureValid: true, record: records[i + j] })))
  }
  const admitUs = (threadNs() - admitThread) / 1000 / txs.length
  offThreadNs += processNs() - admitProcess - admitUs * 1000 * txs.length
  floors.admission = {
    us: Math.max(0, admitUs - poolLogThreadUs),
    what: "the pool's checks and reservations (pool.add less its log append)",
  }

  const { produce: produceBlock, spent, hasher } = await measuredProducer(store)
  const produce = async (limit: number): Promise<number> => {
    let produced = 0
    while (produced < limit) {
      const batch: ReadyTx[] = pool.take(Math.min(BLOCK, limit - produced))
      if (batch.length === 0) break
      const block = await produceBlock(batch)
      pool.settle(batch.map((item) => item.tx.hash))
      produced += block.txs.length
    }
    return produced
  }
  const warmed = await produce(workload.warmUp)
  Object.assign(spent, { execution: 0, stateRoot: 0, commitThread: 0, commitProcess: 0 })
  const produceThread = threadNs()
  const produceProcess = processNs()
  const produced = await produce(Number.POSITIVE_INFINITY)
  const produceUs = (threadNs() - produceThread) / 1000 / produced
  offThreadNs += processNs() - produceProcess - produceUs * 1000 * produced
  const perTx = (ns: number): number => ns / 1000 / produced
  floors.execution = { us: perTx(spent.execution), what: `executeBlock, blocks of ${BLOCK} ${workload.executes}` }
  floors.stateRoot = { us: perTx(spent.stateRoot), what: 'diff + lane hashes in one thread' }
  floors.commitEncoding = {
    us: produceUs - perTx(spent.execution) - perTx(spent.stateRoot),
    what: "roots, bloom, receipts and commitBlock's keying, encoding and LMDB instructions, this thread",
  }
  floors.otherThreads = {
    us: offThreadNs / 1000 / params.length + poolLogOffThreadUs,
    what: `this process's other threads while the stages above ran (V8's GC and compiler helpers for that work; LMDB's write transactions ${perTx(spent.commitProcess - spent.commitThread).toFixed(1)}; the pool log's writev + fdatasync ${poolLogOffThreadUs.toFixed(1)})`,
  }
  await hasher.close()
  await store.close()
  if (warmed + produced !== params.length) throw new Error(`floors: ${warmed + produced} of ${params.length} transactions committed`)
  return floors
}

const floorAccounts = (): SdkAccount[] => Array.from({ length: ACCOUNTS }, (_, i) => derivedAccount('keel-floors', i))

/** A fresh ledger with `accounts` funded at genesis. */
async function fundedLedger(name: string, accounts: readonly SdkAccount[]): Promise<Store> {
  const store = await openStore(join(scratchDir(`keel-floors-${name}-`), 'ledger'))
  await store.initGenesis(accounts.map((account) => ({ address: account.address, balance: 10n ** 15n })))
  return store
}

/** The transfers workload: value transfers among the bench's accounts (account i to account 7i + 1, value 1). */
async function transfersWorkload(count: number): Promise<FloorWorkload> {
  const accounts = floorAccounts()
  return {
    kind: 'transfer',
    method: 'tx_sendTransaction',
    params: Array.from({ length: count }, (_, i) =>
      sdkTransaction(accounts[i % ACCOUNTS], { kind: 'transfer', to: accounts[(i * 7 + 1) % ACCOUNTS].address, value: 1 }),
    ),
    store: await fundedLedger('transfers', accounts),
    warmUp: 0,
    executes: 'transfers',
  }
}

/**
 * The ERC-20 workload (issue 27, the EVM path): the bench's token (bench/token.ts) deployed and
 * shared out to every account as the load generator's set-up does, then transfer() calls shaped
 * like the load generator's (account i to account 7i + 1, amount 1), sent with contract_invokeContract.
 */
async function erc20Workload(count: number): Promise<FloorWorkload> {
  const accounts = floorAccounts()
  const store = await fundedLedger('erc20', accounts)
  const { produce, hasher } = await measuredProducer(store)
  const ready = (kind: 'deploy' | 'invoke', params: Record<string, unknown>): ReadyTx => ({
    tx: admitTransaction(kind, params, { nowNs }),
    signatureValid: true,
  })
  const transfer = (to: string, amount: bigint): string => calldata('transfer(address,uint256)', to as `0x${string}`, amount)
  const deployed = await produce([
    ready('deploy', sdkTransaction(accounts[0], { kind: 'deploy', payload: artifact(TOKEN_SOURCE, 'BenchToken').bin })),
  ])
  const token = deployed.receipts[0]?.contractAddress
  if (token === undefined) throw new Error('floors: the token was not deployed')
  const shares = accounts
    .slice(1)
    .map((account) =>
      ready('invoke', sdkTransaction(accounts[0], { kind: 'invoke', to: token, payload: transfer(account.address, 10n ** 24n) })),
    )
  for (let i = 0; i < shares.length; i += BLOCK) await produce(shares.slice(i, i + BLOCK))
  await hasher.close()
  return {
    kind: 'invoke',
    method: 'contract_invokeContract',
    params: Array.from({ length: count }, (_, i) =>
      sdkTransaction(accounts[i % ACCOUNTS], {
        kind: 'invoke',
        to: token,
        payload: transfer(accounts[(i * 7 + 1) % ACCOUNTS].address, 1n),
      }),
    ),
    store,
    warmUp: BLOCK,
    executes: 'ERC-20 transfer() calls',
  }
}

const { values } = parseOrExit(floorsCommand, process.argv.slice(2))
const verifyHop = values['verify-hop']
const offeredRate = Number(values.rate)
const workloadOf = { transfers: transfersWorkload, erc20: erc20Workload }[values.workload]
if (workloadOf === undefined) {
  console.log(values.json ? '{}' : `no floors for workload ${values.workload} yet (transfers and erc20 only)`)
} else {
  const count = values.workload === 'erc20' ? Math.max(Number(values.count), 2 * BLOCK) : Number(values.count)
  // a first pass compiles the code (the optimising compiler's threads would otherwise land in the
  // other threads' floor, which a node under a long load has long paid); the second is measured
  await measureWorkload(await workloadOf(count))
  offThreadNs = 0
  const floors = await measureWorkload(await workloadOf(count))
  if (values.json) console.log(JSON.stringify(floors))
  else
    for (const [stage, floor] of Object.entries(floors))
      console.log(`${stage.padEnd(16)} ${floor.us.toFixed(1).padStart(8)} µs  ${floor.what}`)
}
