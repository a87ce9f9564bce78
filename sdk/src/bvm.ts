/**
 * Hyperchain's built-in contracts (the BVM): operations encoded byte for byte as the official JS
 * SDK's `BVMBuilder` and `BvmOperation.*` builders encode them (@hyperchain/jssdk 1.1.0,
 * `src/common/util/encode.ts` encodeOperation / encodeProposalContents; docs/governance.md), the
 * transactions that carry them, and the decoding of a BVM receipt's `ret`.
 *
 * Wire:
 * - an operation: `u32be(len(method)) ‖ method ‖ u32be(argc) ‖ { u32be(len(arg)) ‖ arg }*`, lengths
 *   in bytes, each argument its UTF-8 bytes (a proposal's contents are raw bytes);
 * - a proposal's contents: `u32be(count) ‖ operation*` (no length per operation);
 * - the transaction: `type` "BVM", `to` the built-in contract's address, `payload` the operation's
 *   `0x` hex; Proposal, Account, Balance, DID, HashChange and RootCA's
 *   AddRootCA are "system" operations, signed with gasPrice and expirationTimestamp both
 *   0x7fffffffffffffff;
 * - the receipt's `ret`: hex of the JSON `{"Success", "Ret" (base64 or null), "Err"}`; Execute's
 *   `Ret` is the JSON `[{"code", "msg"}]`, one per operation of the proposal.
 *
 * ```ts
 * const op = hashOperation.set('key', 'value')
 * const hash = await client.contract_invokeContract(signBvm(account, op))
 * const receipt = await waitForReceipt(client, hash)
 * const result = decodeBvmRet(receipt.ret)        // { success, ret, err }
 * const create = proposalOperation.createForPermission(permissionContent.grant('admin', '0x…'))
 * ```
 */
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import type { Account } from './account.ts'
import type { InvokeTransaction } from './generated/types.ts'
import { signTransaction, type TransactionOptions } from './transaction.ts'

/** The built-in contracts' addresses (`to` of a BVM transaction). */
export const BVM_ADDRESS = {
  hash: '0x0000000000000000000000000000000000ffff01',
  proposal: '0x0000000000000000000000000000000000ffff02',
  account: '0x0000000000000000000000000000000000ffff04',
  cert: '0x0000000000000000000000000000000000ffff05',
  did: '0x0000000000000000000000000000000000ffff06',
  mpc: '0x0000000000000000000000000000000000ffff09',
  rootCA: '0x0000000000000000000000000000000000ffff0b',
  version: '0x0000000000000000000000000000000000ffff0c',
  hashChange: '0x0000000000000000000000000000000000ffff0d',
  balance: '0x0000000000000000000000000000000000ffff0e',
} as const

/** gasPrice and expirationTimestamp of a system operation: Java's Long.MAX_VALUE, as the SDK signs them. */
export const SYSTEM_OPERATION_MAX = 0x7fffffffffffffffn

/** An operation: a method of a built-in contract and its arguments (text is sent as UTF-8, bytes as they are). */
export interface BvmOperation {
  readonly method: string
  readonly args: readonly (string | Uint8Array)[]
}

/** An operation sent to a built-in contract in a transaction of its own. */
export interface BuiltinOperation extends BvmOperation {
  /** the built-in contract (BVM_ADDRESS) */
  readonly to: string
  /** signed with gasPrice and expirationTimestamp SYSTEM_OPERATION_MAX, as the SDK does */
  readonly system: boolean
}

export type ProposalType = 'CONFIG' | 'PERMISSION' | 'NODE' | 'CONTRACT' | 'CNS' | 'CA' | 'SYSTEM'

/** An operation inside a proposal (its contents); the type names the proposal it belongs in. */
export interface ProposalContent extends BvmOperation {
  readonly proposalType: ProposalType
}

/** A namespace filter rule (the SDK's NsFilterRule), set by a config proposal. */
export interface NsFilterRule {
  allow_anyone: boolean
  authorized_roles: string[]
  forbidden_roles: string[]
  id: number
  name: string
  to: string[]
  vm: string[]
}

