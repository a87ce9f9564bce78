/**
 * Payloads of Java (vmType JVM) contract transactions, for contract_deployContract,
 * contract_invokeContract and contract_maintainContract (upgrade) with `type: "JVM"`. Both
 * encodings the node accepts (docs/jvm.md):
 *
 * - HVM: `jvmDeployPayload` (FEFFFBCD… class stream) and `jvmCallPayload` (FEFFFBCE… method call
 *   with typed arguments);
 * - Hyperchain 1.x: `jvmTarGzDeployPayload` (protobuf InvokeArgs holding a tar.gz of the class files
 *   and contract.properties) and `jvmInvokeArgsPayload` (InvokeArgs: method name and string
 *   arguments).
 *
 * A contract packed as a jar whose manifest names its `Main-Class` (what Hyperchain's tooling
 * builds, and what the official SDK's `Transaction.HVMBuilder.deploy(jar)` reads) becomes a
 * contract with `readJar`; `writeJar` packs classes that way.
 *
 * ```ts
 * const contract = readClassDirectory('build/classes', 'demo.Counter')   // javac -d build/classes …
 * const payload = jvmDeployPayload(contract)                             // sign with type "JVM"
 * const call = jvmCallPayload('add', 'visits', 5)
 * ```
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { deflateRawSync, gzipSync, inflateRawSync } from 'node:zlib'
import { encodeClassStream, encodeInvokeArgs, encodeMethodCall, type JavaContract, PayloadError, writeTar } from './jvm-payload.ts'
import { keccak256 } from './keccak.ts'

export type { JavaContract }
export { type HvmAbiEntry, type HvmBeanAbi, hvmAbi } from './hvm-abi.ts'

/** An argument of an HVM call: a JS value (typed for you) or an explicit Java type and its text. */
export type JvmArg = string | number | bigint | boolean | unknown[] | Record<string, unknown> | { type: string; value: string }

const hex = (bytes: Uint8Array): string => `0x${Buffer.from(bytes).toString('hex')}`
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

/** Every `.class` file under `dir` (the `-d` directory of javac), with `main` as the main class. */
export function readClassDirectory(dir: string, main: string): JavaContract {
  const classes = new Map<string, Uint8Array>()
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.class') && entry.name !== 'module-info.class')
        classes.set(relative(dir, path).split(sep).join('/').slice(0, -'.class'.length), new Uint8Array(readFileSync(path)))
    }
  }
  walk(dir)
  if (!classes.has(main.replaceAll('.', '/'))) throw new Error(`${main} is not among the classes under ${dir}`)
  return { main, classes }
}

/** HVM deploy (and upgrade) payload: FEFFFBCD ‖ main class ‖ the class files. */
export function jvmDeployPayload(contract: JavaContract): string {
  return hex(encodeClassStream(contract))
}

/**
 * Hyperchain 1.x deploy (and upgrade) payload: a protobuf InvokeArgs whose `code` is a tar.gz of
 * one directory holding contract.properties (`contract.name`, `main.class`) and the class files;
 * `initArgs` go to the contract's `onInit`.
 */
export function jvmTarGzDeployPayload(contract: JavaContract, options: { name?: string; initArgs?: string[] } = {}): string {
  const name = options.name ?? contract.main.split('.').pop() ?? 'contract'
  const files = new Map<string, Uint8Array>()
  const pkg = contract.main.includes('.') ? contract.main.slice(0, contract.main.lastIndexOf('.')) : ''
  files.set(`${name}/contract.properties`, utf8(`contract.name=${name}\nmain.class=${contract.main}\npackage.prefix=${pkg}\n`))
  for (const [className, bytes] of [...contract.classes].sort(([a], [b]) => (a < b ? -1 : 1)))
    files.set(`${name}/${className}.class`, bytes)
  const code = new Uint8Array(gzipSync(writeTar(files)))
  return hex(encodeInvokeArgs({ code, args: (options.initArgs ?? []).map(utf8) }))
}

