// README "The client package": the typed client against a running node (`npm start` in another terminal).
//   npx tsx examples/client.ts [--url http://127.0.0.1:8081]   (or KEEL_URL)
import { createClient, ErrorCode, isErrorOf, RpcError } from 'keel-client'
import { exampleOptions } from './options.ts'

const { url } = exampleOptions(
  {},
  'the typed client: the transaction format version, then an error the node answers (its code and message)',
)

const client = createClient({ url })
const version = await client.tx_getTransactionsVersion()
console.log(`transaction format version ${version}`)
try {
  await client.tx_getTransactionByHash('0x1234')
} catch (error) {
  if (error instanceof RpcError) console.log(`code ${error.code}: ${error.shortMessage}`)
  // narrowed to the codes tx_getTransactionByHash documents (-32602, -32001): a third would not compile here
  if (isErrorOf('tx_getTransactionByHash', error) && error.code === ErrorCode.INVALID_PARAMS) console.log('(a hash has 64 hex digits)')
}
