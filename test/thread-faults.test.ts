/**
 * Threads that die (docs/reliability.md "Threads that die"), each killed by a failpoint
 * (src/failpoints.ts) as a crash would kill it: a verify worker and the state-hash worker are
 * restarted after a back-off and logged, and the node goes on committing; a compiler worker that
 * dies fails the compile it held and the next compile starts a new one; a request thread that dies
 * stops the node whole and the process exits with code 70, its data directory free for a restart.
 *
 * A worker thread reads KEEL_FAILPOINTS from its own copy of the environment, made when it starts:
 * the tests arm a failpoint before the worker starts and disarm it before its replacement does.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createLogger } from '../src/log.ts'
import type { KeelNode } from '../src/node.ts'
import { commit, ok, SUBMIT, sleep } from './helpers/chain.ts'
import { envelope, post, startTestNode } from './helpers/node.ts'
import { wallet } from './helpers/wallet.ts'

const repoRoot = join(import.meta.dirname, '..')

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** A node with its log lines kept, started while `failpoints` is armed (its workers start with it). */
async function nodeWith(failpoints: string, verifyWorkers = 1): Promise<{ node: KeelNode; lines: string[]; fatal: Error[] }> {
  const lines: string[] = []
  const fatal: Error[] = []
  process.env.KEEL_FAILPOINTS = failpoints
  try {
    const node = await startTestNode(
      { chain: { batchSize: 1, batchTimeoutMs: 1 } },
      {
        verifyWorkers,
        log: createLogger({ level: 'info', write: (line) => lines.push(line) }),
        onFatal: (error) => fatal.push(error),
      },
    )
    return { node, lines, fatal }
  } finally {
    delete process.env.KEEL_FAILPOINTS
  }
}

const transfer = async (node: KeelNode): Promise<void> => {
  const dev = wallet(node.devAccount?.privateKey)
  await commit(node.url, SUBMIT.transfer, dev.transfer(wallet().address, 1))
}

test('a verify worker that dies is logged and restarted; transactions are verified meanwhile and after', async () => {
  const { node, lines, fatal } = await nodeWith('verify.worker=throw')
  try {
    // the worker dies on its first job; that job is verified on the chain or request thread instead.
    // A request thread admits a turn of fewer than four submissions itself: bursts of eight at once
    // reach the worker (a burst the thread happens to read over several turns does not: so a few)
    const restarted = (): boolean => lines.some((line) => line.includes('a verify worker restarted'))
    const burst = () => Promise.all(Array.from({ length: 8 }, () => transfer(node)))
    for (let i = 0; i < 20 && !lines.some((line) => line.includes('a verify worker stopped')); i++) await burst()
    await until('the restart', restarted)
    assert.ok(lines.some((line) => /a verify worker stopped unexpectedly \(exit code 1: failpoint verify\.worker/.test(line)))
    for (let i = 0; i < 3; i++) await burst()
    assert.is(lines.filter((line) => line.includes('a verify worker stopped unexpectedly')).length, 1, 'the replacement does not die')
    assert.equal(fatal, [])
  } finally {
    await node.stop()
  }
})

test('the state-hash worker that dies is logged and restarted; blocks commit meanwhile and after', async () => {
  const { node, lines, fatal } = await nodeWith('state-hash.worker=throw')
  try {
    await transfer(node)
    await until('the restart', () => lines.some((line) => line.includes('the state-hash worker restarted')))
    assert.ok(lines.some((line) => line.includes('the state-hash worker stopped unexpectedly (exit code 1: failpoint state-hash.worker')))
    const before = Number(await ok<string>(node.url, 'block_getChainHeight'))
    await transfer(node)
    await transfer(node)
    assert.is(Number(await ok<string>(node.url, 'block_getChainHeight')), before + 2)
    assert.equal(fatal, [])
  } finally {
    await node.stop()
  }
})

test('a compiler worker that dies fails the compile it held; the next compile starts a new one', async () => {
  // no worker threads but the compiler's: they start from this thread, with this thread's environment
  const { node, lines, fatal } = await nodeWith('', 0)
  const source = 'pragma solidity ^0.8.0; contract A { function f() public pure returns (uint) { return 1; } }'
  try {
    // the compiler worker starts on the first compile
    process.env.KEEL_FAILPOINTS = 'solc.worker=throw'
    const first = (await post(node.url, envelope('contract_compileContract', [source]))).body as { code: number; message: string }
    delete process.env.KEEL_FAILPOINTS
    assert.is(first.code, -32000)
    assert.match(first.message, /stopped while compiling; send the source again/)
    const second = await ok<{ types: string[] }>(node.url, 'contract_compileContract', [source])
    assert.equal(second.types, ['A'])
    await until('the log line', () => lines.some((line) => /solc \S+ worker stopped unexpectedly \(exit code 1\)/.test(line)))
    assert.equal(fatal, [])
  } finally {
    delete process.env.KEEL_FAILPOINTS
    await node.stop()
  }
})

test('a request thread that dies stops the node: the process exits 70, logging why, and the data directory can be opened again', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-thread-fault-'))
  const built = process.env.KEEL_NODE_BUILD ? join(process.env.KEEL_NODE_BUILD, 'src', 'cli.js') : undefined
  const entry = built !== undefined && existsSync(built) ? built : 'bin/keel.mjs'
  const child = spawn(process.execPath, [entry, 'start', '--port', '0', '--data-dir', dataDir], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KEEL_FAILPOINTS: 'front.thread=throw' },
  })
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk
  })
  try {
    await until('the listening line', () => /JSON-RPC listening on http:\/\/\S+/.test(output), 90_000)
    const url = (output.match(/JSON-RPC listening on (http:\/\/\S+)/) as RegExpMatchArray)[1]
    // the request that reaches the thread kills it; its own answer may or may not have left
    await post(url, envelope('block_getChainHeight', [])).catch(() => undefined)
    assert.is(await exited, 70, output)
    assert.match(output, /request thread rpc-1 stopped unexpectedly \(exit code 1\): the node stops and exits with code 70/)
    assert.match(output, /stopped/)
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
  }
  // the lock was given up: a node starts on the same directory
  const again = await startTestNode({ node: { dataDir } })
  await again.stop()
})

test.run()
