/** `npm start`'s entry point as a user runs it: a child process, a config file, flags, signals. */
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { envelope, post } from './helpers/node.ts'

function startCli(args: string[]): Promise<{ url: string; stop(signal?: NodeJS.Signals): Promise<number | null>; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 20 s:\n${output}`)), 20_000)
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      const match = output.match(/JSON-RPC listening on (http:\/\/\S+)/)
      if (match !== null) {
        clearTimeout(timer)
        resolve({
          url: match[1],
          output: () => output,
          stop: (signal = 'SIGTERM') =>
            new Promise((done) => {
              child.once('exit', (code) => done(code))
              child.kill(signal)
            }),
        })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${code}:\n${output}`))
    })
  })
}

test('starts on a config file with flags on top, answers, and stops cleanly on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-cli-'))
  const config = join(dir, 'keel.toml')
  writeFileSync(config, `[node]\nhostname = "vp9"\ndataDir = "${join(dir, 'data')}"\n[jsonrpc]\nport = 1\n`)
  const node = await startCli(['--config', config, '--port', '0'])
  const reply = (await post(node.url, envelope('tx_getTransactionsVersion', []))).body as { result: string }
  assert.is(reply.result, '4.1')
  assert.is(await node.stop(), 0)
  assert.match(node.output(), /SIGTERM received, stopping/)
})

test('a bad config is refused at start with a message that names the key', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-cli-'))
  const config = join(dir, 'keel.toml')
  writeFileSync(config, '[jsonrpc]\nprot = 8081\n')
  const error = await startCli(['--config', config]).then(
    () => undefined,
    (e: Error) => e,
  )
  assert.ok(error)
  assert.match(error.message, /unknown key jsonrpc\.prot/)
})

test.run()
