/**
 * The payloads of JVM transactions, decoded by the node. The encoders (and the canonical class
 * stream the node stores) live in the client package's sources, sdk/src/jvm-payload.ts, and are
 * re-exported here. docs/jvm.md describes each format.
 *
 * Deploy and upgrade: the classes of a contract and its main class, as
 *   - a tar.gz (`1F 8B`) of the class files and `contract.properties` (`main.class=…`), the form
 *     Hyperchain 1.x's spec text describes, optionally with one top-level directory;
 *   - a jar/zip (`50 4B 03 04`) whose manifest names `Main-Class` (or holding contract.properties);
 *   - an HVM class stream (`FE FF FB CD`): u16 main-class length ‖ main class ‖ per class:
 *     u32 class length ‖ u16 name length ‖ class bytes ‖ name (internal, `/`-separated);
 *   - any of these wrapped in a protobuf InvokeArgs {1: code, 2: methodName, 3: repeated args}
 *     (1.x: the args go to the contract's `onInit`).
 * Whatever the form, the node keeps the contract as the HVM class stream of its classes sorted by
 * name (canonical: the same classes give the same code and code hash).
 *
 * Invoke: an HVM method call (`FE FF FB CE`): u16 name length ‖ name ‖ per argument: u16 type
 * length ‖ u32 value length ‖ Java type name ‖ value (raw text for String, JSON otherwise); or a
 * protobuf InvokeArgs {2: methodName, 3: args} (1.x; methodName "invoke" means args[0] is the
 * function and the rest its arguments); or an HVM InvokeBean (a caller's class run against the
 * contract, docs/jvm.md §10).
 */
import { gunzipSync } from 'node:zlib'
import { readZipEntries } from '../../../sdk/src/jvm.ts'
import {
  CALL_MAGIC,
  DEPLOY_MAGIC,
  encodeClassStream,
  encodeInvokeArgs,
  encodeMethodCall,
  type InvokeArgs,
  PayloadError,
  writeTar,
} from '../../../sdk/src/jvm-payload.ts'
import type { JvmArgs, JvmCode } from './child.ts'

export { CALL_MAGIC, DEPLOY_MAGIC, encodeClassStream, encodeInvokeArgs, encodeMethodCall, type InvokeArgs, PayloadError, writeTar }

/** Hyperchain's limits: each class file and all of them together */
export const MAX_CLASS_BYTES = 64 * 1024
export const MAX_CODE_BYTES = 512 * 1024
const MAX_ARCHIVE_BYTES = 2 * MAX_CODE_BYTES

const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder('utf-8', { fatal: false }).decode(bytes)

const startsWith = (bytes: Uint8Array, prefix: Uint8Array): boolean =>
  bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b)

// ---- protobuf InvokeArgs ----

/** Strict: only fields 1–3, all length-delimited, exactly filling the bytes; undefined otherwise. */
export function decodeInvokeArgs(bytes: Uint8Array): InvokeArgs | undefined {
  const out: InvokeArgs = { args: [] }
  let p = 0
  const varint = (): number | undefined => {
    let value = 0
    for (let shift = 0; shift < 35; shift += 7) {
      if (p >= bytes.length) return undefined
      const b = bytes[p++]
      value += (b & 0x7f) * 2 ** shift
      if ((b & 0x80) === 0) return value
    }
    return undefined
  }
  while (p < bytes.length) {
    const key = varint()
    if (key === undefined || (key & 7) !== 2) return undefined
    const field = key >>> 3
    const length = varint()
    if (length === undefined || p + length > bytes.length) return undefined
    const value = bytes.subarray(p, p + length)
    p += length
    if (field === 1) out.code = value
    else if (field === 2) out.methodName = fromUtf8(value)
    else if (field === 3) out.args.push(value)
    else return undefined
  }
  return out
}

// ---- the canonical class stream (HVM deploy form) ----

/** Big-endian fields of the HVM streams, after their 4-byte magic; running past the end is a PayloadError naming `what`. */
class StreamReader {
  private readonly view: DataView
  private p = 4

  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  get more(): boolean {
    return this.p < this.bytes.length
  }

  private need(n: number): void {
    if (this.p + n > this.bytes.length) throw new PayloadError(`the ${this.what} is truncated`)
  }

  u16(): number {
    this.need(2)
    this.p += 2
    return this.view.getUint16(this.p - 2)
  }

  u32(): number {
    this.need(4)
    this.p += 4
    return this.view.getUint32(this.p - 4)
  }

  bytesOf(length: number): Uint8Array {
    this.need(length)
    this.p += length
    return this.bytes.slice(this.p - length, this.p)
  }

  text(length: number): string {
    return fromUtf8(this.bytesOf(length))
  }
}

function decodeClassStream(bytes: Uint8Array): JvmCode {
  const r = new StreamReader(bytes, 'class stream (FEFFFBCD…)')
  const main = r.text(r.u16())
  const classes = new Map<string, Uint8Array>()
  while (r.more) {
    const classLength = r.u32()
    const nameLength = r.u16()
    const classBytes = r.bytesOf(classLength)
    addClass(classes, r.text(nameLength).replace(/\.class$/, ''), classBytes)
  }
  return finish(main.replaceAll('/', '.'), classes)
}

