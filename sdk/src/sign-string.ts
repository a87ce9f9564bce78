/**
 * Sign strings: the exact text a client hashed and signed for a transaction.
 *
 * Three generations of clients sign three different texts, and a transaction carries no marker of
 * which one it used (protocol.md §1, sdk-wire.md §4.1):
 * - the 2017 node's string (Hyperchain 1.4 `SignHash`; the 2017 manual's examples);
 * - format A, the Java SDK when the node reports no transaction version;
 * - format B, the official JS SDK (always with every section, because its version comparison is
 *   broken, sdk-wire.md §2) and later SDKs.
 * So the node rebuilds every candidate and accepts a signature that matches any one of them.
 */
import { bytesToHex } from '@noble/hashes/utils.js'

export type Int = bigint | number

/**
 * A received transaction object, keys already normalised to these names (e.g. the SDK's `opCode`
 * arrives here as `opcode`). Integers are `bigint` when outside the safe range (lossless JSON).
 * A missing `to` means a deployment.
 */
export interface TxFields {
  from: string
  to?: string | null
  /** transfer amount: a JSON integer, or a decimal or 0x-hex string (tx_sendTransaction accepts both) */
  value?: Int | string | null
  payload?: string | null
  timestamp: Int
  nonce: Int
  extra?: string | null
  /** vm type: EVM, HVM, BVM, TRANSFER, KVSQL, FVM, JVM */
  type?: string | null
  opcode?: Int | null
  /** transaction format version the client used ("4.1"); only the JS SDK sends it */
  version?: string | null
  extraIdInt64?: readonly Int[] | null
  extraIdString?: readonly string[] | null
  cname?: string | null
  gasPrice?: Int | null
  gasLimit?: Int | null
  expirationTimestamp?: Int | null
  /** as on the wire: base64 of the address bytes (or of a DID's UTF-8 text) */
  participant?: { initiator?: string | null; withholding?: readonly string[] | null } | null
}

export interface SignStringOptions {
  /** the version tx_getTransactionsVersion reports; clients that send no `version` signed with it */
  nodeVersion?: string
}

/** What Keel answers to tx_getTransactionsVersion (sdk-wire.md §2 recommends ≥ 3.6). */
export const DEFAULT_NODE_TX_VERSION = '4.1'

/** JS SDK defaults for the 3.6 fields, used when a transaction that declares a version omits them. */
const SDK_DEFAULT_GAS_LIMIT = 1_000_000_000n
const SDK_DEFAULT_EXPIRATION_NS = 300_000_000_000n

/**
 * Every distinct candidate sign string, most likely first, so that verification of real traffic
 * usually stops at the first try:
 * - with a JSON `version` (JS SDK): format B with every section, format B with the sections that
 *   version really implies, then the rest;
 * - always: the 2017 string, format A, format B with the node's version without the 3.6 section.
 */
export function signStringCandidates(tx: TxFields, options: SignStringOptions = {}): string[] {
  return [...eachSignStringCandidate(tx, options)]
}

/**
 * The candidates of signStringCandidates one at a time, built only when asked for: verification
 * of a JS SDK transaction usually matches the first and never builds the others. Throws (on the
 * first step) when a field is malformed.
 */
export function* eachSignStringCandidate(tx: TxFields, options: SignStringOptions = {}): Generator<string, void, undefined> {
  for (const candidate of eachSignStringCandidateOf(tx, options)) yield candidate.text
}

/** Which text a candidate is: it decides which fields a signature over it covers (sign-coverage.ts). */
export type SignStringKind = { format: '2017' } | { format: 'A' } | { format: 'B'; version: string; sections: FormatBSections }

