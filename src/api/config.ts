/**
 * Handlers of the `config_` service (the official SDK's ConfigService): the node's configuration,
 * its genesis, and the namespace's hosts and validator set as this node knows them (node_getNodes).
 */
import type { ConfigHandlers } from '../../generated/handlers.ts'
import { InvalidParams } from '../errors.ts'
import { stringifyJson } from '../wire/json.ts'
import type { GovernanceMethod } from './governance.ts'
import type { NodeDirectory } from './node.ts'

export interface ConfigModules {
  /** the node's effective configuration as TOML text */
  configText(): string
  /** the genesis this chain was created with */
  genesis: { namespace: string; accounts: { address: string; balance: bigint }[] }
  directory: Pick<NodeDirectory, 'nodes'>
}

const ROLES = ['vp', 'nvp'] as const

export function createConfigHandlers(modules: ConfigModules): Omit<ConfigHandlers, GovernanceMethod> {
  const { directory } = modules
  return {
    config_getConfig: () => modules.configText(),
    config_getGenesisInfo: () =>
      stringifyJson({
        namespace: modules.genesis.namespace,
        accounts: modules.genesis.accounts.map((account) => ({ address: account.address, balance: account.balance.toString() })),
      }),
    config_getHosts: ([role]) => {
      const wanted = role.toLowerCase()
      if (!(ROLES as readonly string[]).includes(wanted)) throw new InvalidParams(`invalid role ${role}: use vp or nvp`)
      const hosts: Record<string, string> = {}
      for (const node of directory.nodes()) if (node.isvp === (wanted === 'vp')) hosts[node.hostname] = `${node.ip}:${node.port}`
      return hosts
    },
    config_getVSet: () =>
      stringifyJson(
        directory
          .nodes()
          .filter((node) => node.isvp)
          .sort((a, b) => Number(a.id) - Number(b.id))
          .map((node) => node.hostname),
      ),
  }
}
