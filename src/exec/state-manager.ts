/**
 * @ethereumjs/evm's StateManagerInterface (10.x) over a BlockState, so the EVM reads and writes
 * Keel's world state directly: no trie, no state root, no copy of the state.
 *
 * What Keel keeps per account is {balance, nonce}; the EVM's `codeHash` is derived from the code
 * (cached per address) and `storageRoot` is always the empty-trie root (Keel has no storage trie;
 * the EVM only uses it for the EIP-7610 collision check, which the code and nonce checks cover
 * for every state Keel can reach).
 *
 * One instance serves one EVM for the executor's lifetime; `attach()` points it at the block (or
 * throw-away overlay) being executed, and `beginTx()` resets the per-transaction original-storage
 * record that SSTORE gas (EIP-2200/3529) needs.
 */
import type { AccountFields, StateManagerInterface } from '@ethereumjs/common'
import { Account, type Address, hexToBytes, KECCAK256_NULL, KECCAK256_RLP, type PrefixedHexString } from '@ethereumjs/util'
import { keccak256 } from '../crypto/hash.ts'
import type { Hex } from '../domain.ts'
import { ZERO_WORD } from '../domain.ts'
import { bytesToHex } from '../wire/hex.ts'
import type { BlockState } from './block-state.ts'
import { hexToBytesChecked, wordHex } from './hex-bytes.ts'

/** an address as the overlay keys it (Address.toString() would build it as a chain of cons strings: wire/hex.ts) */
const addressHex = (address: Address): Hex => bytesToHex(address.bytes)

interface CodeEntry {
  code: Hex
  bytes: Uint8Array
  hash: Uint8Array | undefined
}

const EMPTY = new Uint8Array(0)

/** a storage word as the overlay holds it (32-byte `0x` hex, block-state.ts toWord) → its bytes */
function wordBytes(word: Hex): Uint8Array {
  const bytes = hexToBytesChecked(word)
  if (bytes === undefined) throw new Error(`storage word is not hex: ${word.slice(0, 80)}`)
  return bytes
}
/** code cache entries kept across blocks before the cache is dropped */
const CODE_CACHE_MAX = 4096

export class OverlayStateManager implements StateManagerInterface {
  private state: BlockState | undefined
  /** slot values as they were when the current transaction started, recorded at first write */
  private readonly originals = new Map<string, Hex>()
  private readonly codeCache = new Map<Hex, CodeEntry>()
  /** addresses whose code was written during the current transaction */
  readonly codeWrites = new Set<Hex>()

  readonly originalStorageCache = {
    get: async (address: Address, key: Uint8Array): Promise<Uint8Array> => {
      const a = addressHex(address)
      const k = bytesToHex(key)
      const v = this.originals.get(a + k) ?? this.overlay().getStorage(a, k)
      return v === ZERO_WORD ? EMPTY : wordBytes(v)
    },
    clear: (): void => this.originals.clear(),
  }

  /** Points the adapter at the overlay to execute against. */
  attach(state: BlockState): void {
    this.state = state
    this.originals.clear()
    this.codeWrites.clear()
  }

  detach(): void {
    this.state = undefined
    this.originals.clear()
    this.codeWrites.clear()
  }

  /** Starts a transaction: original storage values are those of this moment. */
  beginTx(): void {
    this.originals.clear()
    this.codeWrites.clear()
  }

  private overlay(): BlockState {
    if (this.state === undefined) throw new Error('OverlayStateManager used while detached')
    return this.state
  }

  private codeEntry(address: Hex, code: Hex): CodeEntry {
    const cached = this.codeCache.get(address)
    if (cached !== undefined && cached.code === code) return cached
    if (this.codeCache.size >= CODE_CACHE_MAX) this.codeCache.clear()
    const entry: CodeEntry = { code, bytes: hexToBytes(code as PrefixedHexString), hash: undefined }
    this.codeCache.set(address, entry)
    return entry
  }

  private codeHash(address: Hex, code: Hex): Uint8Array {
    if (code === '0x') return KECCAK256_NULL
    const entry = this.codeEntry(address, code)
    entry.hash ??= keccak256(entry.bytes)
    return entry.hash
  }

  // ---- accounts ----

  async getAccount(address: Address): Promise<Account | undefined> {
    const a = addressHex(address)
    const s = this.overlay()
    const acc = s.getAccount(a)
    const code = s.getCode(a)
    if (acc === undefined && code === '0x') return undefined
    return new Account(acc?.nonce ?? 0n, acc?.balance ?? 0n, KECCAK256_RLP, this.codeHash(a, code))
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    if (account === undefined) return this.deleteAccount(address)
    const a = addressHex(address)
    const s = this.overlay()
    const current = s.getAccount(a)
    if (current === undefined) {
      // an empty account is equivalent to none (EIP-161); not creating it keeps a
      // zero-value call from leaving an empty record for its sender
      if (account.nonce === 0n && account.balance === 0n) return
    } else if (current.nonce === account.nonce && current.balance === account.balance) {
      return
    }
    s.putAccount(a, { balance: account.balance, nonce: account.nonce })
  }

  async deleteAccount(address: Address): Promise<void> {
    this.overlay().deleteAccount(addressHex(address))
  }

  async modifyAccountFields(address: Address, fields: AccountFields): Promise<void> {
    const account = (await this.getAccount(address)) ?? new Account()
    if (fields.nonce !== undefined) account.nonce = fields.nonce
    if (fields.balance !== undefined) account.balance = fields.balance
    await this.putAccount(address, account)
  }

  // ---- code ----

  async putCode(address: Address, value: Uint8Array): Promise<void> {
    const a = addressHex(address)
    const code = bytesToHex(value)
    this.overlay().putCode(a, code)
    this.codeWrites.add(a)
  }

  async getCode(address: Address): Promise<Uint8Array> {
    const a = addressHex(address)
    const code = this.overlay().getCode(a)
    return code === '0x' ? EMPTY : this.codeEntry(a, code).bytes
  }

  async getCodeSize(address: Address): Promise<number> {
    return (this.overlay().getCode(addressHex(address)).length - 2) >> 1
  }

  // ---- storage ----

  async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const v = this.overlay().getStorage(addressHex(address), bytesToHex(key))
    return v === ZERO_WORD ? EMPTY : wordBytes(v)
  }

  async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    const a = addressHex(address)
    const k = bytesToHex(key)
    const s = this.overlay()
    const ok = a + k
    if (!this.originals.has(ok)) this.originals.set(ok, s.getStorage(a, k))
    s.putStorage(a, k, value.length === 0 ? ZERO_WORD : wordHex(value))
  }

  async clearStorage(address: Address): Promise<void> {
    this.overlay().clearStorage(addressHex(address))
  }

  // ---- checkpoints (the EVM opens one per message frame) ----

  async checkpoint(): Promise<void> {
    this.overlay().checkpoint()
  }

  async commit(): Promise<void> {
    this.overlay().commit()
  }

  async revert(): Promise<void> {
    this.overlay().revert()
  }

  // ---- not part of Keel's model ----

  async getStateRoot(): Promise<Uint8Array> {
    throw new Error('OverlayStateManager has no state root (the store computes it)')
  }

  async setStateRoot(_stateRoot: Uint8Array, _clearCache?: boolean): Promise<void> {
    throw new Error('OverlayStateManager cannot switch state roots')
  }

  async hasStateRoot(_root: Uint8Array): Promise<boolean> {
    return false
  }

  clearCaches(): void {
    this.codeCache.clear()
  }

  shallowCopy(_downlevelCaches?: boolean): StateManagerInterface {
    throw new Error('OverlayStateManager cannot be copied')
  }
}
