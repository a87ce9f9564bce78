/**
 * keel-client's errors: one RpcError for every code, narrowed by `isErrorOf` to the codes a method
 * documents in openrpc.json (sdk/src/generated/method-errors.ts).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createClient, ErrorCode, isErrorOf, type MethodError, methodErrorCodes, RpcError } from '../../../sdk/src/index.ts'

/** a client whose node answers every call with `code` */
const answering = (code: number, message: string) =>
  createClient({ transport: { request: async () => JSON.stringify({ jsonrpc: '2.0', namespace: 'global', id: 1, code, message }) } })

const rejection = async (call: Promise<unknown>): Promise<unknown> => {
  try {
    await call
  } catch (error) {
    return error
  }
  throw new Error('the call did not reject')
}

test('a documented code: the method guard answers true and narrows the code to the documented ones', async () => {
  const error = await rejection(answering(-32001, 'Not found transaction 0x12').tx_getTransactionByHash(`0x${'12'.repeat(32)}`))
  assert.instance(error, RpcError)
  assert.ok(isErrorOf('tx_getTransactionByHash', error))
  if (!isErrorOf('tx_getTransactionByHash', error)) return
  const code: -32602 | -32001 = error.code
  assert.is(code, ErrorCode.DATA_NOT_FOUND)
  assert.is(error.shortMessage, 'Not found transaction 0x12')
  // a code the method does not document does not compile against the narrowed type
  // @ts-expect-error -32006 is not among tx_getTransactionByHash's codes
  const busy: MethodError<'tx_getTransactionByHash'>['code'] = -32006
  assert.is(busy, -32006)
})

test('a code the method does not document, another method, or another error: the guard answers false', async () => {
  const busy = await rejection(answering(-32006, 'System is too busy to response.').tx_getTransactionByHash(`0x${'12'.repeat(32)}`))
  assert.instance(busy, RpcError)
  assert.is((busy as RpcError).code, -32006)
  assert.not.ok(isErrorOf('tx_getTransactionByHash', busy))
  const notFound = await rejection(answering(-32001, 'Not found').tx_getTransactionByHash(`0x${'12'.repeat(32)}`))
  // tx_getTransactionsCount documents only -32602
  assert.not.ok(isErrorOf('tx_getTransactionsCount', notFound))
  assert.not.ok(isErrorOf('tx_getTransactionByHash', new Error('-32001')))
  assert.not.ok(isErrorOf('tx_getTransactionByHash', { code: -32001 }))
})

test('every method has its documented codes, each a code of the dialect', () => {
  const known = new Set<number>(Object.values(ErrorCode))
  assert.equal(methodErrorCodes.tx_getTransactions, [-32602, -32001, -32011])
  for (const [method, codes] of Object.entries(methodErrorCodes))
    for (const code of codes) assert.ok(known.has(code), `${method}: ${code} is not a code of openrpc.json`)
})

test.run()
