/** Handlers of the `contract_` service. */
import type { ContractHandlers } from '../../generated/handlers.ts'
import type { Compiler } from '../compile/solc-pool.ts'
import type { Hex, StateReader, TxSubmitter } from '../domain.ts'
import { ZERO_ADDRESS } from '../domain.ts'
import { InvalidParams } from '../errors.ts'
import { BuiltinAddress } from '../governance/wire.ts'
import { toHex, wireBytes } from '../wire/format.ts'
import { accountNotExist, normaliseAddress } from './account.ts'

export interface ContractModules {
  /** the latest committed world state */
  state: () => StateReader
  deployedList: (creator: Hex) => Hex[]
  submitter: TxSubmitter
  compiler: Compiler
}

/** Go's time.Time.String() in UTC, e.g. `2017-11-06 20:26:40.5 +0000 UTC` (trailing zeros of the fraction dropped). */
export function goTimeString(ns: bigint): string {
  const ms = Number(ns / 1_000_000n)
  const iso = new Date(ms).toISOString() // 2017-11-06T20:26:40.500Z
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '')
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction === '' ? '' : `.${fraction}`} +0000 UTC`
}

/** contract_manageContractByVote and its simulate form carry a BVM transaction to the Proposal contract (docs/governance.md §9). */
export function proposalTransaction<T extends object>(method: string, tx: T): T {
  const fields = tx as { type?: unknown; to?: unknown }
  const type = typeof fields.type === 'string' ? fields.type.toUpperCase() : String(fields.type)
  const to = typeof fields.to === 'string' ? normaliseAddress(fields.to) : String(fields.to)
  if (type !== 'BVM' || to !== BuiltinAddress.proposal)
    throw new InvalidParams(
      `${method} sends a BVM transaction to the Proposal contract (type BVM, to ${BuiltinAddress.proposal}); got type ${String(fields.type)} to ${to}`,
    )
  return tx
}

export function createContractHandlers(
  modules: ContractModules,
): Omit<ContractHandlers, 'contract_getStatusByCName' | 'contract_getCreatorByCName' | 'contract_getCreateTimeByCName'> {
  const { submitter } = modules

  /** An address some account holds; -32009 otherwise. */
  const existing = (raw: string): { address: Hex; state: StateReader } => {
    const address = normaliseAddress(raw)
    const state = modules.state()
    if (state.getAccount(address) === undefined && state.getContractMeta(address) === undefined) throw accountNotExist(address)
    return { address, state }
  }

  return {
    contract_compileContract: ([source]) => modules.compiler.compile(source),
    contract_deployContract: ([tx]) => submitter.submit('deploy', tx),
    contract_invokeContract: ([tx]) => submitter.submit('invoke', tx),
    contract_maintainContract: ([tx]) => submitter.submit('maintain', tx),
    contract_manageContractByVote: ([tx]) => submitter.submit('invoke', proposalTransaction('contract_manageContractByVote', tx)),
    contract_getCode: ([raw]) => {
      const { address, state } = existing(raw)
      return wireBytes(state.getCode(address))
    },
    contract_getContractCountByAddr: ([raw]) => {
      const address = normaliseAddress(raw)
      const state = modules.state()
      const nonce = state.getAccount(address)?.nonce ?? 0n
      // the EVM starts a contract's own nonce at 1 (EIP-161) and derives CREATE addresses from it,
      // so for a contract the deployments it made are one less than its nonce
      return toHex(state.getContractMeta(address) !== undefined && nonce > 0n ? nonce - 1n : nonce)
    },
    contract_getStatus: ([raw]) => {
      const { address, state } = existing(raw)
      return state.getContractMeta(address)?.status ?? 'non-contract'
    },
    contract_getCreator: ([raw]) => {
      const { address, state } = existing(raw)
      return state.getContractMeta(address)?.creator ?? ZERO_ADDRESS
    },
    contract_getCreateTime: ([raw]) => {
      const address = normaliseAddress(raw)
      const meta = modules.state().getContractMeta(address)
      if (meta === undefined) throw accountNotExist(address)
      return goTimeString(meta.createdAt)
    },
    contract_getDeployedList: ([raw]) => modules.deployedList(normaliseAddress(raw)),
  }
}
