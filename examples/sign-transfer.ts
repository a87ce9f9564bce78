/**
 * README "A first transaction" and "The client package": signs a transfer with a key file
 * (keel-client: the official SDK's 4.1 format, secp256k1), submits it and prints the hash and, once
 * committed, the receipt. With `--print`, only prints the signed tx_sendTransaction request body,
 * for trying Keel with curl:
 *
 *   npx tsx examples/sign-transfer.ts --url http://127.0.0.1:8081 --to 0x3434343434343434343434343434343434343434 --value 100
 *   npx tsx examples/sign-transfer.ts --print --value 100 | curl -s -X POST http://127.0.0.1:8081 -d @-
 *
 * The key file defaults to the genesis account `npm start` generated (data/global/genesis-account.json).
 * `--namespace` sends it to another namespace of the node (README "Namespaces").
 */
import { accountFromPrivateKey, createClient, signTransfer, stringifyJson, waitForReceipt } from 'keel-client'
import { exampleOptions } from './options.ts'

const options = exampleOptions(
  {
    to: { type: 'string', default: '0x3434343434343434343434343434343434343434', description: 'the receiver' },
    value: { type: 'string', default: '100', description: 'the amount' },
    namespace: { type: 'string', default: 'global', description: 'the namespace that handles it (README "Namespaces")' },
    print: {
      type: 'boolean',
      default: false,
      description: 'print the signed tx_sendTransaction request body instead of sending it (for curl: see README "A first transaction")',
    },
  },
  'signs a transfer with the key file, submits it, prints its hash and then its receipt',
)
const { url } = options
const privateKey = options.privateKey()
const to = options.values.to as string
const value = BigInt(options.values.value as string)
const namespace = options.values.namespace as string

const account = accountFromPrivateKey(privateKey)
const transfer = signTransfer(account, to, value)
if (options.values.print) {
  console.log(stringifyJson({ jsonrpc: '2.0', namespace, id: 1, method: 'tx_sendTransaction', params: [transfer] }))
} else {
  const client = createClient({ url, namespace })
  const hash = await client.tx_sendTransaction(transfer)
  console.log(`transaction ${hash}`)
  const receipt = await waitForReceipt(client, hash, { timeoutMs: 10_000 })
  console.log(stringifyJson(receipt))
}
