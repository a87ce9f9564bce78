/**
 * The governance queries (docs/governance.md §7): roles, account status, proposals and contract
 * names, read from the committed world state. Served on the chain thread (src/api/index.ts
 * isChainThreadMethod): it holds the genesis governance the records fall back to.
 */
import type { AccountHandlers, ConfigHandlers, ContractHandlers } from '../../generated/handlers.ts'
import type { Hex, StateReader } from '../domain.ts'
import { DataNotFound, InvalidParams } from '../errors.ts'
import { proposalView } from '../governance/execute.ts'
import { type GenesisGovernance, GovernanceView } from '../governance/state.ts'
import { accountNotExist, normaliseAddress } from './account.ts'
import { goTimeString } from './contract.ts'

export interface GovernanceModules {
  state: () => StateReader
  genesis: GenesisGovernance
  /** the latest block's time, ns: an open proposal past its timeout shows TIMEOUT */
  latestBlockTime: () => bigint
}

export const GOVERNANCE_METHODS = [
  'account_getRoles',
  'account_getAccountsByRole',
  'account_getStatus',
  'config_getRoles',
  'config_isRoleExist',
  'config_getProposal',
  'config_getAllCNS',
  'config_getAddressByCName',
  'config_getCNameByAddress',
  'contract_getStatusByCName',
  'contract_getCreatorByCName',
  'contract_getCreateTimeByCName',
] as const

/** the methods this file serves, named once (GOVERNANCE_METHODS) */
export type GovernanceMethod = (typeof GOVERNANCE_METHODS)[number]

type GovernanceHandlers = Pick<AccountHandlers & ConfigHandlers & ContractHandlers, GovernanceMethod>

export function createGovernanceHandlers(modules: GovernanceModules): GovernanceHandlers {
  const view = () => new GovernanceView(modules.state(), modules.genesis)
  const named = (name: string): { address: Hex; state: StateReader } => {
    const address = view().addressOfName(name)
    if (address === undefined) throw new DataNotFound(`no contract is named ${JSON.stringify(name)}`)
    return { address, state: modules.state() }
  }
  return {
    account_getRoles: ([raw]) => view().rolesOf(normaliseAddress(raw)),
    account_getAccountsByRole: ([role]) => {
      const governance = view()
      if (governance.roles()[role] === undefined)
        throw new InvalidParams(`there is no role ${JSON.stringify(role)} (config_getRoles lists them)`)
      return governance.membersOf(role)
    },
    account_getStatus: ([raw]) => view().accountStatus(normaliseAddress(raw)),
    config_getRoles: () => view().roles(),
    config_isRoleExist: ([role]) => view().roles()[role] !== undefined,
    config_getProposal: () => {
      const governance = view()
      const id = governance.latestProposalId()
      const proposal = id === 0 ? undefined : governance.proposal(id)
      if (proposal === undefined) throw new DataNotFound('no proposal has been created on this chain')
      return proposalView(proposal, modules.latestBlockTime()) as never
    },
    config_getAllCNS: () => view().allNames(),
    config_getAddressByCName: ([name]) => named(name).address,
    config_getCNameByAddress: ([raw]) => {
      const address = normaliseAddress(raw)
      const name = view().nameOfAddress(address)
      if (name === undefined) throw new DataNotFound(`${address} has no contract name`)
      return name
    },
    contract_getStatusByCName: ([name]) => {
      const { address, state } = named(name)
      return state.getContractMeta(address)?.status ?? 'non-contract'
    },
    contract_getCreatorByCName: ([name]) => {
      const { address, state } = named(name)
      const meta = state.getContractMeta(address)
      if (meta === undefined) throw accountNotExist(address)
      return meta.creator
    },
    contract_getCreateTimeByCName: ([name]) => {
      const { address, state } = named(name)
      const meta = state.getContractMeta(address)
      if (meta === undefined) throw accountNotExist(address)
      return goTimeString(meta.createdAt)
    },
  }
}
