/**
 * The BVM's wire as the official SDK writes and reads it (docs/governance.md §1): one operation per
 * transaction payload, proposal contents as a counted list of operations, and the JSON result a
 * receipt's `ret` carries.
 *
 *   operation := u32be(len(method)) ‖ method ‖ u32be(argc) ‖ { u32be(len(arg)) ‖ arg }*
 *   contents  := u32be(count) ‖ operation*
 *
 * Lengths are bytes. Arguments are bytes (UTF-8 text except where an operation says otherwise, such
 * as a proposal's contents inside Create).
 */
import { utf8ToBytes } from '@noble/hashes/utils.js'
import { BVM_ADDRESS } from '../../sdk/src/bvm.ts'
import type { Hex } from '../domain.ts'
import { bytesToHex } from '../wire/hex.ts'

/** The built-in contracts' addresses (the SDK's `BuiltinOperation.Builder`s), shared with keel-client's builders. */
export const BuiltinAddress = BVM_ADDRESS

export const BUILTIN_ADDRESSES: ReadonlySet<string> = new Set(Object.values(BuiltinAddress))

export interface Operation {
  method: string
  args: Uint8Array[]
}

/** A payload or contents that do not decode; the message says where. */
export class BvmDecodeError extends Error {
  override name = 'BvmDecodeError'
}

/** Most arguments one operation may carry, and most operations one proposal may hold. */
const MAX_ITEMS = 1024
const decoder = new TextDecoder('utf-8', { fatal: true })

class Reader {
  private at = 0
  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
  ) {}

  u32(field: string): number {
    if (this.at + 4 > this.bytes.length) throw new BvmDecodeError(`${this.what}: ${field} is cut short at byte ${this.at}`)
    const value = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.at, 4).getUint32(0)
    this.at += 4
    return value
  }

  take(length: number, field: string): Uint8Array {
    if (this.at + length > this.bytes.length)
      throw new BvmDecodeError(`${this.what}: ${field} needs ${length} bytes, ${this.bytes.length - this.at} are left`)
    const out = this.bytes.subarray(this.at, this.at + length)
    this.at += length
    return out
  }

  operation(): Operation {
    const methodBytes = this.take(this.u32('the method length'), 'the method name')
    let method: string
    try {
      method = decoder.decode(methodBytes)
    } catch {
      throw new BvmDecodeError(`${this.what}: the method name is not UTF-8`)
    }
    const argc = this.u32('the argument count')
    if (argc > MAX_ITEMS) throw new BvmDecodeError(`${this.what}: ${argc} arguments (at most ${MAX_ITEMS})`)
    const args: Uint8Array[] = []
    for (let i = 0; i < argc; i++) args.push(this.take(this.u32(`argument ${i}'s length`), `argument ${i}`))
    return { method, args }
  }

  end(): void {
    if (this.at !== this.bytes.length) throw new BvmDecodeError(`${this.what}: ${this.bytes.length - this.at} bytes follow the end`)
  }
}

/** The operation a BVM transaction's payload holds. */
export function decodeOperation(payload: Uint8Array): Operation {
  const reader = new Reader(payload, 'BVM payload')
  const operation = reader.operation()
  reader.end()
  return operation
}

/** A proposal's contents: the operations it will run, in order. */
export function decodeContents(bytes: Uint8Array): Operation[] {
  const reader = new Reader(bytes, 'proposal contents')
  const count = reader.u32('the operation count')
  if (count > MAX_ITEMS) throw new BvmDecodeError(`proposal contents: ${count} operations (at most ${MAX_ITEMS})`)
  const operations: Operation[] = []
  for (let i = 0; i < count; i++) operations.push(reader.operation())
  reader.end()
  return operations
}

function u32(value: number): Uint8Array {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, value)
  return out
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** The encoding of one operation (what the SDK's EncodeUtil.encodeOperation writes); text arguments as UTF-8. */
export function encodeOperation(method: string, args: readonly (string | Uint8Array)[]): Uint8Array {
  const name = utf8ToBytes(method)
  const parts: Uint8Array[] = [u32(name.length), name, u32(args.length)]
  for (const arg of args) {
    const bytes = typeof arg === 'string' ? utf8ToBytes(arg) : arg
    parts.push(u32(bytes.length), bytes)
  }
  return concat(parts)
}

export function encodeContents(operations: readonly Uint8Array[]): Uint8Array {
  return concat([u32(operations.length), ...operations])
}

/** An argument as text; refuses bytes that are not UTF-8. */
export function argText(operation: Operation, index: number): string {
  const bytes = operation.args[index]
  if (bytes === undefined) throw new BvmDecodeError(`${operation.method}: argument ${index} is missing`)
  try {
    return decoder.decode(bytes)
  } catch {
    throw new BvmDecodeError(`${operation.method}: argument ${index} is not UTF-8 text`)
  }
}

/** What a BVM receipt's `ret` holds (the SDK's DecodeUtil.decodeBvmResultRet reads it). */
export interface BvmResult {
  Success: boolean
  /** base64 of the operation's return bytes, or null */
  Ret: string | null
  Err: string
}

/** One operation of an executed proposal (the Go SDK's bvm.OpResult): 200 done, -3000x failed. */
export interface OperationResult {
  code: number
  msg?: string
}

export const OpCode = { success: 200, methodNotExist: -30001, paramsLenMismatch: -30002, invalidParams: -30003, callError: -30004 } as const

/** The receipt `ret` of a BVM result: hex of its JSON (key order as Hyperchain writes them). */
export function encodeResult(result: BvmResult): Hex {
  return bytesToHex(utf8ToBytes(JSON.stringify({ Success: result.Success, Ret: result.Ret, Err: result.Err })))
}

export function base64Of(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64')
}
