/**
 * Governance state kept in the world state, as storage of the built-in contracts' accounts
 * (docs/governance.md §2): so it is in the state root, synced with blocks, in snapshots and archives,
 * and as durable as every other state write, with no new keyspace.
 *
 * A record is a JSON value under a text key of one built-in address. Its bytes sit in consecutive
 * storage slots from keccak256(key): the first slot holds length + 1 (0: no record), the next ones
 * the bytes, 32 per slot. EVM code cannot write these slots: the built-in addresses hold no code, and
 * only code running at an address writes its storage.
 */
import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { keccak256 } from '../crypto/hash.ts'
import type { Hex } from '../domain.ts'
import { bytesToHex } from '../wire/hex.ts'
import { BUILD_RUNNING, type RunningVersions, type SupportedVersions } from './versions.ts'
import { BuiltinAddress } from './wire.ts'

/** Reads storage words (32-byte 0x hex; zero or `0x` when unset). */
export interface SlotReader {
  getStorage(address: Hex, slot: Hex): Hex
}

export interface SlotWriter extends SlotReader {
  putStorage(address: Hex, slot: Hex, value: Hex): void
}

const WORD = 32
const TWO_256 = 1n << 256n
const ZERO_WORD: Hex = `0x${'0'.repeat(64)}`
const decoder = new TextDecoder()

function slotAt(base: bigint, offset: number): Hex {
  return `0x${((base + BigInt(offset)) % TWO_256).toString(16).padStart(64, '0')}`
}

/** the slots of the fixed keys ('config', 'barred', …), hashed once: they are read for every transaction */
const fixedBases = new Map<string, bigint>()

function baseOf(key: string): bigint {
  const fixed = fixedBases.get(key)
  if (fixed !== undefined) return fixed
  const base = BigInt(bytesToHex(keccak256(utf8ToBytes(key))))
  if (!key.includes(':')) fixedBases.set(key, base)
  return base
}

function wordValue(word: Hex): bigint {
  return word.length <= 2 ? 0n : BigInt(word)
}

export function readRecordBytes(state: SlotReader, address: Hex, key: string): Uint8Array | undefined {
  const base = baseOf(key)
  const header = wordValue(state.getStorage(address, slotAt(base, 0)))
  if (header === 0n) return undefined
  const length = Number(header - 1n)
  const out = new Uint8Array(length)
  for (let i = 0; i * WORD < length; i++) {
    const word = state.getStorage(address, slotAt(base, i + 1))
    const bytes = hexToBytes(word.length <= 2 ? ZERO_WORD.slice(2) : word.slice(2).padStart(64, '0'))
    out.set(bytes.subarray(0, Math.min(WORD, length - i * WORD)), i * WORD)
  }
  return out
}

export function readRecord<T>(state: SlotReader, address: Hex, key: string): T | undefined {
  const bytes = readRecordBytes(state, address, key)
  return bytes === undefined ? undefined : (JSON.parse(decoder.decode(bytes)) as T)
}

/** Writes (or, with undefined, removes) a record; slots the old record used beyond the new one are zeroed. */
export function writeRecord(state: SlotWriter, address: Hex, key: string, value: unknown): void {
  const base = baseOf(key)
  const oldHeader = wordValue(state.getStorage(address, slotAt(base, 0)))
  const oldWords = oldHeader === 0n ? 0 : Math.ceil(Number(oldHeader - 1n) / WORD)
  const bytes = value === undefined ? undefined : utf8ToBytes(JSON.stringify(value))
  const newWords = bytes === undefined ? 0 : Math.ceil(bytes.length / WORD)
  state.putStorage(address, slotAt(base, 0), bytes === undefined ? ZERO_WORD : slotAt(BigInt(bytes.length + 1), 0))
  for (let i = 0; i < newWords && bytes !== undefined; i++) {
    const chunk = new Uint8Array(WORD)
    chunk.set(bytes.subarray(i * WORD, (i + 1) * WORD))
    state.putStorage(address, slotAt(base, i + 1), bytesToHex(chunk))
  }
  for (let i = newWords; i < oldWords; i++) state.putStorage(address, slotAt(base, i + 1), ZERO_WORD)
}

// ---------------------------------------------------------------------------------------------
// The records

/** Hyperchain's namespace filter rule (the SDK's NsFilterRule). */
export interface FilterRule {
  id: number
  name: string
  /** contract addresses (or `*`) the rule applies to; empty: every destination */
  to: string[]
  /** engines (evm, jvm, bvm, transfer; or `*`) the rule applies to; empty: every engine */
  vm: string[]
  allow_anyone: boolean
  authorized_roles: string[]
  forbidden_roles: string[]
}

