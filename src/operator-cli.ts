/**
 * `keel operator <method> [params]`: sends one operator method (node_deleteVP, node_deleteNVP,
 * archive_snapshot, …; docs/governance.md "Operator methods") signed with an administrator's
 * account key, and prints the node's reply; `--print` prints the signed request instead, as a curl
 * command, for sending it from elsewhere within the 5 minutes its timestamp allows.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { methods } from '../generated/methods.ts'
import { accountFromPrivateKey, type SignatureScheme } from '../sdk/src/account.ts'
import { operatorHeaders } from '../sdk/src/operator.ts'
import { type CommandSpec, isEntryModule, runCommand, UsageError, usageOf } from './command-line.ts'
import type { MethodSpec } from './rpc/method-spec.ts'

const DEFAULT_KEY_FILE = join('data', 'global', 'genesis-account.json')

export const operatorCommand = {
  name: 'keel operator',
  synopsis: '<method> [params-json] [options]',
  summary:
    "Sends one operator method signed with an administrator's account key (headers operator-timestamp and operator-signature) and prints the reply.",
  allowPositionals: true,
  options: {
    url: { type: 'string', value: 'url', default: 'http://127.0.0.1:8081', description: 'the node' },
    'key-file': {
      type: 'string',
      value: 'file',
      description: `a JSON file with the admin's "privateKey" (a node's genesis-account.json; default ${DEFAULT_KEY_FILE})`,
    },
    key: { type: 'string', value: 'hex', description: "the admin's private key itself (instead of --key-file)" },
    sm2: { type: 'boolean', default: false, description: 'the key is an SM2 key' },
    namespace: { type: 'string', value: 'name', default: 'global', description: 'the namespace of the request' },
    print: { type: 'boolean', default: false, description: 'print the signed request as a curl command instead of sending it' },
  },
  details: [
    'params-json is the JSON array of the params (default []). Operator methods:',
    ...Object.entries(methods as Record<string, MethodSpec>)
      .filter(([, spec]) => spec.operator === true)
      .map(([name, spec]) => `  ${name.padEnd(24)}${spec.summary}`),
    '',
    'examples:',
    `  keel operator archive_snapshot '[0]' --key-file ${DEFAULT_KEY_FILE}`,
    `  keel operator node_deleteVP '[{"nodehash":"<hash>"}]' --url http://127.0.0.1:8082 --key-file network/genesis-account.json`,
  ],
} satisfies CommandSpec

function keyOf(values: { key?: string; 'key-file'?: string }): string {
  if (values.key !== undefined) return values.key
  const file = values['key-file'] ?? DEFAULT_KEY_FILE
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    throw new UsageError(`keel operator: cannot read the key file ${file}; name it with --key-file or give --key`, usageOf(operatorCommand))
  }
  const key = (JSON.parse(text) as { privateKey?: unknown }).privateKey
  if (typeof key !== 'string') throw new Error(`${file} holds no "privateKey"`)
  return key
}

const shellQuoted = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`

export async function runOperator(argv: string[]): Promise<void> {
  await runCommand(operatorCommand, argv, async (values, positionals) => {
    const [method, paramsText = '[]', ...rest] = positionals
    if (method === undefined || rest.length > 0)
      throw new UsageError('keel operator: give the method and, optionally, its params as one JSON array', usageOf(operatorCommand))
    let params: unknown
    try {
      params = JSON.parse(paramsText)
    } catch {
      throw new UsageError(`keel operator: params must be a JSON array, got ${paramsText}`, usageOf(operatorCommand))
    }
    if (!Array.isArray(params))
      throw new UsageError(`keel operator: params must be a JSON array, got ${paramsText}`, usageOf(operatorCommand))
    const scheme: SignatureScheme = values.sm2 ? 'sm2' : 'secp256k1'
    const account = accountFromPrivateKey(keyOf(values), scheme)
    const body = JSON.stringify({ jsonrpc: '2.0', namespace: values.namespace, id: 1, method, params })
    const headers = operatorHeaders(account, body)
    if (values.print) {
      const flags = Object.entries(headers).map(([name, value]) => `-H ${shellQuoted(`${name}: ${value}`)}`)
      console.log(`# signed by ${account.address}; valid for 5 minutes, once per node`)
      console.log(`curl -s ${shellQuoted(values.url)} -H 'content-type: application/json' ${flags.join(' ')} -d ${shellQuoted(body)}`)
      return
    }
    const response = await fetch(values.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(60_000),
    })
    const text = await response.text()
    console.log(text)
    const reply = JSON.parse(text) as { code?: unknown }
    if (reply.code !== 0) process.exitCode = 1
  })
}

if (isEntryModule(import.meta.url)) await runOperator(process.argv.slice(2))
