/**
 * Handlers of the `version_` service (the official SDK's VersionService; docs/governance.md §17):
 * the versions the chain runs and could be upgraded to, as its committed state holds them, keyed by
 * Keel's release (`keel-<package version>`), what each VP supports, and this node's declaration of
 * what its build supports (version_setSupportedVersion, an operator method).
 */
import type { TxHandlers, VersionHandlers } from '../../generated/handlers.ts'
import type { ChainVersion } from '../../generated/types.ts'
import type { Hex } from '../domain.ts'
import { DataNotFound, InvalidParams } from '../errors.ts'
import {
  asSupported,
  availableVersions,
  chainVersionOf,
  type RunningVersions,
  type SupportedVersions,
  VERSION_TAGS,
} from '../governance/versions.ts'
import type { NodeDirectory, NodeStateReport } from './node.ts'

/** The chain's versions as this node's committed state holds them. */
export interface VersionLedger {
  running(): RunningVersions
  /** what a VP declared (SetSupportedVersion), undefined before it did */
  supportedBy(hostname: string): SupportedVersions | undefined
  /** the VP group's host names (a node that runs alone: its own) */
  vpHostnames(): string[]
}

export interface VersionModules {
  /** `keel-<version>` */
  release: string
  /** the versions this build runs when the chain names no others (its own report) */
  chain: ChainVersion
  hostname: string
  /** the namespace's other nodes, for their versions; absent for a node running alone */
  directory?: Pick<NodeDirectory, 'peerReports'>
  /** the chain's versions (the chain thread, which serves every version_ method) */
  ledger?: VersionLedger
  /** version_setSupportedVersion: submits this node's declaration and answers its hash */
  declare?: () => Promise<Hex>
}

/** SupportedVersion: lists per kind, every kind present. */
function supportedShape(versions: Readonly<Record<string, readonly string[]>>) {
  return Object.fromEntries(VERSION_TAGS.map((tag) => [tag, [...(versions[tag] ?? [])]])) as Record<(typeof VERSION_TAGS)[number], string[]>
}

/** A node report's versions (one of each kind) as lists. */
function reported(versions: Record<string, string>) {
  return supportedShape(
    Object.fromEntries(VERSION_TAGS.map((tag) => [tag, versions[tag] === undefined || versions[tag] === '' ? [] : [versions[tag]]])),
  )
}

/**
 * The version_ handlers, and tx_getTransactionsVersion: the tx_version the chain runs, which a
 * SYSTEM proposal raises, so it is answered from the chain's state like the others (it replaces the
 * tx_ service's answer).
 */
export function createVersionHandlers(modules: VersionModules): VersionHandlers & Pick<TxHandlers, 'tx_getTransactionsVersion'> {
  const { release, chain, hostname, ledger } = modules
  const running = (): RunningVersions => ledger?.running() ?? (chain as RunningVersions)
  return {
    tx_getTransactionsVersion: () => running().tx_version ?? chain.tx_version,
    version_getVersions: () => {
      const runs = running()
      const hosts = ledger?.vpHostnames() ?? [hostname]
      const available = availableVersions(
        hosts.map((host) => ledger?.supportedBy(host) ?? asSupported(runs)),
        runs,
      )
      return {
        availableHyperchainVersions: Object.keys(available).length === 0 ? {} : { [release]: chainVersionOf({ ...runs, ...available }) },
        runningHyperchainVersions: { [release]: chainVersionOf(runs) },
      }
    },
    version_getSupportedVersionByHostname: async ([wanted]) => {
      const declared = ledger?.supportedBy(wanted)
      if (declared !== undefined) return supportedShape(declared)
      // a VP that declared nothing supports what it runs, as the Version contract says
      if (wanted === hostname || ledger?.vpHostnames().includes(wanted)) return supportedShape(asSupported(running()))
      const peers = (await modules.directory?.peerReports?.()) ?? []
      const found = peers.find(({ peer }) => peer.hostname === wanted)
      if (found === undefined)
        throw new InvalidParams(`no node ${wanted} in this namespace: node_getNodes lists the host names this node knows`)
      const report: NodeStateReport | undefined = found.report
      if (report === undefined)
        throw new DataNotFound(`Not found versions of ${wanted}: it did not answer (node_getNodeStates shows its state)`)
      return reported(report.versions)
    },
    version_getHyperchainVersionFromBin: ([wanted]) => {
      if (wanted === release) return chain
      throw new DataNotFound(`Not found version ${wanted}: this node runs ${release} and knows no other release`)
    },
    version_setSupportedVersion: async () => {
      if (modules.declare === undefined) throw new Error('version_setSupportedVersion is served by the chain thread')
      return modules.declare()
    },
  }
}
