import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { checkDocument, type OpenRpcDocument } from '../../codegen/check.ts'
import { renderMethods, typeBaseName } from '../../codegen/render.ts'
import type { ServedHandlers } from '../../src/api/index.ts'

const document = JSON.parse(readFileSync(new URL('../../openrpc.json', import.meta.url), 'utf8')) as OpenRpcDocument

test('openrpc.json follows the conventions', () => {
  assert.equal(checkDocument(document), [])
})

test('convention breaks are reported', () => {
  const broken = structuredClone(document)
  broken.components.schemas.Hash.title = 'Other'
  const [first] = broken.methods
  first['x-aliases'] = [broken.methods[1].name, 'rpc.thing']
  first.params = [{ name: 'inline', required: true, schema: { type: 'object', properties: {} } }]
  first.errors = [{ $ref: '#/components/errors/NOPE' }]
  const problems = checkDocument(broken)
  assert.ok(problems.some((p) => p.includes('must have title "Hash"')))
  assert.ok(problems.some((p) => p.includes('is already taken by')))
  assert.ok(problems.some((p) => p.includes('reserved rpc. prefix')))
  assert.ok(problems.some((p) => p.includes('must $ref a titled component schema')))
  assert.ok(problems.some((p) => p.includes('unknown error')))
})

test('the method table is data: no functions, every method and alias listed', () => {
  const text = renderMethods(document)
  assert.not.match(text, /=>|function /)
  for (const method of document.methods) {
    assert.ok(text.includes(`  ${method.name}: {`), method.name)
    for (const alias of method['x-aliases'] ?? []) assert.ok(text.includes(`  ${alias}: "${method.name}"`), alias)
  }
})

test('type names follow the method names', () => {
  assert.is(typeBaseName('tx_getTransactionByHash'), 'TxGetTransactionByHash')
  assert.is(typeBaseName('sub_unSubscription'), 'SubUnSubscription')
})

test('a handler table without one of the methods, or with a handler of the wrong shape, does not compile', () => {
  // tsc checks this (npm run typecheck; npm test runs it too): an @ts-expect-error with no error fails it
  const check = (handlers: ServedHandlers): ServedHandlers[] => {
    const { tx_getTransactionReceipt: _left, ...rest } = handlers
    // @ts-expect-error tx_getTransactionReceipt is missing
    const incomplete: ServedHandlers = rest
    // @ts-expect-error block_latestBlock takes no number
    const misshapen: ServedHandlers = { ...handlers, block_latestBlock: (params: number) => params }
    // the Ethereum dialect's methods may be absent: they answer -32601 without its settings
    const { eth_chainId: _eth, ...withoutEthereum } = handlers
    return [incomplete, misshapen, withoutEthereum]
  }
  assert.type(check, 'function')
})

test.run()
