/**
 * A node's own account (docs/governance.md §17): a secp256k1 key kept in the data directory
 * (`node-account.json`, mode 0600, written atomically, made on the first start like
 * genesis-account.json), with which the node signs the transactions it makes itself — today the
 * Version contract's SetSupportedVersion that `version_setSupportedVersion` sends. The account
 * holds nothing; a BVM transaction costs nothing. Its first accepted declaration binds it to the VP
 * (its ECert key signs the binding) and grants it the nodeOfVP role.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { accountFromPrivateKey } from '../../sdk/src/account.ts'
import { signBvm, versionOperation } from '../../sdk/src/bvm.ts'
import { addressFromPrivateKey } from '../crypto/signature.ts'
import type { Hex, TxSubmitter } from '../domain.ts'
import { writeFileAtomically } from '../fs-atomic.ts'
import { BUILD_SUPPORTED, nodeBindingBytes, type SupportedVersions } from '../governance/versions.ts'
import { bytesToHex, plainHex } from '../wire/hex.ts'

export const NODE_ACCOUNT_FILE = 'node-account.json'

export interface NodeAccount {
  address: Hex
  privateKey: Hex
}

/** The node's account from `<dataDir>/node-account.json`, made (and kept, 0600) on the first start. */
export function loadOrCreateNodeAccount(dataDir: string): NodeAccount {
  const file = join(dataDir, NODE_ACCOUNT_FILE)
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as NodeAccount
    if (typeof saved.privateKey !== 'string' || addressFromPrivateKey(saved.privateKey) !== saved.address.toLowerCase())
      throw new Error(`${file}: the address is not the private key's; restore the file or remove it to make a new node account`)
    return { address: saved.address.toLowerCase(), privateKey: saved.privateKey }
  }
  const privateKey: Hex = bytesToHex(randomBytes(32))
  const account: NodeAccount = { address: addressFromPrivateKey(privateKey), privateKey }
  mkdirSync(dirname(file), { recursive: true })
  writeFileAtomically(file, `${JSON.stringify(account, null, 2)}\n`, 0o600)
  return account
}

/** How this node proves it is the VP it says: its host name, its certificate (PEM) and its key's P-256 signature. */
export interface NodeBinder {
  hostname: string
  certPem: string
  /** ECDSA P-256 / SHA-256, r‖s */
  sign(bytes: Uint8Array): Promise<Uint8Array>
}

/**
 * version_setSupportedVersion's work: signs, with the node account, the Version contract's
 * SetSupportedVersion(hostname, the versions this build supports, the certificate, the binding
 * signature) and submits it; the transaction's hash. It declares the running tx_version, so the
 * chain's version gate lets it through whatever version the chain runs.
 */
export function createSupportDeclarer(options: {
  account: NodeAccount
  binder: NodeBinder
  submitter: Pick<TxSubmitter, 'submit'>
  runningTxVersion: () => string
  /** the node's clock (ns): the transaction's timestamp, as admission checks it */
  nowNs: () => bigint
  supported?: SupportedVersions
}): () => Promise<Hex> {
  const { account, binder } = options
  const signer = accountFromPrivateKey(account.privateKey)
  return async () => {
    const binding = await binder.sign(nodeBindingBytes(binder.hostname, account.address))
    const operation = versionOperation.setSupportedVersion(
      binder.hostname,
      options.supported ?? BUILD_SUPPORTED,
      binder.certPem,
      plainHex(binding),
    )
    const tx = signBvm(signer, operation, { version: options.runningTxVersion(), timestamp: options.nowNs() })
    return options.submitter.submit('invoke', tx)
  }
}
