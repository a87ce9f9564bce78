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
 * ```ts
 * const contract = readClassDirectory('build/classes', 'demo.Counter')   // javac -d build/classes …
 * const payload = jvmDeployPayload(contract)                             // sign with type "JVM"
 * const call = jvmCallPayload('add', 'visits', 5)
 * ```
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { gzipSync } from 'node:zlib'
import { encodeClassStream, encodeInvokeArgs, encodeMethodCall, type JavaContract, writeTar } from './jvm-payload.ts'
import { keccak256 } from './keccak.ts'

export type { JavaContract }

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
