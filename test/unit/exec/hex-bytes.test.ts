import { bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { hexToBytesChecked, wordHex } from '../../../src/exec/hex-bytes.ts'

test('hexToBytesChecked decodes whole bytes of hex in either case, as @ethereumjs/util does', () => {
  for (const hex of ['0x', '0x00', '0xff', '0xAbCdEf0123456789', `0x${'7f'.repeat(32)}`, `0x${'a0'.repeat(68)}`]) {
    assert.equal(hexToBytesChecked(hex), hexToBytes(hex as `0x${string}`), hex)
  }
})

test('hexToBytesChecked refuses what is not 0x + whole bytes of hex', () => {
  for (const bad of ['', '0', '00', 'ab', '0x0', '0xabc', '0xgg', '0x0g', '0X00', '0x 0', '0x00\u0100', '0x٠٠']) {
    assert.is(hexToBytesChecked(bad), undefined, JSON.stringify(bad))
  }
})

test('wordHex left-pads up to 32 bytes to a lower-case word and refuses more', () => {
  for (const bytes of [Uint8Array.of(1), Uint8Array.of(0xab, 0xcd), new Uint8Array(32).fill(0xfe), new Uint8Array(0)]) {
    assert.is(wordHex(bytes), bytesToHex(setLengthLeft(bytes, 32)))
  }
  assert.throws(() => wordHex(new Uint8Array(33)), /at most 32 bytes/)
})

test.run()
