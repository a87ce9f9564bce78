/**
 * BVM transactions: Hyperchain's built-in contracts as state transitions over a block's overlay
 * (docs/governance.md). Deterministic: every input is the transaction, the block's time and number,
 * and the state; every VP executing the same block writes the same records and the same receipt.
 *
 * Outcomes:
 * - a payload that does not decode, or a `to` that is no built-in contract: the transaction is
 *   discarded (INVOKE_CONTRACT_FAILED) with the reason; the block goes on;
 * - every decoded operation: a receipt whose `ret` is the SDK's BVM result
 *   `{"Success", "Ret", "Err"}`; a refusal (not an admin, a proposal in the wrong state, bad
 *   arguments) is `Success: false` with `Err` saying why, and changes nothing.
 */
import { type KeyObject, verify as verifySignature, X509Certificate } from 'node:crypto'
import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { versionAtLeast } from '../../sdk/src/sign-string.ts'
import type { Account, ExecutionOutcome, Hex, Log } from '../domain.ts'
import { bytesToHex, paddedHex } from '../wire/hex.ts'
import {
  BUILTIN_ROLES,
  CA_MODES,
  type FilterRule,
  type GenesisGovernance,
  GovernanceWriter,
  MIN_PROPOSAL_TIMEOUT_NS,
  PROPOSAL_TYPES,
  type ProposalRecord,
  type ProposalType,
  type SlotWriter,
} from './state.ts'
import {
  asSupported,
  availableVersions,
  highest,
  isVersionTag,
  nodeBindingBytes,
  type RunningVersions,
  type SupportedVersions,
  VERSION_TAGS,
  type VersionTag,
} from './versions.ts'
import {
  argText,
  BuiltinAddress,
  BvmDecodeError,
  type BvmResult,
  base64Of,
  decodeContents,
  decodeOperation,
  encodeResult,
  OpCode,
  type Operation,
  type OperationResult,
} from './wire.ts'

/** What the executor lends a BVM run: contract lifecycle for CONTRACT proposals, the network for NODE ones. */
export interface BvmHooks {
  /** deploys `code` (hex init code) as `deployer`; the new address, or why not */
  deploy(code: Hex, vmType: 'EVM' | 'JVM', deployer: Hex): Promise<{ address: Hex } | { error: string }>
  /** replaces a contract's code by what `code` (init code) returns; undefined or why not */
  upgrade(address: Hex, code: Hex, vmType: 'EVM' | 'JVM'): Promise<string | undefined>
  /** freezes (2) or unfreezes (3) a contract; undefined or why not */
  maintain(address: Hex, opCode: number): string | undefined
  /** whether `address` holds a contract */
  isContract(address: Hex): boolean
  /** NODE proposal operations; absent on a node that runs alone */
  node?: NodeHooks
  /** what the Version contract answers: this build's format versions and the solo node's host name */
  versions: ChainVersions
}

/**
 * What the Version contract needs of the node beyond the chain: the host name of a node that runs
 * alone, and its certificate (its TCert CA's, PEM), the one a solo node binds its node account with.
 * On a network the VP group and the namespace CA (NodeHooks) decide instead.
 */
export interface ChainVersions {
  hostname: string
  selfCertPem?: string
}

/** The algorithms Keel hashes and encrypts with, as the HashChange contract names them (protocol.md §2). */
export const HASH_ALGO = 'KECCAK_256'

/**
 * The VP group as the network layer knows it, for NODE proposals (docs/governance.md §11). Every
 * answer depends on the chain alone (the group its blocks decided up to the block before the one
 * executing, the genesis VPs of the peer files, the namespace CA), so every node executing a block
 * answers alike.
 */
export interface NodeHooks {
  /** the namespace this network runs (keel.toml node.namespace) */
  readonly namespace: string
  /** the fewest VPs the group may have */
  readonly minVps: number
  /** the VP group once every change recorded before this block takes effect */
  vps(): { id: number; hostname: string }[]
  /** every VP the chain ever had, removed ones included */
  everVps(): { id: number; hostname: string }[]
  /** a VP's ECert (PEM text) checked against the namespace CA: its host name and base64 DER, or why not */
  readCert(pem: string): { hostname: string; cert: string } | string
  /** the first block a change decided at `block` applies to (membership.ts activationBoundary) */
  effectiveFrom(block: number): number
}

/** A block's overlay as a BVM run uses it: storage, accounts (Balance.Issue), and checkpoints so a refusal changes nothing. */
export interface BvmState extends SlotWriter {
  getAccount(address: Hex): Account | undefined
  putAccount(address: Hex, account: Account): void
  checkpoint(): void
  commit(): void
  revert(): void
}

export interface BvmRun {
  txHash: Hex
  from: Hex
  to: Hex
  payload: Hex
  blockTime: bigint
  blockNumber: number
  state: BvmState
  genesis: GenesisGovernance
  hooks: BvmHooks
}

export const PROPOSAL_TOPIC: Hex = paddedHex(utf8ToBytes('proposal contract'), 32)

/** What the DID and MPC contracts answer: Keel has no such feature. */
const MISSING: Readonly<Record<string, string>> = {
  [BuiltinAddress.did]: 'DID documents and credentials (the DID contract)',
  [BuiltinAddress.mpc]: 'multi-party computation (the MPC contract)',
}

const CENTER = 1
const NONE = 3

/** A CA mode as the refusals name it: `center (1)`, or `not set`. */
function modeName(mode: number): string {
  return mode === 0 ? 'not set' : `${CA_MODES[mode]} (${mode})`
}

/** A certificate's subject or issuer on one line, as a refusal names it. */
const oneLine = (name: string): string => name.replaceAll('\n', ', ')

/**
 * A certificate (PEM text) read and checked at a block's time: parsed, and within its validity.
 * node:crypto's X509Certificate parses and verifies the same bytes alike on every node.
 */
function certificateAt(pem: string, blockTime: bigint, what: string): X509Certificate {
  let cert: X509Certificate
  try {
    cert = new X509Certificate(pem)
  } catch (error) {
    return refuse(`${what} is not an X.509 certificate in PEM: ${error instanceof Error ? error.message : String(error)}`)
  }
  const ms = Number(blockTime / 1_000_000n)
  if (ms < Date.parse(cert.validFrom) || ms > Date.parse(cert.validTo))
    refuse(`${what} (${oneLine(cert.subject)}) is not valid at the block's time: it is valid from ${cert.validFrom} to ${cert.validTo}`)
  return cert
}

class Refusal extends Error {
  constructor(
    message: string,
    readonly ret: string | null = null,
  ) {
    super(message)
  }
}

function refuse(message: string, ret: string | null = null): never {
  throw new Refusal(message, ret)
}

function ok(ret: string | null, logs: Log[] = []): { result: BvmResult; logs: Log[] } {
  return { result: { Success: true, Ret: ret, Err: '' }, logs }
}

const ADDRESS = /^0x[0-9a-f]{40}$/

function addressArg(operation: Operation, index: number): Hex {
  const raw = argText(operation, index).trim().toLowerCase()
  const address = raw.startsWith('0x') ? raw : `0x${raw}`
  if (!ADDRESS.test(address))
    throw new BvmDecodeError(`${operation.method}: argument ${index} is not a 20-byte hex address: ${JSON.stringify(raw)}`)
  return address
}

