import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { keccak256, keccakBackendName, nodeHash } from '../../../src/crypto/hash.ts'

test('the native keccak binding is active on this platform', () => {
  assert.is(keccakBackendName(), 'native')
})

test('keccak256 is legacy Keccak-256 (not NIST SHA3-256)', () => {
  assert.is(bytesToHex(keccak256('')), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470')
  assert.is(bytesToHex(keccak256('abc')), '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45')
})

test('keccak256 agrees with @noble/hashes for strings, Uint8Arrays, subarrays and Buffers of many lengths', () => {
  for (const length of [0, 1, 31, 32, 64, 135, 136, 137, 320, 1024, 5000]) {
    const bytes = new Uint8Array(length + 7).map((_, i) => (i * 31 + length) & 0xff)
    const view = bytes.subarray(3, 3 + length)
    const expected = bytesToHex(keccak_256(view))
    assert.is(bytesToHex(keccak256(view)), expected, `subarray ${length}`)
    assert.is(bytesToHex(keccak256(Buffer.from(view))), expected, `Buffer ${length}`)
    const text = 'é'.repeat(length)
    assert.is(bytesToHex(keccak256(text)), bytesToHex(keccak_256(new TextEncoder().encode(text))), `string ${length}`)
  }
})

test('keccak256 returns a plain 32-byte Uint8Array with its own buffer', () => {
  const digest = keccak256('x')
  assert.is(digest.constructor, Uint8Array)
  assert.is(digest.length, 32)
  assert.is(digest.buffer.byteLength, 32)
})

test('nodeHash: lower-case hex of Keccak-256(hostname + namespace)', () => {
  assert.is(nodeHash('node1', 'global'), bytesToHex(keccak_256(new TextEncoder().encode('node1global'))))
})

test.run()
