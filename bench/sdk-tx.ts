/**
 * Transactions shaped and signed the way the official JS SDK (@hyperchain/jssdk 1.1.0) does
 * (sdk-wire.md §3–§4): its key order, `type`/`opCode`/gas fields and `version` "4.1", the 3.6+
 * sign string, Keccak-256 + secp256k1 (low-s: the native signer is 40× faster than
 * reproducing elliptic's high-s, and the node recovers both at the same cost), no `0x` on the
 * signature. The load generator uses these so the node does the work a real client causes.
 */
import { createHash, randomBytes } from 'node:crypto'
import { signStringFormatB, type TxFields } from '../src/crypto/sign-string.ts'
import { addressFromPrivateKey, signSecp256k1 } from '../src/crypto/signature.ts'

const SDK_VERSION = '4.1'
const GAS_LIMIT = 1_000_000_000n
const EXPIRATION_NS = 300_000_000_000n

export interface SdkAccount {
  address: string
  privateKey: string
}

/** An account whose key is derived from a seed and an index, so separate processes agree on it. */
export function derivedAccount(seed: string, index: number): SdkAccount {
  // SHA-256 output is below secp256k1's order with overwhelming probability: a valid key
  const privateKey = `0x${createHash('sha256').update(`${seed}/${index}`).digest('hex')}`
  return { address: addressFromPrivateKey(privateKey), privateKey }
}

/** The SDK's nonce: random in [10^15, 10^16). */
function sdkNonce(): bigint {
  return 1_000_000_000_000_000n + (BigInt(`0x${randomBytes(7).toString('hex')}`) % 9_000_000_000_000_000n)
}

export type SdkTxKind =
  | { kind: 'transfer'; to: string; value: number }
  | { kind: 'invoke'; to: string; payload: string; vmType?: 'EVM' | 'JVM' }
  | { kind: 'deploy'; payload: string; vmType?: 'EVM' | 'JVM' }

/** A signed SDK wire object (params[0] of tx_sendTransaction / contract_invokeContract / contract_deployContract). */
export function sdkTransaction(account: SdkAccount, tx: SdkTxKind): Record<string, unknown> {
  const timestamp = BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000))
  const fields: TxFields = {
    from: account.address,
    to: tx.kind === 'deploy' ? undefined : tx.to,
    timestamp,
    nonce: sdkNonce(),
    type: tx.kind === 'transfer' ? 'TRANSFER' : (tx.vmType ?? 'EVM'),
    opcode: 0,
    gasPrice: 0,
    gasLimit: GAS_LIMIT,
    expirationTimestamp: timestamp + EXPIRATION_NS,
    version: SDK_VERSION,
  }
  if (tx.kind === 'transfer') fields.value = tx.value
  else fields.payload = tx.payload
  const signature = signSecp256k1(signStringFormatB(fields, { version: SDK_VERSION, sections: 'all' }), account.privateKey)
  const wire: Record<string, unknown> = { from: fields.from }
  if (fields.to != null) wire.to = fields.to
  wire.timestamp = fields.timestamp
  wire.nonce = fields.nonce
  wire.type = fields.type
  wire.opCode = 0
  if (tx.kind === 'transfer') wire.value = tx.value
  else wire.payload = tx.payload
  Object.assign(wire, {
    signature,
    gasPrice: 0,
    gasLimit: GAS_LIMIT,
    expirationTimestamp: fields.expirationTimestamp,
    version: SDK_VERSION,
  })
  return wire
}
