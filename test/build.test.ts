/**
 * The built package (README "Build and run in production"): `scripts/build.mjs` compiles the node
 * into a temporary dist/, and that build runs under plain `node` as after `npm ci --omit=dev`: its
 * node_modules holds every installed package except the dev dependencies (tsx and typescript among
 * them) and esbuild, so no TypeScript runtime is anywhere it could load one. It commits a signed
 * transfer, serves the playground, and runs work in worker threads started from the built .js
 * files (request threads, signature verification, solc).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { commit, ok, SUBMIT } from './helpers/chain.ts'
import { rawRequest } from './helpers/node.ts'
import { wallet } from './helpers/wallet.ts'

const repoRoot = join(import.meta.dirname, '..')
const { devDependencies } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
/** what a production install leaves out, and tsx's compiler */
const LEFT_OUT = new Set([...Object.keys(devDependencies), 'esbuild', '@esbuild', '.bin'])

/** `to`/node_modules: links to the checkout's packages but those LEFT_OUT (a scope directory gets its packages one by one) */
function productionModules(to: string, scope = ''): void {
  mkdirSync(join(to, 'node_modules', scope), { recursive: true })
  for (const name of readdirSync(join(repoRoot, 'node_modules', scope))) {
    const id = scope === '' ? name : `${scope}/${name}`
    if (LEFT_OUT.has(id)) continue
    if (scope === '' && name.startsWith('@')) productionModules(to, name)
    else symlinkSync(join(repoRoot, 'node_modules', id), join(to, 'node_modules', id))
  }
}

const dir = mkdtempSync(join(tmpdir(), 'keel-build-'))
const outDir = join(dir, 'dist')
const dataDir = join(dir, 'data')
let child: ChildProcess
let url: string
let output = ''

/** no loader inherited from this test's process (tsx), no coverage of tsc or of the built copy */
function withoutLoaders(): NodeJS.ProcessEnv {
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  delete env.NODE_V8_COVERAGE
  return env
}

function startBuilt(): Promise<string> {
  child = spawn(process.execPath, [join(outDir, 'src', 'cli.js'), 'start', '--port', '0', '--data-dir', dataDir], {
    cwd: dir,
    env: withoutLoaders(),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the built node printed no listening line within 60 s:\n${output}`))
    }, 60_000)
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      const match = output.match(/JSON-RPC listening on (http:\/\/\S+)/)
      if (match === null) return
      clearTimeout(timer)
      resolve(match[1])
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the built node exited with ${code}:\n${output}`))
    })
  })
}

test.before(async () => {
  // --no-check: `npm test` type-checks the same sources (npm run typecheck); emitting alone is quick
  const built = spawnSync(process.execPath, ['scripts/build.mjs', '--out-dir', outDir, '--no-check'], {
    cwd: repoRoot,
    env: withoutLoaders(),
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.is(built.status, 0, built.stderr)
  productionModules(dir)
  url = await startBuilt()
})

test.after(async () => {
  if (child !== undefined && child.exitCode === null) {
    child.kill('SIGKILL')
    await new Promise((done) => child.once('exit', done))
  }
  rmSync(dir, { recursive: true, force: true })
})

test('the build holds the compiled modules and what they read by path, and knows when it is current', async () => {
  for (const file of ['src/cli.js', 'src/main.js', 'src/crypto/verify-worker.js', 'src/compile/solc-worker.js', 'generated/methods.js']) {
    assert.ok(existsSync(join(outDir, file)), `dist/${file}`)
  }
  assert.equal(
    JSON.parse(readFileSync(join(outDir, 'openrpc.json'), 'utf8')),
    JSON.parse(readFileSync(join(repoRoot, 'openrpc.json'), 'utf8')),
  )
  assert.is(JSON.parse(readFileSync(join(outDir, 'package.json'), 'utf8')).type, 'module')
  const { buildIsCurrent } = (await import(pathToFileURL(join(repoRoot, 'scripts', 'build.mjs')).href)) as {
    buildIsCurrent(outDir: string): boolean
  }
  assert.ok(buildIsCurrent(outDir), 'a fresh build is current')
  const stamp = join(outDir, '.build-stamp')
  utimesSync(stamp, new Date(0), new Date(0))
  assert.not.ok(buildIsCurrent(outDir), 'a build older than the sources is stale')
  const now = new Date()
  utimesSync(stamp, now, now)
})

test('the built node runs without a TypeScript runtime, serves requests from request threads and verifies signatures in workers', () => {
  assert.match(output, /JSON-RPC listening on .* 1 request thread\(s\)/)
  assert.match(output, /signatures verified by workers/)
  assert.not.match(output, /ERR_MODULE_NOT_FOUND|ERR_UNKNOWN_FILE_EXTENSION| (WARN|ERROR) \[/)
})

test('commits a signed transfer and answers its receipt', async () => {
  const key = JSON.parse(readFileSync(join(dataDir, 'global', 'genesis-account.json'), 'utf8')) as { privateKey: string }
  const to = '0x7878787878787878787878787878787878787878'
  const receipt = await commit(url, SUBMIT.transfer, wallet(key.privateKey).transfer(to, 9))
  assert.match(receipt.txHash, /^0x[0-9a-f]{64}$/)
  assert.is(receipt.txHash, receipt.hash)
  assert.is(await ok<string>(url, 'account_getBalance', [to]), '0x9')
})

test('serves the playground page, its bundled signing module and the OpenRPC document', async () => {
  const page = await rawRequest(url, undefined, { method: 'GET', path: '/playground' })
  assert.is(page.status, 200)
  assert.match(page.text, /^<!doctype html>/i)
  // the page signs with the client package's code, bundled by the build (no esbuild here)
  const script = await rawRequest(url, undefined, { method: 'GET', path: '/playground/keel-client.js' })
  assert.is(script.status, 200)
  assert.match(String(script.headers['content-type']), /^text\/javascript/)
  assert.match(script.text, /export\s*\{/)
  const document = await rawRequest(url, undefined, { method: 'GET', path: '/openrpc.json' })
  assert.is(document.status, 200)
  const served = (document.body as { methods: { name: string }[] }).methods.map((method) => method.name)
  assert.ok(served.includes('tx_sendTransaction') && served.includes('contract_compileContract'), served.join())
})

test('compiles Solidity in a solc worker thread started from the built file', async () => {
  const source = 'pragma solidity ^0.8.0; contract Built { function one() public pure returns (uint) { return 1; } }'
  const compiled = await ok<{ abi: string[]; bin: string[] }>(url, 'contract_compileContract', [source])
  assert.match(compiled.bin[0], /^0x6080/)
  assert.match(compiled.abi[0], /"name":"one"/)
})

test('stops cleanly on SIGTERM', async () => {
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  child.kill('SIGTERM')
  assert.is(await exited, 0)
})

test.run()
