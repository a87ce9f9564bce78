/** Handlers of the `account_` service, and the address rules the contract queries share. */
import type { AccountHandlers } from '../../generated/handlers.ts'
import type { Hex, StateReader } from '../domain.ts'
import { AccountNotExist } from '../errors.ts'
import { toHex } from '../wire/format.ts'

/** Addresses arrive with or without 0x and in any case; records use 0x + lower case. */
export function normaliseAddress(raw: string): Hex {
  const lower = raw.toLowerCase()
  return lower.startsWith('0x') ? lower : `0x${lower}`
}

export function accountNotExist(address: Hex): AccountNotExist {
  return new AccountNotExist(`The account does not exist '${address}'`)
}

export function createAccountHandlers(modules: {
  state: () => StateReader
}): Omit<AccountHandlers, 'account_getRoles' | 'account_getAccountsByRole' | 'account_getStatus'> {
  return {
    account_getBalance: ([raw]) => {
      const address = normaliseAddress(raw)
      const account = modules.state().getAccount(address)
      if (account === undefined) throw accountNotExist(address)
      return toHex(account.balance)
    },
  }
}
