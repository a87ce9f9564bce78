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
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '../../sdk/index.ts'
import {
  type JavaContract,
  type JvmArg,
  jvmCallPayload,
  jvmDeployPayload,
  jvmInvokeArgsPayload,
  jvmRetText,
  jvmTarGzDeployPayload,
  jvmTopic,
  readClassDirectory,
} from '../../sdk/jvm.ts'
import { signStringFormatA } from '../../src/crypto/sign-string.ts'
import { addressFromPrivateKey, signSecp256k1 } from '../../src/crypto/signature.ts'
import { ensureExecutor, JdkMissingError, jdkTool } from '../../src/exec/jvm/build.ts'
import { exampleOptions, explainConnectionFailure, fail } from '../options.ts'

const options = exampleOptions({
  contract: { type: 'string', default: 'counter' },
  encoding: { type: 'string', default: 'hvm' },
})
const values = options.values as { contract: string; encoding: string }
const MAINS: Record<string, string> = { counter: 'demo.Counter', kv: 'demo.KeyValue' }
const main = MAINS[values.contract]
if (main === undefined) fail(`--contract is counter or kv, not ${values.contract}`)
if (values.encoding !== 'hvm' && values.encoding !== '1x') fail(`--encoding is hvm or 1x, not ${values.encoding}`)
const privateKey = options.privateKey()
const from = addressFromPrivateKey(privateKey)
const client = createClient({
  transport: {
    async request(body) {
      const response = await fetch(options.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).catch((error) =>
        explainConnectionFailure(options.url, error),
      )
      return response.text()
    },
  },
})

/** javac against the contract API (build/jvm/keel-executor.jar, built first when missing). */
async function compile(): Promise<JavaContract> {
  const api = await ensureExecutor()
  const sourceDir = join(import.meta.dirname, values.contract)
  const sources: string[] = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name))
      else if (entry.name.endsWith('.java')) sources.push(join(dir, entry.name))
    }
  }
  walk(sourceDir)
  const out = mkdtempSync(join(tmpdir(), 'keel-example-'))
  try {
    execFileSync(jdkTool('javac'), ['--release', '17', '-cp', api, '-d', out, ...sources], { stdio: 'inherit' })
    return readClassDirectory(out, main)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/** Signs a contract transaction with type JVM: format A (protocol.md §1.2), which covers the vm type (the 2017 string does not, and Keel refuses unsigned content). */
function sign(fields: Record<string, unknown>): Record<string, unknown> {
  const tx: Record<string, unknown> = {
    from,
    timestamp: BigInt(Date.now()) * 1_000_000n,
    nonce: BigInt(`0x${randomBytes(6).toString('hex')}`) + 1n,
    type: 'JVM',
    ...fields,
  }
  tx.signature = signSecp256k1(signStringFormatA(tx as never), privateKey)
  return tx
}

interface Receipt {
  contractAddress: string
  ret: string
  gasUsed: number
  log: { topics: string[]; data: string; blockNumber: number }[]
}

/** Polls the receipt like the SDKs do; a failed transaction throws with its code. */
async function receipt(hash: string): Promise<Receipt> {
  for (;;) {
    const reply = await client.send('tx_getTransactionReceipt', [hash])
    if (reply.code === 0) return reply.result as Receipt
    if (reply.code !== -32001) throw new Error(`transaction ${hash} failed: ${reply.code} ${reply.message} (the node's log says why)`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function call(contract: string, method: string, ...args: string[]): Promise<Receipt> {
  const payload = values.encoding === 'hvm' ? jvmCallPayload(method, ...(args as JvmArg[])) : jvmInvokeArgsPayload(method, ...args)
  const hash = (await client.request('contract_invokeContract', [sign({ to: contract, payload })])) as string
  const result = await receipt(hash)
  console.log(
    `${method}(${args.map((a) => JSON.stringify(a)).join(', ')}) → ${JSON.stringify(jvmRetText(result.ret))} (${result.gasUsed} steps)`,
  )
  return result
}

const contract = await compile().catch((error) => fail(error instanceof JdkMissingError ? error.message : String(error)))
console.log(`compiled ${main}: ${[...contract.classes.keys()].join(', ')}`)
const payload = values.encoding === 'hvm' ? jvmDeployPayload(contract) : jvmTarGzDeployPayload(contract)
console.log(
  `deploy payload: ${(payload.length - 2) / 2} bytes (${values.encoding === 'hvm' ? 'HVM class stream' : '1.x InvokeArgs with a tar.gz'})`,
)
const deployHash = (await client.request('contract_deployContract', [sign({ payload })])) as string
const deployed = await receipt(deployHash)
const at = deployed.contractAddress
console.log(`deployed at ${at} (${deployed.gasUsed} steps); status ${await client.request('contract_getStatus', [at])}`)

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
  const logs = (await client.request('sub_getLogs', [
    { fromBlock: blockNumber, addresses: [at], topics: [jvmTopic('Set')] },
  ])) as Receipt['log']
  for (const log of logs) console.log(`log Set: topic ${log.topics[1]} data ${JSON.stringify(Buffer.from(log.data, 'hex').toString())}`)
}
