/**
 * The chain states the examples of openrpc.json run against. Each example's `description` names
 * its precondition; one without a known precondition runs on the sample chain of
 * `info.description`. Every state is a real node whose chain was built by real signed
 * transactions (test/helpers/sample-chain.ts), with a pinned clock; each is built the first time
 * an example needs it and then kept for the rest of the run.
 *
 * Replay rules shared by the conformance runner and conformance/record.ts:
 * - submissions (tx_sendTransaction, contract_deployContract/invokeContract/maintainContract) are
 *   signed vectors: they replay with the node clock one second after the transaction's
 *   `timestamp`, or one day and one second after it when the description says "after its day has
 *   passed", so the 24-hour window judges them as it judged them when they were signed;
 * - "… sent a second time": the same request is sent once before the one compared.
 *
 * Subscription states: the node hands out SUBSCRIPTION_ID (the id of the sub_ examples) to the
 * first subscription it creates, which the builder creates as the phrase says; later ones get
 * random ids. In the `subscribed` state the examples that use the id run in document order:
 * "nothing pending" polls it before sub_unSubscription removes it.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient } from '../sdk/src/client.ts'
import { type WsTransport, wsTransport } from '../sdk/src/ws-transport.ts'
import { resolveConfig } from '../src/config.ts'
import { createNetwork, nodeUrl } from '../src/devnet/network.ts'
import { type NodeProcess, startNodeProcess } from '../src/devnet/node-process.ts'
import { type KeelNode, startNode } from '../src/node.ts'
import {
  buildSampleChain,
  commitBlock,
  copyDataDir,
  DEMO_ADDRESS,
  DEMO_PRIVATE_KEY,
  extraIdBlock,
  freezeBlock,
  NEVER_BATCH,
  NEVER_MS,
  PinnedClock,
  RECEIVER,
  rpc,
  SECOND,
  SERVE_TIME,
  sampleBlocks,
  sampleGenesis,
  serve,
  sign2017,
  startChainNode,
  submit,
  writeLongChain,
  writeSampleBlocks,
} from '../test/helpers/sample-chain.ts'

export type StateName =
  | 'sample'
  | 'empty'
  | 'long'
  | 'veryLong'
  | 'poolFull'
  | 'frozen'
  | 'noCompiler'
  | 'compilersBusy'
  | 'committing'
  | 'indexed'
  | 'archived'
  | 'subscriptionsFull'
  | 'subscribed'
  | 'pushSubscribed'
  | 'blockSubscribed'
  | 'eventSubscribed'
  | 'viewChanged'
  | 'network'
  | 'fiveVps'
  | 'archiveSubscribed'
  | 'snapshotting'
  | 'snapshotted'
  | 'snapshotToDelete'
  | 'snapshotToArchive'
  | 'archiveToRestore'

/** The subscription id of the sub_ examples. */
export const SUBSCRIPTION_ID = '0x4c29b6c3a7c8d0e1f2a3b4c5d6e7f809'

/** The snapshot id of the archive_ examples: the first snapshot a state's node makes gets it. */
export const SNAPSHOT_ID = '0x9f8e7d6c5b4a39281706f5e4d3c2b1a0'

