/**
 * `npm run network -- up` never leaves orphans (issue 29 part 3): every port is checked before
 * anything is written or started; an existing network is not silently reused with other ports; a
 * node that fails to start makes `up` stop every node it started, and processes.json, the one
 * record `status`, `stop` and `down` read, names none of them afterwards; `delete-vp` of a name
 * that is not a VP answers with an example that exists.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createNetwork, freePorts, PLAN_FILE, readNetwork, STATE_FILE, startNodes, upNetwork } from '../../../src/devnet/network.ts'

const repoRoot = join(import.meta.dirname, '..', '..', '..')
const built = process.env.KEEL_NODE_BUILD ? join(process.env.KEEL_NODE_BUILD, 'src', 'cli.js') : undefined
const cliEntry = built !== undefined && existsSync(built) ? built : 'bin/keel.mjs'

const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'keel-up-')), 'network')

const hold = (port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve(server))
  })
const release = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()))

async function refused(work: Promise<unknown>, pattern: RegExp): Promise<string> {
  try {
    await work
  } catch (error) {
    assert.match((error as Error).message, pattern)
    return (error as Error).message
  }
  assert.unreachable(`expected a refusal matching ${pattern}`)
  return ''
}

/** processes whose command line names `dir` (Linux), i.e. nodes of that network still running */
function processesOf(dir: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) pids.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

test('a new network on a busy port: refused before anything is written, naming the port and its node', async () => {
  const dir = fresh()
  const [rpc, p2p] = await freePorts(2)
  // node 3's JSON-RPC port (rpc + 2) is held by another process
  const server = await hold(rpc + 2)
  try {
    const message = await refused(upNetwork(dir, { vps: 4, jsonrpcPort: rpc, p2pPort: p2p }), /already in use/)
    assert.ok(message.includes(`${rpc + 2} (JSON-RPC port of node #3)`), message)
    assert.match(message, /nothing was started\. Nothing was written either/)
  } finally {
    await release(server)
  }
  assert.not.ok(existsSync(join(dir, PLAN_FILE)))
})

test('an existing network: another --rpc-port is refused, not silently ignored; a busy port starts nothing', async () => {
  const dir = fresh()
  const plan = await createNetwork(dir, { vps: 4, jsonrpcPort: 0, p2pPort: 0, timers: 'test' })
  const message = await refused(upNetwork(dir, { jsonrpcPort: 9 }), /holds a network already, and --rpc-port 9 \(its JSON-RPC ports: /)
  assert.ok(message.includes(String(plan.nodes[0].jsonrpcPort)))
  await refused(upNetwork(dir, { vps: 5 }), /--vp 5 \(it has 4\)/)

  const server = await hold(plan.nodes[1].p2pPort)
  try {
    await refused(startNodes(dir, readNetwork(dir)), new RegExp(`${plan.nodes[1].p2pPort} \\(peer port of node2\\); nothing was started`))
  } finally {
    await release(server)
  }
  assert.not.ok(existsSync(join(dir, STATE_FILE)), 'no process was spawned')
})

test('delete-vp of a name that is no VP: the example names what exists, not what was typed', async () => {
  const dir = fresh()
  await createNetwork(dir, { vps: 4, jsonrpcPort: 0, p2pPort: 0, timers: 'test' })
  const run = spawnSync(process.execPath, [cliEntry, 'network', 'delete-vp', 'node5', '--dir', dir], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.is(run.status, 1, run.stderr)
  assert.match(
    run.stderr,
    /node5 is not a VP of .*\. Its VPs: node1, node2, node3, node4; a group of 4 cannot lose one: `npm run network -- add-vp` first \(it adds node5\)/,
  )
  assert.not.match(run.stderr, /e\.g\. delete-vp node5/)
})

test('a node that cannot start: `up` stops the nodes it started, exits 1 naming the node, and leaves no process', async () => {
  const dir = fresh()
  await createNetwork(dir, { vps: 4, jsonrpcPort: 0, p2pPort: 0, timers: 'test' })
  // node3 refuses its configuration at once; the other three are starting meanwhile
  writeFileSync(join(dir, 'node3', 'keel.toml'), '[jsonrpc]\nthreads = 999\n')
  const run = spawnSync(process.execPath, [cliEntry, 'network', 'up', '--dir', dir], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 })
  assert.is(run.status, 1, `${run.stdout}\n${run.stderr}`)
  assert.match(run.stderr, /node3 did not start \(its log: .*node3\/node\.log\)/)
  assert.match(run.stderr, /jsonrpc\.threads must be 0\.\.64/)
  assert.match(run.stderr, /stopped every node this start had spawned \(node1, node2, node3, node4\): none is left running/)
  assert.equal(JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')), {}, `${STATE_FILE} names no process`)
  assert.equal(processesOf(dir), [], 'no process of the network is left')
})

test.run()
