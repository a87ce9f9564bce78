/**
 * How keyspaces 6 `txs`, 7 `receipts` and 8 `invalidTxs` store their records: one record per
 * transaction, the bulk of the ledger (a plain transfer's CommittedTx was ~1,010 bytes of msgpack
 * and its receipt ~290, stored under random hash keys at ~50% page fill: ~2,600 of the ~3,100 bytes
 * of disk a transfer cost). Two things made them large, and this codec removes both:
 * - every record repeated its property names (~250 bytes of a CommittedTx): the common shapes are
 *   msgpackr record structures listed below, so a record names only its structure's index;
 * - hashes, addresses and signatures were hex text, twice their bytes: a lower-case hex string of
 *   20 bytes or more (with or without `0x`) is stored as its bytes in an extension that gives the
 *   same string back.
 * A record reads back exactly as it was written (same keys in the same order, same strings,
 * bigints as bigints); a shape not listed is written as a self-describing record in its own bytes.
 *
 * The stored bytes are `0xc1 ‖ msgpack`: 0xc1 is the one byte msgpack never uses, so entries
 * written before this codec (plain msgpack maps, lmdb-js's default encoder) still read as they are.
 *
 * A transaction is encoded once per node (issue 27): its admission record (wire/tx-codec.ts) is
 * this codec's bytes, and the transaction decoded from them remembers them; a record that holds
 * such a transaction (the CommittedTx, an InvalidTx) writes those bytes again inside an extension
 * instead of walking and packing the transaction anew, which was the largest part of a block's
 * commit on the chain thread. It reads back as the same object.
 *
 * STRUCTURES is append-only like the keyspace list: an index, once written to a ledger, must keep
 * its keys for ever (test/unit/store/record-codec.test.ts decodes bytes written by the first list).
 */
import { addExtension, Packr } from 'msgpackr'

const MARK = 0xc1
/** msgpack extension types of this codec (msgpackr's own use 0x10–0x1f for typed arrays, 0x42, 0x52, 0x62, 0x65, 0x69, 0x70, 0x73, 0x74, 0x78) */
const HEX_PREFIXED = 0x30
const HEX_BARE = 0x31
/** a record's msgpack body encoded earlier, embedded as it is */
const ENCODED = 0x32

/** hex text of at least 20 bytes, lower-case only, so that the text it gives back is exactly the one stored */
const LONG_HEX = /^(?:0x)?(?:[0-9a-f]{2}){20,}$/

/** a hex string with its `0x` (hashes, addresses) */
class PrefixedHex {
  constructor(readonly text: string) {}
}
/** a hex string without it (the signature inside a transaction's `signed` params) */
class BareHex {
  constructor(readonly text: string) {}
}

const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')
addExtension({
  Class: PrefixedHex,
  type: HEX_PREFIXED,
  write: (hex: PrefixedHex) => Buffer.from(hex.text.slice(2), 'hex'),
  read: (bytes: Uint8Array) => `0x${toHex(bytes)}`,
})
addExtension({ Class: BareHex, type: HEX_BARE, write: (hex: BareHex) => Buffer.from(hex.text, 'hex'), read: toHex })

/** a value's bytes as this codec made them earlier (without the mark) */
class EncodedBody {
  constructor(readonly bytes: Uint8Array) {}
}
// msgpackr's unpack is re-entrant: the embedded body is read by the same codec inside the outer read
addExtension({
  Class: EncodedBody,
  type: ENCODED,
  write: (body: EncodedBody) => body.bytes,
  read: (bytes: Uint8Array) => packr.unpack(bytes),
})

/**
 * Values decoded from this codec's bytes, with those bytes: written again as they are. Only
 * values nobody changes after decoding belong here (a SignedTx never changes once admitted).
 */
const encodedBodies = new WeakMap<object, Uint8Array>()

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
const packr = new Packr(packrOptions as ConstructorParameters<typeof Packr>[0])
/** the encoder lmdb-js used for these keyspaces before: entries without the mark */
const plain = new Packr({ useRecords: false, useBigIntExtension: true, mapsAsObjects: true, copyBuffers: true } as ConstructorParameters<
  typeof Packr
>[0])

function compact(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.length < 40 || !LONG_HEX.test(value)) return value
    return value.startsWith('0x') ? new PrefixedHex(value) : new BareHex(value)
  }
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value
  const encoded = encodedBodies.get(value)
  if (encoded !== undefined) return new EncodedBody(encoded)
  if (Array.isArray(value)) return value.map(compact)
  const out: Record<string, unknown> = {}
  for (const key in value) out[key] = compact((value as Record<string, unknown>)[key])
  return out
}

/** The stored bytes of a record. */
export function encodeRecord(value: unknown): Buffer {
  const known = typeof value === 'object' && value !== null ? encodedBodies.get(value) : undefined
  const body = known ?? packr.pack(compact(value))
  const out = Buffer.allocUnsafe(body.length + 1)
  out[0] = MARK
  out.set(body, 1)
  return out
}

/** A record from its stored bytes; `end` (lmdb-js's length of a reused buffer) when given. */
export function decodeRecord(bytes: Uint8Array, end?: unknown): unknown {
  const view = typeof end === 'number' ? bytes.subarray(0, end) : bytes
  return view[0] === MARK ? packr.unpack(view.subarray(1)) : plain.unpack(view)
}

/** Whether `bytes` are this codec's (its mark) rather than plain msgpack written before it. */
export const isRecordEncoding = (bytes: Uint8Array): boolean => bytes[0] === MARK

/**
 * A record decoded from this codec's `bytes` that remembers them: a record holding it later
 * embeds them instead of encoding it again. The caller promises never to change the value.
 */
export function decodeRememberedRecord(bytes: Uint8Array): unknown {
  const value = decodeRecord(bytes)
  if (typeof value === 'object' && value !== null) encodedBodies.set(value, bytes.subarray(1))
  return value
}

/** lmdb-js's custom-encoder option for the three keyspaces (db.ts openKeyspaces) */
export const recordEncoder = { encode: encodeRecord, decode: decodeRecord }