/** Preconditions named in example descriptions, and the state each needs; the first phrase found wins. */
export const PRECONDITIONS: readonly { phrase: string; state: StateName }[] = [
  { phrase: 'on an empty chain', state: 'empty' },
  { phrase: 'before any transaction was discarded', state: 'empty' },
  { phrase: 'on a chain of 150 blocks', state: 'long' },
  { phrase: 'while the transaction pool is full', state: 'poolFull' },
  { phrase: 'after contract_maintainContract with opcode 2', state: 'frozen' },
  { phrase: 'on a node without a Solidity compiler', state: 'noCompiler' },
  { phrase: 'while every compiler of the node is busy and its queue is full', state: 'compilersBusy' },
  { phrase: 'on a node that writes each transaction into a block at once', state: 'committing' },
  { phrase: 'on the sample chain plus block 4 with extra ids', state: 'indexed' },
  { phrase: 'after blocks 1 and 2 were archived', state: 'archived' },
  { phrase: 'on a chain of 5001 blocks', state: 'veryLong' },
  { phrase: 'with 1000 subscriptions active', state: 'subscriptionsFull' },
  { phrase: 'while subscription 0x4c29b6c3a7c8d0e1f2a3b4c5d6e7f809 is active', state: 'subscribed' },
  { phrase: 'while push subscription 0x4c29b6c3a7c8d0e1f2a3b4c5d6e7f809 is open on this connection', state: 'pushSubscribed' },
  { phrase: 'block subscription 0x4c29b6c3a7c8d0e1f2a3b4c5d6e7f809 (hashes) made before block 3', state: 'blockSubscribed' },
  { phrase: 'event subscription 0x4c29b6c3a7c8d0e1f2a3b4c5d6e7f809 made before block 3', state: 'eventSubscribed' },
  { phrase: 'after a consensus view change', state: 'viewChanged' },
  { phrase: 'On a network of four VPs (node1 to node4) and the NVP node5', state: 'network' },
  { phrase: 'On a network of five VPs (node1 to node5)', state: 'fiveVps' },
  { phrase: 'after a snapshot was made', state: 'archiveSubscribed' },
  { phrase: 'on a node taking snapshots', state: 'snapshotting' },
  { phrase: `after snapshot ${SNAPSHOT_ID} was made at block 3`, state: 'snapshotted' },
  { phrase: 'at block 3, deleted by this call', state: 'snapshotToDelete' },
  { phrase: 'at block 3, archived by this call', state: 'snapshotToArchive' },
  { phrase: 'restored by this call', state: 'archiveToRestore' },
]

/** What each state is, for messages. */
export const STATE_DESCRIPTIONS: Record<StateName, string> = {
  sample: 'the sample chain of info.description (blocks 1-3, one transfer pending)',
  empty: 'a chain with no block yet (the sample genesis)',
  long: 'a chain of 150 blocks of one transfer each',
  poolFull: 'a node whose pool (capacity 1) holds one transaction its orderer never cuts',
  frozen: 'the sample chain plus block 4, in which the deployer froze contract 0xaeccd2…',
  noCompiler: 'a node started with no solc package to load',
  indexed:
    'the sample chain plus block 4 (written at 1510000005000000000): three transactions of 0x17d8… with extra ids [7, "lot-42"], [7, 8] and ["lot-42", "batch-9"]',
  committing: 'the sample chain (blocks 1-3) on a node of its own that cuts a block as soon as one transaction is verified',
  compilersBusy:
    'a node with one compiler (a stand-in for solc, test/fixtures/solc-stalled, whose compile never returns) and no queue, busy with a compile',
  archived: 'the sample chain after blocks 1 and 2 were archived',
  veryLong: 'a chain of 5001 blocks of one transfer each (one more than a log query may span)',
  subscriptionsFull: 'a node with 1000 active subscriptions (the most it allows)',
  subscribed: `a node (no block yet) on which block subscription ${SUBSCRIPTION_ID} (hashes) is active`,
  pushSubscribed: `a node (no block yet) with a WebSocket connection on which push subscription ${SUBSCRIPTION_ID} (block hashes) is open`,
  blockSubscribed: `the sample chain whose block 3 was written after block subscription ${SUBSCRIPTION_ID} (hashes) was made`,
  eventSubscribed: `the sample chain whose block 3 was written after event subscription ${SUBSCRIPTION_ID} (no filter) was made`,
  viewChanged: `a node whose consensus changed view while system status subscription ${SUBSCRIPTION_ID} was active`,
  network: 'a network of four VPs (node1 to node4) and the NVP node5, each a process of its own, asked on node1',
  fiveVps: 'a network of five VPs (node1 to node5), asked on node1 (a group of four refuses to lose a VP)',
  archiveSubscribed: `the sample chain on which snapshot ${SNAPSHOT_ID} of block 3 was made while archive subscription ${SUBSCRIPTION_ID} was active`,
  snapshotting: 'the sample chain (blocks 1-3) on a node of its own, for the snapshot requests of archive_snapshot, in document order',
  snapshotted: `the sample chain with snapshot ${SNAPSHOT_ID} of block 3`,
  snapshotToDelete: `the sample chain with snapshot ${SNAPSHOT_ID} of block 3, on a node of its own (the example deletes it)`,
  snapshotToArchive: `the sample chain with snapshot ${SNAPSHOT_ID} of block 3, on a node of its own (the example archives it)`,
  archiveToRestore: `the sample chain whose blocks 1-2 were archived with snapshot ${SNAPSHOT_ID}, on a node of its own (the example restores them)`,
}

