/**
 * `keel init` (src/init.ts): the commented keel.toml it writes loads as the defaults but for the
 * port and data directory given, and a node started on it writes its genesis key where the file
 * and the start banner say.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { defaultConfig, readConfigFile, resolveConfig } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { startNode } from '../../src/node.ts'

const dir = mkdtempSync(join(tmpdir(), 'keel-init-'))
const file = join(dir, 'keel.toml')
const dataDir = join(dir, 'data-a')

test('keel init writes a commented file that loads as the defaults with its port and data directory', async () => {
  const { runInit } = await import('../../src/init.ts')
  await runInit(['--config', file, '--port', '19545', '--data-dir', dataDir])
  const text = readFileSync(file, 'utf8')
  assert.match(text, /^# keel\.toml, written by `keel init`/)
  assert.ok(text.includes(`#   ${join(dataDir, 'global', 'genesis-account.json')}`), 'the comment names the key file')
  const config = resolveConfig(readConfigFile(file))
  assert.equal(config, { ...defaultConfig, node: { ...defaultConfig.node, dataDir }, jsonrpc: { ...defaultConfig.jsonrpc, port: 19545 } })
})

test('a node started on it writes the genesis key where the file and the banner say', async () => {
  const lines: string[] = []
  const node = await startNode(resolveConfig(readConfigFile(file), { jsonrpc: { port: 0 } }), {
    log: createLogger({ level: 'info', write: (line) => lines.push(line) }),
  })
  try {
    const keyFile = join(dataDir, 'global', 'genesis-account.json')
    assert.ok(existsSync(keyFile))
    const saved = JSON.parse(readFileSync(keyFile, 'utf8')) as { address: string; privateKey: string }
    assert.is(saved.address, node.devAccount?.address)
    assert.ok(
      lines.some((line) => line.includes(`is kept in ${keyFile}`)),
      lines.join('\n'),
    )
  } finally {
    await node.stop()
  }
})

test.run()
