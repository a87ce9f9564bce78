/**
 * Compiles one of the example Java contracts with javac, builds its payload, deploys it to a
 * running node (type JVM) and calls it, printing each step. README "Java contracts":
 *
 *   npx tsx examples/jvm/run.ts --contract counter            # HVM encoding (FEFFFBCD… / FEFFFBCE…)
 *   npx tsx examples/jvm/run.ts --contract kv --encoding 1x   # 1.x: tar.gz in InvokeArgs, InvokeArgs calls
 *
 * Like every example it takes --url (or KEEL_URL) and --key-file (default: the genesis account
 * `npm start` generated); it needs a JDK 17 (javac) to compile the contract.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  accountFromPrivateKey,
  createClient,
  type JavaContract,
  type JvmArg,
  jvmCallPayload,
  jvmDeployPayload,
  jvmInvokeArgsPayload,
  jvmRetText,
  jvmTarGzDeployPayload,
  jvmTopic,
  type Receipt,
  readClassDirectory,
  signDeploy,
  signInvoke,
  waitForReceipt,
} from 'keel-client'
import { exampleOptions, fail } from '../options.ts'

const options = exampleOptions(
  {
    contract: { type: 'string', default: 'counter', description: 'counter | kv: the Java contract under examples/jvm/' },
    encoding: { type: 'string', default: 'hvm', description: 'hvm (FEFFFBCD… payloads) | 1x (tar.gz deploy, InvokeArgs calls)' },
  },
  'compiles an example Java contract with javac (a JDK 17), deploys it to the node as a JVM contract and calls it',
)
const values = options.values as { contract: string; encoding: string }
const MAINS: Record<string, string> = { counter: 'demo.Counter', kv: 'demo.KeyValue' }
const main = MAINS[values.contract]
if (main === undefined) fail(`--contract is counter or kv, not ${values.contract}`)
if (values.encoding !== 'hvm' && values.encoding !== '1x') fail(`--encoding is hvm or 1x, not ${values.encoding}`)
const account = accountFromPrivateKey(options.privateKey())
const client = createClient({ url: options.url })
// a first question, so that a node that does not answer is said before javac runs
await client.tx_getTransactionsVersion()

/** javac against the contract API (build/jvm/keel-executor.jar, which `npm run build:jvm` builds when missing or stale). */
function compile(): JavaContract {
  const javac = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'javac') : 'javac'
  try {
    execFileSync(javac, ['-version'], { stdio: 'ignore' })
  } catch {
    fail(`${javac} not found: install a JDK 17 (Debian: apt-get install -y openjdk-17-jdk-headless), or set JAVA_HOME`)
  }
  const repo = join(import.meta.dirname, '..', '..')
  const api = execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'scripts', 'build-jvm.ts')], { cwd: repo, encoding: 'utf8' })
    .trim()
    .split(' ')[0]
  const sources: string[] = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name))
      else if (entry.name.endsWith('.java')) sources.push(join(dir, entry.name))
    }
  }
  walk(join(import.meta.dirname, values.contract))
  const out = mkdtempSync(join(tmpdir(), 'keel-example-'))
  try {
    execFileSync(javac, ['--release', '17', '-cp', api, '-d', out, ...sources], { stdio: 'inherit' })
    return readClassDirectory(out, main)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

async function call(contract: string, method: string, ...args: string[]): Promise<Receipt> {
  const payload = values.encoding === 'hvm' ? jvmCallPayload(method, ...(args as JvmArg[])) : jvmInvokeArgsPayload(method, ...args)
  const result = await waitForReceipt(client, await client.contract_invokeContract(signInvoke(account, contract, payload, { type: 'JVM' })))
  console.log(
    `${method}(${args.map((a) => JSON.stringify(a)).join(', ')}) → ${JSON.stringify(jvmRetText(result.ret))} (${result.gasUsed} steps)`,
  )
  return result
}

const contract = compile()
console.log(`compiled ${main}: ${[...contract.classes.keys()].join(', ')}`)
const payload = values.encoding === 'hvm' ? jvmDeployPayload(contract) : jvmTarGzDeployPayload(contract)
console.log(
  `deploy payload: ${(payload.length - 2) / 2} bytes (${values.encoding === 'hvm' ? 'HVM class stream' : '1.x InvokeArgs with a tar.gz'})`,
)
const deployed = await waitForReceipt(client, await client.contract_deployContract(signDeploy(account, payload, { type: 'JVM' })))
const at = deployed.contractAddress
console.log(`deployed at ${at} (${deployed.gasUsed} steps); status ${await client.contract_getStatus(at)}`)

if (values.contract === 'counter') {
  await call(at, 'increment', 'visits')
  await call(at, 'increment', 'visits')
  await call(at, 'add', 'visits', '40')
  await call(at, 'value', 'visits')
} else {
  const set = await call(at, 'set', 'colour', 'blue')
  await call(at, 'set', 'shape', 'round')
  await call(at, 'get', 'colour')
  await call(at, 'count')
  const { blockNumber } = set.log[0]
  const logs = await client.sub_getLogs({ fromBlock: blockNumber, addresses: [at], topics: [jvmTopic('Set')] })
  for (const log of logs) console.log(`log Set: topic ${log.topics[1]} data ${JSON.stringify(Buffer.from(log.data, 'hex').toString())}`)
}
