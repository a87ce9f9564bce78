/**
 * The official Hyperchain JS SDK, unchanged, against a Keel node started with `npm start`:
 *
 *   npx tsx examples/sdk-transfer.ts
 *
 * It imports the generated genesis account's key and sends a transfer through the SDK's own
 * signing and receipt polling.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const sdk = createRequire(import.meta.url)('@hyperchain/jssdk')
const { privateKey } = JSON.parse(readFileSync(process.env.KEEL_KEY_FILE ?? 'data/global/genesis-account.json', 'utf8'))

const providerManager = await sdk.ProviderManager.createManager({
  httpProviders: [new sdk.HttpProvider(1, process.env.KEEL_HOST ?? '127.0.0.1:8081')],
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
