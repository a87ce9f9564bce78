/**
 * The Solidity contract ABI: encoding a call (selector and arguments) from a contract's ABI JSON,
 * decoding what it returned (a receipt's `ret`) and the events it logged (a receipt's `log`).
 *
 * ```ts
 * const payload = encodeFunctionCall(abi, 'set', [42n])               // contract_invokeContract
 * const [value] = decodeFunctionResult(abi, 'get', receipt.ret)        // 42n
 * const events = receipt.log.map((log) => decodeEventLog(abi, log))    // { name, args, values }
 * ```
 *
 * Values, both ways: `uintN`/`intN` are `bigint` (a safe-integer `number` or a decimal or `0x`
 * string is accepted when encoding); `address` is `0x` + 40 lower-case hex digits; `bool` is
 * boolean; `bytes` and `bytesN` are `0x` hex (or a Uint8Array when encoding); `string` is a
 * string; arrays are arrays; tuples are arrays (or, when encoding, objects by component name).
 * `fixed`/`ufixed` are not supported (Solidity cannot use them either).
 */
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { keccak256 } from './keccak.ts'

/** A parameter of an ABI entry, as solc writes it. */
export interface AbiParameter {
  name?: string
  type: string
  components?: readonly AbiParameter[]
  indexed?: boolean
  internalType?: string
}

/** One entry of a contract's ABI JSON. */
export interface AbiEntry {
  type: 'function' | 'constructor' | 'event' | 'error' | 'fallback' | 'receive'
  name?: string
  inputs?: readonly AbiParameter[]
  outputs?: readonly AbiParameter[]
  anonymous?: boolean
  stateMutability?: string
}

/** A contract's ABI: the parsed array, or its JSON text (as contract_compileContract returns it). */
export type Abi = readonly AbiEntry[] | string

/** An ABI value that cannot be encoded or decoded; the message says which and why. */
export class AbiError extends Error {
  override name = 'AbiError'
}

/** A decoded event: its name, its arguments by name and in order. */
export interface DecodedEvent {
  name: string
  /** `name(type,…)`, whose Keccak-256 is topics[0] */
  signature: string
  /** by parameter name (unnamed parameters by their position) */
  args: Record<string, unknown>
  /** in declaration order; an indexed string, bytes, array or tuple is its topic (the hash of its value) */
  values: unknown[]
}

type AbiType =
  | { kind: 'uint' | 'int'; bits: number }
  | { kind: 'address' | 'bool' | 'string' | 'bytes' }
  | { kind: 'fixedBytes'; size: number }
  | { kind: 'array'; of: AbiType; length?: number }
  | { kind: 'tuple'; components: AbiType[]; names: (string | undefined)[] }

const WORD = 32

// ---- types ----

/** Parses a canonical type (`uint256`, `bytes32[2][]`, `(address,uint256)[]`) or a solc ABI parameter. */
function parseType(type: string | AbiParameter): AbiType {
  if (typeof type !== 'string') {
    if (!type.type.startsWith('tuple')) return parseType(type.type)
    const tuple: AbiType = {
      kind: 'tuple',
      components: (type.components ?? []).map(parseType),
      names: (type.components ?? []).map((c) => (c.name === '' ? undefined : c.name)),
    }
    return withArraySuffix(tuple, type.type.slice('tuple'.length), type.type)
  }
  const text = type.replace(/\s+/g, '')
  if (text.startsWith('(')) {
    const close = matchingParen(text)
    const inner = text.slice(1, close)
    const components = inner === '' ? [] : splitTopLevel(inner).map((part) => parseType(part))
    return withArraySuffix({ kind: 'tuple', components, names: components.map(() => undefined) }, text.slice(close + 1), type)
  }
  const match = /^([a-z]+)(\d*)((?:\[\d*\])*)$/.exec(text)
  if (match === null) throw new AbiError(`unknown ABI type ${JSON.stringify(type)}`)
  const [, base, size, suffix] = match
  return withArraySuffix(elementaryType(base, size, type), suffix, type)
}