/** eachSignStringCandidate, each text with its kind. */
export function* eachSignStringCandidateOf(
  tx: TxFields,
  options: SignStringOptions = {},
): Generator<{ text: string; kind: SignStringKind }, void, undefined> {
  // Built in order, one at a time, and nothing else is made before the first: verification of a
  // JS SDK transaction matches that one (docs/pipeline.md, "Session 4").
  const nodeVersion = options.nodeVersion ?? DEFAULT_NODE_TX_VERSION
  const version = tx.version != null && tx.version !== '' ? tx.version : undefined
  const seen: string[] = []
  const fresh = (text: string, kind: SignStringKind): { text: string; kind: SignStringKind } | undefined => {
    if (seen.includes(text)) return undefined
    seen.push(text)
    return { text, kind }
  }
  if (version !== undefined) {
    const all = fresh(formatB(tx, true, version, 'all'), { format: 'B', version, sections: 'all' })
    if (all) yield all
    const implied = fresh(formatB(tx, true, version, 'implied'), { format: 'B', version, sections: 'implied' })
    if (implied) yield implied
  }
  const of2017 = fresh(signString2017(tx), { format: '2017' })
  if (of2017) yield of2017
  const formatA = fresh(signStringFormatA(tx), { format: 'A' })
  if (formatA) yield formatA
  const before36 = fresh(formatB(tx, true, nodeVersion, 'before3.6'), { format: 'B', version: nodeVersion, sections: 'before3.6' })
  if (before36) yield before36
  if (tx.extraIdString != null && tx.extraIdString.length > 0) {
    // The JS SDK's extraid is wrong whenever string IDs are present; other clients get it right.
    const correctAll =
      version === undefined ? undefined : fresh(formatB(tx, false, version, 'all'), { format: 'B', version, sections: 'all' })
    if (correctAll) yield correctAll
    const correctBefore36 = fresh(formatB(tx, false, nodeVersion, 'before3.6'), {
      format: 'B',
      version: nodeVersion,
      sections: 'before3.6',
    })
    if (correctBefore36) yield correctBefore36
  }
}

/**
 * The 2017 node's string (protocol.md §1.1):
 * `from=0x…&to=0x…&value=0x…&timestamp=0x…&nonce=0x…`, where value is the payload when there is
 * one (the amount is then not signed) and otherwise the amount in hex.
 */
export function signString2017(tx: TxFields): string {
  const payload = goPayloadHex(tx.payload)
  const value = payload === '' ? goHex(amountOf(tx)) : `0x${payload}`
  return `from=${goAddress(tx.from)}&to=${tx.to == null ? '0x0' : goAddress(tx.to)}&value=${value}&timestamp=${goHex(int(tx.timestamp, 'timestamp'))}&nonce=${goHex(int(tx.nonce, 'nonce'))}`
}

/**
 * Format A, the Java SDK's "hyperchain" string (protocol.md §1.2): the 2017 string plus
 * `&opcode=<decimal>&extra=<extra>&vmtype=<type>`. The payload keeps the case it was sent in.
 */
export function signStringFormatA(tx: TxFields): string {
  const payload = isBlank(tx.payload) ? undefined : with0x(tx.payload as string)
  const value = payload ?? hex(amountOf(tx))
  return [
    `from=${lower0x(tx.from)}`,
    `to=${tx.to == null ? '0x0' : lower0x(tx.to)}`,
    `value=${value}`,
    `timestamp=${hex(int(tx.timestamp, 'timestamp'))}`,
    `nonce=${hex(int(tx.nonce, 'nonce'))}`,
    `opcode=${opcodeOf(tx).toString(10)}`,
    `extra=${tx.extra ?? ''}`,
    `vmtype=${vmTypeOf(tx)}`,
  ].join('&')
}

/**
 * Which optional sections of format B to include:
 * - `all`: every section whatever the version (what the JS SDK 1.1.0 does, sdk-wire.md §2);
 * - `implied`: the sections a correct comparison of `version` implies (≥2.1 extraid, ≥2.2 cname,
 *   ≥3.6 gas/expiration/participant);
 * - `before3.6`: as `implied` but never the 3.6 section (clients that learnt the version from the
 *   node and predate it, protocol.md §1.2 candidate 4).
 */
