import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  CHUNK_TEXT_CHARS,
  type JsonChunks,
  JsonDepthError,
  JsonSyntaxError,
  JsonText,
  parseJson,
  stringifyJson,
  stringifyJsonChunks,
} from '../../../src/wire/json.ts'

const parse = (text: string) => parseJson(text, { maxDepth: 64 })

test('parses what JSON.parse parses, the same way', () => {
  const samples = [
    '{"a":[1,2.5,-3e2,0,-0.1,true,false,null],"b":{"c":"d\\n\\u00e9\\ud83d\\ude42"},"e":""}',
    '[]',
    '{}',
    ' \n\t[ 1 , {"x" : [ ] } ] ',
    '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
    '123456789012345',
    '-9007199254740991',
    '1e400',
    '{"a":1,"a":2}',
  ]
  for (const text of samples) assert.equal(parse(text), JSON.parse(text), text)
})

test('integers beyond 2^53 become exact bigints; safe ones stay numbers', () => {
  assert.is(parse('1581776200637000123'), 1581776200637000123n)
  assert.is(parse('-9223372036854775808'), -9223372036854775808n)
  assert.is(parse('9007199254740993'), 9007199254740993n)
  assert.is(parse('9007199254740991'), 9007199254740991)
  assert.is(parse('1234567890123456'), 1234567890123456)
  assert.is(parse('1700000000000000000.5'), Number('1700000000000000000.5'), 'a fraction stays a double')
  assert.equal(parse('{"timestamp":1700000000000000123,"nonce":5}'), { timestamp: 1700000000000000123n, nonce: 5 })
})

test('refuses what JSON refuses, with the position', () => {
  for (const text of [
    '{',
    '{]',
    '[1,]',
    '{"a" 1}',
    "{'a':1}",
    '01',
    '-',
    '1.',
    '.5',
    '+1',
    'NaN',
    'tru',
    '"\u0001"',
    '"\\x"',
    '"\\u12"',
    '[1] x',
    '\uFEFF{}',
    '',
  ]) {
    assert.throws(
      () => parse(text),
      (error: unknown) => error instanceof JsonSyntaxError,
      text,
    )
  }
  try {
    parse('{"a":x}')
  } catch (error) {
    assert.is((error as Error).message, "expected a JSON value: unexpected 'x' at position 5")
  }
})

test('bounds nesting without using the stack for it', () => {
  assert.not.throws(() => parse(`${'['.repeat(64)}${']'.repeat(64)}`))
  assert.throws(
    () => parse(`${'['.repeat(65)}${']'.repeat(65)}`),
    (error: unknown) => error instanceof JsonDepthError,
  )
  assert.throws(
    () => parse('['.repeat(1_000_000)),
    (error: unknown) => error instanceof JsonDepthError,
  )
})

test('"__proto__" stays an own property', () => {
  const value = parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>
  assert.equal(Object.keys(value), ['__proto__'])
  assert.is(({} as Record<string, unknown>).polluted, undefined)
  assert.is(Object.getPrototypeOf(value), Object.prototype)
})

test('stringify writes bigints as bare integers and otherwise matches JSON.stringify', () => {
  assert.is(
    stringifyJson({ a: 1700000000000000123n, b: [1n, 'x'], c: undefined, d: null }),
    '{"a":1700000000000000123,"b":[1,"x"],"d":null}',
  )
  const plain = { a: [1, 'two', { three: 3 }], s: 'quote " and \u2028' }
  assert.is(stringifyJson(plain), JSON.stringify(plain))
  assert.is(stringifyJson({ n: Number.NaN, big: 5n }), '{"n":null,"big":5}')
  const text = '{"id":1581776200637000123,"x":[-9223372036854775808,1.5]}'
  assert.is(stringifyJson(parse(text)), text, 'round trip is byte for byte')
  // strings that look like the writer's bigint marker stay strings: the marker's nonce is private
  const lookalikes = { big: 7n, s: '\u0001:5', t: '\u00010000000000000000:5', u: '"\\u0001x:5"' }
  assert.equal(JSON.parse(stringifyJson(lookalikes)), { big: 7, s: '\u0001:5', t: '\u00010000000000000000:5', u: '"\\u0001x:5"' })
  assert.is(stringifyJson([{ deep: [{ deeper: -12345678901234567890n }] }, 'x']), '[{"deep":[{"deeper":-12345678901234567890}]},"x"]')
})

test('stringify splices JsonText values verbatim, with or without bigints around them', () => {
  const block = new JsonText('{"number":"0x5","transactions":[{"timestamp":1700000000000000123}]}')
  assert.is(stringifyJson({ result: block }), '{"result":{"number":"0x5","transactions":[{"timestamp":1700000000000000123}]}}')
  assert.is(
    stringifyJson({ big: 9007199254740993n, list: [block, new JsonText('"x"'), 't0'] }),
    '{"big":9007199254740993,"list":[{"number":"0x5","transactions":[{"timestamp":1700000000000000123}]},"x","t0"]}',
  )
  // a text already holding another's splice, and a client string that looks like a marker
  const outer = new JsonText(stringifyJson([block, 2n]))
  assert.is(stringifyJson({ s: '\u0001:t0', o: outer }), `{"s":"\\u0001:t0","o":[${block.text},2]}`)
  // no texts left over from an earlier call leak into the next one
  assert.is(stringifyJson({ a: 1 }), '{"a":1}')
  // plain JSON.stringify does not know the class: a marker string, never the text
  assert.not.match(JSON.stringify({ r: block }), /transactions/)
})

test('stringifyJsonChunks: the same JSON, with each large JsonText as its kept UTF-8 bytes', () => {
  const joined = (reply: string | JsonChunks): string =>
    typeof reply === 'string' ? reply : reply.map((chunk) => (typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk))).join('')
  const big = new JsonText(`{"number":"0x7","extra":"${'é✓'.repeat(CHUNK_TEXT_CHARS)}","t":1700000000000000123}`)
  const small = new JsonText('{"number":"0x1"}')
  const values: unknown[] = [
    { jsonrpc: '2.0', id: 1, result: big },
    { id: 9007199254740993n, result: [small, big, 't0', big], s: '\u0001:t0' },
    { result: small, n: 2n },
    { result: 'plain' },
  ]
  for (const value of values) assert.is(joined(stringifyJsonChunks(value)), stringifyJson(value))
  const chunks = stringifyJsonChunks(values[1])
  assert.ok(Array.isArray(chunks), 'a large text makes pieces')
  const pieces = chunks as JsonChunks
  assert.is(pieces.filter((chunk) => typeof chunk !== 'string').length, 2, 'each large text once as bytes, the small one inline')
  assert.ok(pieces[1] === pieces[3] && pieces[1] === big.bytes(), 'the kept bytes themselves, made once')
  assert.type(stringifyJsonChunks(values[2]), 'string', 'no large text: plain text')
})

test.run()
