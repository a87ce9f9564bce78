import { createHash } from 'node:crypto'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { sm3 as sm3Js, sm2 as smCrypto } from 'sm-crypto-v2'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { signStringCandidates, type TxFields } from '../../../src/crypto/sign-string.ts'
import { sm2Address, sm2Digest, sm2PublicKey, sm2Sign, sm2Verify, sm2VerifyAny, sm2Z, sm3 } from '../../../src/crypto/sm2.ts'
import { INSERT_PAYLOAD, sm2Protocol, sm2Sdk } from './vectors.ts'

test('SM3 standard vector ("abc", GB/T 32905 A.1)', () => {
  assert.is(bytesToHex(sm3(utf8ToBytes('abc'))), '66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0')
})

test('node:crypto SM3 (used) and sm-crypto-v2 SM3 (the fallback) agree', () => {
  for (const length of [0, 1, 55, 56, 64, 65, 320, 1000]) {
    const data = new Uint8Array(length).map((_, i) => (i * 7 + length) & 0xff)
    assert.is(bytesToHex(sm3(data)), sm3Js(data), `length ${length}`)
  }
})

test('protocol §1.3 SM2: private key = SHA-256 of the text; public key, address, Z, e', () => {
  assert.is(createHash('sha256').update(sm2Protocol.privateKeySource).digest('hex'), sm2Protocol.privateKey)
  const publicKey = sm2PublicKey(hexToBytes(sm2Protocol.privateKey))
  assert.is(bytesToHex(publicKey), sm2Protocol.publicKey)
  assert.is(sm2Address(publicKey), sm2Protocol.address)
  assert.is(bytesToHex(sm2Z(publicKey)), sm2Protocol.z)
  assert.is(bytesToHex(sm2Digest(publicKey, utf8ToBytes(sm2Protocol.signString))), sm2Protocol.e)
})

test('protocol §1.3 SM2: the published DER signature verifies over the 2017 string', () => {
  const publicKey = hexToBytes(sm2Protocol.publicKey)
  assert.ok(sm2Verify(publicKey, hexToBytes(sm2Protocol.der), utf8ToBytes(sm2Protocol.signString)))
  assert.not.ok(sm2Verify(publicKey, hexToBytes(sm2Protocol.der), utf8ToBytes(`${sm2Protocol.signString} `)))
})

test('sdk-wire §5 SM2: public key, address, Z_A, e("abc"), and the published signature of "abc"', () => {
  const publicKey = sm2PublicKey(hexToBytes(sm2Sdk.privateKey))
  assert.is(bytesToHex(publicKey), sm2Sdk.publicKey)
  assert.is(sm2Address(publicKey), sm2Sdk.address)
  assert.is(bytesToHex(sm2Z(publicKey)), sm2Sdk.z)
  assert.is(bytesToHex(sm2Digest(publicKey, utf8ToBytes('abc'))), sm2Sdk.eAbc)
  assert.ok(sm2Verify(publicKey, hexToBytes(sm2Sdk.derAbc), utf8ToBytes('abc')))
  assert.not.ok(sm2Verify(publicKey, hexToBytes(sm2Sdk.derAbc), utf8ToBytes('abd')))
})

test('sdk-wire §5 SM2: the invoke digest is e of the format B insert("k","v") string from the SM2 address', () => {
  const tx = {
    from: sm2Sdk.address,
    to: '0x1212121212121212121212121212121212121212',
    timestamp: 1700000000000000000n,
    nonce: 1234567890123456,
    type: 'EVM',
    opcode: 0,
    payload: INSERT_PAYLOAD,
    gasPrice: 0,
    gasLimit: 1000000000,
    expirationTimestamp: 1700000300000000000n,
    version: '4.1',
  } satisfies TxFields
  const [first] = signStringCandidates(tx)
  assert.is(bytesToHex(sm2Digest(hexToBytes(sm2Sdk.publicKey), utf8ToBytes(first))), sm2Sdk.invokeDigest)
})

test('sm2VerifyAny: one point computation, the index of the matching message', () => {
  const publicKey = hexToBytes(sm2Sdk.publicKey)
  const der = hexToBytes(sm2Sdk.derAbc)
  assert.is(sm2VerifyAny(publicKey, der, [utf8ToBytes('x'), utf8ToBytes('y'), utf8ToBytes('abc')]), 2)
  assert.is(sm2VerifyAny(publicKey, der, [utf8ToBytes('x')]), -1)
  assert.is(sm2VerifyAny(publicKey, der, []), -1)
})

test('malformed input gives false, never a throw', () => {
  const publicKey = hexToBytes(sm2Sdk.publicKey)
  const message = utf8ToBytes('abc')
  assert.not.ok(sm2Verify(publicKey, new Uint8Array([0x30, 0x00]), message))
  assert.not.ok(sm2Verify(publicKey, hexToBytes(`${sm2Sdk.derAbc}00`), message), 'trailing byte')
  assert.not.ok(sm2Verify(publicKey.slice(0, 64), hexToBytes(sm2Sdk.derAbc), message), 'short key')
  const offCurve = publicKey.slice()
  offCurve[64] ^= 1
  assert.not.ok(sm2Verify(offCurve, hexToBytes(sm2Sdk.derAbc), message), 'point not on the curve')
  // r = 0 and s = 0
  assert.not.ok(sm2Verify(publicKey, hexToBytes('3006020100020101'), message))
  assert.not.ok(sm2Verify(publicKey, hexToBytes('3006020101020100'), message))
})

test('cross-check with sm-crypto-v2 (an independent SM2 implementation) both ways, 100 random signatures each', () => {
  const privateKey = sm2Sdk.privateKey
  const publicKey = hexToBytes(sm2Sdk.publicKey)
  for (let i = 0; i < 100; i++) {
    const message = utf8ToBytes(`from=0x${i.toString(16)}&nonce=${i}`)
    const theirs = smCrypto.doSignature(message, privateKey, { der: true, hash: true })
    assert.ok(sm2Verify(publicKey, hexToBytes(theirs), message), `theirs #${i}`)
    const ours = bytesToHex(sm2Sign(hexToBytes(privateKey), message))
    assert.ok(smCrypto.doVerifySignature(message, ours, sm2Sdk.publicKey, { der: true, hash: true }), `ours #${i}`)
  }
})

test('a repeated public key takes the precomputed path and still verifies', () => {
  const key = hexToBytes(sm2Protocol.privateKey)
  const publicKey = sm2PublicKey(key)
  for (let i = 0; i < 5; i++) {
    const message = utf8ToBytes(`message ${i}`)
    assert.ok(sm2Verify(publicKey, sm2Sign(key, message), message))
    assert.not.ok(sm2Verify(publicKey, sm2Sign(key, message), utf8ToBytes(`other ${i}`)))
  }
})

test('sm2Sign with a fixed k is deterministic (tests only)', () => {
  const key = hexToBytes(sm2Sdk.privateKey)
  const message = utf8ToBytes('abc')
  const a = sm2Sign(key, message, { k: 12345678901234567890n })
  assert.is(bytesToHex(a), bytesToHex(sm2Sign(key, message, { k: 12345678901234567890n })))
  assert.ok(sm2Verify(hexToBytes(sm2Sdk.publicKey), a, message))
})

test.run()