export type FormatBSections = 'all' | 'implied' | 'before3.6'

/**
 * Format B, the "flato" string (protocol.md §1.2, sdk-wire.md §4.1): what the official JS SDK signs
 * and what the client package signs (version "4.1", every section). `extraIdBug` (default true)
 * reproduces the JS SDK's wrong `extraid` when string IDs are present; a correct client passes false.
 */
export function signStringFormatB(tx: TxFields, options: { version: string; sections: FormatBSections; extraIdBug?: boolean }): string {
  return formatB(tx, options.extraIdBug ?? true, options.version, options.sections)
}

/** Whether format B of `version` with `sections` holds the section of `minimum` (2.1 extraid, 2.2 cname, 3.6 gas/expiration/participant). */
export function formatBHasSection(version: string, sections: FormatBSections, minimum: '2.1' | '2.2' | '3.6'): boolean {
  return sections === 'all' || (versionAtLeast(version, minimum) && !(sections === 'before3.6' && minimum === '3.6'))
}

/** Concatenated, not joined from an array: it is built for every transaction verified. */
function formatB(tx: TxFields, extraIdBug: boolean, version: string, sections: FormatBSections): string {
  // fields are read in the order they always were, so a malformed one is named as before
  const timestamp = intHex(tx.timestamp, 'timestamp')
  let text =
    `from=${lower0x(tx.from)}&to=${tx.to == null ? '0x0' : lower0x(tx.to)}&value=${amountHex(tx)}` +
    `&payload=${isBlank(tx.payload) ? '0x0' : lower0x(tx.payload as string)}&timestamp=${timestamp}` +
    `&nonce=${intHex(tx.nonce, 'nonce')}&opcode=${tx.opcode == null ? '0' : intHex(tx.opcode, 'opcode', '')}` +
    `&extra=${tx.extra ?? ''}&vmtype=${vmTypeOf(tx)}&version=${version}`
  if (formatBHasSection(version, sections, '2.1')) text += `&extraid=${extraId(tx, extraIdBug)}`
  if (formatBHasSection(version, sections, '2.2')) text += `&cname=${tx.cname ?? ''}`
  if (formatBHasSection(version, sections, '3.6')) {
    const expiration =
      tx.expirationTimestamp == null
        ? hex(int(tx.timestamp, 'timestamp') + SDK_DEFAULT_EXPIRATION_NS)
        : intHex(tx.expirationTimestamp, 'expirationTimestamp')
    text +=
      `&price=${tx.gasPrice == null ? '0x0' : intHex(tx.gasPrice, 'gasPrice')}` +
      `&gasLimit=${tx.gasLimit == null ? hex(SDK_DEFAULT_GAS_LIMIT) : intHex(tx.gasLimit, 'gasLimit')}&expirationTimestamp=${expiration}`
    const participant = tx.participant
    if (participant == null) text += '&initiator=&withholding='
    else {
      const withholding = (participant.withholding ?? []).map(base64ToHex0x).join(',')
      text += `&initiator=${participant.initiator == null ? '' : base64ToHex0x(participant.initiator)}&withholding=[${withholding}]`
    }
  }
  return text
}

/**
 * The `extraid` value: "" without IDs, else a JSON array of the int64 IDs then the string IDs.
 * The JS SDK 1.1.0 pushes `ids[i]` (the i-th element of the list built so far) instead of the i-th
 * string, so `["abc"]` alone signs as `[null]` and `[7]` + `["x"]` as `[7,7]` (sdk-wire.md §4.1).
 */
