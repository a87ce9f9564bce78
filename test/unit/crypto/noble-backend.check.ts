/**
 * Run by signature.test.ts in a child process with KEEL_SECP256K1=noble: prints the active backend
 * and whether two published vectors verify and a tampered one does not.
 */

import type { TxFields } from '../../../src/crypto/sign-string.ts'
import { secp256k1BackendName, verifyTransactionSignature } from '../../../src/crypto/signature.ts'
import { generatedTransfer2017, sdkVectors } from './vectors.ts'

const sdk = sdkVectors[3]
console.log(
  secp256k1BackendName(),
  verifyTransactionSignature(generatedTransfer2017.tx, generatedTransfer2017.signature),
  verifyTransactionSignature(sdk.tx as unknown as TxFields, sdk.signature),
  verifyTransactionSignature({ ...generatedTransfer2017.tx, nonce: 1 }, generatedTransfer2017.signature),
)