function arity(operation: Operation, count: number): void {
  if (operation.args.length !== count)
    throw new ParamsMismatch(`${operation.method} takes ${count} argument${count === 1 ? '' : 's'}, got ${operation.args.length}`)
}

class ParamsMismatch extends Error {}

const MAX_BALANCE = 2n ** 63n - 1n

/** The result of an operation a `type` proposal does not hold. */
const notHeld = (type: ProposalType): OperationResult => ({
  code: OpCode.methodNotExist,
  msg: `a ${type} proposal holds ${METHODS_OF[type].join(', ')}`,
})

/**
 * An operation of a `type` proposal judged by `run`: success, or the refusal its error names, in
 * the codes the SDK reads (an unexpected error is thrown on). A method the type does not hold is
 * refused before `run`.
 */
function operationResult(type: ProposalType, op: Operation, run: () => void): OperationResult {
  if (!METHODS_OF[type].includes(op.method)) return notHeld(type)
  try {
    run()
    return { code: OpCode.success }
  } catch (error) {
    if (error instanceof ParamsMismatch) return { code: OpCode.paramsLenMismatch, msg: error.message }
    if (error instanceof BvmDecodeError) return { code: OpCode.invalidParams, msg: error.message }
    if (error instanceof Refusal) return { code: OpCode.callError, msg: error.message }
    throw error
  }
}

function jsonArg<T>(operation: Operation, index: number): T {
  const text = argText(operation, index)
  try {
    return JSON.parse(text) as T
  } catch {
    throw new BvmDecodeError(`${operation.method}: argument ${index} is not JSON: ${JSON.stringify(text.slice(0, 80))}`)
  }
}

function intArg(operation: Operation, index: number, min: number): number {
  const value = jsonArg<unknown>(operation, index)
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new BvmDecodeError(`${operation.method}: argument ${index} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`)
  return value
}

function boolArg(operation: Operation, index: number): boolean {
  const value = jsonArg<unknown>(operation, index)
  if (typeof value !== 'boolean')
    throw new BvmDecodeError(`${operation.method}: argument ${index} must be true or false, got ${JSON.stringify(value)}`)
  return value
}

