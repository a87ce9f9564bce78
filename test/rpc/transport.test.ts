/**
 * Transport and envelope cases of reliability.md part D (a), against a real node on 127.0.0.1:0:
 * each bad input gets its code, and the node keeps serving after every group.
 */

import { request } from 'node:http'
import { connect } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MISSING_FEATURES } from '../../src/api/missing-features.ts'
import type { KeelNode } from '../../src/node.ts'
import { stringifyJson } from '../../src/wire/json.ts'
import { envelope, post, rawRequest, startTestNode, waitForReceipt } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

let node: KeelNode

test.before(async () => {
  node = await startTestNode({ jsonrpc: { headersTimeoutMs: 1500, maxBatchResponseBytes: 10 * 1024 * 1024 } })
})

test.after(async () => {
  await node?.stop()
})

interface Reply {
  jsonrpc: string
  namespace: string
  id: unknown
  code: number
  message: string
  result?: unknown
}

async function expectCode(body: unknown, code: number, options: Parameters<typeof post>[2] = {}): Promise<Reply> {
  const reply = await post(node.url, body, options)
  assert.is(reply.status, 200, `HTTP status for ${String(body).slice(0, 60)}`)
  assert.is(reply.headers['content-type'], 'application/json')
  const parsed = reply.body as Reply
  assert.ok(parsed !== undefined, `reply is JSON: ${reply.text.slice(0, 80)}`)
  assert.is(
    parsed.code,
    code,
    `code for ${typeof body === 'string' ? body.slice(0, 60) : JSON.stringify(body).slice(0, 60)}: ${parsed.message}`,
  )
  assert.is(parsed.jsonrpc, '2.0')
  assert.is(parsed.namespace, 'global')
  if (code !== 0) assert.not.ok('result' in parsed, 'a failure carries no result')
  return parsed
}

async function stillServing(): Promise<void> {
  const started = performance.now()
  const reply = await expectCode(envelope('tx_getTransactionsVersion', []), 0)
  assert.is(reply.result, '4.1')
  assert.ok(performance.now() - started < 1000, 'the node answers promptly')
}

test('a well-formed request gets code 0, SUCCESS and the result, id echoed', async () => {
  const reply = await expectCode({ jsonrpc: '2.0', namespace: 'global', id: 'abc', method: 'tx_getTransactionsVersion', params: [] }, 0)
  assert.equal(reply, { jsonrpc: '2.0', namespace: 'global', id: 'abc', code: 0, message: 'SUCCESS', result: '4.1' })
})

test('A1 malformed JSON, BOM and invalid UTF-8 → -32700 with id null', async () => {
  for (const body of [
    '{"jsonrpc":"2.0",',
    '{]',
    '\uFEFF{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion"}',
    '{"a":tru}',
    "{'a':1}",
  ]) {
    const reply = await expectCode(body, -32700)
    assert.is(reply.id, null)
    assert.match(reply.message, /^parse error: /)
  }
  const badUtf8 = Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion","x":"'),
    Buffer.from([0xc3, 0x28]),
    Buffer.from('"}'),
  ])
  const reply = await rawRequest(node.url, badUtf8)
  assert.is((reply.body as Reply).code, -32700)
  assert.is((reply.body as Reply).message, 'parse error: the body is not valid UTF-8')
  await stillServing()
})

test('A2 empty body → -32700', async () => {
  await expectCode('', -32700)
  await expectCode('  \n ', -32700)
  const chunked = await rawRequest(node.url, undefined, { chunked: true })
  assert.is((chunked.body as Reply).code, -32700)
})

test('A3 JSON that is not an object → -32600', async () => {
  for (const body of ['null', '"str"', '42', 'true']) await expectCode(body, -32600)
})

test('A4 an empty batch → one -32600 object, not an array', async () => {
  const reply = await expectCode('[]', -32600)
  assert.is(reply.message, 'invalid request: empty batch')
})

