/**
 * Canonical bytes of world-state entries. The stored value IS the canonical encoding, so the
 * state hash (state-hash.ts) of an entry about to be replaced is computed from the bytes already
 * in LMDB, without decoding and re-encoding. Changing any of these encodings changes every root.
 */
import type { Account, ContractMeta, ContractStatus, VmType } from '../domain.ts'
import { bytesToHex, fixedBytes, time64, u32be } from './codec.ts'

/** Entry kinds; the byte prefixes the entry in the state hash, so equal bytes of two kinds never collide. */
export const EntryKind = { account: 1, code: 2, storage: 3, contract: 4 } as const
export type EntryKindValue = (typeof EntryKind)[keyof typeof EntryKind]

/** One world entry's change: its canonical bytes before and after (store/world.ts makes them). */
export interface EntryDiff {
  kind: EntryKindValue
  key: Buffer
  /** stored bytes before; undefined = absent */
  old: Buffer | undefined
  /** bytes after; undefined = deleted */
  next: Buffer | undefined
}

const INT64_MIN = -(2n ** 63n)

/** Non-negative bigint -> length byte ‖ minimal big-endian bytes (0 is just the length byte 0). */
function writeUnsigned(value: bigint, what: string, out: number[]): void {
  if (typeof value !== 'bigint' || value < 0n) throw new TypeError(`${what}: not a non-negative bigint: ${String(value)}`)
  let hex = value === 0n ? '' : value.toString(16)
  if (hex.length % 2) hex = `0${hex}`
  if (hex.length / 2 > 255) throw new RangeError(`${what}: more than 255 bytes`)
  out.push(hex.length / 2)
  for (let i = 0; i < hex.length; i += 2) out.push(Number.parseInt(hex.slice(i, i + 2), 16))
}

function readUnsigned(bytes: Uint8Array, at: number): [bigint, number] {
  const len = bytes[at]
  let value = 0n
  for (let i = 0; i < len; i++) value = (value << 8n) | BigInt(bytes[at + 1 + i])
  return [value, at + 1 + len]
}

export function encodeAccount(account: Account, what = 'account'): Buffer {
  const out: number[] = []
  writeUnsigned(account.balance, `${what}.balance`, out)
  writeUnsigned(account.nonce, `${what}.nonce`, out)
  return Buffer.from(out)
}

export function decodeAccount(bytes: Uint8Array): Account {
  const [balance, next] = readUnsigned(bytes, 0)
  const [nonce] = readUnsigned(bytes, next)
  return { balance, nonce }
}

const STATUS: readonly ContractStatus[] = ['normal', 'frozen']
const VM: readonly VmType[] = ['EVM', 'JVM']

/** creator addr20 ‖ createdAt time64 ‖ createdInBlock u32be ‖ status u8 ‖ vmType u8 (34 bytes). */
export function encodeContractMeta(meta: ContractMeta, what = 'contract'): Buffer {
  const status = STATUS.indexOf(meta.status)
  const vm = VM.indexOf(meta.vmType)
  if (status < 0) throw new TypeError(`${what}.status: unknown ${String(meta.status)}`)
  if (vm < 0) throw new TypeError(`${what}.vmType: unknown ${String(meta.vmType)}`)
  if (!Number.isInteger(meta.createdInBlock) || meta.createdInBlock < 0 || meta.createdInBlock > 0xffffffff) {
    throw new TypeError(`${what}.createdInBlock: not a u32: ${meta.createdInBlock}`)
  }
  return Buffer.concat([
    fixedBytes(meta.creator, 20, `${what}.creator`),
    time64(meta.createdAt, `${what}.createdAt`),
    u32be(meta.createdInBlock),
    Buffer.from([status, vm]),
  ])
}

export function decodeContractMeta(bytes: Uint8Array): ContractMeta {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return {
    creator: bytesToHex(buf.subarray(0, 20)),
    createdAt: buf.readBigUInt64BE(20) + INT64_MIN,
    createdInBlock: buf.readUInt32BE(28),
    status: STATUS[buf[32]],
    vmType: VM[buf[33]],
  }
}