/** Runs one BVM transaction; the overlay changes only when the result is a success. */
export async function executeBvm(run: BvmRun): Promise<ExecutionOutcome> {
  const t0 = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - t0)
  const discard = (detail: string): ExecutionOutcome => ({
    ok: false,
    invalidMsg: 'INVOKE_CONTRACT_FAILED',
    detail,
    gasUsed: 0,
    executeTimeNs: elapsed(),
  })
  let operation: Operation
  try {
    operation = decodeOperation(hexToBytes(run.payload.slice(2)))
  } catch (error) {
    return discard(`malformed BVM operation: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!BUILTIN_ADDRESSES_LIST.includes(run.to)) return discard(`${run.to} is not a built-in contract`)
  const contract = new Contracts(run)
  let answer: { result: BvmResult; logs: Log[] }
  run.state.checkpoint()
  try {
    answer = await contract.call(operation)
    run.state.commit()
  } catch (error) {
    run.state.revert()
    if (error instanceof Refusal) answer = { result: { Success: false, Ret: error.ret, Err: error.message }, logs: [] }
    else if (error instanceof BvmDecodeError || error instanceof ParamsMismatch)
      answer = { result: { Success: false, Ret: null, Err: error.message }, logs: [] }
    else throw error
  }
  return { ok: true, contractAddress: null, gasUsed: 0, ret: encodeResult(answer.result), logs: answer.logs, executeTimeNs: elapsed() }
}

/** Methods each proposal type may hold. */
const METHODS_OF: Readonly<Record<ProposalType, readonly string[]>> = {
  CONFIG: [
    'SetFilterEnable',
    'SetFilterRules',
    'SetProposalTimeout',
    'SetProposalThreshold',
    'SetContractVoteEnable',
    'SetContractVoteThreshold',
    'SetConsensusAlgo',
    'UpdateConsensusAlgo',
    'SetConsensusSetSize',
    'SetConsensusBatchSize',
    'SetConsensusPoolSize',
    'SetExecutorBaseGasPrice',
  ],
  PERMISSION: ['CreateRole', 'DeleteRole', 'Grant', 'Revoke'],
  NODE: ['AddNode', 'AddVP', 'RemoveVP'],
  CNS: ['SetCName'],
  CONTRACT: ['DeployContract', 'UpgradeContract', 'MaintainContract'],
  CA: ['SetCAMode', 'GetCAMode'],
  SYSTEM: ['SystemUpgrade'],
}

/** CONFIG settings Keel leaves to its configuration files (the consensus runs with what they say). */
const CONFIG_NOT_BY_PROPOSAL: Readonly<Record<string, string>> = {
  SetConsensusAlgo: 'the consensus algorithm (Keel runs RBFT only)',
  UpdateConsensusAlgo: 'the consensus algorithm (Keel runs RBFT only)',
  SetConsensusSetSize: 'consensus.set.set_size (set in keel.toml)',
  SetConsensusBatchSize: 'consensus.pool.batch_size ([chain] batchSize in keel.toml)',
  SetConsensusPoolSize: 'consensus.pool.pool_size ([chain] poolCapacity in keel.toml)',
  SetExecutorBaseGasPrice: 'the base gas price (Keel charges no gas)',
}

interface ContractOption {
  vmType?: string
  source?: string
  bin?: string
  addr?: string
  name?: string
  opCode?: number
}

class Contracts {
  readonly gov: GovernanceWriter

  constructor(private readonly bvm: BvmRun) {
    this.gov = new GovernanceWriter(bvm.state, bvm.genesis)
  }

  async call(operation: Operation): Promise<{ result: BvmResult; logs: Log[] }> {
    const to = this.bvm.to
    switch (to) {
      case BuiltinAddress.hash:
        return this.hash(operation)
      case BuiltinAddress.proposal:
        return this.proposal(operation)
      case BuiltinAddress.account:
        return this.account(operation)
      case BuiltinAddress.cert:
        return this.cert(operation)
      case BuiltinAddress.version:
        return this.version(operation)
      case BuiltinAddress.hashChange:
        return this.hashChange(operation)
      case BuiltinAddress.balance:
        return this.balance(operation)
      case BuiltinAddress.rootCA:
        return this.rootCA(operation)
      default:
        return refuse(`Keel has no ${MISSING[to] ?? `contract at ${to}`}; ${operation.method} is not available`)
    }
  }

  // ---- Hash: a key-value store anyone may write (the SDK's HashOperation) ----

  private hash(operation: Operation): { result: BvmResult; logs: Log[] } {
    switch (operation.method) {
      case 'Set': {
        arity(operation, 2)
        this.gov.setHash(argText(operation, 0), argText(operation, 1))
        return ok(null)
      }
      case 'Get': {
        arity(operation, 1)
        const key = argText(operation, 0)
        const value = this.gov.hashValue(key)
        if (value === undefined) refuse(`no value is set for key ${JSON.stringify(key)}`)
        return ok(base64Of(value))
      }
      default:
        return refuse(`the Hash contract has no method ${operation.method} (Set, Get)`)
    }
  }

  // ---- Balance: an admin issues native balance to an account (the SDK's BalanceOperation.issue) ----

  private balance(operation: Operation): { result: BvmResult; logs: Log[] } {
    if (operation.method !== 'Issue') return refuse(`the Balance contract has no method ${operation.method} (Issue)`)
    arity(operation, 2)
    if (!this.gov.isAdmin(this.bvm.from)) refuse(`Issue needs an admin; ${this.bvm.from} is not one`)
    const target = addressArg(operation, 0)
    const text = argText(operation, 1).trim()
    if (!/^[0-9]{1,78}$/.test(text)) throw new BvmDecodeError(`Issue: argument 1 is not a positive decimal amount: ${JSON.stringify(text)}`)
    const value = BigInt(text)
    const account = this.bvm.state.getAccount(target) ?? { balance: 0n, nonce: 0n }
    // balances are Hyperchain's int64 (the transfer value's bound; README "Ethereum tools")
    if (value === 0n || account.balance + value > MAX_BALANCE)
      refuse(`Issue: ${text} is zero or would take ${target}'s balance past ${MAX_BALANCE} (int64)`)
    this.bvm.state.putAccount(target, { ...account, balance: account.balance + value })
    return ok(null)
  }

  // ---- RootCA: the root CAs the chain trusts for account certificates (CA mode center) ----

  private rootCA(operation: Operation): { result: BvmResult; logs: Log[] } {
    switch (operation.method) {
      case 'AddRootCA': {
        arity(operation, 1)
        if (!this.gov.isAdmin(this.bvm.from)) refuse(`AddRootCA needs an admin; ${this.bvm.from} is not one`)
        const mode = this.gov.caMode()
        if (mode !== CENTER)
          refuse(`AddRootCA needs CA mode center (1); this chain's CA mode is ${modeName(mode)} (a CA proposal's SetCAMode sets it once)`)
        const root = certificateAt(argText(operation, 0), this.bvm.blockTime, 'the root CA')
        if (!root.ca) refuse(`the root CA ${oneLine(root.subject)} is not a CA certificate (basicConstraints CA:TRUE)`)
        if (!root.checkIssued(root) || !root.verify(root.publicKey))
          refuse(`the root CA ${oneLine(root.subject)} is not self-signed: a root CA signs its own certificate`)
        const pem = root.toString()
        if (this.gov.rootCAs().some((known) => new X509Certificate(known).fingerprint256 === root.fingerprint256))
          refuse(`the root CA ${oneLine(root.subject)} is on the chain already`)
        this.gov.addRootCA(pem)
        return ok(null)
      }
      case 'GetRootCAs':
        arity(operation, 0)
        return ok(base64Of(JSON.stringify(this.gov.rootCAs())))
      default:
        return refuse(`the RootCA contract has no method ${operation.method} (AddRootCA, GetRootCAs)`)
    }
  }

  /** With root CAs on the chain, an account's certificate must be issued by one of them and valid now. */
  private checkAgainstRoots(pem: string): void {
    const roots = this.gov.rootCAs()
    if (roots.length === 0) return
    const cert = certificateAt(pem, this.bvm.blockTime, 'the certificate')
    const issued = roots.some((known) => {
      const root = new X509Certificate(known)
      return cert.checkIssued(root) && cert.verify(root.publicKey)
    })
    if (!issued)
      refuse(
        `the certificate (${oneLine(cert.subject)}, issued by ${oneLine(cert.issuer)}) is not issued by any of the chain's ${roots.length} root CAs (RootCA.GetRootCAs)`,
      )
  }

  // ---- Version: the versions the chain runs and its VPs support (docs/governance.md §17) ----

  /** the host names of the VP group (a node that runs alone: its own) */
  private vpHostnames(): string[] {
    return this.bvm.hooks.node?.vps().map((vp) => vp.hostname) ?? [this.bvm.hooks.versions.hostname]
  }

  /** what a VP supports: what it declared, else the versions it runs */
  private supportedOf(hostname: string, running: RunningVersions): SupportedVersions {
    return this.gov.supportedBy(hostname)?.versions ?? asSupported(running)
  }

  private version(operation: Operation): { result: BvmResult; logs: Log[] } {
    const running = this.gov.runningVersions()
    const hostnames = this.vpHostnames()
    switch (operation.method) {
      case 'GetLatestVersions': {
        arity(operation, 0)
        const maxSupported = (hostname: string) => {
          const supported = this.supportedOf(hostname, running)
          return Object.fromEntries(
            VERSION_TAGS.flatMap((tag) => {
              const best = highest(supported[tag])
              return best === undefined ? [] : [[tag, best]]
            }),
          )
        }
        return ok(
          base64Of(
            JSON.stringify({
              maxSupportedVersions: Object.fromEntries(hostnames.map((name) => [name, maxSupported(name)])),
              availableVersions: availableVersions(
                hostnames.map((hostname) => this.supportedOf(hostname, running)),
                running,
              ),
              runningVersions: running,
            }),
          ),
        )
      }
      case 'GetSupportedVersionByHostname': {
        arity(operation, 1)
        const wanted = argText(operation, 0).trim()
        if (!hostnames.includes(wanted))
          refuse(`${JSON.stringify(wanted)} is no VP of this chain (${hostnames.join(', ')}): the Version contract knows the VPs' versions`)
        const supported = this.supportedOf(wanted, running)
        return ok(
          base64Of(
            JSON.stringify(Object.fromEntries(VERSION_TAGS.filter((tag) => supported[tag].length > 0).map((tag) => [tag, supported[tag]]))),
          ),
        )
      }
      case 'SetSupportedVersion':
        return this.setSupportedVersion(operation, hostnames, running)
      default:
        return refuse(
          `the Version contract has no method ${operation.method} (GetLatestVersions, GetSupportedVersionByHostname, SetSupportedVersion)`,
        )
    }
  }

  /**
   * SetSupportedVersion(hostname, versions, cert, binding): a VP declares the versions its build
   * supports, from its node account, proving with its certificate's key that the account is its
   * own. The account gets the nodeOfVP role (an earlier account of the same VP loses it).
   */
  private setSupportedVersion(operation: Operation, hostnames: string[], running: RunningVersions): { result: BvmResult; logs: Log[] } {
    arity(operation, 4)
    const hostname = argText(operation, 0).trim()
    const versions = supportedArg(operation, 1)
    const from = this.bvm.from
    if (!hostnames.includes(hostname))
      refuse(`${JSON.stringify(hostname)} is no VP of this chain (${hostnames.join(', ')}): only a VP declares the versions it supports`)
    for (const tag of VERSION_TAGS) {
      const runs = running[tag]
      if (runs !== undefined && !versions[tag].includes(runs))
        refuse(
          `${hostname} declares ${tag} ${versions[tag].join(', ') || 'none'}, without ${runs}, the version the chain runs: a VP supports what it runs`,
        )
    }
    const key = this.vpKey(hostname, argText(operation, 2))
    const signature = argText(operation, 3).trim().replace(/^0x/i, '')
    let verified = false
    try {
      verified =
        /^[0-9a-fA-F]+$/.test(signature) &&
        verifySignature('sha256', nodeBindingBytes(hostname, from), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'hex'))
    } catch {
      verified = false
    }
    if (!verified)
      refuse(
        `the binding of ${from} to ${hostname} does not verify with the key of ${hostname}'s certificate: only the VP itself binds its node account (version_setSupportedVersion on that VP)`,
      )
    const previous = this.gov.supportedBy(hostname)
    if (previous !== undefined && previous.account !== from) this.gov.revoke(previous.account, 'nodeOfVP')
    if (!this.gov.hasRole(from, 'nodeOfVP')) this.gov.grant(from, 'nodeOfVP')
    this.gov.putSupported({ hostname, account: from, versions, block: this.bvm.blockNumber })
    return ok(null)
  }

  /**
   * The public key of `hostname`'s certificate (PEM): on a network an ECert of the namespace CA for
   * that VP (NodeHooks.readCert); on a node that runs alone, its own certificate.
   */
  private vpKey(hostname: string, pem: string): KeyObject {
    const node = this.bvm.hooks.node
    if (node !== undefined) {
      const read = node.readCert(pem)
      if (typeof read === 'string') refuse(`SetSupportedVersion: ${read}`)
      if (read.hostname !== hostname) refuse(`SetSupportedVersion: the certificate is ${read.hostname}'s, not ${hostname}'s`)
      return new X509Certificate(Buffer.from(read.cert, 'base64')).publicKey
    }
    const own = this.bvm.hooks.versions.selfCertPem
    let cert: X509Certificate
    try {
      cert = new X509Certificate(pem)
    } catch (error) {
      return refuse(`SetSupportedVersion: the certificate is not X.509 in PEM (${error instanceof Error ? error.message : String(error)})`)
    }
    if (own === undefined || new X509Certificate(own).fingerprint256 !== cert.fingerprint256)
      refuse(
        `SetSupportedVersion: the certificate is not ${hostname}'s own (a node that runs alone binds its account with its TCert CA certificate)`,
      )
    return cert.publicKey
  }

  /**
   * A SYSTEM proposal's SystemUpgrade(ChainVersion): the kinds it names with a version other than
   * the running one are raised to it, once every VP of the group supports it.
   */
  private systemOp(op: Operation, apply: boolean): string | undefined {
    arity(op, 1)
    const target = jsonArg<unknown>(op, 0)
    if (target === null || typeof target !== 'object' || Array.isArray(target))
      throw new BvmDecodeError('SystemUpgrade: the argument is not a ChainVersion object {"tx_version", "block_version", …}')
    const config = this.gov.config()
    const running = this.gov.runningVersions(config)
    const changes: [VersionTag, string][] = []
    for (const [tag, version] of Object.entries(target)) {
      if (!isVersionTag(tag))
        throw new BvmDecodeError(`SystemUpgrade: ${JSON.stringify(tag)} is no version kind (${VERSION_TAGS.join(', ')})`)
      if (typeof version !== 'string') throw new BvmDecodeError(`SystemUpgrade: ${tag} is not a string`)
      if (version === '' || version === running[tag]) continue
      if (running[tag] !== undefined && versionAtLeast(running[tag], version))
        refuse(`SystemUpgrade: the chain runs ${tag} ${running[tag]}; a system upgrade does not go down to ${version}`)
      changes.push([tag, version])
    }
    if (changes.length === 0)
      refuse(`SystemUpgrade changes nothing: the chain runs ${JSON.stringify(running)} already (version_getVersions)`)
    const hostnames = this.vpHostnames()
    for (const [tag, version] of changes) {
      const lacking = hostnames.filter((hostname) => !this.supportedOf(hostname, running)[tag].includes(version))
      if (lacking.length > 0)
        refuse(
          `${tag} ${version} is not supported by ${lacking.join(', ')} (of the VPs ${hostnames.join(', ')}): each VP declares what its build supports with version_setSupportedVersion, and the Version contract's GetSupportedVersionByHostname shows it`,
        )
    }
    if (!apply) return undefined
    this.gov.setConfig({ ...config, runningVersions: { ...running, ...Object.fromEntries(changes) } })
    return `the chain runs ${changes.map(([tag, version]) => `${tag} ${version} (was ${running[tag] ?? 'none'})`).join(', ')} from block ${this.bvm.blockNumber}`
  }

  // ---- HashChange: the chain's hash and encryption algorithms (fixed in Keel) ----

  private hashChange(operation: Operation): { result: BvmResult; logs: Log[] } {
    switch (operation.method) {
      case 'GetSupportHashAlgo':
        arity(operation, 0)
        return ok(base64Of(JSON.stringify({ hash_algo: HASH_ALGO, encrypt_algo: '' })))
      case 'GetHashAlgo':
        // the changes the chain made: none, ever (ChangeHashAlgo is refused)
        arity(operation, 0)
        return ok(base64Of(JSON.stringify([])))
      case 'ChangeHashAlgo': {
        arity(operation, 1)
        const set = jsonArg<{ hash_algo?: unknown; encrypt_algo?: unknown }>(operation, 0)
        if (set === null || typeof set !== 'object' || typeof set.hash_algo !== 'string')
          throw new BvmDecodeError('ChangeHashAlgo: the argument is not an AlgoSet {"hash_algo", "encrypt_algo"}')
        if (!this.gov.isAdmin(this.bvm.from)) refuse(`ChangeHashAlgo needs an admin; ${this.bvm.from} is not one`)
        return refuse(
          `Keel does not change its hash algorithm (asked: ${set.hash_algo}${typeof set.encrypt_algo === 'string' && set.encrypt_algo !== '' ? `, ${set.encrypt_algo}` : ''}): transaction, block and contract hashes and addresses are ${HASH_ALGO} as Hyperchain's protocol fixes them (protocol.md §2), and Keel encrypts nothing on chain`,
        )
      }
      default:
        return refuse(`the HashChange contract has no method ${operation.method} (ChangeHashAlgo, GetHashAlgo, GetSupportHashAlgo)`)
    }
  }

  // ---- Account: register a certificate for an account, abandon an account ----

  private account(operation: Operation): { result: BvmResult; logs: Log[] } {
    const from = this.bvm.from
    switch (operation.method) {
      case 'Register': {
        arity(operation, 2)
        const address = addressArg(operation, 0)
        const cert = argText(operation, 1)
        if (from !== address && !this.gov.isAdmin(from)) refuse(`only ${address} itself or an admin may register a certificate for it`)
        if (this.gov.accountStatus(address) === 'abandoned') refuse(`account ${address} is abandoned`)
        this.checkAgainstRoots(cert)
        const owner = this.gov.accountOfCert(cert)
        if (owner !== undefined && owner !== address) refuse(`this certificate is registered for ${owner} already`)
        this.gov.registerCert(address, cert)
        return ok(null)
      }
      case 'Abandon': {
        arity(operation, 2)
        const address = addressArg(operation, 0)
        if (from !== address && !this.gov.isAdmin(from)) refuse(`only ${address} itself or an admin may abandon it`)
        if (this.gov.accountStatus(address) === 'abandoned') refuse(`account ${address} is abandoned already`)
        if (this.gov.isAdmin(address) && this.gov.membersOf('admin').length === 1)
          refuse(`${address} is the last admin: grant another admin first`)
        this.gov.setAccountStatus(address, 'abandoned')
        return ok(null)
      }
      default:
        return refuse(`the Account contract has no method ${operation.method} (Register, Abandon)`)
    }
  }

  // ---- Cert: freeze and unfreeze the account a certificate was registered for (admins) ----

  private cert(operation: Operation): { result: BvmResult; logs: Log[] } {
    const method = operation.method
    if (method === 'CertCheck') {
      arity(operation, 1)
      const owner = this.gov.accountOfCert(argText(operation, 0))
      if (owner === undefined) refuse('this certificate is not registered for any account (Account.Register)')
      return ok(base64Of(JSON.stringify({ address: owner, status: this.gov.accountStatus(owner) })))
    }
    if (method !== 'CertFreeze' && method !== 'CertUnfreeze' && method !== 'CertRevoke')
      refuse(`the Cert contract has no method ${method} (CertFreeze, CertUnfreeze, CertRevoke, CertCheck)`)
    arity(operation, 3)
    if (!this.gov.isAdmin(this.bvm.from)) refuse(`${method} needs an admin; ${this.bvm.from} is not one`)
    if (method === 'CertRevoke' && this.gov.caMode() === NONE) refuse('in CA mode none (3) no certificate is revoked')
    const owner = this.gov.accountOfCert(argText(operation, 0))
    if (owner === undefined) refuse('this certificate is not registered for any account (Account.Register)')
    const status = this.gov.accountStatus(owner)
    if (status === 'abandoned') refuse(`account ${owner} is abandoned`)
    if (method === 'CertFreeze') {
      if (status === 'frozen') refuse(`account ${owner} is frozen already`)
      if (this.gov.isAdmin(owner) && this.gov.membersOf('admin').length === 1) refuse(`${owner} is the last admin`)
      this.gov.setAccountStatus(owner, 'frozen')
    } else if (method === 'CertUnfreeze') {
      if (status !== 'frozen') refuse(`account ${owner} is not frozen`)
      this.gov.setAccountStatus(owner, 'normal')
    } else {
      if (this.gov.isAdmin(owner) && this.gov.membersOf('admin').length === 1) refuse(`${owner} is the last admin`)
      this.gov.setAccountStatus(owner, 'abandoned')
    }
    return ok(null)
  }

  // ---- Proposal ----

  private proposalLog(proposal: ProposalRecord): Log {
    return {
      address: BuiltinAddress.proposal,
      topics: [PROPOSAL_TOPIC],
      // the record without its contents' bytes (`code` shows them): timestamps stay decimal text
      data: bytesToHex(utf8ToBytes(JSON.stringify({ ...proposal, contents: undefined }))),
    }
  }

  /** The latest proposal with Hyperchain's timeout rule applied: open past its timeout → TIMEOUT (written). */
  private latest(): ProposalRecord | undefined {
    const id = this.gov.latestProposalId()
    if (id === 0) return undefined
    const proposal = this.gov.proposal(id)
    if (proposal === undefined) return undefined
    if ((proposal.status === 'VOTING' || proposal.status === 'WAITING_EXE') && this.bvm.blockTime > BigInt(proposal.timeout)) {
      const timedOut: ProposalRecord = { ...proposal, status: 'TIMEOUT' }
      this.gov.putProposal(timedOut)
      return timedOut
    }
    return proposal
  }

  private async proposal(operation: Operation): Promise<{ result: BvmResult; logs: Log[] }> {
    const from = this.bvm.from
    switch (operation.method) {
      case 'Create':
        return this.create(operation)
      case 'Vote': {
        arity(operation, 2)
        const id = intArg(operation, 0, 1)
        const assent = boolArg(operation, 1)
        const proposal = this.current(id)
        if (proposal.status !== 'VOTING') refuse(`proposal ${id} is ${proposal.status}, votes are taken while it is VOTING`)
        const role = this.gov.voterRole(proposal.type)
        if (!this.gov.hasRole(from, role)) refuse(`${from} may not vote on a ${proposal.type} proposal: it needs the ${role} role`)
        if ([...proposal.assentor, ...proposal.objector].some((vote) => vote.addr === from))
          refuse(`${from} has voted on proposal ${id} already`)
        const vote = { addr: from, txHash: this.bvm.txHash, weight: 1 }
        const next: ProposalRecord = assent
          ? { ...proposal, assentor: [...proposal.assentor, vote], score: proposal.score + 1 }
          : { ...proposal, objector: [...proposal.objector, vote] }
        const voters = this.gov.membersOf(role).length
        if (next.score >= next.threshold) next.status = 'WAITING_EXE'
        else if (voters - next.objector.length < next.threshold) next.status = 'REJECT'
        this.gov.putProposal(next)
        return ok(null, [this.proposalLog(next)])
      }
      case 'Cancel': {
        arity(operation, 1)
        const id = intArg(operation, 0, 1)
        const proposal = this.current(id)
        if (proposal.creator !== from) refuse(`only the creator ${proposal.creator} may cancel proposal ${id}`)
        if (proposal.status !== 'VOTING' && proposal.status !== 'WAITING_EXE')
          refuse(`proposal ${id} is ${proposal.status}: only an open proposal can be cancelled`)
        const next: ProposalRecord = { ...proposal, status: 'CANCEL', cancel: this.bvm.txHash }
        this.gov.putProposal(next)
        return ok(null, [this.proposalLog(next)])
      }
      case 'Execute': {
        arity(operation, 1)
        const id = intArg(operation, 0, 1)
        const proposal = this.current(id)
        if (proposal.creator !== from) refuse(`only the creator ${proposal.creator} may execute proposal ${id}`)
        if (proposal.status !== 'WAITING_EXE')
          refuse(`proposal ${id} is ${proposal.status}: it runs once it is WAITING_EXE (${proposal.score} of ${proposal.threshold} votes)`)
        const operations = decodeContents(Buffer.from(proposal.contents, 'base64'))
        const results: OperationResult[] = []
        for (const op of operations) results.push(await this.perform(proposal.type, op, proposal.creator))
        const next: ProposalRecord = { ...proposal, status: 'COMPLETED', completed: this.bvm.txHash, results }
        this.gov.putProposal(next)
        return ok(base64Of(JSON.stringify(results)), [this.proposalLog(next)])
      }
      case 'Direct':
        return this.direct(operation)
      default:
        return refuse(`the Proposal contract has no method ${operation.method} (Create, Vote, Cancel, Execute)`)
    }
  }

  /** The proposal `id` when it is the latest (only the latest one is ever open). */
  private current(id: number): ProposalRecord {
    const latest = this.latest()
    if (latest === undefined || id > latest.id) refuse(`there is no proposal ${id}`)
    if (id !== latest.id) refuse(`proposal ${id} is closed: ${this.gov.proposal(id)?.status ?? 'unknown'}; the latest is ${latest.id}`)
    return latest
  }

  private create(operation: Operation): { result: BvmResult; logs: Log[] } {
    arity(operation, 2)
    const type = argText(operation, 1) as ProposalType
    if (!PROPOSAL_TYPES.includes(type)) refuse(`unknown proposal type ${JSON.stringify(type)} (${PROPOSAL_TYPES.join(', ')})`)
    const from = this.bvm.from
    const role = this.gov.voterRole(type)
    if (!this.gov.hasRole(from, role)) refuse(`${from} may not create a ${type} proposal: it needs the ${role} role`)
    const latest = this.latest()
    if (latest !== undefined && (latest.status === 'VOTING' || latest.status === 'WAITING_EXE'))
      refuse(`proposal ${latest.id} is still open (${latest.status}): cancel it, execute it or wait for its timeout`)
    const contentBytes = operation.args[0]
    const operations = decodeContents(contentBytes)
    if (operations.length === 0) refuse('a proposal holds at least one operation')
    const checks = type === 'NODE' ? this.dryRun(type, operations) : operations.map((op) => this.check(type, op))
    if (checks.some((check) => check.code !== OpCode.success))
      refuse(
        `the proposal's operations are not valid: ${checks
          .map((check, i) => (check.code === OpCode.success ? undefined : `${i} ${operations[i].method}: ${check.msg}`))
          .filter((line) => line !== undefined)
          .join('; ')}`,
        base64Of(JSON.stringify(checks)),
      )
    const id = (latest?.id ?? 0) + 1
    const config = this.gov.config()
    const threshold = this.gov.thresholdFor(type)
    const proposal: ProposalRecord = {
      id,
      contents: Buffer.from(contentBytes).toString('base64'),
      code: JSON.stringify(
        operations.map((op) => ({ Params: op.args.map((arg) => Buffer.from(arg).toString('utf8')), MethodName: op.method })),
      ),
      timestamp: this.bvm.blockTime.toString(),
      timeout: (this.bvm.blockTime + BigInt(config.proposalTimeoutNs)).toString(),
      status: 'VOTING',
      assentor: [{ addr: from, txHash: this.bvm.txHash, weight: 1 }],
      objector: [],
      threshold,
      score: 1,
      creator: from,
      type,
      completed: '',
      cancel: '',
    }
    if (proposal.score >= threshold) proposal.status = 'WAITING_EXE'
    this.gov.putProposal(proposal)
    return ok(base64Of(JSON.stringify(id)), [this.proposalLog(proposal)])
  }

  /**
   * The operations' results had the proposal run now, in order, each seeing what the earlier ones
   * did (an AddNode before its AddVP, two removals); the state is left as it was.
   */
  private dryRun(type: ProposalType, operations: Operation[]): OperationResult[] {
    const state = this.bvm.state
    state.checkpoint()
    try {
      return operations.map((op) => operationResult(type, op, () => this.nodeOp(op)))
    } finally {
      state.revert()
    }
  }

  /** Whether an operation may be part of a proposal of `type`, judged on the state at creation. */
  private check(type: ProposalType, op: Operation): OperationResult {
    return operationResult(type, op, () => this.validate(type, op))
  }

  private validate(type: ProposalType, op: Operation): void {
    switch (type) {
      case 'CONFIG':
        this.configOp(op, false)
        return
      case 'PERMISSION':
        arity(op, op.method === 'CreateRole' || op.method === 'DeleteRole' ? 1 : 2)
        if (op.method === 'Grant' || op.method === 'Revoke') addressArg(op, 1)
        if (argText(op, 0).trim() === '') throw new BvmDecodeError(`${op.method}: the role name is empty`)
        return
      case 'CNS':
        arity(op, 2)
        addressArg(op, 0)
        return
      case 'CONTRACT':
        arity(op, 1)
        contractOption(op)
        return
      case 'NODE':
        // judged by a dry run of the whole proposal (create), each operation seeing the earlier ones
        return
      case 'CA':
        this.caOp(op, false)
        return
      case 'SYSTEM':
        this.systemOp(op, false)
        return
      default:
        return
    }
  }

  /**
   * Direct(contents, type): contents run at once, without a vote, where Hyperchain allows it — a
   * NODE proposal's operations by an admin while the CA mode is center or none, and GetCAMode by
   * anyone. `Ret` holds the per-operation results, as Execute's.
   */
  private async direct(operation: Operation): Promise<{ result: BvmResult; logs: Log[] }> {
    arity(operation, 2)
    const type = argText(operation, 1) as ProposalType
    const operations = decodeContents(operation.args[0])
    if (operations.length === 0) refuse('Direct runs at least one operation')
    if (type === 'CA') {
      const set = operations.find((op) => op.method !== 'GetCAMode')
      if (set !== undefined) refuse(`Direct runs GetCAMode only; ${set.method} goes through a voted CA proposal (Create, Vote, Execute)`)
    } else if (type === 'NODE') {
      if (!this.gov.isAdmin(this.bvm.from)) refuse(`Direct NODE operations need an admin; ${this.bvm.from} is not one`)
      const mode = this.gov.caMode()
      if (mode !== CENTER && mode !== NONE)
        refuse(
          `Direct NODE operations need CA mode center (1) or none (3); this chain's CA mode is ${modeName(mode)}: create a NODE proposal`,
        )
    } else refuse(`Direct runs NODE and CA contents only; a ${JSON.stringify(type)} proposal is created and voted`)
    const results: OperationResult[] = []
    for (const op of operations)
      results.push(METHODS_OF[type].includes(op.method) ? await this.perform(type, op, this.bvm.from) : notHeld(type))
    return ok(base64Of(JSON.stringify(results)))
  }

  /** SetCAMode(mode) sets the chain's CA mode once; GetCAMode answers it (in `msg`). */
  private caOp(op: Operation, apply: boolean): string | undefined {
    const mode = this.gov.caMode()
    switch (op.method) {
      case 'SetCAMode': {
        arity(op, 1)
        const wanted = intArg(op, 0, 1)
        if (CA_MODES[wanted] === undefined) throw new BvmDecodeError(`SetCAMode: ${wanted} is no CA mode (1 center, 2 distributed, 3 none)`)
        if (mode !== 0) refuse(`this chain's CA mode is ${modeName(mode)} already: it is set once`)
        if (apply) this.gov.setCAMode(wanted)
        return undefined
      }
      case 'GetCAMode':
        arity(op, 0)
        if (apply && mode === 0) refuse("this chain has no CA mode yet (a CA proposal's SetCAMode sets it once)")
        return apply ? String(mode) : undefined
      default:
        throw new ParamsMismatch(`${op.method} is not a CA operation (SetCAMode, GetCAMode)`)
    }
  }

  /** Runs one operation of an executed proposal; its result (200, or the code and why). */
  private async perform(type: ProposalType, op: Operation, creator: Hex): Promise<OperationResult> {
    const state = this.bvm.state
    state.checkpoint()
    try {
      let msg: string | undefined
      switch (type) {
        case 'CONFIG':
          this.configOp(op, true)
          break
        case 'PERMISSION':
          this.permissionOp(op)
          break
        case 'CNS':
          this.cnsOp(op)
          break
        case 'CONTRACT':
          msg = await this.contractOp(op, creator)
          break
        case 'NODE':
          msg = this.nodeOp(op)
          break
        case 'CA':
          msg = this.caOp(op, true)
          break
        case 'SYSTEM':
          msg = this.systemOp(op, true)
          break
        default:
          refuse(`Keel has no ${type} proposals`)
      }
      state.commit()
      return msg === undefined ? { code: OpCode.success } : { code: OpCode.success, msg }
    } catch (error) {
      state.revert()
      if (error instanceof ParamsMismatch) return { code: OpCode.paramsLenMismatch, msg: error.message }
      if (error instanceof BvmDecodeError) return { code: OpCode.invalidParams, msg: error.message }
      if (error instanceof Refusal) return { code: OpCode.callError, msg: error.message }
      throw error
    }
  }

  private configOp(op: Operation, apply: boolean): void {
    const notHere = CONFIG_NOT_BY_PROPOSAL[op.method]
    if (notHere !== undefined) refuse(`Keel does not change ${notHere} by proposal`)
    arity(op, 1)
    const config = this.gov.config()
    switch (op.method) {
      case 'SetFilterEnable':
        config.filterEnable = boolArg(op, 0)
        break
      case 'SetFilterRules':
        config.filterRules = filterRules(op)
        break
      case 'SetProposalTimeout': {
        const ns = BigInt(intArg(op, 0, 0))
        config.proposalTimeoutNs = (ns < MIN_PROPOSAL_TIMEOUT_NS ? MIN_PROPOSAL_TIMEOUT_NS : ns).toString()
        break
      }
      case 'SetProposalThreshold': {
        const threshold = intArg(op, 0, 1)
        const admins = this.gov.membersOf('admin').length
        if (threshold > admins) refuse(`threshold ${threshold} exceeds the ${admins} admins: no proposal could pass`)
        config.proposalThreshold = threshold
        break
      }
      case 'SetContractVoteEnable':
        config.contractVoteEnable = boolArg(op, 0)
        break
      case 'SetContractVoteThreshold': {
        const threshold = intArg(op, 0, 1)
        const managers = this.gov.membersOf('contractManager').length
        if (threshold > managers)
          refuse(`threshold ${threshold} exceeds the ${managers} contract managers: no contract proposal could pass`)
        config.contractVoteThreshold = threshold
        break
      }
      default:
        refuse(`a CONFIG proposal has no method ${op.method}`)
    }
    if (apply) this.gov.setConfig(config)
  }

  private permissionOp(op: Operation): void {
    const role = argText(op, 0).trim()
    const roles = this.gov.roles()
    const builtin = (BUILTIN_ROLES as readonly string[]).includes(role)
    switch (op.method) {
      case 'CreateRole':
        arity(op, 1)
        if (roles[role] !== undefined) refuse(`role ${role} exists already`)
        this.gov.setRoles({ ...roles, [role]: 1 })
        return
      case 'DeleteRole': {
        arity(op, 1)
        if (builtin) refuse(`${role} is a built-in role and cannot be deleted`)
        if (roles[role] === undefined) refuse(`there is no role ${role}`)
        for (const member of this.gov.membersOf(role)) this.gov.revoke(member, role)
        const { [role]: _deleted, ...rest } = roles
        this.gov.setRoles(rest)
        return
      }
      case 'Grant': {
        arity(op, 2)
        const address = addressArg(op, 1)
        if (roles[role] === undefined) refuse(`there is no role ${role}: create it first (CreateRole)`)
        if (this.gov.hasRole(address, role)) refuse(`${address} has the role ${role} already`)
        if (this.gov.accountStatus(address) === 'abandoned') refuse(`account ${address} is abandoned`)
        this.gov.grant(address, role)
        return
      }
      case 'Revoke': {
        arity(op, 2)
        const address = addressArg(op, 1)
        if (!this.gov.hasRole(address, role)) refuse(`${address} does not have the role ${role}`)
        const config = this.gov.config()
        const left = this.gov.membersOf(role).length - 1
        if (role === 'admin' && left < Math.max(1, config.proposalThreshold))
          refuse(`revoking ${address} would leave ${left} admins, below the threshold ${Math.max(1, config.proposalThreshold)}`)
        if (role === 'contractManager' && config.contractVoteThreshold > left)
          refuse(
            `revoking ${address} would leave ${left} contract managers, below the contract vote threshold ${config.contractVoteThreshold}`,
          )
        this.gov.revoke(address, role)
        return
      }
      default:
        refuse(`a PERMISSION proposal has no method ${op.method}`)
    }
  }

  /**
   * A NODE operation: AddNode registers a VP's ECert, AddVP and RemoveVP decide a change of the VP
   * group, which the network layer records after the block and which takes effect at the first
   * checkpoint boundary 40 blocks later (docs/governance.md §11, network.md).
   */
  private nodeOp(op: Operation): string {
    const node = this.bvm.hooks.node
    arity(op, op.method === 'AddNode' ? 4 : 2)
    if (node === undefined)
      refuse(
        `this node runs alone (solo ordering): it has no VP group for ${op.method} to change; NODE proposals change the VP group of a network (docs/network.md)`,
      )
    const namespace = argText(op, op.method === 'AddNode' ? 3 : 1).trim()
    if (namespace !== node.namespace) refuse(`this network runs the namespace ${node.namespace}, not ${JSON.stringify(namespace)}`)
    const block = this.bvm.blockNumber
    // the group and every VP ever, with the changes decided earlier in this block
    let group = node.vps()
    const ever = node.everVps()
    for (const decision of this.gov.nodeDecisionsAt(block)) {
      if (decision.action === 'add') {
        group.push({ id: decision.id, hostname: decision.hostname })
        ever.push({ id: decision.id, hostname: decision.hostname })
      } else group = group.filter((vp) => vp.id !== decision.id)
    }
    const hostname = argText(op, op.method === 'AddNode' ? 1 : 0).trim()
    if (hostname === '') throw new BvmDecodeError(`${op.method}: the host name is empty`)
    const member = group.find((vp) => vp.hostname === hostname)
    const former = ever.find((vp) => vp.hostname === hostname)
    const notAgain = (): never =>
      refuse(
        member !== undefined
          ? `${hostname} is VP ${member.id} of the group already`
          : `${hostname} was VP ${former?.id} and left the group; Keel does not admit a removed VP again (give the node a new host name and ECert)`,
      )
    switch (op.method) {
      case 'AddNode': {
        const role = argText(op, 2).trim().toUpperCase()
        if (role === 'NVP')
          refuse(
            'an NVP needs no proposal: a VP accepts the links of any NVP holding an ECert of the namespace CA (OU=NVP), and node_deleteNVP drops one',
          )
        if (role !== 'VP') throw new BvmDecodeError(`AddNode: the role is VP or NVP, got ${JSON.stringify(argText(op, 2))}`)
        const read = node.readCert(argText(op, 0))
        if (typeof read === 'string') refuse(`AddNode: ${read}`)
        if (read.hostname !== hostname) refuse(`AddNode: the certificate is ${read.hostname}'s, not ${hostname}'s`)
        if (former !== undefined) notAgain()
        this.gov.putNodeRecord({ hostname, role: 'VP', cert: read.cert, block })
        return `${hostname} is registered with its ECert; AddVP admits it`
      }
      case 'AddVP': {
        const record = this.gov.nodeRecord(hostname)
        if (record === undefined)
          refuse(
            `${hostname} is not registered: AddNode(its ECert, "${hostname}", "VP", "${node.namespace}") comes first, in this proposal or an earlier one`,
          )
        if (former !== undefined) notAgain()
        const id = Math.max(0, ...ever.map((vp) => vp.id)) + 1
        this.gov.addNodeDecision({ block, action: 'add', id, hostname, cert: record.cert })
        return `${hostname} joins the VP group as replica ${id} from block ${node.effectiveFrom(block)} (its peerconfig.toml [self] says id = ${id})`
      }
      case 'RemoveVP': {
        if (member === undefined) refuse(`${hostname} is no VP of the group (${group.map((vp) => vp.hostname).join(', ')})`)
        if (group.length - 1 < node.minVps)
          refuse(`the group has ${group.length} VPs; removing ${hostname} would leave fewer than ${node.minVps}, which BFT consensus needs`)
        this.gov.addNodeDecision({ block, action: 'delete', id: member.id, hostname })
        return `${hostname} (replica ${member.id}) leaves the VP group from block ${node.effectiveFrom(block)}`
      }
      default:
        return refuse(`a NODE proposal has no method ${op.method}`)
    }
  }

  private cnsOp(op: Operation): void {
    arity(op, 2)
    const address = addressArg(op, 0)
    const name = argText(op, 1).trim()
    if (name === '') {
      if (this.gov.nameOfAddress(address) === undefined) refuse(`${address} has no name to remove`)
      this.gov.setName(address, undefined)
      return
    }
    if (/^0x/i.test(name) || name.length > 128)
      refuse(`a contract name is 1 to 128 characters and does not start with 0x; got ${JSON.stringify(name)}`)
    const holder = this.gov.addressOfName(name)
    if (holder !== undefined && holder !== address) refuse(`the name ${name} belongs to ${holder}`)
    if (!this.bvm.hooks.isContract(address) && !BUILTIN_ADDRESSES_LIST.includes(address)) refuse(`${address} is not a contract`)
    this.gov.setName(address, name)
  }

  private target(option: ContractOption, op: Operation): Hex {
    if (option.addr !== undefined && option.addr !== '') {
      const raw = option.addr.toLowerCase()
      const address = raw.startsWith('0x') ? raw : `0x${raw}`
      if (!ADDRESS.test(address)) throw new BvmDecodeError(`${op.method}: addr is not a 20-byte hex address`)
      return address
    }
    if (option.name !== undefined && option.name !== '') {
      const address = this.gov.addressOfName(option.name)
      if (address === undefined) refuse(`no contract is named ${option.name}`)
      return address
    }
    throw new BvmDecodeError(`${op.method}: the option names no contract (addr or name)`)
  }

  private async contractOp(op: Operation, creator: Hex): Promise<string | undefined> {
    arity(op, 1)
    const option = contractOption(op)
    const vmType = option.vmType === 'HVM' || option.vmType === 'JVM' ? 'JVM' : 'EVM'
    const hooks = this.bvm.hooks
    switch (op.method) {
      case 'DeployContract': {
        const deployed = await hooks.deploy(binHex(option, op), vmType, creator)
        if ('error' in deployed) refuse(deployed.error)
        return deployed.address
      }
      case 'UpgradeContract': {
        const address = this.target(option, op)
        const error = await hooks.upgrade(address, binHex(option, op), vmType)
        if (error !== undefined) refuse(error)
        return undefined
      }
      case 'MaintainContract': {
        const address = this.target(option, op)
        if (option.opCode === 5) refuse('Keel does not destroy contracts (opCode 5); freeze it instead (opCode 2)')
        if (option.opCode !== 2 && option.opCode !== 3)
          throw new BvmDecodeError(`MaintainContract: opCode must be 2 (freeze) or 3 (unfreeze), got ${option.opCode}`)
        const error = hooks.maintain(address, option.opCode)
        if (error !== undefined) refuse(error)
        return undefined
      }
      default:
        return refuse(`a CONTRACT proposal has no method ${op.method}`)
    }
  }
}

