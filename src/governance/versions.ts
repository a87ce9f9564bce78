/**
 * The chain's versions and Hyperchain's system upgrade (docs/governance.md §17): what this build
 * runs and supports, the versions a chain runs (world state: the genesis ones until a SYSTEM
 * proposal changes them), and what a VP signs to bind its node account to itself.
 */
import { utf8ToBytes } from '@noble/hashes/utils.js'
import { versionAtLeast } from '../../sdk/src/sign-string.ts'
import type { Hex } from '../domain.ts'
import { RECORD_VERSION } from '../domain.ts'
import { SCHEMA_VERSION } from '../store/keyspace.ts'

/** The kinds of version Hyperchain names (the SDK's ChainVersion and SupportedVersion keys). */
export const VERSION_TAGS = [
  'tx_version',
  'block_version',
  'encode_version',
  'consensus_version',
  'rbft_version',
  'noxbft_version',
] as const
export type VersionTag = (typeof VERSION_TAGS)[number]

/** tag -> the version a chain runs (a tag it does not run is absent) */
export type RunningVersions = Readonly<Partial<Record<VersionTag, string>>>
/** tag -> every version a node supports */
export type SupportedVersions = Readonly<Record<VersionTag, readonly string[]>>

/** The transaction format version this build runs by default (tx_getTransactionsVersion; sdk-wire.md §2 wants ≥ 3.6). */
export const TX_VERSION = '4.1'

/**
 * What this build runs when the genesis names nothing else: the transaction format the SDK signs,
 * the version written into records, the ledger layout, Keel's RBFT messages (their first version),
 * and no NoxBFT.
 */
export const BUILD_RUNNING: RunningVersions = {
  tx_version: TX_VERSION,
  block_version: RECORD_VERSION,
  encode_version: String(SCHEMA_VERSION),
  consensus_version: '1',
  rbft_version: '1',
}

/**
 * What this build supports, so what a chain may run and be upgraded to. tx_version: the versions
 * whose sign-string layouts Keel tells apart (protocol.md §1.2: 2.1 adds `extraid`, 2.2 `cname`,
 * 3.6 gas, expiration and participant) and 4.1, the one it runs by default. Every other kind: the
 * one version this build has.
 */
export const BUILD_SUPPORTED: SupportedVersions = {
  tx_version: ['2.1', '2.2', '3.6', TX_VERSION],
  block_version: [RECORD_VERSION],
  encode_version: [String(SCHEMA_VERSION)],
  consensus_version: ['1'],
  rbft_version: ['1'],
  noxbft_version: [],
}

/** The tx_version from which a transaction may name its contract by `cname` (protocol.md §1.2: the 2.2 section). */
export const CNAME_TX_VERSION = '2.2'

export function isVersionTag(tag: string): tag is VersionTag {
  return (VERSION_TAGS as readonly string[]).includes(tag)
}

/** Running versions as one-item lists: what a VP that declared nothing is taken to support (it runs them). */
export function asSupported(running: RunningVersions): SupportedVersions {
  return Object.fromEntries(
    VERSION_TAGS.map((tag) => [tag, running[tag] === undefined ? [] : [running[tag]]]),
  ) as unknown as SupportedVersions
}

/** The SDK's ChainVersion of running versions: every tag, empty for one not run. */
export function chainVersionOf(running: RunningVersions): Record<VersionTag, string> {
  return Object.fromEntries(VERSION_TAGS.map((tag) => [tag, running[tag] ?? ''])) as Record<VersionTag, string>
}

/** The highest of `versions` (dotted, compared numerically), or undefined for none. */
export function highest(versions: readonly string[]): string | undefined {
  let best: string | undefined
  for (const version of versions) if (best === undefined || !versionAtLeast(best, version)) best = version
  return best
}

/**
 * Per kind, the highest version above the running one that every VP supports (`supported`, one
 * entry per VP): what a SYSTEM proposal could make the chain run. A kind with none is left out.
 */
export function availableVersions(supported: readonly SupportedVersions[], running: RunningVersions): Partial<Record<VersionTag, string>> {
  const available: Partial<Record<VersionTag, string>> = {}
  for (const tag of VERSION_TAGS) {
    const common = (supported[0]?.[tag] ?? []).filter((version) => supported.every((each) => each[tag].includes(version)))
    const best = highest(common)
    const runs = running[tag]
    if (best !== undefined && best !== runs && (runs === undefined || versionAtLeast(best, runs))) available[tag] = best
  }
  return available
}

/**
 * Why the genesis's `runningVersions` cannot start a chain on this build, or undefined: a tag
 * Hyperchain does not name, or a version this build does not support.
 */
export function genesisVersionsProblem(wanted: Readonly<Record<string, unknown>>): string | undefined {
  for (const [tag, version] of Object.entries(wanted)) {
    if (!isVersionTag(tag)) return `genesis.runningVersions: ${JSON.stringify(tag)} is no version kind (${VERSION_TAGS.join(', ')})`
    if (typeof version !== 'string' || !BUILD_SUPPORTED[tag].includes(version))
      return `genesis.runningVersions.${tag}: ${JSON.stringify(version)} is not supported by this build (${BUILD_SUPPORTED[tag].join(', ') || 'none'})`
  }
  return undefined
}

/**
 * What a VP signs with its ECert key (P-256, SHA-256, r‖s) to bind its node account to itself: the
 * host name and the account, so a binding is good for that account only and a copied ECert proves
 * nothing without the key.
 */
export function nodeBindingBytes(hostname: string, account: Hex): Uint8Array {
  return utf8ToBytes(`keel node account\nhost ${hostname}\naccount ${account.toLowerCase()}`)
}
