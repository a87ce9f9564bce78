/**
 * The official Hyperchain JS SDK, unchanged, against a Keel node started with `npm start`:
 *
 *   npx tsx examples/sdk-transfer.ts [--url http://127.0.0.1:8081] [--key-file data/global/genesis-account.json]
 *
 * It imports the key file's key and sends a transfer through the SDK's own signing and receipt polling.
 */
import { createRequire } from 'node:module'
import { exampleOptions, explainConnectionFailure } from './options.ts'

const sdk = createRequire(import.meta.url)('@hyperchain/jssdk')
const options = exampleOptions(
  {},
  'the official Hyperchain SDK (@hyperchain/jssdk), unchanged: a transfer of 100 to 0x3434…3434 signed with the key file, then its receipt and the balance',
)
const privateKey = options.privateKey()
// the SDK takes host:port and says nothing useful when no node answers: ask first
await fetch(options.url, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion","params":[]}' }).catch(
  (error) => explainConnectionFailure(options.url, error),
)

const providerManager = await sdk.ProviderManager.createManager({
  httpProviders: [new sdk.HttpProvider(1, new URL(options.url).host)],
})
const accountService = sdk.ServiceManager.getAccountService(providerManager)
const txService = sdk.ServiceManager.getTxService(providerManager)
const account = accountService.fromPrivateKey(privateKey.replace(/^0x/, ''), sdk.Algo.ECRAW)

const transaction = new sdk.Transaction.Builder(account.getAddress(), providerManager)
  .transfer('0x3434343434343434343434343434343434343434', 100)
  .build()
transaction.sign(account)
const receipt = await (await txService.sendTx(transaction).send()).poll()
console.log('receipt', receipt.result)
const balance = await (await accountService.getBalance('0x3434343434343434343434343434343434343434').send()).result
console.log('receiver balance', balance)