const BUILTIN_ADDRESSES_LIST: readonly string[] = Object.values(BuiltinAddress)

/** SetSupportedVersion's versions: the SDK's SupportedVersion, `{tag: [version, …]}`; a kind left out supports nothing. */
function supportedArg(op: Operation, index: number): SupportedVersions {
  const raw = jsonArg<unknown>(op, index)
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new BvmDecodeError(`${op.method}: argument ${index} is not a SupportedVersion object {"tx_version": […], …}`)
  const out = Object.fromEntries(VERSION_TAGS.map((tag) => [tag, [] as string[]])) as Record<VersionTag, string[]>
  for (const [tag, list] of Object.entries(raw)) {
    if (!isVersionTag(tag)) throw new BvmDecodeError(`${op.method}: ${JSON.stringify(tag)} is no version kind (${VERSION_TAGS.join(', ')})`)
    if (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || item === ''))
      throw new BvmDecodeError(`${op.method}: ${tag} is not a list of versions`)
    out[tag] = [...new Set(list as string[])]
  }
  return out
}

function contractOption(op: Operation): ContractOption {
  const option = jsonArg<ContractOption>(op, 0)
  if (option === null || typeof option !== 'object' || Array.isArray(option))
    throw new BvmDecodeError(`${op.method}: the option is not a JSON object`)
  if (op.method !== 'MaintainContract' && (typeof option.bin !== 'string' || option.bin === ''))
    throw new BvmDecodeError(`${op.method}: bin is missing`)
  return option
}