/** Settings a CONFIG proposal changes (Hyperchain's `proposal.*` and `filter.*` keys). */
export interface GovernanceConfig {
  /** votes a non-contract proposal needs; 0: every admin's */
  proposalThreshold: number
  /** ns, decimal text (JSON has no int64) */
  proposalTimeoutNs: string
  /** contract deploy/upgrade/maintain only by CONTRACT proposal */
  contractVoteEnable: boolean
  /** votes a CONTRACT proposal needs; 0: every contract manager's */
  contractVoteThreshold: number
  filterEnable: boolean
  filterRules: FilterRule[]
  /** the versions the chain runs, once a SYSTEM proposal changed them (absent: the genesis's) */
  runningVersions?: RunningVersions
}

export type ProposalStatus = 'VOTING' | 'REJECT' | 'WAITING_EXE' | 'CANCEL' | 'COMPLETED' | 'TIMEOUT'
export type ProposalType = 'CONFIG' | 'PERMISSION' | 'NODE' | 'CNS' | 'CONTRACT' | 'CA' | 'SYSTEM'
export const PROPOSAL_TYPES: readonly ProposalType[] = ['CONFIG', 'PERMISSION', 'NODE', 'CNS', 'CONTRACT', 'CA', 'SYSTEM']

export interface Vote {
  addr: Hex
  txHash: Hex
  weight: number
}

export interface ProposalRecord {
  id: number
  /** the contents, base64 of their wire bytes */
  contents: string
  /** the contents shown to readers: JSON `[{"Params":[…],"MethodName":…}]` */
  code: string
  /** block time of the creating block, ns (decimal text) */
  timestamp: string
  /** expiry, ns (decimal text) */
  timeout: string
  status: ProposalStatus
  assentor: Vote[]
  objector: Vote[]
  threshold: number
  score: number
  creator: Hex
  type: ProposalType
  /** hash of the transaction that executed it ('' until then) */
  completed: Hex | ''
  /** hash of the transaction that cancelled it ('' unless cancelled) */
  cancel: Hex | ''
  /** what Execute returned, per operation (absent until executed) */
  results?: { code: number; msg?: string }[]
}

export type AccountStatus = 'normal' | 'frozen' | 'abandoned'

/** A node AddNode registered: its ECert (base64 DER), issued by the namespace CA for a VP. */
export interface NodeRecord {
  hostname: string
  role: 'VP'
  cert: string
  /** the block whose NODE proposal registered it */
  block: number
}

/**
 * A change of the VP group a NODE proposal decided (AddVP, RemoveVP), in block order. The network
 * layer reads the decisions of each block it commits and records them in the group (membership.ts).
 */
export interface NodeDecision {
  block: number
  action: 'add' | 'delete'
  /** the replica id */
  id: number
  hostname: string
  /** an addition's ECert (base64 DER) */
  cert?: string
}

/** What a VP declared it supports (the Version contract's SetSupportedVersion, sent by version_setSupportedVersion). */
export interface SupportedRecord {
  hostname: string
  /** the node account the VP bound to itself; it holds the nodeOfVP role */
  account: Hex
  versions: SupportedVersions
  /** the block of the declaration */
  block: number
}

/** Built-in roles, present from genesis and never deleted (Hyperchain's admin, contractManager, nodeOfVP; Keel adds audit). */
export const BUILTIN_ROLES = ['admin', 'contractManager', 'nodeOfVP', 'audit'] as const

/** Proposals' minimum and default timeout (Hyperchain: 5 minutes). */
export const MIN_PROPOSAL_TIMEOUT_NS = 5n * 60n * 1_000_000_000n

const P = BuiltinAddress.proposal
const A = BuiltinAddress.account
const H = BuiltinAddress.hash
const R = BuiltinAddress.rootCA
const V = BuiltinAddress.version

/** Hyperchain's CA modes (the SDK's CAMode): a chain sets one once, by a CA proposal (docs/governance.md §16). */
export const CA_MODES: Readonly<Record<number, string>> = { 1: 'center', 2: 'distributed', 3: 'none' }

/**
 * The genesis governance: the admins and settings a chain starts with. They come from the genesis
 * configuration, like the genesis accounts, and stand for every record not written yet: the first
 * change writes a record, and from then on the record holds (docs/governance.md §2). Every VP of a
 * network must be configured with the same, as with the accounts.
 */
export interface GenesisGovernance {
  admins: Hex[]
  /** 0: every admin */
  adminThreshold: number
  proposalTimeoutNs: bigint
  /** the versions the chain starts at (`[genesis] runningVersions` over the build's); absent: the build's */
  runningVersions?: RunningVersions
}

