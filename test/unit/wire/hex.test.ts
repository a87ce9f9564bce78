import { randomBytes } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { bytesToHex, paddedHex, plainHex } from '../../../src/wire/hex.ts'

const reference = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

test('bytesToHex and plainHex write every byte value, lower case, at every size (past the scratch buffer too)', () => {
  const everyByte = Uint8Array.from({ length: 256 }, (_, i) => i)
  assert.is(bytesToHex(everyByte), `0x${reference(everyByte)}`)
  for (const size of [0, 1, 13, 20, 32, 2047, 2048, 2049, 10_000]) {
    const bytes = randomBytes(size)
    assert.is(bytesToHex(bytes), `0x${reference(bytes)}`, `${size} bytes`)
    assert.is(plainHex(bytes), reference(bytes), `${size} bytes, no 0x`)
  }
})

test('a view into a larger buffer is read from its own offset; a width left-pads with zero bytes', () => {
  const whole = Uint8Array.from([0xaa, 0x01, 0x02, 0xbb])
  assert.is(bytesToHex(whole.subarray(1, 3)), '0x0102')
  assert.is(paddedHex(Uint8Array.of(0x12, 0x34), 4), '0x00001234')
  assert.is(paddedHex(new Uint8Array(0), 32), `0x${'00'.repeat(32)}`)
  assert.is(paddedHex(randomBytes(33), 32).length, 2 + 66, 'a width shorter than the bytes pads nothing')
})

test('a string returned earlier does not change when the shared scratch buffer is written again', () => {
  const first = bytesToHex(Uint8Array.of(1, 2, 3))
  bytesToHex(Uint8Array.of(0xff, 0xff, 0xff))
  assert.is(first, '0x010203')
})

test.run()