function binHex(option: ContractOption, op: Operation): Hex {
  const bytes = Buffer.from(option.bin ?? '', 'base64')
  if (bytes.length === 0) throw new BvmDecodeError(`${op.method}: bin is not base64 of the contract's bytes`)
  return `0x${bytes.toString('hex')}`
}

function filterRules(op: Operation): FilterRule[] {
  const raw = jsonArg<unknown>(op, 0)
  if (!Array.isArray(raw)) throw new BvmDecodeError('SetFilterRules: the rules are not a JSON list')
  const strings = (value: unknown, field: string, i: number): string[] => {
    if (value === undefined || value === null) return []
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
      throw new BvmDecodeError(`SetFilterRules: rule ${i}'s ${field} is not a list of strings`)
    return value as string[]
  }
  return raw.map((rule, i) => {
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule))
      throw new BvmDecodeError(`SetFilterRules: rule ${i} is not an object`)
    const r = rule as Record<string, unknown>
    return {
      id: typeof r.id === 'number' ? r.id : i,
      name: typeof r.name === 'string' ? r.name : '',
      to: strings(r.to, 'to', i).map((to) => to.toLowerCase()),
      vm: strings(r.vm, 'vm', i).map((vm) => vm.toLowerCase()),
      allow_anyone: r.allow_anyone === true,
      authorized_roles: strings(r.authorized_roles, 'authorized_roles', i),
      forbidden_roles: strings(r.forbidden_roles, 'forbidden_roles', i),
    }
  })
}

/** A proposal as config_getProposal shows it (the SDK's Proposal type); `status` applies the timeout rule at `now`. */
export function proposalView(proposal: ProposalRecord, now?: bigint): Record<string, unknown> {
  const open = proposal.status === 'VOTING' || proposal.status === 'WAITING_EXE'
  const status = open && now !== undefined && now > BigInt(proposal.timeout) ? 'TIMEOUT' : proposal.status
  return {
    id: proposal.id,
    code: proposal.code,
    timestamp: BigInt(proposal.timestamp),
    timeout: BigInt(proposal.timeout),
    status,
    assentor: proposal.assentor,
    objector: proposal.objector,
    threshold: proposal.threshold,
    score: proposal.score,
    creator: proposal.creator,
    version: '1.0',
    type: proposal.type,
    completed: proposal.completed,
    cancel: proposal.cancel,
  }
}
