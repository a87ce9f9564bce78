/**
 * Keyspaces 30–33: transaction indexes for the SDK's filtered and paged queries (senders,
 * receivers, extra ids, and the `to` of invalid transactions). Each entry is derived from a
 * block's records, so the same function gives the entries commitBlock writes, the ones an archive
 * moves with its block, and the ones a store written before the indexes existed gets at open.
 */

import { keccak256 } from '../../crypto/hash.ts'
import { type CommittedTx, type ExtraId, extraIdsOf, type Hex, type InvalidTx, type Receipt, ZERO_ADDRESS } from '../../domain.ts'
import { bytesToHex, tryFixedBytes, u32be } from '../codec.ts'
import type { Db } from '../db.ts'
import { Keyspace } from '../keyspace.ts'
import type { IndexedTx, RawEntry, TxIndexName } from '../types.ts'

/** strings up to this many UTF-8 bytes are kept as they are; longer ones by their Keccak-256 */
const MAX_PLAIN_STRING = 255
const INT64_OFFSET = 2n ** 63n

/** The key prefix of one extra id element (keyspace 32's comment). */
export function extraIdKey(id: ExtraId): Buffer {
  if (typeof id === 'bigint') {
    const out = Buffer.alloc(9)
    out.writeBigUInt64BE(BigInt.asUintN(64, id + INT64_OFFSET), 1)
    return out
  }
  const utf8 = Buffer.from(id, 'utf8')
  if (utf8.length > MAX_PLAIN_STRING) return Buffer.concat([Buffer.from([2]), Buffer.from(keccak256(utf8))])
  const length = Buffer.alloc(3)
  length[0] = 1
  length.writeUInt16BE(utf8.length, 1)
  return Buffer.concat([length, utf8])
}

/** The key prefix of an address; undefined for one that is not 20 bytes of hex. */
export function addressKey(address: Hex): Buffer | undefined {
  return tryFixedBytes(address.toLowerCase().startsWith('0x') ? address.toLowerCase() : `0x${address.toLowerCase()}`, 20)
}

const position = (block: number, index: number): Buffer => Buffer.concat([u32be(block), u32be(index)])
/** a byte past any position: prefix ‖ position ‖ PAST sorts after every entry of that position */
const PAST = Buffer.from([0xff])

/**
 * The index entries of block `number`: `txs[i]` with `receipts[i]`, and its invalid txs in
 * execution order. A transaction listing the same extra id twice gets one entry for it.
 */
export function indexEntries(
  number: number,
  txs: readonly CommittedTx[],
  receipts: readonly Receipt[],
  invalid: readonly InvalidTx[],
): RawEntry[] {
  const entries: RawEntry[] = []
  const add = (space: number, prefix: Buffer | undefined, at: Buffer, hash: Hex): void => {
    const value = tryFixedBytes(hash, 32)
    if (prefix !== undefined && value !== undefined) entries.push({ space, key: Buffer.concat([prefix, at]), value })
  }
  txs.forEach(({ tx }, i) => {
    const at = position(number, i)
    add(Keyspace.txsByFrom, addressKey(tx.from), at, tx.hash)
    const created = receipts[i]?.contractAddress
    const receiver = tx.to ?? (typeof created === 'string' && created !== ZERO_ADDRESS ? created : undefined)
    if (receiver !== undefined) add(Keyspace.txsByReceiver, addressKey(receiver), at, tx.hash)
    const seen = new Set<string>()
    for (const id of extraIdsOf(tx)) {
      const key = extraIdKey(id)
      const text = key.toString('hex')
      if (seen.has(text)) continue
      seen.add(text)
      add(Keyspace.txsByExtraId, key, at, tx.hash)
    }
  })
  invalid.forEach(({ tx }, j) => {
    add(Keyspace.invalidTxsByTo, addressKey(tx.to ?? ZERO_ADDRESS), position(number, j), tx.hash)
  })
  return entries
}

export class TxIndexesRepo {
  private readonly dbs: Record<TxIndexName, Db>

  constructor(dbs: { txsByFrom: Db; txsByReceiver: Db; txsByExtraId: Db; invalidTxsByTo: Db }) {
    this.dbs = { from: dbs.txsByFrom, receiver: dbs.txsByReceiver, extraId: dbs.txsByExtraId, invalidTo: dbs.invalidTxsByTo }
  }

  /**
   * The transactions whose `index` key starts with `prefix` in blocks `from`..`to`, in chain order
   * (reversed when `backward`).
   */
  *scan(index: TxIndexName, prefix: Buffer, from: number, to: number, backward: boolean): Generator<IndexedTx> {
    if (from > to) return
    // lmdb-js ranges include `start` and exclude `end`, whichever the direction: bounds just
    // outside the blocks wanted (an entry key is the prefix and 8 bytes of position)
    const low = Buffer.concat([prefix, position(from, 0)])
    const high = Buffer.concat([prefix, position(to, 0xffffffff), PAST])
    const belowLow = from === 0 ? prefix : Buffer.concat([prefix, position(from - 1, 0xffffffff), PAST])
    const range = backward ? { start: high, end: belowLow, reverse: true } : { start: low, end: high }
    for (const { key, value } of this.dbs[index].getRange(range)) {
      const bytes = key as Buffer
      const at = bytes.length - 8
      yield { block: bytes.readUInt32BE(at), index: bytes.readUInt32BE(at + 4), hash: bytesToHex(value as Uint8Array) }
    }
  }

  /** empties the four keyspaces, before a rebuild */
  async clear(): Promise<void> {
    await Promise.all(Object.values(this.dbs).map((db) => db.clearAsync()))
  }
}
