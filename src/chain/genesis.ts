/**
 * The funded accounts of a new chain. With none configured, Keel generates one account at first
 * start and keeps its key in the data directory, so `npm start` gives a usable chain at once.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { addressFromPrivateKey } from '../crypto/signature.ts'
import type { Hex } from '../domain.ts'
import { writeFileAtomically } from '../fs-atomic.ts'
import type { GenesisGovernance } from '../governance/state.ts'
import { BUILD_RUNNING, genesisVersionsProblem } from '../governance/versions.ts'
import { bytesToHex } from '../wire/hex.ts'

/** What the generated account starts with: 10^15, well inside int64. */
export const DEV_ACCOUNT_BALANCE = 1_000_000_000_000_000n

export interface GenesisAccount {
  address: Hex
  balance: bigint
}

export interface DevAccount extends GenesisAccount {
  privateKey: Hex
}

export function parseGenesisAccounts(accounts: readonly { address: string; balance: string | number }[]): GenesisAccount[] {
  return accounts.map((account, i) => {
    if (!/^(0x)?[0-9a-fA-F]{40}$/.test(account.address))
      throw new Error(`config: genesis.accounts[${i}].address is not a 20-byte hex address`)
    const balance = BigInt(account.balance)
    if (balance < 0n || balance >= 2n ** 63n) throw new Error(`config: genesis.accounts[${i}].balance must be 0..2^63-1`)
    const lower = account.address.toLowerCase()
    return { address: lower.startsWith('0x') ? lower : `0x${lower}`, balance }
  })
}

/** The generated development account of a data directory, created on first use. */
export function devAccount(keyFile: string): DevAccount {
  if (existsSync(keyFile)) {
    const saved = JSON.parse(readFileSync(keyFile, 'utf8')) as { address: Hex; privateKey: Hex; balance: string }
    return { address: saved.address, privateKey: saved.privateKey, balance: BigInt(saved.balance) }
  }
  const privateKey = bytesToHex(randomBytes(32))
  const account: DevAccount = { address: addressFromPrivateKey(privateKey), privateKey, balance: DEV_ACCOUNT_BALANCE }
  mkdirSync(dirname(keyFile), { recursive: true })
  writeFileAtomically(keyFile, `${JSON.stringify({ ...account, balance: account.balance.toString() }, null, 2)}\n`, 0o600)
  return account
}

/**
 * The genesis accounts of the chain in `dataDir`, read only (another thread than the one that
 * started the node, which created the generated account's file before it): the configured ones, or
 * else the generated account.
 */
export function genesisAccountsIn(
  config: { genesis: { accounts: { address: string; balance: string | number }[] } },
  dataDir: string,
): GenesisAccount[] {
  const configured = parseGenesisAccounts(config.genesis.accounts)
  if (configured.length > 0) return configured
  const keyFile = join(dataDir, 'genesis-account.json')
  if (!existsSync(keyFile)) return []
  const saved = JSON.parse(readFileSync(keyFile, 'utf8')) as { address: Hex; balance: string }
  return [{ address: saved.address, balance: BigInt(saved.balance) }]
}

/**
 * The genesis governance (docs/governance.md §3): the configured admins, or else every genesis
 * account (Hyperchain's genesis accounts are its first admins), so a fresh `npm start` makes its
 * generated account the single admin.
 */
export function genesisGovernanceOf(
  config: {
    genesis: { admins: string[]; adminThreshold: number; proposalTimeoutSeconds: number; runningVersions?: Record<string, string> }
  },
  accounts: readonly GenesisAccount[],
): GenesisGovernance {
  const configured = config.genesis.admins.map((admin) => {
    const lower = admin.toLowerCase()
    return lower.startsWith('0x') ? lower : `0x${lower}`
  })
  const admins = [...new Set(configured.length > 0 ? configured : accounts.map((account) => account.address))].sort()
  const threshold = config.genesis.adminThreshold
  if (threshold > admins.length) throw new Error(`config: genesis.adminThreshold ${threshold} exceeds the ${admins.length} admins`)
  // the versions the chain starts at (docs/governance.md §17): the build's, with the kinds the genesis names
  const wanted = config.genesis.runningVersions ?? {}
  if (wanted === null || typeof wanted !== 'object' || Array.isArray(wanted))
    throw new Error(`config: genesis.runningVersions must be a table of version kinds, got ${JSON.stringify(wanted)}`)
  const problem = genesisVersionsProblem(wanted)
  if (problem !== undefined) throw new Error(`config: ${problem}`)
  return {
    admins,
    adminThreshold: threshold,
    proposalTimeoutNs: BigInt(config.genesis.proposalTimeoutSeconds) * 1_000_000_000n,
    runningVersions: { ...BUILD_RUNNING, ...wanted },
  }
}
