/**
 * Prints a signed tx_sendTransaction request body, for trying Keel with curl:
 *
 *   npx tsx examples/sign-transfer.ts --to 0x3434343434343434343434343434343434343434 --value 100 \
 *     | curl -s -X POST http://127.0.0.1:8081 -d @-
 *
 * The key defaults to the generated genesis account of `npm start` (data/global/genesis-account.json).
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { signString2017 } from '../src/crypto/sign-string.ts'
import { addressFromPrivateKey, signSecp256k1 } from '../src/crypto/signature.ts'
import { stringifyJson } from '../src/wire/json.ts'

const { values } = parseArgs({
  options: {
    key: { type: 'string' },
    'key-file': { type: 'string', default: 'data/global/genesis-account.json' },
    to: { type: 'string', default: '0x3434343434343434343434343434343434343434' },
    value: { type: 'string', default: '100' },
  },
})
const privateKey = values.key ?? (JSON.parse(readFileSync(values['key-file'], 'utf8')) as { privateKey: string }).privateKey
const tx: Record<string, unknown> = {
  from: addressFromPrivateKey(privateKey),
  to: values.to,
  value: Number(values.value),
  timestamp: BigInt(Date.now()) * 1_000_000n,
  nonce: BigInt(`0x${randomBytes(6).toString('hex')}`) + 1n,
}
tx.signature = signSecp256k1(signString2017(tx as never), privateKey)
console.log(stringifyJson({ jsonrpc: '2.0', namespace: 'global', id: 1, method: 'tx_sendTransaction', params: [tx] }))