export const NO_GOVERNANCE: GenesisGovernance = { admins: [], adminThreshold: 0, proposalTimeoutNs: MIN_PROPOSAL_TIMEOUT_NS }

/** Roles a genesis admin holds: admin and contract manager (Hyperchain's genesis accounts are both). */
const GENESIS_ADMIN_ROLES = ['admin', 'contractManager']

/** Typed access to the records over any slot reader (committed state, a block's overlay). */
export class GovernanceView {
  constructor(
    readonly state: SlotReader,
    readonly genesis: GenesisGovernance,
  ) {}

  config(): GovernanceConfig {
    return (
      readRecord<GovernanceConfig>(this.state, P, 'config') ?? {
        proposalThreshold: this.genesis.adminThreshold,
        proposalTimeoutNs: this.genesis.proposalTimeoutNs.toString(),
        contractVoteEnable: false,
        contractVoteThreshold: 0,
        filterEnable: false,
        filterRules: [],
      }
    )
  }

  /** role name -> weight */
  roles(): Record<string, number> {
    return readRecord<Record<string, number>>(this.state, P, 'roles') ?? Object.fromEntries(BUILTIN_ROLES.map((role) => [role, 1]))
  }

  rolesOf(address: Hex): string[] {
    return readRecord<string[]>(this.state, P, `roles-of:${address}`) ?? (this.genesis.admins.includes(address) ? GENESIS_ADMIN_ROLES : [])
  }

  membersOf(role: string): Hex[] {
    return readRecord<Hex[]>(this.state, P, `members:${role}`) ?? (GENESIS_ADMIN_ROLES.includes(role) ? [...this.genesis.admins] : [])
  }

  isAdmin(address: Hex): boolean {
    return this.rolesOf(address).includes('admin')
  }

  hasRole(address: Hex, role: string): boolean {
    return this.rolesOf(address).includes(role)
  }

  latestProposalId(): number {
    return readRecord<number>(this.state, P, 'proposal-latest') ?? 0
  }

  proposal(id: number): ProposalRecord | undefined {
    return readRecord<ProposalRecord>(this.state, P, `proposal:${id}`)
  }

  /** votes a proposal of this type needs now */
  thresholdFor(type: ProposalType): number {
    const config = this.config()
    if (type === 'CONTRACT')
      return config.contractVoteThreshold > 0 ? config.contractVoteThreshold : this.membersOf('contractManager').length
    return config.proposalThreshold > 0 ? config.proposalThreshold : this.membersOf('admin').length
  }

  /** the role whose members vote on proposals of this type */
  voterRole(type: ProposalType): string {
    return type === 'CONTRACT' ? 'contractManager' : 'admin'
  }

  accountStatus(address: Hex): AccountStatus {
    // every transaction asks, and almost no account is barred: one fixed slot answers for most
    if ((readRecord<number>(this.state, A, 'barred') ?? 0) === 0) return 'normal'
    return readRecord<AccountStatus>(this.state, A, `status:${address}`) ?? 'normal'
  }

  /** the certificate an account registered (Account.Register) */
  accountCert(address: Hex): string | undefined {
    return readRecord<string>(this.state, A, `cert:${address}`)
  }

  /** the account a certificate was registered for */
  accountOfCert(cert: string): Hex | undefined {
    return readRecord<Hex>(this.state, A, `cert-owner:${cert.trim()}`)
  }

  addressOfName(name: string): Hex | undefined {
    return readRecord<Hex>(this.state, P, `cns-name:${name}`)
  }

  nameOfAddress(address: Hex): string | undefined {
    return readRecord<string>(this.state, P, `cns-addr:${address}`)
  }

  /** address -> name, every name */
  allNames(): Record<Hex, string> {
    return readRecord<Record<Hex, string>>(this.state, P, 'cns-all') ?? {}
  }

  hashValue(key: string): string | undefined {
    return readRecord<string>(this.state, H, `hash:${key}`)
  }

  /** the chain's CA mode (CA_MODES); 0 while none is set */
  caMode(): number {
    return readRecord<number>(this.state, P, 'ca-mode') ?? 0
  }

  /** the root CAs admins added (RootCA.AddRootCA), PEM text, in the order they were added */
  rootCAs(): string[] {
    return readRecord<string[]>(this.state, R, 'root-cas') ?? []
  }

  /** the versions the chain runs: set by the last executed SYSTEM proposal, else the genesis's */
  runningVersions(config: GovernanceConfig = this.config()): RunningVersions {
    return config.runningVersions ?? this.genesis.runningVersions ?? BUILD_RUNNING
  }