function addClass(classes: Map<string, Uint8Array>, name: string, bytes: Uint8Array): void {
  if (name === '' || name.startsWith('/') || name.includes('..')) throw new PayloadError(`bad class name ${JSON.stringify(name)}`)
  if (classes.has(name)) throw new PayloadError(`the class ${name} appears twice`)
  if (bytes.length > MAX_CLASS_BYTES) throw new PayloadError(`the class ${name} has ${bytes.length} bytes; at most ${MAX_CLASS_BYTES}`)
  classes.set(name, bytes)
}

function finish(main: string, classes: Map<string, Uint8Array>): JvmCode {
  if (classes.size === 0) throw new PayloadError('the payload holds no class files')
  if (main === '')
    throw new PayloadError('the payload does not name its main class (contract.properties main.class, or the manifest Main-Class)')
  let total = 0
  for (const bytes of classes.values()) total += bytes.length
  if (total > MAX_CODE_BYTES) throw new PayloadError(`the classes have ${total} bytes together; at most ${MAX_CODE_BYTES}`)
  if (!classes.has(main.replaceAll('.', '/'))) throw new PayloadError(`the main class ${main} is not among the payload's classes`)
  return { main, classes }
}

// ---- tar.gz (1.x) ----

/** `key=value` / `key: value` lines of a Java properties file (no escapes beyond what contract.properties needs). */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue
    const match = line.match(/^([^=:\s]+)\s*[=:\s]\s*(.*)$/)
    if (match !== null) out.set(match[1], match[2].trim())
  }
  return out
}

interface ArchiveFile {
  path: string
  bytes: Uint8Array
}

