/**
 * The record codec of keyspaces 6–8 (src/wire/record-codec.ts): records read back exactly as
 * written, entries written before it (plain msgpack) still read, bytes written in its first form
 * (v1, msgpack with the first structure list) and by the first key list of v2 read for ever,
 * damaged bytes fail with a reason, and a transfer's record is far smaller than before.
 */
import { Packr } from 'msgpackr'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { SignedTx } from '../../../src/domain.ts'
import { decodeRecord, encodeRecord } from '../../../src/wire/record-codec.ts'
import { decodeAdmitted, encodeAdmitted, encodeTx } from '../../../src/wire/tx-codec.ts'

// a plain transfer as the official SDK signs it, committed in block 708
const committed = {
  tx: {
    hash: '0x3c6f17ec61a27b3503ce1277cd5606c78d0aae7f11f5350b3e31da7195a2c007',
    kind: 'transfer',
    from: '0x4ec46685fede5eb983a309e55b8c4ee7fa9faf4e',
    to: '0x759c8d7b0ea3100d66e4a88904584ee1cc6f38a1',
    value: 1n,
    payload: '0x',
    timestamp: 1795848922133256690n,
    nonce: 9659004733876621n,
    extra: '',
    opcode: 0,
    vmType: 'EVM',
    signature:
      '0x00578f7e8333a86beead09e08885e40b588fa2992cc70aa4ee76da8b0063d0878c04461944504b06743e4b8b98b2dd68dafd5673c1603a80fc47be7e6b94c7c1c000',
    signHash: '0xe1402164e39a9c666c830cdcd05a417807bd033e5e5dbd4149f2a0c800aeaaa3',
    simulate: false,
    signed: {
      from: '0x4ec46685fede5eb983a309e55b8c4ee7fa9faf4e',
      to: '0x759c8d7b0ea3100d66e4a88904584ee1cc6f38a1',
      timestamp: 1795848922133256690n,
      nonce: 9659004733876621n,
      type: 'TRANSFER',
      value: 1,
      signature:
        '00578f7e8333a86beead09e08885e40b588fa2992cc70aa4ee76da8b0063d0878c04461944504b06743e4b8b98b2dd68dafd5673c1603a80fc47be7e6b94c7c1c000',
      gasPrice: 0,
      gasLimit: 1000000000,
      expirationTimestamp: 1795849222133256690n,
      version: '4.1',
      opcode: 0,
    },
  },
  blockNumber: 708,
  blockHash: '0xbf818f66d7b5fdf30b0a834b836b3c21c9293c24c13c50ace431bf7e2e8949ae',
  txIndex: 24,
  executeTimeNs: 6449,
}

/** the record above as v2 wrote it first (record-codec.ts KEYS as first listed) */
const V2_BYTES =
  'wcENBRkNDwEJIDxvF+xhons1A84Sd81WBseNCq5/EfU1Cz4x2nGVosAHAggIdHJhbnNmZXIDCRROxGaF/t5euYOjCeVbjE7n+p+vTgQJFHWcjXsOoxANZuSoiQRYTuHMbzihBQYCBggCMHgHBwAIGOwjFHIFWfIIBwAIACJQ0EoL6Y0JCAAKBAALCANFVk0MCUIAV49+gzOoa+6tCeCIheQLWI+imSzHCqTudtqLAGPQh4wERhlEUEsGdD5Li5iy3Wja/VZzwWA6gPxHvn5rlMfBwAANCSDhQCFk45qcZmyDDNzQWkF4B70DPl5dvUFJ8qDIAK6qow4BDw0MAwkUTsRmhf7eXrmDownlW4xO5/qfr04ECRR1nI17DqMQDWbkqIkEWE7hzG84oQcHAAgY7CMUcgVZ8ggHAAgAIlDQSgvpjRAICFRSQU5TRkVSBQQCDApCAFePfoMzqGvurQngiIXkC1iPopksxwqk7nbaiwBj0IeMBEYZRFBLBnQ+S4uYst1o2v1Wc8FgOoD8R75+a5THwcAAEgQAEwSAqNa5BxQHAAgY7CNaS2oR8hUIAzQuMQoEABoEiAsbCSC/gY9m17X98wsKg0uDazwhySk8JME8UKzkMb9+LolJrhwEMB0E4mQ='

/** JSON with bigints marked, so key order, types and values are all compared */
const exact = (value: unknown): string => JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `${v}n` : v))
/** lmdb-js's default encoder, which wrote these keyspaces before the record codec */
const plainMsgpack = new Packr({ useBigIntExtension: true } as ConstructorParameters<typeof Packr>[0])

