import { bytesToHex } from '@noble/hashes/utils.js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { keccak256 } from '../../../src/crypto/hash.ts'
import {
  eachSignStringCandidateOf,
  extraId,
  signHash2017,
  signString2017,
  signStringCandidates,
  signStringFormatA,
  signStringFormatB,
  type TxFields,
  versionAtLeast,
} from '../../../src/crypto/sign-string.ts'
import {
  generatedJvFormatA,
  generatedTransfer2017,
  generatedTsFormatB,
  manualDeploy,
  manualInvoke,
  sdkVectors,
  sm2Protocol,
} from './vectors.ts'

const DEMO_FROM = '0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd'
const keccakHex = (text: string): string => bytesToHex(keccak256(text))

test('protocol §1.3: the manual deploy string and tx_getSignHash value', () => {
  assert.is(signString2017(manualDeploy.tx), manualDeploy.signString)
  assert.is(`0x${bytesToHex(signHash2017(manualDeploy.tx))}`, manualDeploy.signHash)
})

test('protocol §1.3: the manual invoke sign hash', () => {
  assert.is(`0x${bytesToHex(signHash2017(manualInvoke.tx))}`, manualInvoke.signHash)
})

test('protocol §1.3: generated 2017 transfer string and hash', () => {
  assert.is(signString2017(generatedTransfer2017.tx), generatedTransfer2017.signString)
  assert.is(`0x${keccakHex(generatedTransfer2017.signString)}`, generatedTransfer2017.hash)
})

test('protocol §1.3: generated TS format B (version 3.0, every section because of the TxVersion bug)', () => {
  assert.is(signStringFormatB(generatedTsFormatB.tx, { version: '3.0', sections: 'all' }), generatedTsFormatB.signString)
  assert.is(`0x${keccakHex(generatedTsFormatB.signString)}`, generatedTsFormatB.hash)
  // the first candidate when the JSON carries a version
  assert.is(signStringCandidates(generatedTsFormatB.tx)[0], generatedTsFormatB.signString)
})

test('protocol §1.3: generated JV format A', () => {
  assert.is(signStringFormatA(generatedJvFormatA.tx), generatedJvFormatA.signString)
  assert.is(`0x${keccakHex(generatedJvFormatA.signString)}`, generatedJvFormatA.hash)
})

test('protocol §1.3: SM2 vector string (2017 format)', () => {
  assert.is(signString2017(sm2Protocol.tx), sm2Protocol.signString)
})

for (const vector of sdkVectors) {
  test(`sdk-wire §5: ${vector.name}: first candidate hashes to the published digest`, () => {
    const candidates = signStringCandidates(vector.tx as unknown as TxFields)
    if (vector.signString) assert.is(candidates[0], vector.signString)
    assert.is(keccakHex(candidates[0]), vector.hash)
  })
}

test('sdk-wire §5: the extraid bug strings', () => {
  const buggy = signStringCandidates(sdkVectors[6].tx as unknown as TxFields)
  assert.ok(buggy[0].includes('&extraid=[null]&'))
  // other clients get the array right; that variant is a later candidate
  assert.ok(buggy.some((candidate) => candidate.includes('&extraid=["abc"]&')))
  assert.ok(signStringCandidates(sdkVectors[5].tx as unknown as TxFields)[0].includes('&extra=hello&vmtype=EVM&version=4.1&extraid=[7,8]&'))
})

test('extraid: SDK 1.1.0 pushes ids[i] instead of the i-th string', () => {
  assert.is(extraId({}, true), '')
  assert.is(extraId({ extraIdString: ['abc'] }, true), '[null]')
  assert.is(extraId({ extraIdInt64: [7], extraIdString: ['x'] }, true), '[7,7]')
  assert.is(extraId({ extraIdInt64: [1, 2, 3], extraIdString: ['a', 'b'] }, true), '[1,2,3,1,2]')
  assert.is(extraId({ extraIdString: ['a', 'b'] }, true), '[null,null]')
  assert.is(extraId({ extraIdInt64: [7], extraIdString: ['x'] }, false), '[7,"x"]')
  assert.is(extraId({ extraIdInt64: [9223372036854775807n] }, true), '[9223372036854775807]')
  assert.is(extraId({ extraIdString: ['q"uote'] }, false), '["q\\"uote"]')
})

const plain: TxFields = {
  from: '0xABCDEFabcdefABCDEFabcdefABCDEFabcdefABCD',
  to: '0x00000000000000000000000000000000000000FF',
  timestamp: 16,
  nonce: 255,
}

