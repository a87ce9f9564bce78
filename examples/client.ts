// README example: the typed client against a running node (`npm start` in another terminal).
import { createClient, RpcError } from '../sdk/index.ts'

const client = createClient({ url: process.env.KEEL_URL ?? 'http://127.0.0.1:8081' })

const version = await client.tx_getTransactionsVersion()
console.log(`transaction format version ${version}`)

try {
  await client.tx_getTransactionByHash('0x1234')
} catch (error) {
  if (error instanceof RpcError) console.log(`code ${error.code}: ${error.shortMessage}`)
}