function elementaryType(base: string, size: string, original: string): AbiType {
  const bad = (): never => {
    throw new AbiError(`unknown ABI type ${JSON.stringify(original)}`)
  }
  switch (base) {
    case 'uint':
    case 'int': {
      const bits = size === '' ? 256 : Number(size)
      if (bits < 8 || bits > 256 || bits % 8 !== 0) bad()
      return { kind: base, bits }
    }
    case 'address':
    case 'bool':
    case 'string':
      return size === '' ? { kind: base } : bad()
    case 'bytes': {
      if (size === '') return { kind: 'bytes' }
      const n = Number(size)
      return n >= 1 && n <= 32 ? { kind: 'fixedBytes', size: n } : bad()
    }
    case 'function':
      // an external function pointer: address ‖ selector, 24 bytes
      return size === '' ? { kind: 'fixedBytes', size: 24 } : bad()
    case 'fixed':
    case 'ufixed':
      throw new AbiError(`${original}: fixed-point types are not supported`)
    default:
      return bad()
  }
}

function withArraySuffix(inner: AbiType, suffix: string, original: string): AbiType {
  let type = inner
  for (const dimension of suffix.match(/\[\d*\]/g) ?? []) {
    const digits = dimension.slice(1, -1)
    type = digits === '' ? { kind: 'array', of: type } : { kind: 'array', of: type, length: Number(digits) }
  }
  if ((suffix.match(/\[\d*\]/g) ?? []).join('') !== suffix) throw new AbiError(`unknown ABI type ${JSON.stringify(original)}`)
  return type
}

function matchingParen(text: string): number {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++
    else if (text[i] === ')' && --depth === 0) return i
  }
  throw new AbiError(`unbalanced parentheses in ABI type ${JSON.stringify(text)}`)
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++
    else if (text[i] === ')') depth--
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts
}

/** The canonical spelling of a type, as it enters a signature. */
function canonical(type: AbiType): string {
  switch (type.kind) {
    case 'uint':
    case 'int':
      return `${type.kind}${type.bits}`
    case 'fixedBytes':
      return `bytes${type.size}`
    case 'array':
      return `${canonical(type.of)}[${type.length ?? ''}]`
    case 'tuple':
      return `(${type.components.map(canonical).join(',')})`
    default:
      return type.kind
  }
}

function isDynamic(type: AbiType): boolean {
  if (type.kind === 'string' || type.kind === 'bytes') return true
  if (type.kind === 'array') return type.length === undefined || isDynamic(type.of)
  if (type.kind === 'tuple') return type.components.some(isDynamic)
  return false
}

/** Bytes a type takes in the head of its enclosing tuple. */
function headSize(type: AbiType): number {
  if (isDynamic(type)) return WORD
  if (type.kind === 'array') return (type.length as number) * headSize(type.of)
  if (type.kind === 'tuple') return type.components.reduce((sum, c) => sum + headSize(c), 0)
  return WORD
}

// ---- ABI JSON ----

function entries(abi: Abi): readonly AbiEntry[] {
  const parsed: unknown = typeof abi === 'string' ? JSON.parse(abi) : abi
  if (!Array.isArray(parsed)) throw new AbiError('an ABI is a JSON array of entries')
  return parsed as AbiEntry[]
}

/** `name(type,…)` of a function, event or error entry. */
export function entrySignature(entry: AbiEntry): string {
  return `${entry.name ?? ''}(${(entry.inputs ?? []).map((input) => canonical(parseType(input))).join(',')})`
}

/** The 4-byte selector of a function signature (`transfer(address,uint256)`) or entry, `0x` hex. */
export function functionSelector(signature: string | AbiEntry): string {
  const text = typeof signature === 'string' ? normaliseSignature(signature) : entrySignature(signature)
  return `0x${bytesToHex(keccak256(text).subarray(0, 4))}`
}

/** topics[0] of a non-anonymous event: Keccak-256 of its signature (`Transfer(address,address,uint256)`) or entry. */
export function eventTopic(signature: string | AbiEntry): string {
  const text = typeof signature === 'string' ? normaliseSignature(signature) : entrySignature(signature)
  return `0x${bytesToHex(keccak256(text))}`
}

