/**
 * Signs a transfer with a key file. With a node to send it to (--url, or KEEL_URL), submits it and
 * prints the hash and, once committed, the receipt; with `--print`, only prints the signed
 * tx_sendTransaction request body, for trying Keel with curl:
 *
 *   npx tsx examples/sign-transfer.ts --url http://127.0.0.1:8081 --to 0x3434343434343434343434343434343434343434 --value 100
 *   npx tsx examples/sign-transfer.ts --print --value 100 | curl -s -X POST http://127.0.0.1:8081 -d @-
 *
 * The key file defaults to the genesis account `npm start` generated (data/global/genesis-account.json).
 */
import { randomBytes } from 'node:crypto'
import { signString2017 } from '../src/crypto/sign-string.ts'
import { addressFromPrivateKey, signSecp256k1 } from '../src/crypto/signature.ts'
import { parseJson, stringifyJson } from '../src/wire/json.ts'
import { exampleOptions, explainConnectionFailure, fail } from './options.ts'

const options = exampleOptions({
  to: { type: 'string', default: '0x3434343434343434343434343434343434343434' },
  value: { type: 'string', default: '100' },
  print: { type: 'boolean', default: false },
})
const privateKey = options.privateKey()
const tx: Record<string, unknown> = {
  from: addressFromPrivateKey(privateKey),
  to: options.values.to,
  value: Number(options.values.value),
  timestamp: BigInt(Date.now()) * 1_000_000n,
  nonce: BigInt(`0x${randomBytes(6).toString('hex')}`) + 1n,
}
tx.signature = signSecp256k1(signString2017(tx as never), privateKey)

const body = (method: string, params: unknown[]): string => stringifyJson({ jsonrpc: '2.0', namespace: 'global', id: 1, method, params })

async function call(method: string, params: unknown[]): Promise<{ code: number; message: string; result?: unknown }> {
  const response = await fetch(options.url, { method: 'POST', body: body(method, params) }).catch((error) =>
    explainConnectionFailure(options.url, error),
  )
  return parseJson(await response.text(), { maxDepth: 64 }) as { code: number; message: string; result?: unknown }
}

if (options.values.print) {
  console.log(body('tx_sendTransaction', [tx]))
} else {
  const sent = await call('tx_sendTransaction', [tx])
  if (sent.code !== 0) fail(`refused: ${sent.code} ${sent.message}`)
  console.log(`transaction ${sent.result}`)
  for (let attempt = 0; attempt < 50; attempt++) {
    const receipt = await call('tx_getTransactionReceipt', [sent.result])
    if (receipt.code === 0) {
      console.log(stringifyJson(receipt.result))
      process.exit(0)
    }
    if (receipt.code !== -32001) fail(`no receipt: ${receipt.code} ${receipt.message}`)
    await new Promise((done) => setTimeout(done, 100))
  }
  fail('no receipt after 5 s: ask again with tx_getTransactionReceipt')
}
