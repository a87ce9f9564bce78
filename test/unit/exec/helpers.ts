/**
 * Test helpers for the execution engine: a Map-backed StateReader (state is an input of the
 * executor, so a Map is the real thing here), solc-js compilation, transaction and ABI builders.
 */
import { createRequire } from 'node:module'
import { bytesToHex } from '@noble/hashes/utils.js'
import { keccak256 } from '../../../src/crypto/hash.ts'
import {
  type Account,
  type ContractMeta,
  type Hex,
  type SignedTx,
  type StateReader,
  type WorldChanges,
  ZERO_WORD,
} from '../../../src/domain.ts'

/** The deployer of the protocol.md §2 vector. */
export const DEPLOYER = '0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc'
export const OTHER = '0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd'

export class MapState implements StateReader {
  readonly accounts = new Map<Hex, Account>()
  readonly code = new Map<Hex, Hex>()
  readonly storage = new Map<Hex, Map<Hex, Hex>>()
  readonly metas = new Map<Hex, ContractMeta>()
  reads = 0

  getAccount(address: Hex): Account | undefined {
    this.reads++
    return this.accounts.get(address)
  }
  getCode(address: Hex): Hex {
    this.reads++
    return this.code.get(address) ?? '0x'
  }
  getStorage(address: Hex, slot: Hex): Hex {
    this.reads++
    return this.storage.get(address)?.get(slot) ?? '0x'
  }
  getContractMeta(address: Hex): ContractMeta | undefined {
    this.reads++
    return this.metas.get(address)
  }

  fund(address: Hex, balance: bigint): this {
    this.accounts.set(address, { balance, nonce: this.accounts.get(address)?.nonce ?? 0n })
    return this
  }

  /** What the store does with a block's changes. */
  apply(changes: WorldChanges): this {
    for (const [a, acc] of changes.accounts) this.accounts.set(a, acc)
    for (const [a, c] of changes.code) {
      if (c === '0x') this.code.delete(a)
      else this.code.set(a, c)
    }
    for (const [a, slots] of changes.storage) {
      let m = this.storage.get(a)
      if (!m) {
        m = new Map()
        this.storage.set(a, m)
      }
      for (const [k, v] of slots) {
        if (v === ZERO_WORD) m.delete(k)
        else m.set(k, v)
      }
    }
    for (const [a, meta] of changes.contracts) this.metas.set(a, meta)
    return this
  }
}

// ---- transactions ----

let counter = 0

export function mkTx(fields: Partial<SignedTx> & Pick<SignedTx, 'kind'>): SignedTx {
  counter++
  const n = counter.toString(16).padStart(64, '0')
  return {
    hash: `0x${n}`,
    from: DEPLOYER,
    to: null,
    value: 0n,
    payload: '0x',
    timestamp: 1_700_000_000_000_000_000n,
    nonce: BigInt(counter),
    extra: '',
    opcode: 0,
    vmType: 'EVM',
    signature: '0x00',
    signHash: `0x${n}`,
    simulate: false,
    signed: {},
    ...fields,
  }
}

export const deployTx = (payload: Hex, from = DEPLOYER): SignedTx => mkTx({ kind: 'deploy', payload, from })
export const invokeTx = (to: Hex, payload: Hex, from = DEPLOYER): SignedTx => mkTx({ kind: 'invoke', to, payload, from })
export const transferTx = (from: Hex, to: Hex, value: bigint): SignedTx => mkTx({ kind: 'transfer', from, to, value })
export const maintainTx = (to: Hex, opcode: 1 | 2 | 3, payload: Hex = '0x', from = DEPLOYER): SignedTx =>
  mkTx({ kind: 'maintain', to, opcode, payload, from })

// ---- ABI ----

export function selector(signature: string): string {
  return bytesToHex(keccak256(signature).subarray(0, 4))
}
export function topic(signature: string): Hex {
  return `0x${bytesToHex(keccak256(signature))}`
}
export function word(value: bigint | Hex): string {
  return (typeof value === 'bigint' ? value.toString(16) : value.slice(2)).padStart(64, '0')
}
/** calldata for `signature` with static (uint/address) arguments */
export function calldata(signature: string, ...args: (bigint | Hex)[]): Hex {
  return `0x${selector(signature)}${args.map(word).join('')}`
}

// ---- solc ----

export interface Compiled {
  /** init code (the BIN the SDK sends) */
  bin: Hex
  /** runtime code as solc reports it */
  runtime: Hex
}

/** Compiles one source with solc-js (default settings: evmVersion = solc's default, no optimizer). */
export function compile(source: string, optimize = false): Record<string, Compiled> {
  const require = createRequire(import.meta.url)
  const solc = require('solc') as { compile(input: string): string }
  const input = {
    language: 'Solidity',
    sources: { 'test.sol': { content: source } },
    settings: {
      optimizer: { enabled: optimize, runs: 200 },
      outputSelection: { '*': { '*': ['evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
  const out: Record<string, Compiled> = {}
  for (const [name, c] of Object.entries(output.contracts['test.sol'])) {
    out[name] = { bin: `0x${c.evm.bytecode.object}`, runtime: `0x${c.evm.deployedBytecode.object}` }
  }
  return out
}