/** `f(uint, (int,bool)[])` → `f(uint256,(int256,bool)[])` */
function normaliseSignature(signature: string): string {
  const text = signature.replace(/\s+/g, '')
  const open = text.indexOf('(')
  if (open <= 0 || !text.endsWith(')')) throw new AbiError(`not a signature: ${JSON.stringify(signature)} (expected name(type,…))`)
  return `${text.slice(0, open)}${canonical(parseType(text.slice(open)))}`
}

/**
 * The entry of `type` named `name`; `name` may be a full signature (`set(uint256)`) to pick one of
 * several overloads.
 */
function findEntry(abi: Abi, type: 'function' | 'event', name: string): AbiEntry {
  const candidates = entries(abi).filter((entry) => entry.type === type)
  if (name.includes('(')) {
    const wanted = normaliseSignature(name)
    const found = candidates.find((entry) => entrySignature(entry) === wanted)
    if (found === undefined) throw new AbiError(`the ABI has no ${type} ${wanted}`)
    return found
  }
  const named = candidates.filter((entry) => entry.name === name)
  if (named.length === 0) {
    const known = candidates.map((entry) => entry.name).join(', ')
    throw new AbiError(`the ABI has no ${type} named ${name}${known === '' ? '' : ` (it has ${known})`}`)
  }
  if (named.length > 1)
    throw new AbiError(`${name} is overloaded: name one of ${named.map(entrySignature).join(', ')} by its signature instead`)
  return named[0]
}

// ---- encoding ----

/** ABI-encodes `values` as the tuple of `types` (canonical type strings or solc parameters): `0x` hex. */
export function encodeParameters(types: readonly (string | AbiParameter)[], values: readonly unknown[]): string {
  const tuple: AbiType = { kind: 'tuple', components: types.map(parseType), names: types.map(parameterName) }
  return `0x${bytesToHex(encode(tuple, values, 'arguments'))}`
}

function parameterName(type: string | AbiParameter): string | undefined {
  return typeof type === 'string' || type.name === '' ? undefined : type.name
}

/** The payload of a contract call: the function's selector and its ABI-encoded arguments. */
export function encodeFunctionCall(abi: Abi, name: string, args: readonly unknown[] = []): string {
  const entry = findEntry(abi, 'function', name)
  const inputs = entry.inputs ?? []
  if (args.length !== inputs.length)
    throw new AbiError(`${entrySignature(entry)} takes ${inputs.length} argument${inputs.length === 1 ? '' : 's'}, got ${args.length}`)
  return `${functionSelector(entry)}${encodeParameters(inputs, args).slice(2)}`
}

/** The payload of a deployment: the contract's code and its constructor's ABI-encoded arguments. */
export function encodeDeploy(bin: string, abi: Abi = [], args: readonly unknown[] = []): string {
  const code = bin.startsWith('0x') ? bin.slice(2) : bin
  if (!/^([0-9a-fA-F]{2})*$/.test(code)) throw new AbiError('the contract code must be hex (an even number of digits)')
  const inputs = entries(abi).find((entry) => entry.type === 'constructor')?.inputs ?? []
  if (args.length !== inputs.length)
    throw new AbiError(`the constructor takes ${inputs.length} argument${inputs.length === 1 ? '' : 's'}, got ${args.length}`)
  return `0x${code}${inputs.length === 0 ? '' : encodeParameters(inputs, args).slice(2)}`
}

