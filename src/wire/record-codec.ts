/**
 * How keyspaces 6 `txs`, 7 `receipts` and 8 `invalidTxs` store their records, and the binary form
 * of an admitted transaction (wire/tx-codec.ts): one record per transaction, the bulk of the ledger
 * and of the work between a transaction's arrival and its commit.
 *
 * Two forms are read; the second is written:
 * - **v1** `0xc1 ‖ msgpack` (msgpackr record structures, long hex text as bytes in extensions):
 *   written by the versions of issues 23–27's first session. Still read, for ever.
 * - **v2** `0xc1 0xc1 ‖ value`, this file's own tagged form (below). It exists because v1's encoder
 *   walked every record into a copy (to swap hex strings for extension objects) before msgpackr
 *   walked it again: ~15 µs to encode and ~11 µs to decode a transfer, paid on the verify workers
 *   and the chain thread for every transaction (docs/pipeline.md, issue 27). v2 writes in one walk
 *   straight into a buffer and reads with no intermediate objects.
 * `0xc1` is the one byte msgpack never uses, so entries written before either (plain msgpack maps,
 * lmdb-js's default encoder) still read as they are, and `0xc1 0xc1` is never a v1 record.
 *
 * A v2 value is a tag byte, then:
 *   0x00 null · 0x01 false · 0x02 true · 0x03 undefined
 *   0x04 an integer number, |n| < 2^52 (not -0): zigzag varint
 *   0x05 any other number: float64, big-endian
 *   0x06 a bigint, |n| < 2^52: zigzag varint · 0x07 any other bigint: sign byte, varint length, magnitude big-endian
 *        (eight bytes below 2^64, else the fewest)
 *   0x08 a string: varint length, UTF-8
 *   0x09 / 0x0a lower-case hex text of 20 bytes or more, with / without `0x`: varint length, the bytes
 *        (hashes, addresses and signatures: half the size, and no text to scan on reading)
 *   0x0b a Uint8Array: varint length, the bytes
 *   0x0c an array: varint count, the values
 *   0x0d an object: varint count, then each key and its value; a key is a varint, k > 0 naming
 *        KEYS[k − 1], or 0 and then the key as varint length + UTF-8
 * (varint: unsigned LEB128.) A value reads back exactly as it was written: same keys in the same
 * order, same strings, bigints as bigints and numbers as numbers.
 *
 * A transaction is encoded once per node (issue 27): the transaction decoded from its admission
 * record remembers those bytes, and a record that holds it (the CommittedTx, an InvalidTx) copies
 * them in place of encoding it again — a value's v2 bytes depend only on the value, so the copy is
 * exactly what encoding it would write.
 *
 * KEYS and v1's STRUCTURES are append-only like the keyspace list: an index, once written to a
 * ledger, must keep its meaning for ever (test/unit/store/record-codec.test.ts decodes bytes
 * written by the first lists).
 */
import { addExtension, Unpackr } from 'msgpackr'
import { bytesToHex, plainHex } from './hex.ts'
import { lowerHexDigit } from './hex-digits.ts'

const MARK = 0xc1

// ---- v1's extensions (read only): msgpack extension types 0x30–0x32 ----

/** lower-case hex text of 20 bytes or more, with `0x` (hashes, addresses) */
addExtension({ type: 0x30, read: (bytes: Uint8Array) => bytesToHex(bytes) } as Parameters<typeof addExtension>[0])
/** the same without it (the signature inside a transaction's `signed` params) */
addExtension({ type: 0x31, read: plainHex } as Parameters<typeof addExtension>[0])
/** a record's msgpack body encoded earlier, embedded as it is (msgpackr's unpack is re-entrant) */
addExtension({ type: 0x32, read: (bytes: Uint8Array) => packr.unpack(bytes) } as Parameters<typeof addExtension>[0])

const STRUCTURES: string[][] = [
  // 0 CommittedTx
  ['tx', 'blockNumber', 'blockHash', 'txIndex', 'executeTimeNs'],
  // 1 SignedTx (wire/tx-codec.ts, chain/admission.ts)
  [
    'hash',
    'kind',
    'from',
    'to',
    'value',
    'payload',
    'timestamp',
    'nonce',
    'extra',
    'opcode',
    'vmType',
    'signature',
    'signHash',
    'simulate',
    'signed',
  ],
  // 2 Receipt (chain/producer.ts receiptOf)
  ['txHash', 'vmType', 'contractAddress', 'gasUsed', 'ret', 'logs', 'blockNumber', 'blockHash', 'txIndex', 'version'],
  // 3 Log
  ['address', 'topics', 'data'],
  // 4 InvalidTx
  ['tx', 'invalidMsg', 'detail', 'blockNumber'],
  // 5–7 `signed` of the official SDK's transfer, contract and maintenance transactions
  ['from', 'to', 'timestamp', 'nonce', 'type', 'value', 'signature', 'gasPrice', 'gasLimit', 'expirationTimestamp', 'version', 'opcode'],
  ['from', 'to', 'timestamp', 'nonce', 'type', 'payload', 'signature', 'gasPrice', 'gasLimit', 'expirationTimestamp', 'version', 'opcode'],
  [
    'from',
    'to',
    'timestamp',
    'nonce',
    'type',
    'payload',
    'signature',
    'gasPrice',
    'gasLimit',
    'expirationTimestamp',
    'version',
    'opcode',
    'vmType',
  ],
]