/** States no node can be put in yet: examples that need them are skipped under a deviation. */
export const UNBUILDABLE: ReadonlySet<StateName> = new Set(['viewChanged'])

export function stateOf(description: string | undefined): StateName {
  return PRECONDITIONS.find((precondition) => description?.includes(precondition.phrase))?.state ?? 'sample'
}

export const SUBMISSIONS: ReadonlySet<string> = new Set([
  'tx_sendTransaction',
  'tx_sendTransactionReturnReceipt',
  'simulate_invokeContract',
  'contract_deployContract',
  'contract_invokeContract',
  'contract_maintainContract',
])
const DAY_PASSED = 'after its day has passed'
const SENT_TWICE = 'sent a second time'
const DAY = 24n * 60n * 60n * SECOND

/** The node clock a submission replays at (see the header), or undefined for other calls. */
export function replayTime(method: string, params: readonly unknown[], description: string | undefined): bigint | undefined {
  if (!SUBMISSIONS.has(method)) return undefined
  const raw = (params[0] as { timestamp?: unknown } | undefined)?.timestamp
  if (typeof raw !== 'number' && typeof raw !== 'bigint') return undefined
  const timestamp = BigInt(raw)
  if (timestamp <= 0n) return undefined
  return timestamp + SECOND + (description?.includes(DAY_PASSED) ? DAY : 0n)
}

export interface State {
  name: StateName
  /** the node the examples are sent to */
  node: Pick<KeelNode, 'url' | 'stop'>
  clock: PinnedClock
  /** where the clock rests between calls */
  restTime: bigint
  /** tx hashes of the sample chain by name (test/helpers/sample-chain.ts), where the state has them */
  hashes: Record<string, string>
  /** the WebSocket connection the state was built on, for the WebSocket-only methods */
  websocket?: WsTransport
  /** the key of the chain's admin, which signs operator methods' examples; absent: the sample genesis account's (DEMO_PRIVATE_KEY) */
  adminKey?: string
}

function unbuildable(name: StateName): () => Promise<State> {
  return () => {
    throw new Error(`no node can be put in the state "${STATE_DESCRIPTIONS[name]}" yet`)
  }
}

export interface States {
  get(name: StateName): Promise<State>
  stopAll(): Promise<void>
}