  /** what a VP declared it supports, undefined before its first declaration */
  supportedBy(hostname: string): SupportedRecord | undefined {
    return readRecord<SupportedRecord>(this.state, V, `supported:${hostname}`)
  }

  nodeRecord(hostname: string): NodeRecord | undefined {
    return readRecord<NodeRecord>(this.state, P, `node:${hostname}`)
  }

  /** the block of the latest NODE decision (0: none): one fixed slot, read after every block */
  lastNodeDecisionBlock(): number {
    return readRecord<number>(this.state, P, 'node-decided-at') ?? 0
  }

  /** every change of the VP group NODE proposals decided, in block order */
  nodeDecisions(): NodeDecision[] {
    return readRecord<NodeDecision[]>(this.state, P, 'node-decisions') ?? []
  }

  /** the decisions of block `number` (cheap when it made none) */
  nodeDecisionsAt(number: number): NodeDecision[] {
    if (this.lastNodeDecisionBlock() !== number) return []
    return this.nodeDecisions().filter((decision) => decision.block === number)
  }
}

/** The same with the writes the state transitions make. */
export class GovernanceWriter extends GovernanceView {
  constructor(
    override readonly state: SlotWriter,
    genesis: GenesisGovernance,
  ) {
    super(state, genesis)
  }

  setConfig(config: GovernanceConfig): void {
    writeRecord(this.state, P, 'config', config)
  }

  setRoles(roles: Record<string, number>): void {
    writeRecord(this.state, P, 'roles', roles)
  }

  grant(address: Hex, role: string): void {
    const roles = this.rolesOf(address)
    if (!roles.includes(role)) writeRecord(this.state, P, `roles-of:${address}`, [...roles, role].sort())
    const members = this.membersOf(role)
    if (!members.includes(address)) writeRecord(this.state, P, `members:${role}`, [...members, address].sort())
  }

  revoke(address: Hex, role: string): void {
    // an empty list is written, not removed: a missing record would stand for the genesis default
    writeRecord(
      this.state,
      P,
      `roles-of:${address}`,
      this.rolesOf(address).filter((r) => r !== role),
    )
    writeRecord(
      this.state,
      P,
      `members:${role}`,
      this.membersOf(role).filter((m) => m !== address),
    )
  }

  putProposal(proposal: ProposalRecord): void {
    writeRecord(this.state, P, `proposal:${proposal.id}`, proposal)
    if (proposal.id > this.latestProposalId()) writeRecord(this.state, P, 'proposal-latest', proposal.id)
  }

  setAccountStatus(address: Hex, status: AccountStatus): void {
    const was = readRecord<AccountStatus>(this.state, A, `status:${address}`) ?? 'normal'
    const barred = readRecord<number>(this.state, A, 'barred') ?? 0
    if (was === 'normal' && status !== 'normal') writeRecord(this.state, A, 'barred', barred + 1)
    if (was !== 'normal' && status === 'normal') writeRecord(this.state, A, 'barred', barred - 1)
    writeRecord(this.state, A, `status:${address}`, status === 'normal' ? undefined : status)
  }

  registerCert(address: Hex, cert: string): void {
    writeRecord(this.state, A, `cert:${address}`, cert)
    writeRecord(this.state, A, `cert-owner:${cert.trim()}`, address)
  }

  setName(address: Hex, name: string | undefined): void {
    const all = this.allNames()
    const previous = all[address]
    if (previous !== undefined) writeRecord(this.state, P, `cns-name:${previous}`, undefined)
    if (name === undefined) {
      delete all[address]
      writeRecord(this.state, P, `cns-addr:${address}`, undefined)
    } else {
      all[address] = name
      writeRecord(this.state, P, `cns-addr:${address}`, name)
      writeRecord(this.state, P, `cns-name:${name}`, address)
    }
    writeRecord(this.state, P, 'cns-all', Object.keys(all).length === 0 ? undefined : all)
  }

  setHash(key: string, value: string): void {
    writeRecord(this.state, H, `hash:${key}`, value)
  }

  setCAMode(mode: number): void {
    writeRecord(this.state, P, 'ca-mode', mode)
  }

  addRootCA(pem: string): void {
    writeRecord(this.state, R, 'root-cas', [...this.rootCAs(), pem])
  }

  putSupported(record: SupportedRecord): void {
    writeRecord(this.state, V, `supported:${record.hostname}`, record)
  }

  putNodeRecord(record: NodeRecord): void {
    writeRecord(this.state, P, `node:${record.hostname}`, record)
  }

  addNodeDecision(decision: NodeDecision): void {
    writeRecord(this.state, P, 'node-decisions', [...this.nodeDecisions(), decision])
    writeRecord(this.state, P, 'node-decided-at', decision.block)
  }
}