test('2017 string: lower-cased addresses, unpadded hex, deploy to=0x0, payload replaces value', () => {
  assert.is(
    signString2017(plain),
    'from=0xabcdefabcdefabcdefabcdefabcdefabcdefabcd&to=0x00000000000000000000000000000000000000ff&value=0x0&timestamp=0x10&nonce=0xff',
  )
  const deploy = { ...plain, to: undefined, payload: '0xABC', value: 5 }
  // Go's common.FromHex pads an odd digit count; the amount is not signed when there is a payload
  assert.is(signString2017(deploy), 'from=0xabcdefabcdefabcdefabcdefabcdefabcdefabcd&to=0x0&value=0x0abc&timestamp=0x10&nonce=0xff')
  // an empty payload counts as none
  assert.ok(signString2017({ ...plain, payload: '0x', value: '0x64' }).includes('&value=0x64&'))
  assert.ok(signString2017({ ...plain, value: '100' }).includes('&value=0x64&'))
  assert.ok(signString2017({ ...plain, to: null }).includes('&to=0x0&'))
})

test('format A: decimal opcode, payload case kept, defaults extra "" and vmtype EVM', () => {
  assert.is(
    signStringFormatA({ ...plain, payload: '0xABcd', opcode: 100 }),
    'from=0xabcdefabcdefabcdefabcdefabcdefabcdefabcd&to=0x00000000000000000000000000000000000000ff&value=0xABcd&timestamp=0x10&nonce=0xff&opcode=100&extra=&vmtype=EVM',
  )
})

test('format B: opcode in hex without 0x, payload lower-cased, missing value and payload', () => {
  const b = signStringFormatB(
    { ...plain, payload: '0xABcd', opcode: 200, type: 'HVM', cname: 'c1' },
    { version: '2.2', sections: 'implied' },
  )
  assert.is(
    b,
    'from=0xabcdefabcdefabcdefabcdefabcdefabcdefabcd&to=0x00000000000000000000000000000000000000ff&value=0x0&payload=0xabcd&timestamp=0x10&nonce=0xff&opcode=c8&extra=&vmtype=HVM&version=2.2&extraid=&cname=c1',
  )
  assert.ok(
    signStringFormatB(plain, { version: '2.0', sections: 'implied' }).endsWith(
      '&payload=0x0&timestamp=0x10&nonce=0xff&opcode=0&extra=&vmtype=EVM&version=2.0',
    ),
  )
  assert.ok(signStringFormatB(plain, { version: '2.0', sections: 'all' }).endsWith('&initiator=&withholding='))
  assert.ok(signStringFormatB(plain, { version: '4.1', sections: 'before3.6' }).endsWith('&version=4.1&extraid=&cname='))
})

test('format B 3.6 section: defaults and participant', () => {
  const tx: TxFields = {
    ...plain,
    timestamp: 1000n,
    gasPrice: 9223372036854775807n,
    participant: {
      initiator: Buffer.from('ab'.repeat(20), 'hex').toString('base64'),
      withholding: [Buffer.from('did:hpc:x:y').toString('base64')],
    },
  }
  const b = signStringFormatB(tx, { version: '4.1', sections: 'implied' })
  assert.ok(
    b.endsWith(
      `&price=0x7fffffffffffffff&gasLimit=0x3b9aca00&expirationTimestamp=0x${(1000n + 300_000_000_000n).toString(16)}&initiator=0x${'ab'.repeat(20)}&withholding=[0x${Buffer.from('did:hpc:x:y').toString('hex')}]`,
    ),
  )
})

test('candidates: distinct, SDK-first when a version is present, 2017 first otherwise', () => {
  const withVersion = signStringCandidates({ ...plain, version: '4.1' })
  assert.is(new Set(withVersion).size, withVersion.length)
  assert.ok(withVersion[0].includes('&version=4.1&') && withVersion[0].endsWith('&withholding='))
  assert.ok(withVersion.includes(signString2017(plain)))
  assert.ok(withVersion.includes(signStringFormatA(plain)))
  const without = signStringCandidates(plain)
  assert.is(without[0], signString2017(plain))
  assert.is(without[1], signStringFormatA(plain))
  assert.is(without[2], signStringFormatB(plain, { version: '4.1', sections: 'before3.6' }))
  assert.is(signStringCandidates(plain, { nodeVersion: '2.0' })[2], signStringFormatB(plain, { version: '2.0', sections: 'implied' }))
  // a version with correct section logic differing from "all": 2.1 has extraid only
  const v21 = signStringCandidates({ ...plain, version: '2.1' })
  assert.ok(v21.includes(signStringFormatB(plain, { version: '2.1', sections: 'implied' })))
})

