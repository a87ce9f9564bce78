/** SDK-shaped transfers for the request thread's admission tests (admission-job, submitter). */
import { signStringFormatB, type TxFields } from '../../../src/crypto/sign-string.ts'
import { signSecp256k1 } from '../../../src/crypto/signature.ts'
import { SDK_ADDRESS, SDK_PRIVATE_KEY } from '../crypto/vectors.ts'

export const NOW_NS = 1_700_000_000_000_000_000n
const TO = '0x3434343434343434343434343434343434343434'

/** an SDK-shaped transfer (format B 4.1 signed), its wire params */
export function transfer(i: number, overrides: Partial<TxFields> = {}, signOver: Partial<TxFields> = {}): Record<string, unknown> {
  const fields: TxFields = {
    from: SDK_ADDRESS,
    to: TO,
    value: i + 1,
    type: 'TRANSFER',
    opcode: 0,
    timestamp: NOW_NS - BigInt(i),
    nonce: 1_000_000_000_000_000n + BigInt(i),
    gasPrice: 0,
    gasLimit: 1_000_000_000n,
    expirationTimestamp: NOW_NS + 300_000_000_000n,
    version: '4.1',
    ...overrides,
  }
  const signature = signSecp256k1(signStringFormatB({ ...fields, ...signOver }, { version: '4.1', sections: 'all' }), SDK_PRIVATE_KEY)
  return { ...fields, signature: signature.slice(2) }
}