test('a committed transfer, a receipt with logs and an invalid transaction read back exactly', () => {
  const receipt = {
    txHash: committed.tx.hash,
    vmType: 'EVM',
    contractAddress: '0x0000000000000000000000000000000000000000',
    gasUsed: 51234,
    ret: '0x00000000000000000000000000000000000000000000000000000000000000010000',
    logs: [{ address: committed.tx.to, topics: [committed.blockHash, committed.tx.signHash], data: '0x' }],
    blockNumber: 708,
    blockHash: committed.blockHash,
    txIndex: 24,
    version: '1.3',
  }
  const invalid = { tx: committed.tx, invalidMsg: 'OUTOFBALANCE', detail: 'balance 0 < value 1', blockNumber: 9 }
  for (const record of [committed, receipt, invalid]) assert.is(exact(decodeRecord(encodeRecord(record))), exact(record))
})

test('strings that only look like bytes keep their exact text: upper case, odd length, short, 0x-less', () => {
  const upper = `0x${'AB'.repeat(20)}`
  const record = {
    tx: { ...committed.tx, extra: upper, payload: `0x${'a'.repeat(41)}` },
    blockNumber: 1,
    blockHash: '0xabcd',
    txIndex: 0,
    executeTimeNs: 0,
    note: 'ab'.repeat(20),
    mixed: `0x${'ab'.repeat(19)}AB`,
  }
  assert.is(exact(decodeRecord(encodeRecord(record))), exact(record))
})

test('a shape the structure list does not hold is written inline and reads back', () => {
  const record = { ...committed, tx: { ...committed.tx, signed: { nonce: 1n, type: 'EVM', cname: 'bank', from: committed.tx.from } } }
  assert.is(exact(decodeRecord(encodeRecord(record))), exact(record))
})

test('an entry written before the codec (plain msgpack) reads as it was', () => {
  const old = plainMsgpack.pack(committed)
  assert.is.not(old[0], 0xc1)
  assert.is(exact(decodeRecord(old)), exact(committed))
})

test('v1 bytes, written with the first structure list, decode for ever (the list is append-only)', () => {
  const written = Buffer.from(
    'wUBB1DAAxCA8bxfsYaJ7NQPOEnfNVgbHjQqufxH1NQs+MdpxlaLAB6h0cmFuc2ZlctQwAMQUTsRmhf7eXrmDownlW4xO5/qfr07UMADEFHWcjXsOoxANZuSoiQRYTuHMbzih0wAAAAAAAAABojB40xjsIxRyBVny0wAiUNBKC+mNoACjRVZN1DAAxEIAV49+gzOoa+6tCeCIheQLWI+imSzHCqTudtqLAGPQh4wERhlEUEsGdD5Li5iy3Wja/VZzwWA6gPxHvn5rlMfBwADUMADEIOFAIWTjmpxmbIMM3NBaQXgHvQM+Xl29QUnyoMgArqqjwkXUMADEFE7EZoX+3l65g6MJ5VuMTuf6n69O1DAAxBR1nI17DqMQDWbkqIkEWE7hzG84odMY7CMUcgVZ8tMAIlDQSgvpjahUUkFOU0ZFUgHUMQDEQgBXj36DM6hr7q0J4IiF5AtYj6KZLMcKpO522osAY9CHjARGGURQSwZ0PkuLmLLdaNr9VnPBYDqA/Ee+fmuUx8HAAADOO5rKANMY7CNaS2oR8qM0LjEAzQLE1DAAxCC/gY9m17X98wsKg0uDazwhySk8JME8UKzkMb9+LolJrhjNGTE=',
    'base64',
  )
  assert.is(exact(decodeRecord(written)), exact(committed))
})

test('v2 bytes, written with the first key list, decode for ever and are what the record encodes to', () => {
  const written = Buffer.from(V2_BYTES, 'base64')
  assert.is(exact(decodeRecord(written)), exact(committed))
  assert.ok(encodeRecord(committed).equals(written), 'the same record encodes to the same bytes')
})