function encode(type: AbiType, value: unknown, path: string): Uint8Array {
  switch (type.kind) {
    case 'uint':
    case 'int':
      return encodeInteger(type.kind === 'int', type.bits, value, path)
    case 'address': {
      const digits = typeof value === 'string' ? value.replace(/^0x/i, '') : ''
      if (!/^[0-9a-fA-F]{40}$/.test(digits)) throw new AbiError(`${path}: an address is 40 hex digits, 0x optional; got ${describe(value)}`)
      return leftPad(hexToBytes(digits))
    }
    case 'bool':
      if (typeof value !== 'boolean') throw new AbiError(`${path}: a bool is true or false, got ${describe(value)}`)
      return encodeInteger(false, 8, value ? 1n : 0n, path)
    case 'fixedBytes': {
      const bytes = bytesOf(value, path)
      if (bytes.length !== type.size) throw new AbiError(`${path}: bytes${type.size} takes exactly ${type.size} bytes, got ${bytes.length}`)
      return rightPad(bytes)
    }
    case 'bytes':
    case 'string': {
      if (type.kind === 'string' && typeof value !== 'string') throw new AbiError(`${path}: a string is text, got ${describe(value)}`)
      const bytes = type.kind === 'string' ? utf8ToBytes(value as string) : bytesOf(value, path)
      return concatBytes(encodeInteger(false, 256, BigInt(bytes.length), path), rightPad(bytes))
    }
    case 'array': {
      if (!Array.isArray(value)) throw new AbiError(`${path}: ${canonical(type)} takes an array, got ${describe(value)}`)
      if (type.length !== undefined && value.length !== type.length)
        throw new AbiError(`${path}: ${canonical(type)} takes exactly ${type.length} elements, got ${value.length}`)
      const items = encodeSequence(
        value.map(() => type.of),
        value,
        value.map((_, i) => `${path}[${i}]`),
      )
      return type.length === undefined ? concatBytes(encodeInteger(false, 256, BigInt(value.length), path), items) : items
    }
    case 'tuple': {
      const values = tupleValues(type, value, path)
      return encodeSequence(
        type.components,
        values,
        type.components.map((_, i) => `${path}.${type.names[i] ?? i}`),
      )
    }
  }
}

/** Heads then tails: static values in place, dynamic ones as offsets to their encoding after the heads. */
function encodeSequence(types: AbiType[], values: readonly unknown[], paths: string[]): Uint8Array {
  const heads: Uint8Array[] = []
  const tails: Uint8Array[] = []
  let tailOffset = types.reduce((sum, type) => sum + headSize(type), 0)
  types.forEach((type, i) => {
    const encoded = encode(type, values[i], paths[i])
    if (isDynamic(type)) {
      heads.push(encodeInteger(false, 256, BigInt(tailOffset), paths[i]))
      tails.push(encoded)
      tailOffset += encoded.length
    } else heads.push(encoded)
  })
  return concatBytes(...heads, ...tails)
}

function tupleValues(type: Extract<AbiType, { kind: 'tuple' }>, value: unknown, path: string): readonly unknown[] {
  if (Array.isArray(value)) {
    if (value.length !== type.components.length)
      throw new AbiError(`${path}: ${canonical(type)} takes ${type.components.length} values, got ${value.length}`)
    return value
  }
  if (value !== null && typeof value === 'object' && type.names.every((name) => name !== undefined)) {
    const record = value as Record<string, unknown>
    for (const name of type.names) if (!((name as string) in record)) throw new AbiError(`${path}: missing ${name}`)
    return type.names.map((name) => record[name as string])
  }
  throw new AbiError(`${path}: ${canonical(type)} takes an array of its values (or an object by component name), got ${describe(value)}`)
}

function encodeInteger(signed: boolean, bits: number, value: unknown, path: string): Uint8Array {
  let n: bigint
  if (typeof value === 'bigint') n = value
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value)
  else if (typeof value === 'string' && /^(-?[0-9]+|0x[0-9a-fA-F]+)$/.test(value.trim())) n = BigInt(value.trim())
  else
    throw new AbiError(
      `${path}: ${signed ? 'int' : 'uint'}${bits} takes an integer (bigint, safe number, decimal or 0x string), got ${describe(value)}`,
    )
  const min = signed ? -(1n << BigInt(bits - 1)) : 0n
  const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n
  if (n < min || n > max) throw new AbiError(`${path}: ${n} is out of range for ${signed ? 'int' : 'uint'}${bits}`)
  const word = n < 0n ? (1n << 256n) + n : n
  return hexToBytes(word.toString(16).padStart(64, '0'))
}

