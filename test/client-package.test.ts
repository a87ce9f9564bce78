/**
 * The client package as a user gets it: `npm pack` of the keel-client workspace (its prepack builds
 * dist/ with tsc), the tarball installed into an empty folder outside the repository (npm's cache
 * first, the registry only for what the cache lacks), then, from that folder, plain `node` (no tsx)
 * scripts doing a transfer and a contract deploy and call against a real node, and `tsc --noEmit`
 * of a TypeScript consumer against the installed declarations. The scripts are in
 * test/fixtures/client-package/.
 */
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../src/node.ts'
import { startTestNode } from './helpers/node.ts'

const repoRoot = join(import.meta.dirname, '..')
const fixtures = join(import.meta.dirname, 'fixtures', 'client-package')
const run = promisify(execFile)

/** The environment without what `npm test` sets for its scripts (npm_config_*, npm_package_*), so the child npm runs as a user's would. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')))

async function exec(file: string, args: string[], cwd: string, timeout = 180_000): Promise<string> {
  try {
    const { stdout } = await run(file, args, { cwd, env: cleanEnv, timeout, maxBuffer: 16 * 1024 * 1024 })
    return stdout
  } catch (error) {
    const failed = error as Error & { stdout?: string; stderr?: string }
    throw new Error(`${file} ${args.join(' ')} failed in ${cwd}: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`)
  }
}

let node: KeelNode
let keyFile: string
let workDir: string
let consumerDir: string

test.before(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'keel-client-package-'))
  consumerDir = join(workDir, 'consumer')
  const [started] = await Promise.all([
    startTestNode(),
    exec('npm', ['pack', '--workspace', 'sdk', '--pack-destination', workDir], repoRoot),
  ])
  node = started
  keyFile = join(node.config.node.dataDir, node.config.node.namespace, 'genesis-account.json')
})

test.after(async () => {
  await node?.stop()
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true })
})

test('npm pack gives a tarball of the built package: dist/ with declarations, no sources', async () => {
  const tarballs = readdirSync(workDir).filter((name) => name.endsWith('.tgz'))
  assert.equal(tarballs, ['keel-client-0.1.0.tgz'])
  const listing = (await exec('tar', ['-tzf', join(workDir, tarballs[0])], workDir)).trim().split('\n')
  for (const file of ['package/package.json', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/generated/types.d.ts']) {
    assert.ok(listing.includes(file), `${file} is not in the tarball`)
  }
  assert.not.ok(
    listing.some((file) => file.startsWith('package/src/') || file.includes('.test.')),
    'sources or tests in the tarball',
  )
})

test('the tarball installs into an empty folder, with its dependencies and nothing of the repository', async () => {
  const types = JSON.parse(readFileSync(join(repoRoot, 'node_modules', '@types', 'node', 'package.json'), 'utf8')) as { version: string }
  mkdirSync(consumerDir)
  writeFileSync(join(consumerDir, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' })}\n`)
  await exec(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(workDir, 'keel-client-0.1.0.tgz'), `@types/node@${types.version}`],
    consumerDir,
  )
  for (const name of ['transfer.mjs', 'contract.mjs', 'consumer.ts', 'tsconfig.json'])
    copyFileSync(join(fixtures, name), join(consumerDir, name))
  const installed = readdirSync(join(consumerDir, 'node_modules'))
  assert.ok(installed.includes('keel-client'))
  assert.not.ok(installed.includes('keel'), 'the node itself was installed')
})

test('plain node: a secp256k1 transfer to a new SM2 account, which pays on; receipts awaited, balances over WebSocket', async () => {
  const output = JSON.parse(await exec(process.execPath, ['transfer.mjs', node.url, keyFile], consumerDir, 60_000)) as {
    funded: string
    sent: string
    sm2: string
    sentFrom: string
    balances: { sm2: string; to: string }
  }
  assert.match(output.funded, /^0x[0-9a-f]{64}$/)
  assert.match(output.sent, /^0x[0-9a-f]{64}$/)
  assert.is(output.sentFrom, output.sm2, 'the SM2-signed transaction is recorded as sent by the SM2 address')
  assert.equal(output.balances, { sm2: '750', to: '250' })
})

test('plain node: a contract compiled by the node, deployed with a constructor argument, called and read back through the ABI helpers', async () => {
  const output = JSON.parse(await exec(process.execPath, ['contract.mjs', node.url, keyFile], consumerDir, 120_000)) as Record<
    string,
    string
  >
  const genesis = JSON.parse(readFileSync(keyFile, 'utf8')) as { address: string }
  assert.match(output.counter, /^0x[0-9a-f]{40}$/)
  assert.equal(
    { event: output.event, by: output.by.toLowerCase(), amount: output.amount, note: output.note, total: output.total },
    { event: 'Added', by: genesis.address.toLowerCase(), amount: '2', note: 'two more', total: '42' },
  )
})

test('tsc --noEmit of a TypeScript consumer against the installed declarations (and the mistakes they must catch)', async () => {
  await exec(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], consumerDir)
})

test.run()
