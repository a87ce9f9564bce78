/**
 * contract_compileContract through solc-js, loaded on first use (≈250 ms and ≈240 MiB, so a node
 * that never compiles never pays for it). A node where the package cannot load answers -32000.
 */
import { createRequire } from 'node:module'
import type { CompileResult } from '../../generated/types.ts'
import { NodeError } from '../errors.ts'

export interface Compiler {
  compile(source: string): Promise<CompileResult>
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string; message: string }[]
  contracts?: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>
}

interface Solc {
  compile(input: string): string
}

export const NO_COMPILER = 'the node has no Solidity compiler installed'

export function createSolcCompiler(options: { load?: () => Solc } = {}): Compiler {
  const load = options.load ?? (() => createRequire(import.meta.url)('solc') as Solc)
  let solc: Solc | undefined
  return {
    async compile(source) {
      if (solc === undefined) {
        try {
          solc = load()
        } catch (error) {
          throw new NodeError(NO_COMPILER, { cause: error })
        }
      }
      const input = {
        language: 'Solidity',
        sources: { 'contract.sol': { content: source } },
        settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }
      const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
      const failure = output.errors?.find((error) => error.severity === 'error')
      if (failure !== undefined) throw new NodeError(`compile failed: ${failure.formattedMessage.trim()}`)
      const result: CompileResult = { abi: [], bin: [], types: [] }
      for (const [name, contract] of Object.entries(output.contracts?.['contract.sol'] ?? {})) {
        result.abi.push(JSON.stringify(contract.abi))
        result.bin.push(`0x${contract.evm.bytecode.object}`)
        result.types.push(name)
      }
      return result
    },
  }
}