/** The Java type and text an HVM call carries for a JS value. */
export function jvmArg(value: JvmArg): { type: string; value: string } {
  if (typeof value === 'string') return { type: 'java.lang.String', value }
  if (typeof value === 'boolean') return { type: 'boolean', value: String(value) }
  if (typeof value === 'bigint') return { type: 'long', value: value.toString() }
  if (typeof value === 'number')
    return Number.isInteger(value) ? { type: 'long', value: String(value) } : { type: 'double', value: String(value) }
  if (Array.isArray(value)) return { type: 'java.util.List', value: JSON.stringify(value) }
  if (typeof (value as { type?: unknown }).type === 'string' && typeof (value as { value?: unknown }).value === 'string')
    return value as { type: string; value: string }
  return { type: 'java.util.Map', value: JSON.stringify(value) }
}

/** HVM direct method call: FEFFFBCE ‖ method ‖ typed arguments. */
export function jvmCallPayload(method: string, ...args: JvmArg[]): string {
  return hex(encodeMethodCall(method, args.map(jvmArg)))
}

/** Hyperchain 1.x invoke: InvokeArgs{methodName: "invoke", args: [method, ...args]}, every argument a string. */
export function jvmInvokeArgsPayload(method: string, ...args: string[]): string {
  return hex(encodeInvokeArgs({ methodName: 'invoke', args: [method, ...args].map(utf8) }))
}

/** A log topic of a Java contract's event: keccak256 of the event name or of a topic string. */
export function jvmTopic(text: string): string {
  return hex(keccak256(text))
}

/** A receipt's `ret` (hex) as the text the function returned (Strings as they are, numbers in decimal, collections as JSON). */
export function jvmRetText(ret: string): string {
  const digits = ret.startsWith('0x') ? ret.slice(2) : ret
  return Buffer.from(digits === '0' ? '' : digits, 'hex').toString('utf8')
}

// ---- jars ----

/**
 * The files of a jar/zip (stored or deflated entries, no zip64), at most `maxBytes` unpacked in
 * all; a damaged archive is a PayloadError.
 */
export function readZipEntries(bytes: Uint8Array, maxBytes: number): { path: string; bytes: Uint8Array }[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let end = -1
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 65_557); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i
      break
    }
  }
  if (end < 0) throw new PayloadError('the jar/zip has no central directory')
  const count = view.getUint16(end + 10, true)
  let p = view.getUint32(end + 16, true)
  const files: { path: string; bytes: Uint8Array }[] = []
  let total = 0
  for (let i = 0; i < count; i++) {
    if (p + 46 > bytes.length || view.getUint32(p, true) !== 0x02014b50) throw new PayloadError('the jar/zip central directory is damaged')
    const method = view.getUint16(p + 10, true)
    const compressed = view.getUint32(p + 20, true)
    const size = view.getUint32(p + 24, true)
    const nameLength = view.getUint16(p + 28, true)
    const extraLength = view.getUint16(p + 30, true)
    const commentLength = view.getUint16(p + 32, true)
    const local = view.getUint32(p + 42, true)
    const name = new TextDecoder().decode(bytes.subarray(p + 46, p + 46 + nameLength))
    p += 46 + nameLength + extraLength + commentLength
    if (name.endsWith('/')) continue
    if (compressed === 0xffffffff || size === 0xffffffff) throw new PayloadError('zip64 archives are not supported')
    if (local + 30 > bytes.length || view.getUint32(local, true) !== 0x04034b50)
      throw new PayloadError(`the jar/zip entry ${name} is damaged`)
    const dataStart = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true)
    if (dataStart + compressed > bytes.length) throw new PayloadError(`the jar/zip entry ${name} is truncated`)
    const raw = bytes.subarray(dataStart, dataStart + compressed)
    total += size
    if (total > maxBytes) throw new PayloadError(`the jar/zip unpacks to more than ${maxBytes} bytes`)
    let data: Uint8Array
    if (method === 0) data = raw
    else if (method === 8) {
      try {
        data = new Uint8Array(inflateRawSync(raw, { maxOutputLength: maxBytes }))
      } catch (error) {
        throw new PayloadError(`the jar/zip entry ${name} does not inflate: ${(error as Error).message}`)
      }
    } else throw new PayloadError(`the jar/zip entry ${name} uses compression method ${method}`)
    files.push({ path: name, bytes: data })
  }
  return files
}