function readTar(bytes: Uint8Array): ArchiveFile[] {
  const files: ArchiveFile[] = []
  let p = 0
  let longName: string | undefined
  const text = (start: number, length: number): string => {
    const field = bytes.subarray(start, start + length)
    const end = field.indexOf(0)
    return fromUtf8(end < 0 ? field : field.subarray(0, end))
  }
  while (p + 512 <= bytes.length) {
    const header = bytes.subarray(p, p + 512)
    if (header.every((b) => b === 0)) break
    const size = Number.parseInt(text(p + 124, 12).trim() || '0', 8)
    if (!Number.isFinite(size) || size < 0) throw new PayloadError('the tar archive has a bad entry size')
    const type = String.fromCharCode(header[156])
    const prefix = text(p + 345, 155)
    let name = prefix === '' ? text(p, 100) : `${prefix}/${text(p, 100)}`
    const dataStart = p + 512
    if (dataStart + size > bytes.length) throw new PayloadError('the tar archive is truncated')
    const data = bytes.subarray(dataStart, dataStart + size)
    p = dataStart + Math.ceil(size / 512) * 512
    if (type === 'x') {
      const path = fromUtf8(data).match(/\d+ path=([^\n]*)\n/)
      longName = path?.[1]
      continue
    }
    if (type === 'L') {
      longName = fromUtf8(data).replace(/\0+$/, '')
      continue
    }
    if (longName !== undefined) {
      name = longName
      longName = undefined
    }
    if (type === '0' || type === '\0' || type === '7') files.push({ path: name.replace(/^\.\//, ''), bytes: data })
  }
  return files
}

/** Classes and main class from archive entries: `.class` files and contract.properties / the manifest. */
function fromArchive(files: ArchiveFile[], what: string): JvmCode {
  // one top-level directory holding everything (tar -C parent dir) is not part of the class names
  const first = files[0]?.path.split('/')[0]
  const hasRootProperties = files.some((f) => f.path === 'contract.properties')
  const strip =
    first !== undefined && !hasRootProperties && files.every((f) => f.path.startsWith(`${first}/`)) && !first.endsWith('.class')
      ? first.length + 1
      : 0
  const classes = new Map<string, Uint8Array>()
  let main = ''
  for (const file of files) {
    const path = file.path.slice(strip)
    if (path.endsWith('.class')) {
      if (path.startsWith('META-INF/') || path.endsWith('module-info.class')) continue
      addClass(classes, path.slice(0, -'.class'.length), file.bytes)
    } else if (path === 'contract.properties') {
      main = parseProperties(fromUtf8(file.bytes)).get('main.class') ?? main
    } else if (path === 'META-INF/MANIFEST.MF' && main === '') {
      const unfolded = fromUtf8(file.bytes).replace(/\r?\n /g, '')
      main = unfolded.match(/^Main-Class:\s*(\S+)/m)?.[1] ?? ''
    }
  }
  if (classes.size === 0) throw new PayloadError(`the ${what} holds no .class files`)
  return finish(main.replaceAll('/', '.'), classes)
}

// ---- deploy ----

export interface DecodedDeploy {
  code: JvmCode
  /** 1.x deploy arguments, passed to the contract's onInit */
  initArgs: string[]
}

function decodeCodeBytes(bytes: Uint8Array): JvmCode | undefined {
  if (startsWith(bytes, DEPLOY_MAGIC)) return decodeClassStream(bytes)
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    let tar: Uint8Array
    try {
      tar = new Uint8Array(gunzipSync(bytes, { maxOutputLength: MAX_ARCHIVE_BYTES }))
    } catch (error) {
      throw new PayloadError(`the tar.gz does not unpack: ${(error as Error).message}`)
    }
    return fromArchive(readTar(tar), 'tar.gz')
  }
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04)
    return fromArchive(readZipEntries(bytes, MAX_ARCHIVE_BYTES), 'jar')
  return undefined
}

/** Decodes a deploy or upgrade payload (any of the forms above). */
export function decodeDeployPayload(bytes: Uint8Array): DecodedDeploy {
  if (bytes.length === 0) throw new PayloadError('contract code is empty')
  const direct = decodeCodeBytes(bytes)
  if (direct !== undefined) return { code: direct, initArgs: [] }
  const wrapped = decodeInvokeArgs(bytes)
  if (wrapped?.code !== undefined) {
    const code = decodeCodeBytes(wrapped.code)
    if (code === undefined) throw new PayloadError('the InvokeArgs code is neither a tar.gz, a jar nor an HVM class stream (FEFFFBCD…)')
    return { code, initArgs: wrapped.args.map(fromUtf8) }
  }
  throw new PayloadError(
    'the payload is not JVM contract code: expected a tar.gz of class files and contract.properties, a jar, an HVM class stream (FEFFFBCD…) or a protobuf InvokeArgs holding one',
  )
}

// ---- invoke ----

export interface DecodedCall {
  method: string
  args: JvmArgs
}

function decodeMethodCall(bytes: Uint8Array): DecodedCall {
  const r = new StreamReader(bytes, 'method call (FEFFFBCE…)')
  const method = r.text(r.u16())
  const args: { type: string; value: string }[] = []
  while (r.more) {
    const typeLength = r.u16()
    const valueLength = r.u32()
    args.push({ type: r.text(typeLength), value: r.text(valueLength) })
  }
  if (method === '') throw new PayloadError('the method call names no method')
  return { method, args: { form: 'typed', args } }
}

const JAVA_NAME = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/

/**
 * An HVM InvokeBean (what the SDK's `InvokeParams.HvmAbiBuilder` builds for an InvokeBean): u32
 * class length ‖ u16 name length ‖ the bean's class file ‖ its class name (dotted) ‖ the JSON object
 * of its fields. Undefined when the bytes are not one (the class file's magic and the JSON are checked).
 */
function decodeInvokeBean(bytes: Uint8Array): DecodedCall | undefined {
  if (bytes.length < 6 + 4) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const classLength = view.getUint32(0)
  const nameLength = view.getUint16(4)
  if (classLength < 10 || 6 + classLength + nameLength > bytes.length || view.getUint32(6) !== 0xcafebabe) return undefined
  if (classLength > MAX_CLASS_BYTES) throw new PayloadError(`the InvokeBean class has ${classLength} bytes; at most ${MAX_CLASS_BYTES}`)
  const classFile = bytes.subarray(6, 6 + classLength)
  const name = fromUtf8(bytes.subarray(6 + classLength, 6 + classLength + nameLength))
  if (!JAVA_NAME.test(name)) throw new PayloadError(`the InvokeBean's class name ${JSON.stringify(name)} is not a Java class name`)
  const fields = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(6 + classLength + nameLength)).trim() || '{}'
  let parsed: unknown
  try {
    parsed = JSON.parse(fields)
  } catch {
    throw new PayloadError(`the InvokeBean's fields are not JSON: ${fields.slice(0, 80)}`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new PayloadError("the InvokeBean's fields are not a JSON object")
  return { method: name, args: { form: 'bean', args: [name, Buffer.from(classFile).toString('base64'), fields] } }
}

/** Decodes an invoke payload: an HVM method call, an HVM InvokeBean or a 1.x InvokeArgs. */
export function decodeCallPayload(bytes: Uint8Array): DecodedCall {
  if (startsWith(bytes, CALL_MAGIC)) return decodeMethodCall(bytes)
  const invoke = decodeInvokeArgs(bytes)
  if (invoke !== undefined && invoke.code === undefined && invoke.methodName !== undefined && invoke.methodName !== '') {
    const strings = invoke.args.map(fromUtf8)
    if (invoke.methodName === 'invoke') {
      if (strings.length === 0 || strings[0] === '')
        throw new PayloadError('an InvokeArgs with methodName "invoke" needs the function name as its first argument')
      return { method: strings[0], args: { form: 'strings', args: strings.slice(1) } }
    }
    return { method: invoke.methodName, args: { form: 'strings', args: strings } }
  }
  const bean = decodeInvokeBean(bytes)
  if (bean !== undefined) return bean
  throw new PayloadError(
    'the payload is not a JVM call: expected an HVM method call (FEFFFBCE…), an HVM InvokeBean or a protobuf InvokeArgs with a methodName',
  )
}