test('A5 batch elements are answered one by one, in order', async () => {
  const reply = await post(node.url, '[1,2]')
  const items = reply.body as Reply[]
  assert.ok(Array.isArray(items))
  assert.equal(
    items.map((item) => item.code),
    [-32600, -32600],
  )
  const mixed = await post(node.url, [1, envelope('tx_getTransactionsVersion', [], { id: 7 }), envelope('nope_method', [], { id: 8 })])
  const answers = mixed.body as Reply[]
  assert.equal(
    answers.map((item) => [item.id, item.code]),
    [
      [null, -32600],
      [7, 0],
      [8, -32601],
    ],
  )
  assert.is(answers[1].result, '4.1')
  const single = (await post(node.url, [envelope('tx_getTransactionsVersion', [])])).body as Reply[]
  assert.ok(Array.isArray(single) && single.length === 1, 'a one-element batch is answered with a one-element array')
})

test('A6 a bad envelope → -32600, id echoed only when valid', async () => {
  const base = { jsonrpc: '2.0', id: 5, method: 'tx_getTransactionsVersion' }
  const cases: [Record<string, unknown>, unknown][] = [
    [{ ...base, jsonrpc: undefined }, 5],
    [{ ...base, jsonrpc: '1.0' }, 5],
    [{ ...base, jsonrpc: '2.0 ' }, 5],
    [{ ...base, method: undefined }, 5],
    [{ ...base, method: '' }, 5],
    [{ ...base, method: 123 }, 5],
    [{ ...base, id: { a: 1 } }, null],
    [{ ...base, id: [1] }, null],
    [{ ...base, id: undefined }, null],
    [{ ...base, id: null }, null],
    [{ ...base, namespace: 7 }, 5],
  ]
  for (const [body, id] of cases) {
    const reply = await expectCode(body, -32600)
    assert.is(reply.id, id, `id for ${JSON.stringify(body)}`)
  }
  await stillServing()
})

test('A7 params of the wrong shape', async () => {
  await expectCode(envelope('tx_getTransactionByHash', undefined, { params: 'abc' }), -32600)
  await expectCode(envelope('tx_getTransactionByHash', undefined, { params: 12 }), -32600)
  const objectParams = await expectCode(envelope('tx_getTransactionByHash', undefined, { params: { hash: '0x00' } }), -32602)
  assert.match(objectParams.message, /positional/)
  const wrongType = await expectCode(envelope('tx_getTransactionByHash', [12]), -32602)
  assert.match(wrongType.message, /^invalid argument 0 \(txHash\)/)
  const tooMany = await expectCode(envelope('tx_getTransactionsVersion', [1]), -32602)
  assert.is(tooMany.message, 'too many params: tx_getTransactionsVersion takes 0, got 1')
  const missing = await expectCode(envelope('tx_getTransactionByHash', []), -32602)
  assert.match(missing.message, /^missing argument 0 \(txHash\): tx_getTransactionByHash expects 1 params, got 0$/)
  // "params": null behaves like [] (protocol.md §4)
  await expectCode(envelope('tx_getTransactionsVersion', undefined, { params: null }), 0)
})

test('A8 unknown methods → -32601; names are case-sensitive; rpc.discover answers the document', async () => {
  for (const method of ['tx_nope', 'nope', 'a_b_c', 'rpc.nope']) {
    const reply = await expectCode(envelope(method, []), -32601)
    assert.is(reply.message, `The method ${method} does not exist/is not available`)
  }
  // a near miss names the method meant; a case slip too, since names are case-sensitive
  for (const [method, meant] of [
    ['TX_getTransactionsVersion', 'tx_getTransactionsVersion'],
    ['tx_GetTransactionsVersion', 'tx_getTransactionsVersion'],
    ['tx_getTransactionVersion', 'tx_getTransactionsVersion'],
    ['block_latestblock', 'block_latestBlock'],
    ['tx_getTransactionReciept', 'tx_getTransactionReceipt'],
  ]) {
    const reply = await expectCode(envelope(method, []), -32601)
    assert.is(reply.message, `The method ${method} does not exist/is not available (names are case-sensitive; did you mean ${meant}?)`)
  }
  // an SDK method that needs a feature Keel lacks says which (src/api/missing-features.ts)
  for (const [method, feature] of Object.entries(MISSING_FEATURES)) {
    const reply = await expectCode(envelope(method, []), -32601)
    assert.is(reply.message, `The method ${method} is not available: Keel has no ${feature} yet`)
  }
  const huge = await expectCode(envelope(`tx_${'x'.repeat(100 * 1024)}`, []), -32601)
  assert.ok(huge.message.length < 200, 'a huge method name is not echoed whole')
  const discover = await expectCode(envelope('rpc.discover', []), 0)
  assert.is((discover.result as { openrpc: string }).openrpc, '1.3.2')
  await stillServing()
})

