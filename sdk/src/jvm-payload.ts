/**
 * The payloads of JVM transactions as a client writes them (docs/jvm.md); the node decodes them
 * (src/exec/jvm/payload.ts) and stores every contract as the canonical class stream written here.
 *
 * - HVM deploy (and upgrade): a class stream `FE FF FB CD` ‖ u16 main-class length ‖ main class ‖
 *   per class (sorted by name): u32 class length ‖ u16 name length ‖ class bytes ‖ name (internal,
 *   `/`-separated);
 * - HVM invoke: a method call `FE FF FB CE` ‖ u16 name length ‖ name ‖ per argument: u16 type
 *   length ‖ u32 value length ‖ Java type name ‖ value (raw text for String, JSON otherwise);
 * - Hyperchain 1.x: a protobuf InvokeArgs {1: code, 2: methodName, 3: repeated args}, whose code
 *   is a tar.gz of the class files and contract.properties (written with writeTar).
 */
import { concatBytes } from '@noble/hashes/utils.js'
import { ProtoWriter } from './protobuf.ts'

export const DEPLOY_MAGIC = Uint8Array.of(0xfe, 0xff, 0xfb, 0xcd)
export const CALL_MAGIC = Uint8Array.of(0xfe, 0xff, 0xfb, 0xce)

/** A compiled Java contract: its main class (binary name, `demo.Counter`) and class files by internal name (`demo/Counter`). */
export interface JavaContract {
  /** binary name of the main class, e.g. `demo.Counter` */
  main: string
  /** internal name (`demo/Counter`) → class file bytes */
  classes: Map<string, Uint8Array>
}

/** A payload that cannot be decoded; the message says why. */
export class PayloadError extends Error {
  override name = 'PayloadError'
}

const utf8 = new TextEncoder()

export interface InvokeArgs {
  code?: Uint8Array
  methodName?: string
  args: Uint8Array[]
}

export function encodeInvokeArgs(value: InvokeArgs): Uint8Array {
  const writer = new ProtoWriter()
  writer.bytes(1, value.code)
  writer.bytes(2, value.methodName === undefined ? undefined : utf8.encode(value.methodName))
  for (const arg of value.args) writer.element(3, arg)
  return writer.finish()
}

export function encodeClassStream(code: JavaContract): Uint8Array {
  const main = utf8.encode(code.main)
  const names = [...code.classes.keys()].sort()
  const parts: Uint8Array[] = [DEPLOY_MAGIC, u16(main.length), main]
  for (const name of names) {
    const bytes = code.classes.get(name) as Uint8Array
    const encodedName = utf8.encode(name)
    parts.push(u32(bytes.length), u16(encodedName.length), bytes, encodedName)
  }
  return concatBytes(...parts)
}

export function encodeMethodCall(method: string, args: { type: string; value: string }[]): Uint8Array {
  const name = utf8.encode(method)
  const parts: Uint8Array[] = [CALL_MAGIC, u16(name.length), name]
  for (const arg of args) {
    const type = utf8.encode(arg.type)
    const value = utf8.encode(arg.value)
    parts.push(u16(type.length), u32(value.length), type, value)
  }
  return concatBytes(...parts)
}

/** A ustar archive of `files` (path → bytes), as `tar -c` writes it (names up to 255 bytes). */
export function writeTar(files: Map<string, Uint8Array>): Uint8Array {
  const parts: Uint8Array[] = []
  const octal = (value: number, length: number): string => `${value.toString(8).padStart(length - 1, '0')}\0`
  for (const [path, bytes] of files) {
    const header = new Uint8Array(512)
    const encoded = utf8.encode(path)
    let name = encoded
    let prefix = new Uint8Array(0)
    if (encoded.length > 100) {
      const cut = path.lastIndexOf('/', 155)
      if (cut <= 0 || utf8.encode(path.slice(cut + 1)).length > 100) throw new PayloadError(`the path ${path} is too long for a tar header`)
      prefix = utf8.encode(path.slice(0, cut))
      name = utf8.encode(path.slice(cut + 1))
    }
    header.set(name, 0)
    header.set(utf8.encode(octal(0o644, 8)), 100)
    header.set(utf8.encode(octal(0, 8)), 108)
    header.set(utf8.encode(octal(0, 8)), 116)
    header.set(utf8.encode(octal(bytes.length, 12)), 124)
    header.set(utf8.encode(octal(0, 12)), 136)
    header.set(utf8.encode('        '), 148)
    header[156] = 0x30
    header.set(utf8.encode('ustar\u000000'), 257)
    header.set(prefix, 345)
    let sum = 0
    for (const b of header) sum += b
    header.set(utf8.encode(`${sum.toString(8).padStart(6, '0')}\0 `), 148)
    parts.push(header, bytes, new Uint8Array((512 - (bytes.length % 512)) % 512))
  }
  parts.push(new Uint8Array(1024))
  return concatBytes(...parts)
}

// ---- bytes ----

function u16(n: number): Uint8Array {
  if (n > 0xffff) throw new PayloadError(`${n} does not fit in 16 bits`)
  return Uint8Array.of(n >>> 8, n & 0xff)
}

function u32(n: number): Uint8Array {
  return Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff)
}