test('versionAtLeast compares numerically', () => {
  assert.ok(versionAtLeast('4.1', '3.6'))
  assert.ok(versionAtLeast('3.6', '3.6'))
  assert.ok(!versionAtLeast('3.5', '3.6'))
  assert.ok(versionAtLeast('2.10', '2.9'))
  assert.ok(!versionAtLeast('1.0', '2.0'))
})

test('non-integer numbers are refused', () => {
  assert.throws(() => signString2017({ ...plain, nonce: 1.5 }), /nonce must be an integer/)
  assert.throws(() => signString2017({ ...plain, value: 'abc' }), /value must be an integer/)
  assert.throws(() => signString2017({ ...plain, payload: '0xzz' }), /payload must be hex/)
})

test('integers sign alike as numbers, bigints and strings (numbers in the safe range skip the BigInt)', () => {
  const base: TxFields = { from: DEMO_FROM, to: DEMO_FROM, timestamp: 0, nonce: 0, version: '4.1' }
  for (const value of [0, 1, 255, -100, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53 + 2, 1e21]) {
    const asNumber = {
      ...base,
      value,
      timestamp: value,
      nonce: value,
      opcode: value,
      gasPrice: value,
      gasLimit: value,
      expirationTimestamp: value,
    }
    const big = BigInt(value)
    const asBigint = {
      ...base,
      value: big,
      timestamp: big,
      nonce: big,
      opcode: big,
      gasPrice: big,
      gasLimit: big,
      expirationTimestamp: big,
    }
    const asString = {
      ...asBigint,
      value: big.toString(),
      timestamp: `${big}`,
      nonce: `${big}`,
      opcode: `${big}`,
      gasPrice: `${big}`,
      gasLimit: `${big}`,
    }
    for (const sections of ['all', 'implied', 'before3.6'] as const) {
      const expected = signStringFormatB(asBigint, { version: '4.1', sections })
      assert.ok(expected.includes(`&timestamp=0x${big.toString(16)}&`))
      assert.ok(expected.includes(`&opcode=${big.toString(16)}&`))
      assert.is(signStringFormatB(asNumber, { version: '4.1', sections }), expected, `${value} ${sections}`)
      assert.is(signStringFormatB(asString as unknown as TxFields, { version: '4.1', sections }), expected, `"${value}" ${sections}`)
    }
  }
  assert.throws(() => signStringFormatB({ ...base, nonce: 1.5 }, { version: '4.1', sections: 'all' }), /nonce must be an integer/)
  assert.throws(
    () => signStringFormatB({ ...base, timestamp: Number.NaN, nonce: 1.5 }, { version: '4.1', sections: 'all' }),
    /timestamp must be/,
  )
})

test('candidates: each distinct text once, in order, with its kind', () => {
  // without a version and string IDs: the 2017 string, format A, format B of the node's version
  const plain: TxFields = { from: DEMO_FROM, to: DEMO_FROM, value: 1, timestamp: 1, nonce: 1 }
  assert.equal(
    [...eachSignStringCandidateOf(plain, { nodeVersion: '2.0' })].map((candidate) => candidate.kind),
    [{ format: '2017' }, { format: 'A' }, { format: 'B', version: '2.0', sections: 'before3.6' }],
  )
  // a version that implies every section: "implied" is the text of "all" and is not tried twice
  const sdk: TxFields = { ...plain, version: '4.1', extraIdString: ['x'] }
  const kinds = [...eachSignStringCandidateOf(sdk)].map((candidate) => candidate.kind)
  assert.equal(kinds, [
    { format: 'B', version: '4.1', sections: 'all' },
    { format: '2017' },
    { format: 'A' },
    { format: 'B', version: '4.1', sections: 'before3.6' },
    { format: 'B', version: '4.1', sections: 'all' },
    { format: 'B', version: '4.1', sections: 'before3.6' },
  ])
  const texts = signStringCandidates(sdk)
  assert.is(new Set(texts).size, texts.length)
  assert.ok(texts[0].includes('&extraid=[null]&'), 'the JS SDK bug first')
  assert.ok(texts[4].includes('&extraid=["x"]&'), 'then the correct extraid')
})

test.run()