function bytesOf(value: unknown, path: string): Uint8Array {
  if (value instanceof Uint8Array) return value
  if (typeof value === 'string' && /^(0x)?([0-9a-fA-F]{2})*$/.test(value)) return hexToBytes(value.replace(/^0x/, ''))
  throw new AbiError(`${path}: bytes are hex (an even number of digits, 0x optional) or a Uint8Array, got ${describe(value)}`)
}

// ---- decoding ----

/** Decodes ABI-encoded data (`0x` hex or bytes) as the tuple of `types`. */
export function decodeParameters(types: readonly (string | AbiParameter)[], data: string | Uint8Array): unknown[] {
  const bytes = typeof data === 'string' ? dataBytes(data) : data
  const tuple: AbiType = { kind: 'tuple', components: types.map(parseType), names: types.map(parameterName) }
  return decode(tuple, bytes, 0, 'data') as unknown[]
}

/** What a function returned, decoded from a receipt's `ret` by the function's outputs. */
export function decodeFunctionResult(abi: Abi, name: string, ret: string | Uint8Array): unknown[] {
  const entry = findEntry(abi, 'function', name)
  return decodeParameters(entry.outputs ?? [], ret)
}

/**
 * Decodes a log by the event of `abi` whose topic is its topics[0] (anonymous events are matched
 * by their indexed and data layout only when `name` is given); undefined when no event matches.
 */
export function decodeEventLog(abi: Abi, log: { topics: readonly string[]; data: string }, name?: string): DecodedEvent | undefined {
  const events = entries(abi).filter((entry) => entry.type === 'event')
  const entry =
    name !== undefined
      ? findEntry(abi, 'event', name)
      : events.find((candidate) => !candidate.anonymous && log.topics[0]?.toLowerCase() === eventTopic(candidate))
  if (entry === undefined) return undefined
  const inputs = entry.inputs ?? []
  const topics = entry.anonymous ? log.topics : log.topics.slice(1)
  const indexed = inputs.filter((input) => input.indexed)
  if (topics.length !== indexed.length)
    throw new AbiError(`${entrySignature(entry)} has ${indexed.length} indexed parameters, the log ${topics.length} topics for them`)
  const fromData = decodeParameters(
    inputs.filter((input) => !input.indexed),
    log.data,
  )
  let nextTopic = 0
  let nextData = 0
  const values = inputs.map((input) => {
    if (!input.indexed) return fromData[nextData++]
    const topic = topics[nextTopic++]
    const type = parseType(input)
    // the topic of a dynamic value (or of a tuple or array) is the hash of its encoding: keep it as is
    return isDynamic(type) || type.kind === 'array' || type.kind === 'tuple' ? topic.toLowerCase() : decodeParameters([input], topic)[0]
  })
  const args: Record<string, unknown> = {}
  inputs.forEach((input, i) => {
    args[input.name === undefined || input.name === '' ? String(i) : input.name] = values[i]
  })
  return { name: entry.name ?? '', signature: entrySignature(entry), args, values }
}

/**
 * Why a call reverted, from its revert data (`ret`): the message of a `revert("…")` /
 * `require(…, "…")` (an Error(string)), or `panic 0x11` for a Panic(uint256) (0x01 assert, 0x11
 * overflow, 0x12 division by zero, 0x32 index out of bounds, …); undefined for any other data.
 * The node words the failure of a contract's receipt with it.
 */
export function decodeRevertReason(ret: string | Uint8Array): string | undefined {
  const bytes = typeof ret === 'string' ? dataBytes(ret) : ret
  if (bytes.length < 4) return undefined
  try {
    switch (bytesToHex(bytes.subarray(0, 4))) {
      case '08c379a0':
        return decodeParameters(['string'], bytes.subarray(4))[0] as string
      case '4e487b71':
        return `panic 0x${(decodeParameters(['uint256'], bytes.subarray(4))[0] as bigint).toString(16)}`
      default:
        return undefined
    }
  } catch {
    return undefined
  }
}