function u32be(n: number): Uint8Array {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new RangeError(`a BVM length must fit 4 bytes, got ${n}`)
  return Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff)
}

/** `u32be(len(method)) ‖ method ‖ u32be(argc) ‖ { u32be(len(arg)) ‖ arg }*` */
export function encodeOperation(operation: BvmOperation): Uint8Array {
  const method = utf8ToBytes(operation.method)
  const parts: Uint8Array[] = [u32be(method.length), method, u32be(operation.args.length)]
  for (const arg of operation.args) {
    const bytes = typeof arg === 'string' ? utf8ToBytes(arg) : arg
    parts.push(u32be(bytes.length), bytes)
  }
  return concatBytes(...parts)
}

/** A proposal's contents: `u32be(count) ‖ operation*`. */
export function encodeProposalContents(contents: readonly BvmOperation[]): Uint8Array {
  return concatBytes(u32be(contents.length), ...contents.map(encodeOperation))
}

/** The transaction payload of an operation: `0x` hex, as the SDK's transaction carries it. */
export function bvmPayload(operation: BvmOperation): string {
  return `0x${bytesToHex(encodeOperation(operation))}`
}

/**
 * A signed BVM transaction carrying `operation`: params[0] of contract_invokeContract (the SDK's
 * `BVMBuilder.invoke(operation).build()`, signed). A system operation gets gasPrice and
 * expirationTimestamp SYSTEM_OPERATION_MAX unless `options` says otherwise.
 */
export function signBvm(account: Account, operation: BuiltinOperation, options: TransactionOptions = {}): InvokeTransaction {
  const system = operation.system ? { gasPrice: SYSTEM_OPERATION_MAX, expirationTimestamp: SYSTEM_OPERATION_MAX } : {}
  return signTransaction(account, {
    ...system,
    ...options,
    type: 'BVM',
    to: operation.to,
    payload: bvmPayload(operation),
  }) as InvokeTransaction
}

const builtin = (to: string, system: boolean, method: string, ...args: (string | Uint8Array)[]): BuiltinOperation => ({
  to,
  system,
  method,
  args,
})

/** JSON text of a number, bigint or boolean argument, as the SDK writes it (JSON.stringify, or its bigint-aware stringify). */
const jsonNumber = (value: number | bigint | boolean): string => (typeof value === 'bigint' ? value.toString() : JSON.stringify(value))

const with0x = (text: string): string => (text.startsWith('0x') ? text : `0x${text}`)

/** An address as a permission proposal names it: `0x…`, or a DID account name as the hex of its text. */
function permissionAddress(address: string): string {
  return address.startsWith('did:hpc:') ? `0x${bytesToHex(utf8ToBytes(address))}` : with0x(address)
}

function base64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

const hexBytes = (hex: string): Uint8Array => hexToBytes(hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex)

/** The Hash contract: a value stored under a key on chain. */
export const hashOperation = {
  set: (key: string, value: string) => builtin(BVM_ADDRESS.hash, false, 'Set', key, value),
  get: (key: string) => builtin(BVM_ADDRESS.hash, false, 'Get', key),
  setGenesisInfoForHpc: (genesisInfo: unknown) =>
    builtin(BVM_ADDRESS.hash, false, 'Set', 'the_key_for_genesis_info', JSON.stringify(genesisInfo)),
  getGenesisInfoForHpc: () => builtin(BVM_ADDRESS.hash, false, 'Get', 'the_key_for_genesis_info'),
}

/** The Account contract: register an account (with its certificate) or abandon it. */
export const accountOperation = {
  register: (address: string, cert: string) => builtin(BVM_ADDRESS.account, true, 'Register', address, cert),
  abandon: (address: string, sdkCert: string) => builtin(BVM_ADDRESS.account, true, 'Abandon', address, sdkCert),
}

/** The Balance contract: issue `value` to an account. */
export const balanceOperation = {
  issue: (address: string, value: bigint | number) => builtin(BVM_ADDRESS.balance, true, 'Issue', address, value.toString()),
}

