/**
 * The README's examples as a new user runs them: against a node at a non-default port and data
 * directory, with --url and --key-file (or KEEL_URL), and one line saying what to do when the key
 * file is missing or no node answers.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { freePorts } from '../src/devnet/network.ts'
import type { KeelNode } from '../src/node.ts'
import { post, startTestNode } from './helpers/node.ts'

const repoRoot = join(import.meta.dirname, '..')
const run = promisify(execFile)

async function example(
  file: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', join('examples', file), ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      timeout: 60_000,
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

let node: KeelNode
let keyFile: string

test.before(async () => {
  node = await startTestNode()
  keyFile = join(node.config.node.dataDir, node.config.node.namespace, 'genesis-account.json')
})
test.after(() => node.stop())

test('sign-transfer --url --key-file submits a transfer and prints its receipt', async () => {
  const to = '0x5656565656565656565656565656565656565656'
  const result = await example('sign-transfer.ts', ['--url', node.url, '--key-file', keyFile, '--to', to, '--value', '7'])
  assert.is(result.code, 0, result.stderr)
  const [hashLine, receipt] = result.stdout.trim().split('\n')
  assert.match(hashLine, /^transaction 0x[0-9a-f]{64}$/)
  assert.is((JSON.parse(receipt) as { txHash: string }).txHash, hashLine.slice('transaction '.length))
})

test('client.ts reads KEEL_URL; sign-transfer --print and sdk-transfer read KEEL_KEY_FILE (README: the walk on another port and data directory)', async () => {
  const result = await example('client.ts', [], { KEEL_URL: node.url })
  assert.is(result.code, 0, result.stderr)
  assert.match(result.stdout, /transaction format version 4\.1/)
  const env = { KEEL_URL: node.url, KEEL_KEY_FILE: keyFile }
  const body = await example('sign-transfer.ts', ['--print', '--value', '3'], env)
  assert.is(body.code, 0, body.stderr)
  const sent = (await post(node.url, body.stdout.trim())).body as { code: number; result: string }
  assert.is(sent.code, 0, JSON.stringify(sent))
  assert.match(sent.result, /^0x[0-9a-f]{64}$/)
  const sdk = await example('sdk-transfer.ts', [], env)
  assert.is(sdk.code, 0, sdk.stderr)
  assert.match(sdk.stdout, /receiver balance/)
})

test('every example and script answers --help with what it does and its options', async () => {
  const examples: [string, RegExp][] = [
    ['sign-transfer.ts', /--print\s+print the signed tx_sendTransaction request body/],
    ['client.ts', /--url <value>/],
    ['sdk-transfer.ts', /official Hyperchain SDK/],
    ['sm2-transfer.ts', /SM2/],
    ['contract-call.ts', /compiles a Solidity contract/],
    ['tcert.ts', /TCert/],
    ['subscribe.ts', /--blocks <value>\s+how many new blocks/],
    ['jvm/run.ts', /--contract <value>\s+counter \| kv.*\n\s+--encoding <value>\s+hvm/],
  ]
  for (const [file, says] of examples) {
    const help = await example(file, ['--help'])
    assert.is(help.code, 0, `${file}: ${help.stderr}`)
    assert.match(help.stdout, /--key-file <value>/, file)
    assert.match(help.stdout, says, file)
  }
  for (const script of [['bench/solo-batch.ts'], ['bench/floors.ts'], ['scripts/run-tests.ts'], ['scripts/build-jvm.ts']]) {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', ...script, '--help'], { cwd: repoRoot, timeout: 60_000 })
    assert.match(stdout, /^usage: /, script[0])
  }
  const { stdout } = await run(process.execPath, ['scripts/build.mjs', '--help'], { cwd: repoRoot, timeout: 60_000 })
  assert.match(stdout, /^usage: node scripts\/build\.mjs/)
})

test('jvm/run.ts compiles, deploys and calls the Java examples in both encodings (README "Java contracts")', async () => {
  const counter = await example('jvm/run.ts', ['--url', node.url, '--key-file', keyFile, '--contract', 'counter'])
  assert.is(counter.code, 0, counter.stderr)
  assert.match(
    counter.stdout,
    /^compiled demo\.Counter: demo\/Counter\ndeploy payload: \d+ bytes \(HVM class stream\)\ndeployed at 0x[0-9a-f]{40} /,
  )
  assert.match(counter.stdout, /increment\("visits"\) → "1" \(\d+ steps\)\nincrement\("visits"\) → "2"/)
  assert.match(counter.stdout, /value\("visits"\) → "42"/)
  const kv = await example('jvm/run.ts', ['--url', node.url, '--key-file', keyFile, '--contract', 'kv', '--encoding', '1x'])
  assert.is(kv.code, 0, kv.stderr)
  assert.match(kv.stdout, /1\.x InvokeArgs with a tar\.gz/)
  assert.match(kv.stdout, /get\("colour"\) → "blue"/)
  assert.match(kv.stdout, /log Set: topic 0x[0-9a-f]{64} data "blue"\nlog Set: topic 0x[0-9a-f]{64} data "round"/)
})

test("the client package's other examples: an SM2 account, a contract call, TCert headers, a block pushed over WebSocket", async () => {
  const sm2 = await example('sm2-transfer.ts', ['--url', node.url, '--key-file', keyFile])
  assert.is(sm2.code, 0, sm2.stderr)
  assert.match(sm2.stdout, /^SM2 account 0x[0-9a-f]{40} sent 250 in 0x[0-9a-f]{64}; it keeps 750\n$/)
  const contract = await example('contract-call.ts', ['--url', node.url, '--key-file', keyFile])
  assert.is(contract.code, 0, contract.stderr)
  assert.match(
    contract.stdout,
    /^deployed Counter at 0x[0-9a-f]{40}\nevent Added: by 0x[0-9a-fA-F]{40}, amount 2, note "two more"\nget\(\) → 42\n$/,
  )
  const tcert = await example('tcert.ts', ['--url', node.url])
  assert.is(tcert.code, 0, tcert.stderr)
  assert.match(tcert.stdout, /over HTTP with a TCert: transaction format version 4\.1\nover WebSocket with a TCert: node \S+…/)
  // the subscriber prints the next block, which the transfer sent once it has subscribed makes
  const subscribed = example('subscribe.ts', ['--url', node.url, '--blocks', '1'])
  const started = Date.now()
  let printed: Awaited<ReturnType<typeof example>> | undefined
  while (printed === undefined && Date.now() - started < 30_000) {
    const sent = await example('sign-transfer.ts', ['--url', node.url, '--key-file', keyFile, '--value', '1'])
    assert.is(sent.code, 0, sent.stderr)
    printed = await Promise.race([subscribed, new Promise<undefined>((done) => setTimeout(done, 2_000, undefined))])
  }
  assert.ok(printed !== undefined, 'subscribe.ts printed no block')
  assert.is(printed.code, 0, printed.stderr)
  assert.match(
    printed.stdout,
    /^subscribed: \S+\nwaiting for 1 new block\(s\): a block is written when a transaction commits, e\.g\. from another terminal `npx tsx examples\/sign-transfer\.ts --url \S+` \(Ctrl-C to leave\)\n\{"jsonrpc":"2\.0","namespace":"global","method":"sub_subscription"/,
  )
})

test('governance.ts (README "Governance"): --help, a second admin, a role voted and granted, a named contract, an abandoned account', async () => {
  const help = await example('governance.ts', ['--help'])
  assert.is(help.code, 0, help.stderr)
  assert.match(help.stdout, /^usage: npx tsx examples\/governance\.ts <command>/)
  const dir = node.config.node.dataDir
  const g = (args: string[], key = keyFile) => example('governance.ts', [...args, '--url', node.url, '--key-file', key])
  const bob = join(dir, 'bob.json')
  const carol = join(dir, 'carol.json')
  for (const out of [bob, carol]) assert.is((await g(['new-account', '--out', out])).code, 0)
  const address = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { address: string }).address
  const granted = await g(['grant', 'admin', address(bob)])
  assert.is(granted.code, 0, granted.stderr)
  assert.match(granted.stdout, /^proposal (\d+) \(PERMISSION\): WAITING_EXE, 1 of 1 votes\n[\s\S]*executed\n$/)
  const role = await g(['grant', 'auditor', address(carol)])
  const id = /^proposal (\d+) \(PERMISSION\): VOTING, 1 of 2 votes/.exec(role.stdout)?.[1]
  assert.ok(id, role.stdout + role.stderr)
  assert.match((await g(['vote', id, '--key-file', bob], bob)).stdout, new RegExp(`^proposal ${id}: WAITING_EXE, 2 of 2 votes`))
  assert.is((await g(['execute', id])).code, 0)
  assert.match((await g(['roles', address(carol)])).stdout, /"auditor"/)
  const deployed = await g(['deploy'])
  const contract = /^contract (0x[0-9a-f]{40})$/m.exec(deployed.stdout)?.[1]
  assert.ok(contract, deployed.stdout + deployed.stderr)
  const named = /^proposal (\d+) \(CNS\)/.exec((await g(['name', contract, 'Counter'])).stdout)?.[1]
  assert.ok(named)
  await g(['vote', named], bob)
  assert.is((await g(['execute', named])).code, 0)
  assert.match((await g(['names'])).stdout, new RegExp(`"${contract}": "Counter"`))
  assert.is((await g(['abandon', address(carol)], carol)).code, 0)
  assert.is((await g(['status', address(carol)])).stdout, 'abandoned\n')
})

test('a missing key file or a node that does not answer: one line saying what to do, exit 1', async () => {
  const noKey = await example('sign-transfer.ts', ['--url', node.url, '--key-file', join(repoRoot, 'no-such-key.json')])
  assert.is(noKey.code, 1)
  assert.match(
    noKey.stderr,
    /^no key file at .*no-such-key\.json: start a node with `npm start` \(it writes one and its banner names the file\), then pass --key-file <that file> or set KEEL_KEY_FILE/,
  )
  assert.is(noKey.stderr.trim().split('\n').length, 1)
  // --print: nothing on stdout, so `body=$(… --print) && curl …` (README) never sends an empty body
  const printed = await example('sign-transfer.ts', ['--print', '--key-file', join(repoRoot, 'no-such-key.json')])
  assert.is(printed.code, 1)
  assert.is(printed.stdout, '')
  const [closedPort] = await freePorts(1)
  const refusedLine = `no Keel node answers at http://127.0.0.1:${closedPort} (ECONNREFUSED): start one with \`npm start\`, or pass --url`
  for (const file of ['sign-transfer.ts', 'client.ts', 'sdk-transfer.ts', 'jvm/run.ts', 'governance.ts']) {
    const refused = await example(file, ['--url', `http://127.0.0.1:${closedPort}`, '--key-file', keyFile])
    assert.is(refused.code, 1, file)
    assert.ok(refused.stderr.startsWith(refusedLine), `${file}: ${refused.stderr}`)
    assert.is(refused.stderr.trim().split('\n').length, 1, `${file}: ${refused.stderr}`)
  }
})

test.run()
