/** Ethereum-dialect test helpers (issue 28): the test ERC-20 compiled with the project's solc-js, and raw JSON-RPC calls. */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { post } from './node.ts'

export interface EthArtifact {
  abi: unknown[]
  bytecode: string
}

let token: EthArtifact | undefined
/** test/fixtures/eth/Token.sol compiled once per process */
export function tokenArtifact(): EthArtifact {
  token ??= fixtureArtifacts('Token.sol').Token
  return token
}

/** every contract of test/fixtures/eth/<file>, compiled with the project's solc-js */
export function fixtureArtifacts(file: string): Record<string, EthArtifact> {
  const require = createRequire(import.meta.url)
  const solc = require('solc') as { compile(input: string): string }
  const source = readFileSync(new URL(`../fixtures/eth/${file}`, import.meta.url), 'utf8')
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { [file]: { content: source } },
        settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
  return Object.fromEntries(
    Object.entries(output.contracts[file]).map(([name, compiled]) => [
      name,
      { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` },
    ]),
  )
}

export interface EthReply {
  jsonrpc: string
  id: unknown
  result?: unknown
  error?: { code: number; message: string; data?: unknown }
}

/** one Ethereum-dialect request; the whole reply */
export async function eth(url: string, method: string, params: unknown[] = []): Promise<EthReply> {
  return (await post(url, { jsonrpc: '2.0', id: 1, method, params })).body as EthReply
}

/** the result of one request, failing the test on an error */
export async function ethOk<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const reply = await eth(url, method, params)
  if (reply.error !== undefined) throw new Error(`${method}: ${reply.error.code} ${reply.error.message}`)
  return reply.result as T
}

/** polls eth_getTransactionReceipt until it is there */
export async function ethReceipt(url: string, hash: string, timeoutMs = 15_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const receipt = await ethOk<Record<string, unknown> | null>(url, 'eth_getTransactionReceipt', [hash])
    if (receipt !== null) return receipt
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