const packrOptions = {
  useRecords: true,
  structures: STRUCTURES.map((keys) => [...keys]),
  maxSharedStructures: STRUCTURES.length,
  // the list above is fixed: a new shape is written inline, never added to it (nothing persists the list)
  shouldShareStructure: () => false,
  useBigIntExtension: true,
  mapsAsObjects: true,
  // lmdb-js hands the decoder a buffer it reuses for the next read
  copyBuffers: true,
}
const packr = new Unpackr(packrOptions as ConstructorParameters<typeof Unpackr>[0])
/** the encoder lmdb-js used for these keyspaces before: entries without the mark */
const plain = new Unpackr({ useRecords: false, useBigIntExtension: true, mapsAsObjects: true, copyBuffers: true } as ConstructorParameters<
  typeof Unpackr
>[0])

/**
 * Values decoded from v2 bytes, with those bytes: written again as they are. Only values nobody
 * changes after decoding belong here (a SignedTx never changes once admitted).
 */
const encodedBodies = new WeakMap<object, Uint8Array>()

// ---- v2 ----

const V2 = 0xc1
const TAG = {
  null: 0x00,
  false: 0x01,
  true: 0x02,
  undefined: 0x03,
  int: 0x04,
  float: 0x05,
  smallBigint: 0x06,
  bigint: 0x07,
  string: 0x08,
  prefixedHex: 0x09,
  bareHex: 0x0a,
  bytes: 0x0b,
  array: 0x0c,
  object: 0x0d,
} as const

/** object keys written as one byte; append-only (an index once written keeps its key) */
const KEYS = [
  // SignedTx
  'hash',
  'kind',
  'from',
  'to',
  'value',
  'payload',
  'timestamp',
  'nonce',
  'extra',
  'opcode',
  'vmType',
  'signature',
  'signHash',
  'simulate',
  'signed',
  // the signed params of the SDKs
  'type',
  'opCode',
  'gasPrice',
  'gasLimit',
  'expirationTimestamp',
  'version',
  'extraIdInt64',
  'extraIdString',
  'cname',
  // CommittedTx
  'tx',
  'blockNumber',
  'blockHash',
  'txIndex',
  'executeTimeNs',
  // Receipt, Log
  'txHash',
  'contractAddress',
  'gasUsed',
  'ret',
  'logs',
  'address',
  'topics',
  'data',
  // InvalidTx
  'invalidMsg',
  'detail',
]
const KEY_CODE = new Map(KEYS.map((key, index) => [key, index + 1]))

const SMALL = 2 ** 52
const SMALL_BIGINT = 2n ** 52n
const UINT64 = 2n ** 64n

/** the encoder's buffer, reused: a record is written here, then copied out at its length */
let out = Buffer.allocUnsafe(64 * 1024)
let at = 0

function room(bytes: number): void {
  if (at + bytes <= out.length) return
  const larger = Buffer.allocUnsafe(Math.max(out.length * 2, at + bytes))
  out.copy(larger, 0, 0, at)
  out = larger
}

function writeVarint(n: number): void {
  room(8)
  while (n >= 0x80) {
    out[at++] = (n % 0x80) | 0x80
    n = Math.floor(n / 0x80)
  }
  out[at++] = n
}

const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1)

/**
 * Lower-case hex text of 20 bytes or more (after an optional `0x`) as its bytes; false, and nothing
 * written, for any other string.
 */
function writeHex(text: string): boolean {
  const prefixed = text.charCodeAt(0) === 48 && text.charCodeAt(1) === 120
  const from = prefixed ? 2 : 0
  const digits = text.length - from
  if (digits < 40 || digits % 2 !== 0) return false
  const length = digits / 2
  const mark = at
  room(length + 10)
  out[at++] = prefixed ? TAG.prefixedHex : TAG.bareHex
  writeVarint(length)
  for (let i = from; i < text.length; i += 2) {
    const high = lowerHexDigit(text.charCodeAt(i))
    const low = lowerHexDigit(text.charCodeAt(i + 1))
    if (high < 0 || low < 0) {
      at = mark
      return false
    }
    out[at++] = high * 16 + low
  }
  return true
}

