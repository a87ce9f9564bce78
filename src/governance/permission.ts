/**
 * Who may send what (docs/governance.md §10): the contract lifecycle by vote
 * (`proposal.contract.vote.enable`) and Hyperchain's namespace filter rules (`filter.enable`,
 * `filter.rules`), both set by CONFIG proposals. Checked at admission against the committed state
 * and again at execution against the block's state, so every VP decides alike.
 */
import { versionAtLeast } from '../../sdk/src/sign-string.ts'
import type { Hex, SignedTx } from '../domain.ts'
import { ZERO_ADDRESS } from '../domain.ts'
import type { GovernanceConfig, GovernanceView } from './state.ts'
import { CNAME_TX_VERSION } from './versions.ts'
import { BuiltinAddress } from './wire.ts'

/** The engine name a filter rule's `vm` list matches (lower case; `hvm` is Hyperchain's name for Java contracts). */
export function vmOf(tx: SignedTx): string[] {
  if (tx.kind === 'transfer') return ['transfer']
  if (tx.vmType === 'JVM') return ['jvm', 'hvm']
  return [tx.vmType.toLowerCase()]
}

/**
 * Why `tx` may not run, or undefined. `config` is `view`'s, passed in so a caller can keep it for a
 * block; `named` is the contract a `cname` resolves to (the zero address stands for a deployment).
 */
export function permissionRefusal(view: GovernanceView, config: GovernanceConfig, tx: SignedTx, named?: Hex): string | undefined {
  const from = tx.from.toLowerCase()
  if (tx.vmType === 'BVM') {
    // admins and contract managers can always reach the Proposal contract, so no rule locks governance out
    if (tx.to === BuiltinAddress.proposal && (view.isAdmin(from) || view.hasRole(from, 'contractManager'))) return undefined
    // nor a VP's node account out of declaring what it supports (a system upgrade needs every VP's)
    if (tx.to === BuiltinAddress.version && view.hasRole(from, 'nodeOfVP')) return undefined
  } else if (config.contractVoteEnable && (tx.kind === 'deploy' || tx.kind === 'maintain')) {
    return 'contracts are deployed, upgraded and frozen by vote on this chain (proposal.contract.vote.enable): send a CONTRACT proposal (contract_manageContractByVote)'
  }
  if (!config.filterEnable || config.filterRules.length === 0) return undefined
  const destination: Hex = tx.kind === 'deploy' ? ZERO_ADDRESS : (named ?? tx.to?.toLowerCase() ?? ZERO_ADDRESS)
  const engines = vmOf(tx)
  for (const rule of config.filterRules) {
    const toMatches = rule.to.length === 0 || rule.to.includes('*') || rule.to.includes(destination)
    const vmMatches = rule.vm.length === 0 || rule.vm.includes('*') || engines.some((engine) => rule.vm.includes(engine))
    if (!toMatches || !vmMatches) continue
    const named = `filter rule ${rule.id}${rule.name === '' ? '' : ` "${rule.name}"`}`
    const roles = view.rolesOf(from)
    const forbidden = rule.forbidden_roles.find((role) => roles.includes(role))
    if (forbidden !== undefined) return `${named} forbids the role ${forbidden}, which ${from} holds`
    if (rule.allow_anyone) return undefined
    if (rule.authorized_roles.some((role) => roles.includes(role))) return undefined
    return rule.authorized_roles.length === 0
      ? `${named} admits nobody to this ${engines[0]} transaction`
      : `${named} admits only the roles ${rule.authorized_roles.join(', ')}; ${from} holds ${roles.length === 0 ? 'none' : roles.join(', ')}`
  }
  return undefined
}

/** The name a transaction gives its contract instead of an address (`to` 0x0…0 and `cname`, as the SDK sends it). */
export function cnameOf(tx: SignedTx): string | undefined {
  const cname = tx.signed.cname
  return tx.to?.toLowerCase() === ZERO_ADDRESS && typeof cname === 'string' && cname !== '' ? cname : undefined
}

/**
 * Why `tx` may not run, or undefined: its account abandoned or frozen, then the contract-vote
 * setting and the filter rules. Admission asks it of the committed state and execution of the
 * block's, so a transaction pooled before a change is judged again, alike on every VP.
 */
export function refusalOf(view: GovernanceView, config: GovernanceConfig, tx: SignedTx): string | undefined {
  const from = tx.from.toLowerCase()
  const status = view.accountStatus(from)
  if (status !== 'normal') return `account ${from} is ${status}: its transactions are refused (account_getStatus)`
  const cname = cnameOf(tx)
  const versionRefusal = txVersionRefusal(view.runningVersions(config).tx_version, tx, cname)
  if (versionRefusal !== undefined) return versionRefusal
  return permissionRefusal(view, config, tx, cname === undefined ? undefined : view.addressOfName(cname))
}

/**
 * The running tx_version's gate (docs/governance.md §17): a transaction may not declare a newer
 * transaction format than the chain runs, nor name its contract by `cname` before 2.2, the version
 * whose sign string covers it. A SYSTEM proposal raises the running version.
 */
export function txVersionRefusal(running: string | undefined, tx: SignedTx, cname: string | undefined): string | undefined {
  if (running === undefined) return undefined
  const declared = tx.signed.version
  // the common case, a client that learnt the running version, costs one comparison
  if (typeof declared === 'string' && declared !== '' && declared !== running && !versionAtLeast(running, declared))
    return `this chain runs tx_version ${running} (tx_getTransactionsVersion); the transaction declares version ${declared}, which a SYSTEM proposal must first make the running one (version_getVersions)`
  if (cname !== undefined && !versionAtLeast(running, CNAME_TX_VERSION))
    return `this chain runs tx_version ${running}: a contract is named by cname from tx_version ${CNAME_TX_VERSION} on (a SYSTEM proposal upgrades the chain); send its address in to`
  return undefined
}
