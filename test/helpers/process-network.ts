/**
 * A network of Keel nodes for the process-level tests of test/network/: the files `npm run
 * network` writes (test timers, small batches, free ports) and each node started as a process of
 * its own. `create` writes the files; a test may change them (proxies, a rogue node) before
 * `start`ing the nodes it wants.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ConsensusStatus } from '../../generated/types.ts'
import {
  addVp,
  type CreateNetworkOptions,
  createNetwork,
  type NetworkPlan,
  nodeUrl,
  type PlannedNode,
  readNetwork,
} from '../../src/devnet/network.ts'
import { type NodeProcess, startNodeProcess } from '../../src/devnet/node-process.ts'
import { call } from './audit.ts'
import { sendTransfers } from './client-load.ts'
import { type Wallet, wallet } from './wallet.ts'

export interface ProcessNetwork {
  readonly dir: string
  /** the running (or exited) node processes by host name */
  readonly processes: Map<string, NodeProcess>
  /** writes the network's files; resolves with its plan and the funded genesis account */
  create(options: Pick<CreateNetworkOptions, 'vps' | 'nvps' | 'nvpNames' | 'second'>): Promise<{ plan: NetworkPlan; funder: Wallet }>
  /** create, then start every node; resolves once all listen */
  up(options: Pick<CreateNetworkOptions, 'vps' | 'nvps' | 'nvpNames'>): Promise<NetworkPlan>
  urlOf(hostname: string): string
  /** the VPs `hostname` lists in node_getNodes, sorted */
  vpsListedBy(hostname: string): Promise<string[]>
  /**
   * What `hostname` lists once `done` holds for it, or when `ms` have passed (the caller asserts):
   * every member applies a group change at the same boundary block, but each reaches that block in
   * its own time (one just restarted may still be catching up when another already lists it).
   */
  vpsOnceListed(hostname: string, done: (listed: string[]) => boolean, ms?: number): Promise<string[]>
  /** node_getConsensusStatus of `hostname` (state, view, height, …) */
  consensusOf(hostname: string): Promise<ConsensusStatus>
  /** writes the files of the next VP (`new = true`, src/devnet/network.ts addVp), not started */
  addVp(): Promise<PlannedNode>
  /** starts (or restarts) one node and resolves once it listens */
  start(hostname: string): Promise<void>
  /**
   * `count` transfers from the genesis account spread over the nodes `targets` (client-load.ts);
   * every accepted hash is kept in `accepted` for the audits (I3)
   */
  send(count: number, targets: readonly string[]): Promise<string[]>
  readonly accepted: string[]
  /** the genesis account's private key: with no [genesis] admins, the network's administrator (operator methods) */
  adminKey(): string
  /** URLs of the nodes whose process runs */
  live(): string[]
  killAll(): Promise<void>
}

/** `logs`: each node appends its output to <dir>/<host>/node.log instead of the test's pipe */
export function processNetwork(name: string, options: { logs?: boolean } = {}): ProcessNetwork {
  const dir = join(mkdtempSync(join(tmpdir(), `keel-${name}-`)), 'network')
  const processes = new Map<string, NodeProcess>()
  let plan: NetworkPlan | undefined
  let funder: Wallet | undefined
  const accepted: string[] = []
  const nodeOf = (hostname: string) => {
    const node = plan?.nodes.find((n) => n.hostname === hostname)
    if (node === undefined) throw new Error(`no node ${hostname} in the network (create it first)`)
    return node
  }
  const urlOf = (hostname: string): string => nodeUrl(nodeOf(hostname))
  const network: ProcessNetwork = {
    dir,
    processes,
    async create(shape) {
      plan = await createNetwork(dir, {
        ...shape,
        timers: 'test',
        jsonrpcPort: 0,
        p2pPort: 0,
        chain: { batchSize: 50, batchTimeoutMs: 20 },
      })
      const { privateKey } = JSON.parse(readFileSync(join(dir, 'genesis-account.json'), 'utf8')) as { privateKey: string }
      funder = wallet(privateKey)
      return { plan, funder }
    },
    async up(shape) {
      const created = await network.create(shape)
      try {
        await Promise.all(created.plan.nodes.map((node) => network.start(node.hostname)))
      } catch (error) {
        // uvu drops what a before hook throws: say it here, with the end of each node's log
        const tails = created.plan.nodes.map((node) => {
          const file = join(dir, node.hostname, 'node.log')
          const lines = existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-3) : []
          return `  ${node.hostname}: ${lines.join('\n    ') || '(no log file)'}`
        })
        console.error(`network set-up failed: ${(error as Error).stack}\n${tails.join('\n')}`)
        throw error
      }
      return created.plan
    },
    urlOf,
    adminKey: () => {
      if (funder === undefined) throw new Error('the network is not created yet')
      return funder.privateKey
    },
    vpsListedBy: async (hostname) =>
      ((await call(urlOf(hostname), 'node_getNodes', [])).result as { hostname: string; isvp: boolean }[])
        .filter((node) => node.isvp)
        .map((node) => node.hostname)
        .sort(),
    async vpsOnceListed(hostname, done, ms = 60_000) {
      const deadline = Date.now() + ms
      for (;;) {
        const listed = await network.vpsListedBy(hostname)
        if (done(listed) || Date.now() > deadline) return listed
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    },
    consensusOf: async (hostname) => (await call(urlOf(hostname), 'node_getConsensusStatus', [])).result as ConsensusStatus,
    async addVp() {
      const node = await addVp(dir, { jsonrpcPort: 0, p2pPort: 0 })
      plan = readNetwork(dir)
      return node
    },
    async start(hostname) {
      const process = await startNodeProcess({
        configFile: join(dir, hostname, 'keel.toml'),
        port: nodeOf(hostname).jsonrpcPort,
        // generous: other test runs may load the machine
        timeoutMs: 180_000,
        ...(options.logs === true ? { logFile: join(dir, hostname, 'node.log') } : {}),
      })
      processes.set(hostname, process)
    },
    accepted,
    async send(count, targets) {
      if (funder === undefined) throw new Error('create the network first')
      const hashes = await sendTransfers(funder, targets.map(urlOf), count)
      accepted.push(...hashes)
      return hashes
    },
    live: () => [...processes.entries()].filter(([, p]) => !p.hasExited()).map(([hostname]) => urlOf(hostname)),
    killAll: async () => void (await Promise.all([...processes.values()].map((p) => p.kill('SIGKILL')))),
  }
  return network
}
