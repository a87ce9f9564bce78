/** The `keel` command as a user runs it (`npm start` is `keel start`): a child process, a config file, flags, signals, help. */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { envelope, post } from './helpers/node.ts'

const repoRoot = join(import.meta.dirname, '..')

/**
 * How the command runs. `bin/keel.mjs` is what a user runs: in a checkout without a current dist/
 * (CI's clean clone) it compiles src/ through tsx, some seconds of CPU per start, so one case runs
 * it that way. The others run src/cli.ts from the test run's build of the sources (KEEL_NODE_BUILD,
 * scripts/run-tests.ts; the same module, compiled once), or through bin/keel.mjs when there is none.
 * `keel bench` always runs bench/run.ts from the checkout through tsx, so it goes through bin/keel.mjs.
 */
type Entry = 'bin' | 'built'
const builtCli = process.env.KEEL_NODE_BUILD ? join(process.env.KEEL_NODE_BUILD, 'src', 'cli.js') : undefined
const entryArgs = (entry: Entry): string[] => [
  entry === 'built' && builtCli !== undefined && existsSync(builtCli) ? builtCli : 'bin/keel.mjs',
]

/** `keel <argv>` to its end: exit code and output */
function keel(argv: string[], entry: Entry = 'built'): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [...entryArgs(entry), ...argv], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

function startCli(
  args: string[],
  entry: Entry = 'built',
): Promise<{ url: string; stop(signal?: NodeJS.Signals): Promise<number | null>; output: () => string }> {
  const child = spawn(process.execPath, [...entryArgs(entry), 'start', ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  return new Promise((resolve, reject) => {
    // generous: a start on a loaded 2-core machine can take many seconds; a node that never listens is killed
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`no listening line within 90 s:\n${output}`))
    }, 90_000)
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

test('bin/keel.mjs (through tsx without a current dist/) starts on a config file with flags on top, answers, and stops cleanly on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-cli-'))
  const config = join(dir, 'keel.toml')
  writeFileSync(config, `[node]\nhostname = "vp9"\ndataDir = "${join(dir, 'data')}"\n[jsonrpc]\nport = 1\n`)
  const node = await startCli(['--config', config, '--port', '0'], 'bin')
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

test('every command answers --help with its usage, and an unknown flag or command with the usage and exit 2', () => {
  const top = keel(['--help'])
  assert.is(top.status, 0)
  assert.match(top.stdout, /^usage: keel <command> \[options\]/)
  const helps: Record<string, string> = {}
  for (const command of ['start', 'network', 'operator', 'bench']) {
    const help = keel([command, '--help'], command === 'bench' ? 'bin' : 'built')
    assert.is(help.status, 0, `keel ${command} --help: ${help.stderr}`)
    assert.match(help.stdout, new RegExp(`^usage: keel ${command} `))
    assert.match(help.stdout, /--help +print this help/)
    helps[command] = help.stdout
  }
  assert.match(helps.start, /--data-dir <dir>/)
  assert.match(helps.network, /add-vp/)
  assert.match(helps.operator, /node_deleteVP +Disconnect \(remove\) a VP node/)
  assert.match(helps.bench, /--workloads <list> +which workloads, comma-separated \(default: transfers,erc20,reads,logs\)/)
  for (const [argv, option] of [
    [['start', '--prot', '8081'], '--prot'],
    [['network', 'up', '--vps', '4'], '--vps'],
    [['bench', '--nope'], '--nope'],
  ] as const) {
    const wrong = keel([...argv], argv[0] === 'bench' ? 'bin' : 'built')
    assert.is(wrong.status, 2, `keel ${argv.join(' ')}`)
    assert.match(wrong.stderr, new RegExp(`^keel ${argv[0]}: unknown option '${option}'`))
    assert.match(wrong.stderr, new RegExp(`usage: keel ${argv[0]} `))
  }
  const badPort = keel(['start', '--port', 'eighty'])
  assert.is(badPort.status, 2)
  assert.match(badPort.stderr, /--port takes a whole number/)
  const unknown = keel(['strat'])
  assert.is(unknown.status, 2)
  assert.match(unknown.stderr, /^keel: unknown command "strat"/)
})

test('--log-format json writes one JSON object per line; the banner ends with the next command, real port and key file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-cli-'))
  const node = await startCli(['--port', '0', '--data-dir', join(dir, 'data'), '--log-format', 'json'])
  const port = new URL(node.url).port
  // keel operator signs with the generated account (the admin of a fresh node): the node answers the call itself
  const keyFile = join(dir, 'data', 'global', 'genesis-account.json')
  const hash = 'ab'.repeat(32)
  const signed = keel(['operator', 'node_deleteVP', `[{"nodehash":"${hash}"}]`, '--url', node.url, '--key-file', keyFile])
  assert.is(signed.status, 1, signed.stderr)
  assert.match(JSON.parse(signed.stdout).message, /^no VP with hash abab.* it runs alone/)
  const stranger = keel(['operator', 'node_deleteVP', `[{"nodehash":"${hash}"}]`, '--url', node.url, '--key', `0x${'11'.repeat(32)}`])
  assert.is(JSON.parse(stranger.stdout).code, -32008)
  const printed = keel(['operator', 'archive_snapshot', '[0]', '--key-file', keyFile, '--print'])
  assert.is(printed.status, 0, printed.stderr)
  assert.match(
    printed.stdout,
    /^# signed by 0x[0-9a-f]{40}; .*\ncurl -s .* -H 'operator-timestamp: \d+' -H 'operator-signature: 00[0-9a-f]{130}' -d '\{"jsonrpc/s,
  )
  assert.is(await node.stop(), 0)
  const lines = node
    .output()
    .split('\n')
    .filter((line) => line !== '')
  const records = lines.map((line) => JSON.parse(line) as { time: string; level: string; module: string; msg: string })
  for (const record of records) {
    assert.ok(!Number.isNaN(Date.parse(record.time)), record.time)
    assert.ok(['debug', 'info', 'warn', 'error'].includes(record.level))
    assert.match(record.module, /^keel/)
  }
  const next = records.find((record) => record.msg.startsWith('next, in another terminal:'))
  assert.ok(next, 'the banner names the next command')
  assert.ok(next.msg.includes(`--url http://127.0.0.1:${port}`), next.msg)
  assert.ok(next.msg.includes(`--key-file ${join(dir, 'data', 'global', 'genesis-account.json')}`), next.msg)
})

test.run()
