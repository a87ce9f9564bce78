/**
 * Hardhat, unchanged (issue 28): the project in test/fixtures/hardhat runs its script against a
 * running Keel node with `--network keel`; the contract is precompiled by the project's solc-js, so
 * Hardhat downloads no compiler (`--no-compile`).
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Wallet } from 'ethers'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import { ethOk, tokenArtifact } from '../helpers/eth.ts'
import { startTestNode } from '../helpers/node.ts'

const project = fileURLToPath(new URL('../fixtures/hardhat/', import.meta.url))
const key = `0x${'9a'.repeat(32)}`
let node: KeelNode

test.before(async () => {
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5 },
      genesis: { accounts: [{ address: new Wallet(key).address.toLowerCase(), balance: (10n ** 18n).toString() }] },
    },
    { verifyWorkers: 1 },
  )
})
test.after(async () => {
  await node?.stop()
})

test('a Hardhat script deploys and calls a contract with --network keel', async () => {
  const artifacts = mkdtempSync(join(tmpdir(), 'keel-hardhat-'))
  writeFileSync(join(artifacts, 'Token.json'), JSON.stringify(tokenArtifact()))
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      join(project, '..', '..', '..', 'node_modules', 'hardhat', 'internal', 'cli', 'bootstrap.js'),
      'run',
      '--network',
      'keel',
      '--no-compile',
      'scripts/deploy.cjs',
    ],
    {
      cwd: project,
      env: {
        ...process.env,
        KEEL_URL: node.url,
        KEEL_KEY: key,
        KEEL_ARTIFACT_DIR: artifacts,
        HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
        // Hardhat's cache and its compiler list would go under the home directory
        HOME: artifacts,
      },
      timeout: 120_000,
    },
  )
  const printed = JSON.parse(stdout.trim().split('\n').pop() as string) as { address: string; balance: string; chainId: string }
  assert.is(printed.chainId, '1337')
  assert.is(printed.balance, '21')
  // the node agrees: the contract's code is there and the Transfer logs are in the chain
  assert.ok((await ethOk<string>(node.url, 'eth_getCode', [printed.address, 'latest'])).length > 2)
  const logs = await ethOk<unknown[]>(node.url, 'eth_getLogs', [{ fromBlock: 'earliest', address: printed.address }])
  assert.is(logs.length, 2, 'the mint and the transfer')
})

test.run()