function writeString(text: string): void {
  room(text.length * 3 + 10)
  out[at++] = TAG.string
  writeText(text)
}

function writeText(text: string): void {
  // UTF-8 is at most 3 bytes a UTF-16 unit
  room(text.length * 3 + 10)
  if (text.length < 43) {
    // one byte of length for the usual short text, and ASCII copied without a call into C++
    const lengthAt = at++
    let i = 0
    for (; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code >= 0x80) break
      out[at + i] = code
    }
    const written = i === text.length ? i : out.write(text, at, 'utf8')
    out[lengthAt] = written
    at += written
    return
  }
  const written = Buffer.byteLength(text)
  writeVarint(written)
  at += out.write(text, at, 'utf8')
}

function writeValue(value: unknown): void {
  switch (typeof value) {
    case 'string':
      if (value.length >= 40 && writeHex(value)) return
      writeString(value)
      return
    case 'number':
      room(10)
      if (Number.isInteger(value) && value < SMALL && value > -SMALL && !Object.is(value, -0)) {
        out[at++] = TAG.int
        writeVarint(zigzag(value))
      } else {
        out[at++] = TAG.float
        out.writeDoubleBE(value, at)
        at += 8
      }
      return
    case 'bigint':
      room(10)
      if (value < SMALL_BIGINT && value > -SMALL_BIGINT) {
        out[at++] = TAG.smallBigint
        writeVarint(zigzag(Number(value)))
      } else {
        const magnitude = value < 0n ? -value : value
        out[at++] = TAG.bigint
        out[at++] = value < 0n ? 1 : 0
        if (magnitude < UINT64) {
          // timestamps in ns are past 2^52: eight bytes, without text in between
          out[at++] = 8
          out.writeBigUInt64BE(magnitude, at)
          at += 8
        } else {
          let hex = magnitude.toString(16)
          if (hex.length % 2 !== 0) hex = `0${hex}`
          room(hex.length / 2 + 10)
          writeVarint(hex.length / 2)
          at += out.write(hex, at, 'hex')
        }
      }
      return
    case 'boolean':
      room(1)
      out[at++] = value ? TAG.true : TAG.false
      return
    case 'undefined':
      room(1)
      out[at++] = TAG.undefined
      return
    case 'object':
      writeObject(value)
      return
    default:
      throw new TypeError(`a record cannot hold a ${typeof value}`)
  }
}

function writeObject(value: object | null): void {
  if (value === null) {
    room(1)
    out[at++] = TAG.null
    return
  }
  const encoded = encodedBodies.get(value)
  if (encoded !== undefined) {
    room(encoded.length)
    out.set(encoded, at)
    at += encoded.length
    return
  }
  if (value instanceof Uint8Array) {
    room(value.length + 10)
    out[at++] = TAG.bytes
    writeVarint(value.length)
    out.set(value, at)
    at += value.length
    return
  }
  if (Array.isArray(value)) {
    room(10)
    out[at++] = TAG.array
    writeVarint(value.length)
    for (const item of value) writeValue(item)
    return
  }
  const keys = Object.keys(value)
  room(10)
  out[at++] = TAG.object
  writeVarint(keys.length)
  for (const key of keys) {
    const code = KEY_CODE.get(key)
    if (code === undefined) {
      room(1)
      out[at++] = 0
      writeText(key)
    } else {
      room(1)
      out[at++] = code
    }
    writeValue((value as Record<string, unknown>)[key])
  }
}

/** `value`'s v2 body (without the mark), into the shared buffer at [start, at) */
function writeBody(value: unknown, start: number): void {
  at = start
  writeValue(value)
}

class RecordDecodeError extends Error {
  override name = 'RecordDecodeError'
}

/** the reader's position in `input` (one record at a time: nothing here awaits) */
let input: Buffer = out
let pos = 0
let end = 0

function byte(): number {
  if (pos >= end) throw new RecordDecodeError('a record ends in the middle of a value')
  return input[pos++]
}

function readVarint(): number {
  let n = 0
  let scale = 1
  for (;;) {
    const b = byte()
    n += (b & 0x7f) * scale
    if (b < 0x80) return n
    scale *= 0x80
    if (scale > 2 ** 56) throw new RecordDecodeError('a length or number in a record is too long')
  }
}

const unzigzag = (n: number): number => (n % 2 === 0 ? n / 2 : -(n + 1) / 2)