export function extraId(tx: Pick<TxFields, 'extraIdInt64' | 'extraIdString'>, sdkBug: boolean): string {
  const ids: (bigint | string | undefined)[] = (tx.extraIdInt64 ?? []).map((id) => int(id, 'extraIdInt64'))
  const strings = tx.extraIdString ?? []
  for (let i = 0; i < strings.length; i++) ids.push(sdkBug ? ids[i] : strings[i])
  if (ids.length === 0) return ''
  return `[${ids.map((id) => (id === undefined ? 'null' : typeof id === 'bigint' ? id.toString() : JSON.stringify(id))).join(',')}]`
}

/** Compares dotted version strings numerically ("2.10" > "2.9"); non-numeric parts count as 0. */
export function versionAtLeast(version: string, minimum: string): boolean {
  const a = version.split('.').map((part) => Number.parseInt(part, 10) || 0)
  const b = minimum.split('.').map((part) => Number.parseInt(part, 10) || 0)
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    if (x !== y) return x > y
  }
  return true
}

/** Converts a JSON integer (number or bigint) to bigint; rejects fractions and non-numbers. */
export function int(value: Int | string | null | undefined, name: string): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value)
  if (typeof value === 'string' && /^(0x[0-9a-fA-F]+|-?[0-9]+)$/.test(value)) return BigInt(value)
  throw new TypeError(`${name} must be an integer, got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`)
}

/**
 * `prefix` + hex of int(value, name), as `hex` prints it; a safe-integer number skips the BigInt
 * (Number#toString(16) prints those digits exactly, a minus sign included).
 */
function intHex(value: Int | string | null | undefined, name: string, prefix = '0x'): string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return prefix + value.toString(16)
  return prefix + int(value, name).toString(16)
}

/** hex(amountOf(tx)) */
function amountHex(tx: Pick<TxFields, 'value'>): string {
  return tx.value == null || tx.value === '' ? '0x0' : intHex(tx.value, 'value')
}

/** The transfer amount; missing means 0. */
export function amountOf(tx: Pick<TxFields, 'value'>): bigint {
  return tx.value == null || tx.value === '' ? 0n : int(tx.value, 'value')
}

function opcodeOf(tx: TxFields): bigint {
  return tx.opcode == null ? 0n : int(tx.opcode, 'opcode')
}

function vmTypeOf(tx: TxFields): string {
  return tx.type == null || tx.type === '' ? 'EVM' : tx.type
}

/** `0x` + lower-case hex without padding; negative values as Go's strconv.FormatInt prints them (`0x-64`). */
function hex(value: bigint): string {
  return `0x${value.toString(16)}`
}

const goHex = hex

/** Go's common.ToHex of a 20-byte address as decoded by the 2017 node: `0x` + lower-case hex. */
function goAddress(address: string): string {
  return `0x${strip0x(address).toLowerCase()}`
}

/**
 * Hex (no 0x) of the payload bytes as the 2017 node decodes them (common.FromHex: an odd length
 * gets a leading 0); "" for no payload, `0x` or "".
 */
function goPayloadHex(payload: string | null | undefined): string {
  if (payload == null) return ''
  const digits = strip0x(payload).toLowerCase()
  if (!/^[0-9a-f]*$/.test(digits)) throw new TypeError('payload must be hex')
  return digits.length % 2 === 1 ? `0${digits}` : digits
}

function isBlank(value: string | null | undefined): boolean {
  return value == null || value.trim() === ''
}

function strip0x(value: string): string {
  return value.startsWith('0x') || value.startsWith('0X') ? value.slice(2) : value
}

function with0x(value: string): string {
  return value.startsWith('0x') ? value : `0x${value}`
}

/** The SDKs' `toStartWith0x(s, {toLowerCase: true})`: lower-case, then add 0x if missing. */
function lower0x(value: string): string {
  return with0x(value.toLowerCase())
}

/** A participant entry as signed: `0x` + hex of the bytes its base64 encodes (sdk-wire.md §4.1). */
function base64ToHex0x(value: string): string {
  return `0x${bytesToHex(new Uint8Array(Buffer.from(value, 'base64')))}`
}