/** A jar's `.class` files (META-INF and module-info left out) and the `Main-Class` its manifest names: what Hyperchain's tooling deploys. */
export function readJar(jar: Uint8Array): JavaContract {
  const classes = new Map<string, Uint8Array>()
  let main = ''
  for (const file of readZipEntries(jar, 2 * 512 * 1024)) {
    if (file.path === 'META-INF/MANIFEST.MF') {
      main =
        new TextDecoder()
          .decode(file.bytes)
          .replace(/\r?\n /g, '')
          .match(/^Main-Class:\s*(\S+)/m)?.[1] ?? ''
    } else if (file.path.endsWith('.class') && !file.path.startsWith('META-INF/') && !file.path.endsWith('module-info.class')) {
      classes.set(file.path.slice(0, -'.class'.length), file.bytes)
    }
  }
  if (main === '') throw new PayloadError('the jar has no Main-Class in META-INF/MANIFEST.MF')
  return { main, classes }
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** A jar (deflated entries) of the contract's classes with a manifest naming its `Main-Class`, as `jar --main-class` or Maven would pack it. */
export function writeJar(contract: JavaContract): Uint8Array {
  const entries: [string, Uint8Array][] = [
    ['META-INF/MANIFEST.MF', utf8(`Manifest-Version: 1.0\r\nMain-Class: ${contract.main}\r\n\r\n`)],
    ...[...contract.classes].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, bytes]): [string, Uint8Array] => [`${name}.class`, bytes]),
  ]
  const local: Uint8Array[] = []
  const central: Uint8Array[] = []
  let offset = 0
  for (const [path, data] of entries) {
    const name = utf8(path)
    const packed = new Uint8Array(deflateRawSync(data))
    const crc = crc32(data)
    const header = new DataView(new ArrayBuffer(30))
    header.setUint32(0, 0x04034b50, true)
    header.setUint16(4, 20, true)
    header.setUint16(8, 8, true)
    header.setUint32(14, crc, true)
    header.setUint32(18, packed.length, true)
    header.setUint32(22, data.length, true)
    header.setUint16(26, name.length, true)
    local.push(new Uint8Array(header.buffer), name, packed)
    const entry = new DataView(new ArrayBuffer(46))
    entry.setUint32(0, 0x02014b50, true)
    entry.setUint16(4, 20, true)
    entry.setUint16(6, 20, true)
    entry.setUint16(10, 8, true)
    entry.setUint32(16, crc, true)
    entry.setUint32(20, packed.length, true)
    entry.setUint32(24, data.length, true)
    entry.setUint16(28, name.length, true)
    entry.setUint32(42, offset, true)
    central.push(new Uint8Array(entry.buffer), name)
    offset += 30 + name.length + packed.length
  }
  const centralSize = central.reduce((n, part) => n + part.length, 0)
  const end = new DataView(new ArrayBuffer(22))
  end.setUint32(0, 0x06054b50, true)
  end.setUint16(8, entries.length, true)
  end.setUint16(10, entries.length, true)
  end.setUint32(12, centralSize, true)
  end.setUint32(16, offset, true)
  return new Uint8Array(Buffer.concat([...local, ...central, new Uint8Array(end.buffer)]))
}

/** HVM deploy (and upgrade) payload of a jar, as the official SDK builds it: its classes and its manifest's Main-Class as a class stream. */
export function jvmJarDeployPayload(jar: Uint8Array): string {
  return jvmDeployPayload(readJar(jar))
}

/**
 * HVM InvokeBean payload (what the official SDK's `InvokeParams.HvmAbiBuilder` builds for an
 * InvokeBean): u32 class length ‖ u16 name length ‖ the bean's class file ‖ its class name (dotted) ‖
 * the JSON of its fields. The bean implements `cn.hyperchain.contract.BaseInvoke` and runs against
 * the contract in the engine (docs/jvm.md §10).
 */
export function jvmInvokeBeanPayload(beanClass: string, classFile: Uint8Array, fields: Record<string, unknown> = {}): string {
  const name = utf8(beanClass)
  const head = new DataView(new ArrayBuffer(6))
  head.setUint32(0, classFile.length)
  head.setUint16(4, name.length)
  return hex(Buffer.concat([new Uint8Array(head.buffer), classFile, name, utf8(JSON.stringify(fields))]))
}
