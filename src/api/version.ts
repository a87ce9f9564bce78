/**
 * Handlers of the `version_` service (the official SDK's VersionService): the versions this node
 * runs, keyed by Keel's own release (`keel-<package version>`). Keel has one version of each
 * format and no system upgrade, so nothing is ever available to upgrade to.
 */
import type { VersionHandlers } from '../../generated/handlers.ts'
import type { ChainVersion } from '../../generated/types.ts'
import { DataNotFound, InvalidParams } from '../errors.ts'
import type { NodeDirectory, NodeStateReport } from './node.ts'

export interface VersionModules {
  /** `keel-<version>` */
  release: string
  /** the versions this node runs */
  chain: ChainVersion
  hostname: string
  /** the namespace's other nodes, for their versions; absent for a node running alone */
  directory?: Pick<NodeDirectory, 'peerReports'>
}

/** SupportedVersion: the one version of each kind a node runs, as one-item lists. */
function supported(versions: Record<string, string>) {
  const list = (key: keyof ChainVersion): string[] => (versions[key] === undefined || versions[key] === '' ? [] : [versions[key]])
  return {
    tx_version: list('tx_version'),
    block_version: list('block_version'),
    encode_version: list('encode_version'),
    consensus_version: list('consensus_version'),
    rbft_version: list('rbft_version'),
    noxbft_version: list('noxbft_version'),
  }
}

export function createVersionHandlers(modules: VersionModules): VersionHandlers {
  const { release, chain, hostname } = modules
  return {
    version_getVersions: () => ({ availableHyperchainVersions: {}, runningHyperchainVersions: { [release]: chain } }),
    version_getSupportedVersionByHostname: async ([wanted]) => {
      if (wanted === hostname) return supported(chain as unknown as Record<string, string>)
      const peers = (await modules.directory?.peerReports?.()) ?? []
      const found = peers.find(({ peer }) => peer.hostname === wanted)
      if (found === undefined)
        throw new InvalidParams(`no node ${wanted} in this namespace: node_getNodes lists the host names this node knows`)
      const report: NodeStateReport | undefined = found.report
      if (report === undefined)
        throw new DataNotFound(`Not found versions of ${wanted}: it did not answer (node_getNodeStates shows its state)`)
      return supported(report.versions)
    },
    version_getHyperchainVersionFromBin: ([wanted]) => {
      if (wanted === release) return chain
      throw new DataNotFound(`Not found version ${wanted}: this node runs ${release} and knows no other release`)
    },
  }
}