/**
 * The Cert contract. The SDK signs the word "revoke" / "freeze" / "unfreeze" with the certificate's
 * key; here the signature is given (the SDK puts "sign" when it has no key). `revoke(cert)` with
 * no signature sends empty message and signature, as the SDK's one-argument revoke.
 */
export const certOperation = {
  revoke: (cert: string, sign?: string) =>
    sign === undefined
      ? builtin(BVM_ADDRESS.cert, false, 'CertRevoke', cert, '', '')
      : builtin(BVM_ADDRESS.cert, false, 'CertRevoke', cert, 'revoke', sign),
  check: (cert: string) => builtin(BVM_ADDRESS.cert, false, 'CertCheck', cert),
  freeze: (cert: string, sign = 'sign') => builtin(BVM_ADDRESS.cert, false, 'CertFreeze', cert, 'freeze', sign),
  unfreeze: (cert: string, sign = 'sign') => builtin(BVM_ADDRESS.cert, false, 'CertUnfreeze', cert, 'unfreeze', sign),
}

/** The DID contract. */
export const didOperation = {
  setChainID: (chainId: string) => builtin(BVM_ADDRESS.did, true, 'SetChainID', chainId),
}

/** The HashChange contract. */
export const hashChangeOperation = {
  changeHashAlgo: (algoSet: { hash_algo?: string; encrypt_algo?: string } & Record<string, unknown>) =>
    builtin(BVM_ADDRESS.hashChange, true, 'ChangeHashAlgo', JSON.stringify(algoSet)),
  getSupportHashAlgo: () => builtin(BVM_ADDRESS.hashChange, true, 'GetSupportHashAlgo'),
  getHashAlgo: () => builtin(BVM_ADDRESS.hashChange, true, 'GetHashAlgo'),
}

/** The RootCA contract (AddRootCA is a system operation, GetRootCAs is not). */
export const rootCAOperation = {
  addRootCA: (rootCA: string) => builtin(BVM_ADDRESS.rootCA, true, 'AddRootCA', rootCA),
  getRootCAs: () => builtin(BVM_ADDRESS.rootCA, false, 'GetRootCAs'),
}

/** The Version contract. */
export const versionOperation = {
  getLatestVersions: () => builtin(BVM_ADDRESS.version, false, 'GetLatestVersions'),
  getSupportedVersionByHostname: (hostname: string) => builtin(BVM_ADDRESS.version, false, 'GetSupportedVersionByHostname', hostname),
  /**
   * Keel's declaration of what a VP supports (docs/governance.md §17; the SDK has no builder: its
   * node sends it through version_setSupportedVersion): the host, its SupportedVersion, its
   * certificate (PEM) and the hex of its certificate key's binding signature.
   */
  setSupportedVersion: (hostname: string, supported: Readonly<Record<string, readonly string[]>>, certPem: string, bindingHex: string) =>
    builtin(BVM_ADDRESS.version, false, 'SetSupportedVersion', hostname, JSON.stringify(supported), certPem, bindingHex),
}

/** The MPC contract. */
export const mpcOperation = {
  getInfo: (tag: string, curve: string) => builtin(BVM_ADDRESS.mpc, false, 'GetSRSInfo', tag, curve),
  beacon: (ptau: Uint8Array) => builtin(BVM_ADDRESS.mpc, false, 'Beacon', bytesToHex(ptau)),
  getHis: (curve: string) => builtin(BVM_ADDRESS.mpc, false, 'GetHistory', curve),
}

const proposal = (method: string, ...args: (string | Uint8Array)[]) => builtin(BVM_ADDRESS.proposal, true, method, ...args)
const create = (type: ProposalType, contents: readonly ProposalContent[]) => proposal('Create', encodeProposalContents(contents), type)
const direct = (type: ProposalType, contents: readonly ProposalContent[]) => proposal('Direct', encodeProposalContents(contents), type)

