/**
 * keel-client's ABI helpers (sdk/src/abi.ts) against the encodings the Solidity ABI specification
 * works through, ERC-20's well-known selector and topic, and revert data as solc emits it. The same
 * helpers against a real contract on a node: test/client-package.test.ts.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  AbiError,
  decodeEventLog,
  decodeFunctionResult,
  decodeParameters,
  decodeRevertReason,
  encodeDeploy,
  encodeFunctionCall,
  encodeParameters,
  eventTopic,
  functionSelector,
} from '../../../sdk/src/abi.ts'

const words = (...hex: string[]): string => hex.map((word) => word.padStart(64, '0')).join('')
const right = (hex: string): string => hex.padEnd(64, '0')

test('selectors and topics: ERC-20 transfer and Transfer', () => {
  assert.is(functionSelector('transfer(address,uint256)'), '0xa9059cbb')
  assert.is(eventTopic('Transfer(address,address,uint256)'), '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef')
  assert.is(functionSelector({ type: 'function', name: 'baz', inputs: [{ type: 'uint32' }, { type: 'bool' }] }), '0xcdcd77c0')
})

test("the specification's examples: static, dynamic and nested arguments", () => {
  const abi = [
    { type: 'function', name: 'baz', inputs: [{ type: 'uint32' }, { type: 'bool' }] },
    { type: 'function', name: 'sam', inputs: [{ type: 'bytes' }, { type: 'bool' }, { type: 'uint256[]' }] },
    { type: 'function', name: 'f', inputs: [{ type: 'uint256' }, { type: 'uint32[]' }, { type: 'bytes10' }, { type: 'bytes' }] },
  ] as const
  assert.is(encodeFunctionCall(abi, 'baz', [69, true]), `0xcdcd77c0${words('45', '1')}`)
  assert.is(
    encodeFunctionCall(abi, 'sam', ['0x64617665', true, [1n, 2n, 3n]]),
    `0xa5643bf2${words('60', '1', 'a0', '4')}${right('64617665')}${words('3', '1', '2', '3')}`,
  )
  const hello = new TextEncoder().encode('Hello, world!')
  assert.is(
    encodeFunctionCall(abi, 'f', [0x123n, [0x456, 0x789], '0x31323334353637383930', hello]),
    `0x8be65246${words('123', '80')}${right('31323334353637383930')}${words('e0', '2', '456', '789', 'd')}${right('48656c6c6f2c20776f726c6421')}`,
  )
})

test('decoding gives back what was encoded: integers as bigint, addresses lower case, tuples, strings', () => {
  const types = ['int8', 'address', 'string', '(uint256,bool)[]', 'bytes2[2]']
  const values = [
    -5n,
    '0x000000000000000000000000000000000000ABcD',
    'grüße',
    [
      [7n, true],
      [8n, false],
    ],
    ['0x0102', '0x0304'],
  ]
  const decoded = decodeParameters(types, encodeParameters(types, values))
  assert.equal(decoded, [
    -5n,
    '0x000000000000000000000000000000000000abcd',
    'grüße',
    [
      [7n, true],
      [8n, false],
    ],
    ['0x0102', '0x0304'],
  ])
})

test('results, events and constructor arguments from an ABI as JSON text', () => {
  const abi = JSON.stringify([
    { type: 'constructor', inputs: [{ name: 'start', type: 'uint256' }] },
    {
      type: 'function',
      name: 'get',
      inputs: [],
      outputs: [
        { name: '', type: 'uint256' },
        { name: 'note', type: 'string' },
      ],
    },
    {
      type: 'event',
      name: 'Added',
      anonymous: false,
      inputs: [
        { name: 'by', type: 'address', indexed: true },
        { name: 'amount', type: 'uint256', indexed: false },
        { name: 'tag', type: 'string', indexed: true },
      ],
    },
  ])
  assert.is(encodeDeploy('0x6001', abi, [40n]), `0x6001${words('28')}`)
  assert.equal(decodeFunctionResult(abi, 'get', `0x${words('2a', '40', '2')}${right('6869')}`), [42n, 'hi'])
  const tagTopic = `0x${'ab'.repeat(32)}` // an indexed string is stored as its hash: the topic comes back as it is
  const event = decodeEventLog(abi, {
    topics: [eventTopic('Added(address,uint256,string)'), `0x${words('abcd')}`, tagTopic],
    data: `0x${words('2')}`,
  })
  assert.equal(event?.args, { by: '0x000000000000000000000000000000000000abcd', amount: 2n, tag: tagTopic })
  assert.is(event?.signature, 'Added(address,uint256,string)')
  assert.is(decodeEventLog(abi, { topics: [eventTopic('Other()')], data: '0x' }), undefined)
})

test('revert data: Error(string) gives its message, Panic(uint256) its code, anything else nothing', () => {
  assert.is(decodeRevertReason(`0x08c379a0${words('20', '9')}${right('746f6f206c61726765')}`), 'too large')
  assert.is(decodeRevertReason(`0x4e487b71${words('11')}`), 'panic 0x11')
  assert.is(decodeRevertReason('0x'), undefined)
  assert.is(decodeRevertReason('0x12345678'), undefined)
  assert.is(decodeRevertReason(`0x08c379a0${words('20', 'ff')}`), undefined, 'a length past the data')
})

test('values that do not fit their type are refused with the argument named', () => {
  assert.throws(
    () => encodeParameters(['uint8'], [256]),
    (error: unknown) => error instanceof AbiError && /256/.test(error.message),
  )
  const isAbiError = (error: unknown): boolean => error instanceof AbiError
  assert.throws(() => encodeParameters(['address'], ['0x1234']), isAbiError)
  assert.throws(() => encodeParameters(['bool'], ['yes']), isAbiError)
  assert.throws(() => encodeParameters(['uint256', 'uint256'], [1n]), isAbiError)
  assert.throws(() => encodeFunctionCall([], 'missing'), isAbiError)
})

test.run()