function span(length: number): number {
  const from = pos
  if (length > end - pos) throw new RecordDecodeError('a record ends in the middle of a value')
  pos += length
  return from
}

function readValue(): unknown {
  const tag = byte()
  switch (tag) {
    case TAG.null:
      return null
    case TAG.false:
      return false
    case TAG.true:
      return true
    case TAG.undefined:
      return undefined
    case TAG.int:
      return unzigzag(readVarint())
    case TAG.float: {
      const from = span(8)
      return input.readDoubleBE(from)
    }
    case TAG.smallBigint:
      return BigInt(unzigzag(readVarint()))
    case TAG.bigint: {
      const negative = byte() === 1
      const length = readVarint()
      const from = span(length)
      const magnitude =
        length === 8 ? input.readBigUInt64BE(from) : length === 0 ? 0n : BigInt(`0x${input.toString('hex', from, from + length)}`)
      return negative ? -magnitude : magnitude
    }
    case TAG.string: {
      const length = readVarint()
      const from = span(length)
      return input.toString('utf8', from, from + length)
    }
    case TAG.prefixedHex: {
      const length = readVarint()
      const from = span(length)
      return bytesToHex(input.subarray(from, from + length))
    }
    case TAG.bareHex: {
      const length = readVarint()
      const from = span(length)
      return input.toString('hex', from, from + length)
    }
    case TAG.bytes: {
      const length = readVarint()
      const from = span(length)
      return new Uint8Array(input.subarray(from, from + length))
    }
    case TAG.array: {
      const count = readVarint()
      if (count > end - pos) throw new RecordDecodeError('an array in a record claims more items than it has bytes')
      const items = new Array(count)
      for (let i = 0; i < count; i++) items[i] = readValue()
      return items
    }
    case TAG.object: {
      const count = readVarint()
      if (count > end - pos) throw new RecordDecodeError('an object in a record claims more keys than it has bytes')
      const object: Record<string, unknown> = {}
      for (let i = 0; i < count; i++) {
        const code = readVarint()
        let key: string
        if (code === 0) {
          const length = readVarint()
          const from = span(length)
          key = input.toString('utf8', from, from + length)
        } else {
          const known = KEYS[code - 1]
          if (known === undefined) throw new RecordDecodeError(`a record names key ${code}, which this version does not know`)
          key = known
        }
        // a key "__proto__" (a client's params may hold one) is an own property, as JSON.parse makes it
        if (key === '__proto__')
          Object.defineProperty(object, key, { value: readValue(), enumerable: true, writable: true, configurable: true })
        else object[key] = readValue()
      }
      return object
    }
    default:
      throw new RecordDecodeError(`a record holds an unknown value tag 0x${tag.toString(16)}`)
  }
}

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** the value of a v2 body in bytes[from, to) */
function readBody(bytes: Uint8Array, from: number, to: number): unknown {
  input = asBuffer(bytes)
  pos = from
  end = to
  const value = readValue()
  if (pos !== end) throw new RecordDecodeError(`a record has ${end - pos} bytes after its value`)
  return value
}

// ---- v1 (read only) ----

function decodeV1(view: Uint8Array): unknown {
  return packr.unpack(view.subarray(1))
}

/** The stored bytes of a record (v2). */
export function encodeRecord(value: unknown): Buffer {
  writeBody(value, 2)
  out[0] = MARK
  out[1] = V2
  return Buffer.from(out.subarray(0, at))
}

/** A record from its stored bytes; `end` (lmdb-js's length of a reused buffer) when given. */
export function decodeRecord(bytes: Uint8Array, end?: unknown): unknown {
  const length = typeof end === 'number' ? end : bytes.length
  if (bytes[0] !== MARK) return plain.unpack(bytes.subarray(0, length))
  if (bytes[1] === V2) return readBody(bytes, 2, length)
  return decodeV1(bytes.subarray(0, length))
}

/** Whether `bytes` are this codec's (its mark) rather than plain msgpack written before it. */
export const isRecordEncoding = (bytes: Uint8Array): boolean => bytes[0] === MARK

/**
 * A record decoded from this codec's `bytes` that remembers them: a record holding it later
 * copies them instead of encoding it again. The caller promises never to change the value.
 */
export function decodeRememberedRecord(bytes: Uint8Array): unknown {
  const value = decodeRecord(bytes)
  // only a v2 body can be copied into another v2 record
  if (typeof value === 'object' && value !== null && bytes[1] === V2) encodedBodies.set(value, bytes.subarray(2))
  return value
}

/** lmdb-js's custom-encoder option for the three keyspaces (db.ts openKeyspaces) */
export const recordEncoder = { encode: encodeRecord, decode: decodeRecord }