test('A9 namespaces: unknown → -32010, missing or empty → global', async () => {
  for (const namespace of ['nope', '../global', 'x'.repeat(1024), 'GLOBAL']) {
    const reply = await expectCode(envelope('tx_getTransactionsVersion', [], { namespace }), -32010)
    assert.ok(reply.message.startsWith("The namespace '"), reply.message)
    assert.ok(reply.message.length < 120)
  }
  await expectCode(envelope('tx_getTransactionsVersion', [], { namespace: '' }), 0)
  const omitted = { jsonrpc: '2.0', id: 1, method: 'tx_getTransactionsVersion' }
  const reply = await expectCode(omitted, 0)
  assert.is(reply.namespace, 'global')
})

test('A10 a body over 1 MiB with Content-Length → 413 and a -32600 envelope', async () => {
  const body = `{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion","pad":"${'x'.repeat(1024 * 1024)}"}`
  const reply = await rawRequest(node.url, body)
  assert.is(reply.status, 413)
  assert.is((reply.body as Reply).code, -32600)
  assert.match((reply.body as Reply).message, /body larger than 1048576 bytes/)
  await stillServing()
})

/** POSTs `total` bytes of body with Node's own http client, chunked or with Content-Length; what it reads back, or the socket error it met first */
function postLarge(
  url: string,
  total: number,
  chunked: boolean,
): Promise<{ status: number; text: string; written: number; error?: string }> {
  const target = new URL(url)
  return new Promise((resolve) => {
    const headers: Record<string, string> = chunked ? {} : { 'content-length': String(total) }
    let written = 0
    const req = request({ host: target.hostname, port: target.port, method: 'POST', path: '/', headers }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString()
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, written }))
    })
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, text: '', written, error: error.code ?? error.message }))
    const chunk = Buffer.alloc(256 * 1024, 'a')
    const pump = (): void => {
      while (written < total) {
        const piece = chunk.subarray(0, Math.min(chunk.length, total - written))
        written += piece.length
        if (!req.write(piece)) return void req.once('drain', pump)
      }
      req.end()
    }
    pump()
  })
}

test("A11 a 50 MB body, chunked or with Content-Length: Node's http client reads the 413, never EPIPE; past the bound the node stops reading", async () => {
  for (const chunked of [false, true]) {
    const reply = await postLarge(node.url, 50_000_000, chunked)
    assert.is(reply.error, undefined, `chunked ${chunked}: the client met ${reply.error} instead of the answer`)
    assert.is(reply.status, 413)
    assert.match(reply.text, /"code":-32600/)
    assert.match(reply.text, /body larger than 1048576 bytes/)
  }
  // 64 MiB is read and dropped at most: a client that goes on writing is cut off there
  const endless = await postLarge(node.url, 200 * 1024 * 1024, true)
  assert.ok(endless.status === 413 || endless.error !== undefined, JSON.stringify(endless))
  assert.ok(endless.written < 150 * 1024 * 1024, `the node stopped reading near the bound (client wrote ${endless.written} bytes)`)
  await stillServing()
})

test('the official SDK way: no Content-Type, chunked body, keep-alive', async () => {
  const reply = await rawRequest(node.url, JSON.stringify(envelope('tx_getTransactionsVersion', [])), { chunked: true })
  assert.is(reply.status, 200)
  assert.is((reply.body as Reply).result, '4.1')
  assert.is(reply.headers['content-length'], String(Buffer.byteLength(reply.text)), 'replies carry their length…')
  assert.is(reply.headers['transfer-encoding'], undefined, '…and are not chunked')
  const textPlain = await post(node.url, envelope('tx_getTransactionsVersion', []), {
    headers: { 'content-type': 'text/plain;charset=UTF-8' },
  })
  assert.is((textPlain.body as Reply).code, 0, 'browsers send text/plain; it is served too')
  const anyPath = await post(node.url, envelope('tx_getTransactionsVersion', []), { path: '/some/path?x=1' })
  assert.is((anyPath.body as Reply).code, 0, 'POST on any path')
})

