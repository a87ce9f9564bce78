/**
 * A JVM contract's ledger (string keys, byte-string values) laid over the 32-byte storage slots
 * every contract has, so JVM state lives in the same keyspace, state root, snapshots and state
 * sync as EVM state and goes through the same per-transaction overlay.
 *
 * Key `k` has its head slot at keccak256(utf8(k)). The head word of a value of n bytes:
 *   n ≤ 31: the bytes, zero padding, and n + 1 in the last byte (so an empty value is not zero);
 *   n ≥ 32: n as u64 big-endian in the first 8 bytes, 0x80 in the last byte; the bytes follow
 *           in the slots keccak256(head slot) + 0, + 1, … (32 bytes each, the last zero-padded).
 * An absent key is a zero head word. JVM contracts never run EVM code, so no EVM layout can clash.
 */
import { hexToBytes } from '@noble/hashes/utils.js'
import { keccak256 } from '../../crypto/hash.ts'
import type { Hex } from '../../domain.ts'
import { bytesToHex } from '../../wire/hex.ts'
import { type BlockState, ZERO_WORD } from '../block-state.ts'

const LONG_MARK = 0x80
const TWO_256 = 1n << 256n

const word = (bytes: Uint8Array): Hex => bytesToHex(bytes)

export function headSlot(key: string): Hex {
  return word(keccak256(key))
}

function chunkSlot(head: Hex, index: number): Hex {
  const base = BigInt(word(keccak256(hexToBytes(head.slice(2)))))
  return `0x${((base + BigInt(index)) % TWO_256).toString(16).padStart(64, '0')}`
}

function lengthOf(headWord: Uint8Array): { long: boolean; length: number } | undefined {
  const mark = headWord[31]
  if (mark === 0) return undefined
  if (mark <= 32) return { long: false, length: mark - 1 }
  if (mark === LONG_MARK) {
    const view = new DataView(headWord.buffer, headWord.byteOffset, 32)
    return { long: true, length: Number(view.getBigUint64(0)) }
  }
  throw new Error(`JVM ledger head word with unknown mark 0x${mark.toString(16)}`)
}

/** The value under `key` of contract `address`, or undefined. */
export function readValue(state: BlockState, address: Hex, key: string): Uint8Array | undefined {
  const head = headSlot(key)
  const headWord = hexToBytes(state.getStorage(address, head).slice(2))
  const shape = lengthOf(headWord)
  if (shape === undefined) return undefined
  if (!shape.long) return headWord.slice(0, shape.length)
  const out = new Uint8Array(shape.length)
  for (let i = 0, offset = 0; offset < shape.length; i++, offset += 32) {
    const chunk = hexToBytes(state.getStorage(address, chunkSlot(head, i)).slice(2))
    out.set(chunk.subarray(0, Math.min(32, shape.length - offset)), offset)
  }
  return out
}

/** Sets (or with null removes) the value under `key`, clearing the slots an older, longer value used. */
export function writeValue(state: BlockState, address: Hex, key: string, value: Uint8Array | null): void {
  const head = headSlot(key)
  const old = lengthOf(hexToBytes(state.getStorage(address, head).slice(2)))
  const oldChunks = old?.long === true ? Math.ceil(old.length / 32) : 0
  let newChunks = 0
  if (value === null) state.putStorage(address, head, ZERO_WORD)
  else if (value.length <= 31) {
    const headWord = new Uint8Array(32)
    headWord.set(value)
    headWord[31] = value.length + 1
    state.putStorage(address, head, word(headWord))
  } else {
    const headWord = new Uint8Array(32)
    new DataView(headWord.buffer).setBigUint64(0, BigInt(value.length))
    headWord[31] = LONG_MARK
    state.putStorage(address, head, word(headWord))
    newChunks = Math.ceil(value.length / 32)
    for (let i = 0; i < newChunks; i++) {
      const chunk = new Uint8Array(32)
      chunk.set(value.subarray(i * 32, Math.min(value.length, i * 32 + 32)))
      state.putStorage(address, chunkSlot(head, i), word(chunk))
    }
  }
  for (let i = newChunks; i < oldChunks; i++) state.putStorage(address, chunkSlot(head, i), ZERO_WORD)
}