export function createStates(): States {
  const built = new Map<StateName, Promise<State>>()
  const dirs: string[] = []
  const fresh = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-conformance-'))
    dirs.push(dir)
    return dir
  }
  // blocks 1-3 are written once; the frozen and archive states extend copies made before the sample node serves
  let written: Promise<{ dataDir: string; hashes: Record<string, string>; frozenDir: string; archiveBase: string }> | undefined
  const sampleBlocksWritten = () => {
    written ??= writeSampleBlocks(fresh()).then((result) => {
      const frozenDir = copyDataDir(result.dataDir)
      const archiveBase = copyDataDir(result.dataDir)
      dirs.push(frozenDir, archiveBase)
      return { ...result, frozenDir, archiveBase }
    })
    return written
  }
  // blocks 1-2 only: the subscription states write block 3 themselves, after subscribing
  let twoBlocks: Promise<string> | undefined
  const sampleBlocks12 = () => {
    twoBlocks ??= (async () => {
      const dataDir = fresh()
      for (const block of sampleBlocks.slice(0, 2)) await commitBlock(dataDir, block)
      return dataDir
    })()
    return twoBlocks
  }
  /** A node whose first subscription gets SUBSCRIPTION_ID and first snapshot SNAPSHOT_ID; `batchSize` transactions cut a block. */
  const subscribing = async (name: StateName, dataDir: string, clock: PinnedClock, batchSize: number): Promise<State> => {
    let first = true
    let firstSnapshot = true
    const config = resolveConfig({
      node: { dataDir },
      jsonrpc: { port: 0 },
      log: { level: 'silent' },
      genesis: sampleGenesis,
      chain: { batchSize, batchTimeoutMs: NEVER_MS },
    })
    const node = await startNode(config, {
      nowNs: clock.nowNs,
      verifyWorkers: 0,
      events: {
        newId: () => {
          if (!first) return `0x${randomBytes(16).toString('hex')}`
          first = false
          return SUBSCRIPTION_ID
        },
      },
      newSnapshotId: () => {
        if (!firstSnapshot) return `0x${randomBytes(16).toString('hex')}`
        firstSnapshot = false
        return SNAPSHOT_ID
      },
    })
    return { name, node, clock, restTime: SERVE_TIME, hashes: {} }
  }
  const subscribedBeforeBlock3 = async (name: StateName, method: string, params: unknown[]): Promise<State> => {
    const block3 = sampleBlocks[2]
    const clock = new PinnedClock(block3.writeTime)
    const state = await subscribing(name, copyDataDir(await sampleBlocks12()), clock, Object.keys(block3.txs).length)
    const id = await rpc(state.node.url, method, params)
    if (id.result !== SUBSCRIPTION_ID) throw new Error(`${method}: ${id.code} ${id.message} ${String(id.result)}`)
    const hashes: Record<string, string> = {}
    for (const [name, tx] of Object.entries(block3.txs)) hashes[name] = await submit(state.node.url, tx)
    for (const deadline = Date.now() + 10_000; ; ) {
      const height = await rpc(state.node.url, 'block_getChainHeight')
      if (height.result === '0x3') break
      if (Date.now() > deadline) throw new Error(`${name}: block 3 was not written`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    clock.set(SERVE_TIME)
    return { ...state, hashes }
  }

  /**
   * The sample chain (blocks 1-3) on a node of its own, then, as asked: archive subscription
   * SUBSCRIPTION_ID, snapshot SNAPSHOT_ID of block 3 (waited for), blocks 1-2 archived with it.
   */
  const archiving = async (name: StateName, steps: { subscribe?: boolean; snapshot?: boolean; archive?: boolean } = {}): Promise<State> => {
    const { archiveBase, hashes } = await sampleBlocksWritten()
    const dataDir = copyDataDir(archiveBase)
    dirs.push(dataDir)
    const state = await subscribing(name, dataDir, new PinnedClock(SERVE_TIME), NEVER_BATCH)
    // archive_snapshot and archive_archive are operator methods: signed by the sample genesis account, the admin
    const expect = async (method: string, params: unknown[], result: unknown): Promise<void> => {
      const reply = await rpc(state.node.url, method, params, method.startsWith('archive_') ? DEMO_PRIVATE_KEY : undefined)
      if (reply.result !== result) throw new Error(`${name}: ${method} answered ${reply.code} ${reply.message} ${String(reply.result)}`)
    }
    if (steps.subscribe) await expect('sub_newArchiveSubscription', [], SUBSCRIPTION_ID)
    if (steps.snapshot) {
      await expect('archive_snapshot', [0], SNAPSHOT_ID)
      for (
        const deadline = Date.now() + 10_000;
        (await rpc(state.node.url, 'archive_querySnapshotExist', [SNAPSHOT_ID])).result !== true;
      ) {
        if (Date.now() > deadline) throw new Error(`${name}: snapshot ${SNAPSHOT_ID} was not made`)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    }
    if (steps.archive) await expect('archive_archive', [SNAPSHOT_ID, true], true)
    return { ...state, hashes }
  }

  const serving = async (name: StateName, dataDir: string, options: Parameters<typeof serve>[2] = {}) => {
    const clock = new PinnedClock(SERVE_TIME)
    const node = await serve(dataDir, clock, options)
    return { name, node, clock, restTime: SERVE_TIME, hashes: {} }
  }

  const builders: Record<StateName, () => Promise<State>> = {
    async sample() {
      const chain = await buildSampleChain(await sampleBlocksWritten())
      return { name: 'sample', node: chain.node, clock: chain.clock, restTime: SERVE_TIME, hashes: chain.hashes }
    },
    empty: () => serving('empty', fresh()),
    async long() {
      const dataDir = fresh()
      await writeLongChain(dataDir, new PinnedClock(sampleBlocks[0].writeTime), 150)
      return serving('long', dataDir)
    },
    async poolFull() {
      const state = await serving('poolFull', fresh(), { poolCapacity: 1 })
      const filler = sign2017(DEMO_PRIVATE_KEY, { from: DEMO_ADDRESS, to: RECEIVER, value: 1, timestamp: SERVE_TIME - SECOND, nonce: 1 })
      await submit(state.node.url, { kind: 'transfer', params: filler, outcome: 'valid' })
      return state
    },
    async frozen() {
      const { frozenDir, hashes } = await sampleBlocksWritten()
      const freeze = await commitBlock(frozenDir, freezeBlock)
      const state = await serving('frozen', frozenDir)
      return { ...state, hashes: { ...hashes, ...freeze } }
    },
    noCompiler: () => serving('noCompiler', fresh(), { compiler: { packages: [] } }),
    async indexed() {
      const { archiveBase, hashes } = await sampleBlocksWritten()
      const dataDir = copyDataDir(archiveBase)
      dirs.push(dataDir)
      const tagged = await commitBlock(dataDir, extraIdBlock)
      return { ...(await serving('indexed', dataDir)), hashes: { ...hashes, ...tagged } }
    },
    async committing() {
      const { archiveBase, hashes } = await sampleBlocksWritten()
      const dataDir = copyDataDir(archiveBase)
      dirs.push(dataDir)
      const clock = new PinnedClock(SERVE_TIME)
      const node = await startChainNode({ dataDir, clock, batchSize: 1 })
      return { name: 'committing', node, clock, restTime: SERVE_TIME, hashes }
    },
    async compilersBusy() {
      const stalled = fileURLToPath(new URL('../test/fixtures/solc-stalled', import.meta.url))
      const state = await serving('compilersBusy', fresh(), { compiler: { packages: [stalled], maxConcurrent: 1, maxWaiting: 0 } })
      // two compiles: whichever reaches the node first holds its only compiler for good (its reply
      // comes when the node stops), so the other is refused
      const source = 'pragma solidity ^0.8.0;\ncontract Busy {}'
      const sent = [0, 1].map((i) => rpc(state.node.url, 'contract_compileContract', [`${source} // ${i}`]))
      for (const reply of sent) reply.catch(() => {}) // the held one fails when the node stops
      const first = await Promise.race(sent)
      if (first.code !== -32006) throw new Error(`compilersBusy: expected -32006, got ${first.code} ${first.message}`)
      return state
    },
    archived: () => archiving('archived', { snapshot: true, archive: true }),
    async veryLong() {
      const dataDir = fresh()
      // submitted 64 at a time: the order of these transfers is irrelevant, only the height counts
      await writeLongChain(dataDir, new PinnedClock(sampleBlocks[0].writeTime), 5001, { concurrency: 64 })
      return serving('veryLong', dataDir)
    },
    viewChanged: unbuildable('viewChanged'),
    network: () => network(fresh(), 'network'),
    fiveVps: () => network(fresh(), 'fiveVps'),
    archiveSubscribed: () => archiving('archiveSubscribed', { subscribe: true, snapshot: true }),
    snapshotting: () => archiving('snapshotting'),
    snapshotted: () => archiving('snapshotted', { snapshot: true }),
    snapshotToDelete: () => archiving('snapshotToDelete', { snapshot: true }),
    snapshotToArchive: () => archiving('snapshotToArchive', { snapshot: true }),
    archiveToRestore: () => archiving('archiveToRestore', { snapshot: true, archive: true }),
    async subscriptionsFull() {
      const state = await serving('subscriptionsFull', fresh())
      for (let i = 0; i < 1000; i++) {
        const reply = await rpc(state.node.url, 'sub_newBlockSubscription', [false])
        if (reply.code !== 0) throw new Error(`subscription ${i + 1} of 1000: ${reply.code} ${reply.message}`)
      }
      return state
    },
    async subscribed() {
      const state = await subscribing('subscribed', fresh(), new PinnedClock(SERVE_TIME), NEVER_BATCH)
      const id = await rpc(state.node.url, 'sub_newBlockSubscription', [false])
      if (id.result !== SUBSCRIPTION_ID) throw new Error(`sub_newBlockSubscription: ${id.code} ${id.message} ${String(id.result)}`)
      return state
    },
    async pushSubscribed() {
      const state = await subscribing('pushSubscribed', fresh(), new PinnedClock(SERVE_TIME), NEVER_BATCH)
      const websocket = await wsTransport(state.node.url)
      const id = await createClient({ transport: websocket }).send('sub_subscribe', ['block'])
      if (id.result !== SUBSCRIPTION_ID) throw new Error(`sub_subscribe: ${id.code} ${id.message} ${String(id.result)}`)
      return { ...state, websocket }
    },
    blockSubscribed: () => subscribedBeforeBlock3('blockSubscribed', 'sub_newBlockSubscription', [false]),
    eventSubscribed: () => subscribedBeforeBlock3('eventSubscribed', 'sub_newEventSubscription', []),
  }

  return {
    get(name) {
      let state = built.get(name)
      if (state === undefined) {
        state = builders[name]()
        built.set(name, state)
      }
      return state
    },
    async stopAll() {
      const states = await Promise.allSettled(built.values())
      for (const state of states) if (state.status === 'fulfilled') await state.value.node.stop()
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** How long the network state may take to start and link up (five processes on a busy machine). */
const NETWORK_READY_MS = 180_000

/**
 * `network`: four VPs (node1-node4) and the NVP node5; `fiveVps`: five VPs (node1-node5). Each node
 * a process of its own (the files `npm run network` writes, test timers, free ports), asked on
 * node1. Ready once node1 is linked to the four others: node_getNodes lists them all alive. Its
 * nodes keep their own clocks; no submission example needs it.
 */
async function network(dir: string, name: 'network' | 'fiveVps'): Promise<State> {
  const startedAt = performance.now()
  const networkDir = join(dir, 'network')
  const shape = name === 'network' ? { vps: 4, nvps: 1, nvpNames: ['node5'] } : { vps: 5, nvps: 0 }
  const plan = await createNetwork(networkDir, { ...shape, timers: 'test', jsonrpcPort: 0, p2pPort: 0 })
  const started = await Promise.allSettled(
    plan.nodes.map((node) =>
      startNodeProcess({ configFile: join(networkDir, node.hostname, 'keel.toml'), port: node.jsonrpcPort, timeoutMs: NETWORK_READY_MS }),
    ),
  )
  const processes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
  const stop = async (): Promise<void> => {
    await Promise.all(processes.map((child: NodeProcess) => child.kill('SIGKILL')))
  }
  const failed = started.find((result) => result.status === 'rejected')
  if (failed !== undefined) {
    await stop()
    throw failed.reason
  }
  const listeningAt = performance.now()
  const url = nodeUrl(plan.nodes[0])
  for (const deadline = Date.now() + NETWORK_READY_MS; ; ) {
    const nodes = (await rpc(url, 'node_getNodes')).result as { status: number }[] | undefined
    if (nodes?.length === plan.nodes.length && nodes.every((node) => node.status === 0)) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`network: node1 was not linked to the other ${plan.nodes.length - 1} nodes within ${NETWORK_READY_MS} ms`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  // the time this state adds to a conformance run, printed (not asserted)
  const seconds = (from: number, to: number): string => ((to - from) / 1000).toFixed(1)
  console.log(
    `\n  ${name} state: ${plan.nodes.length} node processes listening after ${seconds(startedAt, listeningAt)} s, linked after ${seconds(startedAt, performance.now())} s`,
  )
  // the network's genesis account (devnet/network.ts) is its admin: [genesis] admins lists none
  const { privateKey: adminKey } = JSON.parse(readFileSync(join(networkDir, 'genesis-account.json'), 'utf8')) as { privateKey: string }
  return { name, node: { url, stop }, clock: new PinnedClock(SERVE_TIME), restTime: SERVE_TIME, hashes: {}, adminKey }
}

/**
 * Runs `call` (one request of `method` with `params`) in `state` under the replay rules of the
 * header: the clock a submission needs, the first copy of a request "sent a second time".
 */
export async function replayIn<T>(
  state: State,
  method: string,
  params: readonly unknown[],
  description: string | undefined,
  call: () => Promise<T>,
): Promise<T> {
  state.clock.set(replayTime(method, params, description) ?? state.restTime)
  try {
    if (description?.includes(SENT_TWICE)) await rpc(state.node.url, method, [...params])
    return await call()
  } finally {
    state.clock.set(state.restTime)
  }
}