/** The Proposal contract: create a proposal of contents, vote on it, cancel or execute it. */
export const proposalOperation = {
  create,
  createForConfig: (...contents: ProposalContent[]) => create('CONFIG', contents),
  createForPermission: (...contents: ProposalContent[]) => create('PERMISSION', contents),
  createForNode: (...contents: ProposalContent[]) => create('NODE', contents),
  createForContract: (...contents: ProposalContent[]) => create('CONTRACT', contents),
  createForCNS: (...contents: ProposalContent[]) => create('CNS', contents),
  createForCAMode: (...contents: ProposalContent[]) => create('CA', contents),
  createForSystemUpgrade: (...contents: ProposalContent[]) => create('SYSTEM', contents),
  directForNode: (...contents: ProposalContent[]) => direct('NODE', contents),
  directForCAMode: (...contents: ProposalContent[]) => direct('CA', contents),
  /** `accept`: a vote for (true) or against (false) */
  vote: (proposalId: number, accept: boolean) => proposal('Vote', jsonNumber(proposalId), jsonNumber(accept)),
  cancel: (proposalId: number) => proposal('Cancel', jsonNumber(proposalId)),
  execute: (proposalId: number) => proposal('Execute', jsonNumber(proposalId)),
}

const content = (proposalType: ProposalType, method: string, ...args: (string | Uint8Array)[]): ProposalContent => ({
  proposalType,
  method,
  args,
})

/** Contents of a PERMISSION proposal: roles and who holds them. */
export const permissionContent = {
  createRole: (role: string) => content('PERMISSION', 'CreateRole', role),
  deleteRole: (role: string) => content('PERMISSION', 'DeleteRole', role),
  grant: (role: string, address: string) => content('PERMISSION', 'Grant', role, permissionAddress(address)),
  revoke: (role: string, address: string) => content('PERMISSION', 'Revoke', role, permissionAddress(address)),
}

/** Contents of a CNS proposal: a name for a contract address. */
export const cnsContent = {
  setCName: (address: string, name: string) => content('CNS', 'SetCName', address, name),
}

/** Contents of a CONFIG proposal: the governance-level settings. */
export const configContent = {
  setFilterEnable: (enable: boolean) => content('CONFIG', 'SetFilterEnable', jsonNumber(enable)),
  setFilterRules: (rules: readonly NsFilterRule[]) => content('CONFIG', 'SetFilterRules', JSON.stringify(rules)),
  setConsensusAlgo: (algo: string) => content('CONFIG', 'SetConsensusAlgo', algo),
  updateConsensusAlgo: (algo: string) => content('CONFIG', 'UpdateConsensusAlgo', algo),
  setConsensusSetSize: (size: number) => content('CONFIG', 'SetConsensusSetSize', jsonNumber(size)),
  setConsensusBatchSize: (size: number) => content('CONFIG', 'SetConsensusBatchSize', jsonNumber(size)),
  setConsensusPoolSize: (size: number) => content('CONFIG', 'SetConsensusPoolSize', jsonNumber(size)),
  setProposalTimeout: (timeout: bigint | number) => content('CONFIG', 'SetProposalTimeout', jsonNumber(timeout)),
  setProposalThreshold: (threshold: number) => content('CONFIG', 'SetProposalThreshold', jsonNumber(threshold)),
  setContractVoteEnable: (enable: boolean) => content('CONFIG', 'SetContractVoteEnable', jsonNumber(enable)),
  setContractVoteThreshold: (threshold: number) => content('CONFIG', 'SetContractVoteThreshold', jsonNumber(threshold)),
  setGasPrice: (gasPrice: bigint | number) => content('CONFIG', 'SetExecutorBaseGasPrice', jsonNumber(gasPrice)),
}

/** Contents of a NODE proposal. */
export const nodeContent = {
  addNode: (publicKey: Uint8Array, hostname: string, role: string, namespace: string) =>
    content('NODE', 'AddNode', new TextDecoder().decode(publicKey), hostname, role, namespace),
  addVP: (hostname: string, namespace: string) => content('NODE', 'AddVP', hostname, namespace),
  removeVP: (hostname: string, namespace: string) => content('NODE', 'RemoveVP', hostname, namespace),
}

/** compile options of a contract proposal; `null` is sent as JSON null, as the SDK does */
export type CompileOptions = Record<string, string> | null | undefined