/** `0x` hex to bytes; a node's `ret` of no bytes is `0x0`. */
function dataBytes(data: string): Uint8Array {
  const digits = data.startsWith('0x') || data.startsWith('0X') ? data.slice(2) : data
  if (digits === '0' || digits === '') return new Uint8Array(0)
  if (!/^([0-9a-fA-F]{2})*$/.test(digits)) throw new AbiError('ABI data must be hex (an even number of digits)')
  return hexToBytes(digits)
}

function decode(type: AbiType, data: Uint8Array, at: number, path: string): unknown {
  switch (type.kind) {
    case 'uint':
    case 'int': {
      const word = readWord(data, at, path)
      const n = BigInt(`0x${bytesToHex(word)}`)
      if (type.kind === 'uint') {
        if (n >> BigInt(type.bits) !== 0n) throw new AbiError(`${path}: ${n} does not fit uint${type.bits}`)
        return n
      }
      const signed = n >> 255n === 1n ? n - (1n << 256n) : n
      const limit = 1n << BigInt(type.bits - 1)
      if (signed < -limit || signed >= limit) throw new AbiError(`${path}: ${signed} does not fit int${type.bits}`)
      return signed
    }
    case 'address':
      return `0x${bytesToHex(readWord(data, at, path).subarray(12))}`
    case 'bool': {
      const n = decode({ kind: 'uint', bits: 8 }, data, at, path) as bigint
      if (n > 1n) throw new AbiError(`${path}: ${n} is not a bool`)
      return n === 1n
    }
    case 'fixedBytes':
      return `0x${bytesToHex(readWord(data, at, path).subarray(0, type.size))}`
    case 'bytes':
    case 'string': {
      const length = offsetAt(data, at, path)
      const end = at + WORD + length
      if (end > data.length) throw new AbiError(`${path}: ${length} bytes run past the end of the data`)
      const bytes = data.subarray(at + WORD, end)
      return type.kind === 'string' ? new TextDecoder().decode(bytes) : `0x${bytesToHex(bytes)}`
    }
    case 'array': {
      const length = type.length ?? offsetAt(data, at, path)
      const start = type.length === undefined ? at + WORD : at
      // each element takes at least one byte of the data: a claimed length beyond it is a lie
      if (length > data.length) throw new AbiError(`${path}: an array of ${length} elements cannot fit ${data.length} bytes`)
      return decodeSequence(
        Array.from({ length }, () => type.of),
        data,
        start,
        Array.from({ length }, (_, i) => `${path}[${i}]`),
      )
    }
    case 'tuple':
      return decodeSequence(
        type.components,
        data,
        at,
        type.components.map((_, i) => `${path}.${type.names[i] ?? i}`),
      )
  }
}

function decodeSequence(types: AbiType[], data: Uint8Array, base: number, paths: string[]): unknown[] {
  const out: unknown[] = []
  let head = base
  types.forEach((type, i) => {
    if (isDynamic(type)) {
      const offset = base + offsetAt(data, head, paths[i])
      if (offset > data.length) throw new AbiError(`${paths[i]}: offset ${offset} points past the end of the data`)
      out.push(decode(type, data, offset, paths[i]))
    } else out.push(decode(type, data, head, paths[i]))
    head += headSize(type)
  })
  return out
}

function readWord(data: Uint8Array, at: number, path: string): Uint8Array {
  if (at + WORD > data.length) throw new AbiError(`${path}: the data ends at byte ${data.length}, before the word at ${at}`)
  return data.subarray(at, at + WORD)
}

/** A length or offset word: an integer that must fit the data. */
function offsetAt(data: Uint8Array, at: number, path: string): number {
  const n = BigInt(`0x${bytesToHex(readWord(data, at, path))}`)
  if (n > BigInt(data.length)) throw new AbiError(`${path}: ${n} is beyond the ${data.length} bytes of the data`)
  return Number(n)
}

// ---- bytes ----

function leftPad(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(WORD)
  out.set(bytes, WORD - bytes.length)
  return out
}

function rightPad(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(bytes.length / WORD) * WORD)
  out.set(bytes)
  return out
}

function describe(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)
  if (value instanceof Uint8Array) return `${value.length} bytes`
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