test('A12 headers over 16 KiB → 431', async () => {
  const reply = await rawRequest(node.url, '{}', { headers: { 'x-big': 'a'.repeat(20 * 1024) } })
  assert.is(reply.status, 431)
  await stillServing()
})

test('A13 a slowloris client is cut off and others are served meanwhile', async () => {
  const target = new URL(node.url)
  const socket = connect(Number(target.port), target.hostname)
  const closed = new Promise<number>((resolve) => {
    const started = performance.now()
    socket.on('close', () => resolve(performance.now() - started))
    socket.on('error', () => undefined)
  })
  socket.write('POST / HTTP/1.1\r\nHost: x\r\n')
  const trickle = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 300)
  await stillServing()
  const elapsed = await closed
  clearInterval(trickle)
  assert.ok(elapsed < 5000, `closed after ${Math.round(elapsed)} ms with headersTimeout 1.5 s`)
})

test('A14 nesting deeper than 64 → -32600, without a stack overflow', async () => {
  const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`
  await expectCode(`{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion","x":${nested(63)}}`, 0)
  const deep = await expectCode(`{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion","x":${nested(64)}}`, -32600)
  assert.match(deep.message, /nesting deeper than 64/)
  await expectCode(nested(200_000), -32600)
  await expectCode(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, -32600)
  await stillServing()
})

test('A15 a batch of 100 is answered whole; 101 → one -32600 "batch too large"', async () => {
  const batch = Array.from({ length: 100 }, (_, i) => envelope('tx_getTransactionsVersion', [], { id: i }))
  const reply = await post(node.url, batch)
  const items = reply.body as Reply[]
  assert.is(items.length, 100)
  assert.ok(items.every((item, i) => item.id === i && item.code === 0))
  const tooLong = await expectCode([...batch, envelope('tx_getTransactionsVersion', [])], -32600)
  assert.is(tooLong.message, 'batch too large: at most 100 requests per batch, got 101')
  assert.is(tooLong.id, null)
})

test('A15c past the batch reply bound the remaining items answer -32014', async () => {
  const small = await startTestNode({ jsonrpc: { maxBatchResponseBytes: 150 * 1024 } })
  try {
    const batch = Array.from({ length: 20 }, (_, i) => envelope('rpc.discover', [], { id: i }))
    const reply = await post(small.url, batch)
    const items = reply.body as Reply[]
    assert.is(items.length, 20)
    assert.is(items[0].code, 0)
    const cut = items.findIndex((item) => item.code === -32014)
    assert.ok(
      cut > 0 && items.slice(cut).every((item) => item.code === -32014 && !('result' in item)),
      'every item past the bound is -32014',
    )
    assert.is(items[items.length - 1].id, 19)
    assert.ok(reply.text.length < 150 * 1024 + 300 * 1024, 'the reply stays near the bound')
  } finally {
    await small.stop()
  }
})

test('A16 methods other than POST → 405 with an envelope; GET / says how to use the port; GET /playground serves the page', async () => {
  for (const [method, path] of [
    ['GET', '/some/path'],
    ['PUT', '/'],
    ['DELETE', '/'],
  ]) {
    const reply = await rawRequest(node.url, undefined, { method, path })
    assert.is(reply.status, 405, method)
    assert.is((reply.body as Reply).code, -32600)
  }
  const root = await rawRequest(node.url, undefined, { method: 'GET', path: '/' })
  assert.is(root.status, 200)
  const guide = root.body as Record<string, string>
  assert.match(guide.jsonrpc, /^POST JSON-RPC 2\.0 requests to this URL/)
  assert.match(guide.playground, /^\/playground/)
  assert.match(guide.example, /curl -s -X POST/)
  const page = await rawRequest(node.url, undefined, { method: 'GET', path: '/playground' })
  assert.is(page.status, 200)
  assert.match(String(page.headers['content-type']), /text\/html/)
  const preflight = await rawRequest(node.url, undefined, { method: 'OPTIONS' })
  assert.is(preflight.status, 204)
  assert.is(preflight.headers['access-control-allow-origin'], '*')
})

test('A17 malformed hex → -32602 naming the argument and the rule', async () => {
  for (const hash of ['0xZZ', '0xabc', `${'ab'.repeat(32)}`, `0x${'ab'.repeat(31)}`, '0x']) {
    const reply = await expectCode(envelope('tx_getTransactionByHash', [hash]), -32602)
    assert.match(reply.message, /^invalid argument 0 \(txHash\): must be .*32-byte hash.*; got /)
  }
})

test('A18 numbers out of range → -32602', async () => {
  const tx = {
    from: '0xb336fe89769bcefc57e6f7f5bf059ee59bad96d3',
    to: '0x1212121212121212121212121212121212121212',
    timestamp: 1700000000000000000,
    nonce: 1234567890123456,
    opcode: 2,
    signature: '00',
  }
  const nonce = (raw: string): string =>
    `{"jsonrpc":"2.0","id":1,"method":"contract_maintainContract","params":[${JSON.stringify({ ...tx, nonce: 0 }).replace('"nonce":0', `"nonce":${raw}`)}]}`
  for (const raw of ['0', '-1', '9223372036854775808', '"12a"', '1.5', '1e400']) {
    const reply = await expectCode(nonce(raw), -32602)
    assert.match(reply.message, /^invalid argument 0 \(transaction\) at \/nonce: /, raw)
  }
  for (const raw of ['-1', '"0x-1"', '1.5', '"0x10000000000000000"', '1e309', '"12a"']) {
    const body = `{"jsonrpc":"2.0","id":1,"method":"block_getBlocks","params":[{"from":${raw},"to":1}]}`
    const reply = await expectCode(body, -32602)
    assert.match(reply.message, /^invalid argument 0 \(range\) at \/from: /, raw)
  }
})

test('A19 integers above 2^53 survive the round trip exactly, and a signature over them verifies', async () => {
  const body = '{"jsonrpc":"2.0","id":1581776200637000123,"method":"tx_getTransactionsVersion","params":[]}'
  const reply = await post(node.url, body)
  assert.match(reply.text, /"id":1581776200637000123,/)
  // now + 123 ns is no multiple of 256: JSON.parse would round it and the sign string would change
  const timestamp = BigInt(Date.now()) * 1_000_000n + 123n
  const dev = wallet((node.devAccount as { privateKey: string }).privateKey)
  const tx = dev.transfer(wallet().address, 1, { timestamp })
  const text = stringifyJson(envelope('tx_sendTransaction', [tx]))
  assert.match(text, new RegExp(`"timestamp":${timestamp},`))
  const sent = (await post(node.url, text)).body as Reply
  assert.is(sent.code, 0, sent.message)
  const receipt = await waitForReceipt(node.url, sent.result as string)
  assert.is(receipt.code, 0, `the signature verified: ${receipt.message}`)
  const stored = (await post(node.url, envelope('tx_getTransactionByHash', [sent.result]))).body as { result: { timestamp: bigint } }
  assert.is(stored.result.timestamp, timestamp)
})

test('A21 duplicate keys (last wins), unusual strings and unknown members', async () => {
  const dup = await post(node.url, '{"jsonrpc":"2.0","id":1,"id":2,"method":"nope","method":"tx_getTransactionsVersion"}')
  assert.is((dup.body as Reply).id, 2)
  assert.is((dup.body as Reply).code, 0)
  for (const id of ['\u0000nul', '🙂 emoji', 'quote " backslash \\ \n newline', '\u2028']) {
    const reply = (await post(node.url, envelope('tx_getTransactionsVersion', [], { id }))).body as Reply
    assert.is(reply.id, id)
  }
  const extra = (await post(node.url, envelope('tx_getTransactionsVersion', [], { foo: 1, auth: { x: 1 } }))).body as Reply
  assert.is(extra.code, 0)
  const proto = (await post(node.url, '{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion","__proto__":{"polluted":1}}'))
    .body as Reply
  assert.is(proto.code, 0)
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

test('the node keeps serving after the whole battery', async () => {
  await stillServing()
})

test.run()