const contractOption = (source: string, binHex: string) => ({ source: base64(utf8ToBytes(source)), bin: base64(hexBytes(binHex)) })

/** Contents of a CONTRACT proposal (deploy, upgrade, freeze or unfreeze by vote); `vmType` "EVM", "HVM", … */
export const contractContent = {
  deploy: (source: string, binHex: string, vmType: string, compileOpt?: CompileOptions) =>
    content('CONTRACT', 'DeployContract', JSON.stringify({ vmType, ...contractOption(source, binHex), compileOpt })),
  upgrade: (source: string, binHex: string, vmType: string, addr: string, compileOpt?: CompileOptions) =>
    content('CONTRACT', 'UpgradeContract', JSON.stringify({ vmType, ...contractOption(source, binHex), compileOpt, addr })),
  upgradeByName: (source: string, binHex: string, vmType: string, name: string, compileOpt?: CompileOptions) =>
    content('CONTRACT', 'UpgradeContract', JSON.stringify({ vmType, ...contractOption(source, binHex), compileOpt, name })),
  /** `opCode`: 2 freeze, 3 unfreeze */
  maintain: (vmType: string, addr: string, opCode: number) =>
    content('CONTRACT', 'MaintainContract', JSON.stringify({ vmType, addr, opCode })),
  maintainByName: (vmType: string, name: string, opCode: number) =>
    content('CONTRACT', 'MaintainContract', JSON.stringify({ vmType, name, opCode })),
}

/** Contents of a CA proposal; `mode` 1 center, 2 distributed, 3 none. */
export const caModeContent = {
  setCAMode: (mode: 1 | 2 | 3) => content('CA', 'SetCAMode', mode.toString()),
  getCAMode: () => content('CA', 'GetCAMode'),
}

/** Contents of a SYSTEM proposal. */
export const systemUpgradeContent = {
  systemUpgrade: (chainVersion: unknown) => content('SYSTEM', 'SystemUpgrade', JSON.stringify(chainVersion)),
}

/** A BVM receipt's `ret` decoded: `ret` is JSON-parsed when it is JSON, else the text; null when absent. */
export interface BvmResult {
  success: boolean
  ret: unknown
  /** `Ret`'s bytes (base64-decoded); null when absent */
  retBytes: Uint8Array | null
  err: string
}

/** One operation's outcome in an executed proposal: 200 done; -30001…-30004 failed. */
export interface OperationResult {
  code: number
  msg: string
}

/**
 * Decodes a BVM receipt's `ret` (hex, `0x` optional, of `{"Success","Ret","Err"}`), as the SDK's
 * DecodeUtil.decodeBvmResultRet and decodeBvmResultRetRet together.
 */
export function decodeBvmRet(retHex: string): BvmResult {
  const text = new TextDecoder().decode(hexBytes(retHex))
  const raw = JSON.parse(text) as { Success?: unknown; Ret?: unknown; Err?: unknown }
  if (raw === null || typeof raw !== 'object' || typeof raw.Success !== 'boolean')
    throw new Error(`not a BVM result: ${text.slice(0, 120)}`)
  const retBytes = typeof raw.Ret === 'string' ? fromBase64(raw.Ret) : null
  let ret: unknown = null
  if (retBytes !== null) {
    const retText = new TextDecoder().decode(retBytes)
    try {
      ret = JSON.parse(retText)
    } catch {
      ret = retText
    }
  }
  return { success: raw.Success, ret, retBytes, err: typeof raw.Err === 'string' ? raw.Err : '' }
}

/** The per-operation outcomes of a proposal's Execute receipt (`Ret` is `[{code, msg}]`). */
export function decodeProposalExecution(retHex: string): OperationResult[] {
  const { ret, success, err } = decodeBvmRet(retHex)
  if (!Array.isArray(ret))
    throw new Error(`not an Execute result (success ${success}${err === '' ? '' : `, ${err}`}): ${JSON.stringify(ret)}`)
  return ret.map((entry: { code?: unknown; msg?: unknown }) => ({ code: Number(entry.code), msg: String(entry.msg ?? '') }))
}