test('every kind of value reads back exactly, keys in order, types kept', () => {
  const odd = {
    numbers: [
      0,
      -0,
      1,
      -1,
      2 ** 52 - 1,
      -(2 ** 52) + 1,
      2 ** 52,
      -(2 ** 52),
      2 ** 53 + 2,
      1.5,
      -1e-300,
      Number.MAX_VALUE,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ],
    bigints: [0n, 1n, -1n, 2n ** 52n - 1n, -(2n ** 52n), 2n ** 64n - 1n, 2n ** 64n, -(2n ** 64n) - 5n, 2n ** 200n + 3n],
    strings: [
      '',
      'é',
      'ünïcödé text that is longer than forty-three characters, ✓',
      '0x',
      '0X' + 'ab'.repeat(20),
      'AB'.repeat(20),
      'ab'.repeat(20),
      'ab'.repeat(19) + 'a',
      '0x' + 'ab'.repeat(20),
      '0x' + 'ab'.repeat(19),
      'ab'.repeat(20) + 'g',
    ],
    flags: [true, false, null, undefined],
    bytes: new Uint8Array([0, 1, 255]),
    nested: { [`k${'x'.repeat(200)}`]: [[[]], {}], tx: { hash: 'plain' } },
    ['__proto__']: 'an own key, not a prototype',
    unknownKey: 'x'.repeat(300),
  }
  Object.defineProperty(odd, '__proto__', { value: 'an own key, not a prototype', enumerable: true })
  const back = decodeRecord(encodeRecord(odd)) as typeof odd
  assert.equal(Object.keys(back), Object.keys(odd))
  assert.is(Object.getPrototypeOf(back), Object.prototype)
  assert.is(exact(back), exact(odd))
  assert.ok(Object.is(back.numbers[1], -0), '-0 stays -0')
  assert.ok(Number.isNaN(back.numbers[12]))
  assert.is(back.flags[3], undefined)
  assert.ok(back.bytes instanceof Uint8Array)
  assert.equal([...back.bytes], [0, 1, 255])
  for (const [i, value] of odd.bigints.entries()) assert.is(back.bigints[i], value)
})

test('damaged bytes fail with a reason, never a wrong value or a hang', () => {
  const bytes = encodeRecord(committed)
  for (const cut of [3, 10, 100, bytes.length - 1])
    assert.throws(() => decodeRecord(bytes.subarray(0, cut)), /ends in the middle|claims more/)
  assert.throws(() => decodeRecord(Buffer.from([0xc1, 0xc1, 0x7f])), /unknown value tag 0x7f/)
  assert.throws(() => decodeRecord(Buffer.from([0xc1, 0xc1, 0x0d, 0x01, 0xfe, 0x01, 0x00])), /key 254/)
  assert.throws(() => decodeRecord(Buffer.from([0xc1, 0xc1, 0x0c, 0xff, 0xff, 0xff, 0x7f])), /more items than it has bytes/)
  assert.throws(() => decodeRecord(Buffer.concat([bytes, Buffer.from([0])])), /1 bytes after its value/)
})

test('a reused read buffer: only the first `end` bytes are the record', () => {
  const bytes = encodeRecord(committed)
  const reused = Buffer.concat([bytes, Buffer.from('c1ffffffff', 'hex')])
  assert.is(exact(decodeRecord(reused, bytes.length)), exact(committed))
})

test('a transfer record is under half its plain msgpack size', () => {
  const before = plainMsgpack.pack(committed).length
  const after = encodeRecord(committed).length
  assert.ok(after * 2 < before, `${after} bytes against ${before}`)
})

test('a transaction decoded from its admission record is committed with those bytes, not encoded again', () => {
  const record = encodeAdmitted(committed.tx as unknown as SignedTx, true)
  const { tx } = decodeAdmitted(record)
  // the admission record is the record codec's form of the transaction
  assert.equal([...encodeTx(tx)], [...record.subarray(1)])
  const stored = encodeRecord({ ...committed, tx })
  // the admission bytes appear verbatim inside the committed record
  assert.ok(Buffer.from(stored).includes(Buffer.from(record.subarray(3))), 'the transaction is embedded as it was admitted')
  assert.is(exact(decodeRecord(stored)), exact(committed))
  // the copy is exactly what encoding the transaction in place writes
  assert.ok(stored.equals(encodeRecord(committed)), 'embedded and encoded in place are the same bytes')
})

test('an admission record of the plain msgpack form an earlier version logged still decodes', () => {
  const old = new Uint8Array([
    1,
    ...new Packr({ useRecords: false, useBigIntExtension: true, mapsAsObjects: true } as ConstructorParameters<typeof Packr>[0]).pack(
      committed.tx,
    ),
  ])
  const { tx, signatureValid } = decodeAdmitted(old)
  assert.is(signatureValid, true)
  assert.is(exact(tx), exact(committed.tx))
})

test.run()
