/**
 * README "The client package": an SM2 account (SM2 signatures with SM3, as the Hyperchain SDKs
 * make them). It gets a new SM2 key, is funded by the key file's account, then sends part of it on:
 *
 *   npx tsx examples/sm2-transfer.ts [--url http://127.0.0.1:8081] [--key-file data/global/genesis-account.json]
 */
import { accountFromPrivateKey, createClient, generateAccount, signTransfer, waitForReceipt } from 'keel-client'
import { exampleOptions } from './options.ts'

const options = exampleOptions(
  {},
  'funds a new SM2 account from the key file, then sends a transfer signed with SM2 and prints its receipt',
)
const client = createClient({ url: options.url })
const funder = accountFromPrivateKey(options.privateKey())

const sm2 = generateAccount('sm2') // or accountFromPrivateKey(privateKey, 'sm2')
await waitForReceipt(client, await client.tx_sendTransaction(signTransfer(funder, sm2.address, 1000)))
const hash = await client.tx_sendTransaction(signTransfer(sm2, '0x3434343434343434343434343434343434343434', 250))
const receipt = await waitForReceipt(client, hash)
console.log(`SM2 account ${sm2.address} sent 250 in ${receipt.txHash}; it keeps ${BigInt(await client.account_getBalance(sm2.address))}`)
