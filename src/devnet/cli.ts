/**
 * `keel network <command>` (`npm run network -- <command>`): a local network of Keel nodes on this
 * machine. The commands and options are listed in `networkCommand` below (`--help` prints them).
 */

import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { type Account, accountFromPrivateKey } from '../../sdk/src/account.ts'
import { operatorHeaders } from '../../sdk/src/operator.ts'
import { devAccount } from '../chain/genesis.ts'
import { type CommandSpec, integerOption, isEntryModule, type OptionValues, runCommand, UsageError, usageOf } from '../command-line.ts'
import {
  addVp,
  DEFAULT_P2P_PORT,
  DEFAULT_RPC_PORT,
  type NetworkPlan,
  nodeUrl,
  PROMETHEUS_FILE,
  readNetwork,
  runningPid,
  STATE_FILE,
  startNodes,
  stopNodes,
  upNetwork,
} from './network.ts'

interface NodeRow {
  hostname: string
  role: string
  url: string
  p2p: string
  pid: string
  height: string
  view: string
  state: string
  primary: string
  peers: string
}

/** One call; `operator`: the account that signs it as an operator (operator methods, docs/governance.md). */
async function rpc(url: string, method: string, params: unknown[] = [], operator?: Account): Promise<unknown> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(operator === undefined ? {} : operatorHeaders(operator, body)) },
    body,
    signal: AbortSignal.timeout(2000),
  })
  const reply = (await response.json()) as { code: number; message: string; result?: unknown }
  if (reply.code !== 0) throw new Error(`${reply.code} ${reply.message}`)
  return reply.result
}

async function rowsOf(dir: string, plan: NetworkPlan): Promise<NodeRow[]> {
  return Promise.all(
    plan.nodes.map(async (node) => {
      const url = nodeUrl(node)
      const pid = runningPid(dir, node.hostname)
      const row: NodeRow = {
        hostname: node.hostname,
        role: node.vp ? `VP ${node.id}` : 'NVP',
        url,
        p2p: String(node.p2pPort),
        pid: pid === undefined ? 'stopped' : String(pid),
        height: '-',
        view: '-',
        state: '-',
        primary: '-',
        peers: '-',
      }
      if (pid === undefined) return row
      const [consensus, nodes] = await Promise.allSettled([rpc(url, 'node_getConsensusStatus'), rpc(url, 'node_getNodes')])
      if (consensus.status === 'fulfilled') {
        const status = consensus.value as { height: number; view: number; state: string }
        row.height = String(status.height)
        row.view = String(status.view)
        row.state = status.state
      }
      if (nodes.status === 'fulfilled') {
        const list = nodes.value as { hostname: string; isPrimary: boolean; status: number; delay: number }[]
        row.primary = list.find((peer) => peer.isPrimary)?.hostname ?? '?'
        row.peers = `${list.filter((peer) => peer.hostname !== node.hostname && peer.status === 0).length}/${list.length - 1} alive`
      } else row.peers = String(nodes.reason instanceof Error ? nodes.reason.message : nodes.reason).slice(0, 40)
      return row
    }),
  )
}

function table(rows: NodeRow[]): string {
  const headers: NodeRow = {
    hostname: 'node',
    role: 'role',
    url: 'JSON-RPC',
    p2p: 'peer port',
    pid: 'pid',
    height: 'height',
    view: 'view',
    state: 'state',
    primary: 'primary',
    peers: 'peers',
  }
  const keys = Object.keys(headers) as (keyof NodeRow)[]
  const widths = keys.map((key) => Math.max(headers[key].length, ...rows.map((row) => row[key].length)))
  const line = (row: NodeRow) => keys.map((key, i) => row[key].padEnd(widths[i])).join('  ')
  return [line(headers), ...rows.map(line)].join('\n')
}

export const networkCommand = {
  name: 'keel network',
  synopsis: '<command> [hostname…] [options]',
  summary: 'A local network of Keel nodes on this machine: one directory of files, one process per node.',
  allowPositionals: true,
  options: {
    dir: { type: 'string', value: 'dir', default: 'network', description: 'the network directory' },
    // no parser defaults: `up` on an existing network refuses these when given, so it must know whether they were
    vp: { type: 'string', value: 'n', description: 'up: VPs of a new network (default 4)' },
    nvp: { type: 'string', value: 'n', description: 'up: NVPs of a new network (default 0)' },
    timers: { type: 'string', value: 'default|test', description: 'up: consensus timers of a new network (default: default)' },
    'rpc-port': {
      type: 'string',
      value: 'port',
      description: `up: first JSON-RPC port of a new network, one per node (default ${DEFAULT_RPC_PORT}, as \`npm start\`; 0: free ports)`,
    },
    'p2p-port': {
      type: 'string',
      value: 'port',
      description: `up: first peer port of a new network, one per node (default ${DEFAULT_P2P_PORT}; 0: free ports)`,
    },
    'second-namespace': {
      type: 'string',
      value: 'name:vps',
      description: 'up: a second namespace of a new network, served by its first <vps> VPs with a group of their own (e.g. ns2:3)',
    },
    watch: { type: 'boolean', default: false, description: 'status: redraw every second' },
    'cpu-prof': { type: 'string', value: 'dir', description: 'up, start: each node writes a V8 CPU profile into <dir> when it stops' },
  },
  details: [
    'commands:',
    '  up                    creates the network directory when it holds none (its ports checked free first), then starts',
    '                        every node not running; when one cannot start, it stops the others it started',
    `  down                  stops every node ${STATE_FILE} names (SIGTERM, SIGKILL after 10 s)`,
    '  stop <hostname…>      stops nodes, one at a time for trying faults by hand; start <hostname…> brings them back',
    "  status                each node's height, view, consensus state, primary and peers",
    '  delete-vp <hostname>  removes a VP from the group: sends node_deleteVP with its hash to every VP, signed as',
    '                        the operator with the genesis account key of <dir>/genesis-account.json (the admin)',
    '  add-vp                adds the next VP (node<N+1>): its ECert, its files with new = true; starts it',
  ],
} satisfies CommandSpec

/** `--second-namespace ns2:3` */
function secondNamespaceOption(text: string | undefined): { namespace: string; vps: number } | undefined {
  if (text === undefined) return undefined
  const match = /^([a-z0-9_]{1,64}):([0-9]+)$/.exec(text)
  if (match === null)
    throw new UsageError(
      `keel network: --second-namespace takes <name>:<vps>, e.g. ns2:3, got ${JSON.stringify(text)}`,
      usageOf(networkCommand),
    )
  return { namespace: match[1], vps: Number(match[2]) }
}

export async function runNetwork(argv: string[]): Promise<void> {
  await runCommand(networkCommand, argv, network)
}

async function network(values: OptionValues<typeof networkCommand>, positionals: string[]): Promise<void> {
  const [command, ...hostnames] = positionals
  const dir = resolve(values.dir)
  // Node refuses --cpu-prof in NODE_OPTIONS, so profiling a network's nodes needs it on their command line
  const nodeArgs = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof'])}`]
  switch (command) {
    case 'up': {
      const timers = values.timers
      if (timers !== undefined && timers !== 'default' && timers !== 'test')
        throw new UsageError('keel network: --timers is "default" or "test"', usageOf(networkCommand))
      const { created, plan } = await upNetwork(dir, {
        vps: integerOption(networkCommand, 'vp', values.vp, 1),
        nvps: integerOption(networkCommand, 'nvp', values.nvp),
        timers,
        jsonrpcPort: integerOption(networkCommand, 'rpc-port', values['rpc-port']),
        p2pPort: integerOption(networkCommand, 'p2p-port', values['p2p-port']),
        second: secondNamespaceOption(values['second-namespace']),
        nodeArgs,
      })
      if (created) console.log(`created ${dir}`)
      console.log(table(await rowsOf(dir, plan)))
      console.log(
        `ports: JSON-RPC ${plan.nodes.map((node) => node.jsonrpcPort).join(', ')}; peers ${plan.nodes.map((node) => node.p2pPort).join(', ')}`,
      )
      console.log(`genesis account ${plan.genesis.address}: its key is in ${join(dir, 'genesis-account.json')}`)
      console.log(
        `metrics: every node serves GET /metrics, /health and /ready; scrape them all with \`prometheus --config.file=${join(dir, PROMETHEUS_FILE)}\` and import ops/grafana-dashboard.json into Grafana`,
      )
      return
    }
    case 'down':
    case 'stop': {
      const stopped = await stopNodes(dir, readNetwork(dir), command === 'stop' ? hostnames : undefined)
      console.log(stopped.length === 0 ? 'nothing was running' : `stopped ${stopped.sort().join(', ')}`)
      return
    }
    case 'start': {
      const plan = readNetwork(dir)
      await startNodes(dir, plan, hostnames.length === 0 ? undefined : hostnames, { nodeArgs })
      console.log(table(await rowsOf(dir, plan)))
      return
    }
    case 'status': {
      const plan = readNetwork(dir)
      if (!values.watch) {
        console.log(table(await rowsOf(dir, plan)))
        return
      }
      for (;;) {
        const text = table(await rowsOf(dir, plan))
        process.stdout.write(`\x1b[2J\x1b[H${new Date().toISOString()}  (Ctrl-C to leave; the nodes keep running)\n${text}\n`)
        await new Promise((done) => setTimeout(done, 1000))
      }
    }
    case 'delete-vp': {
      const plan = readNetwork(dir)
      const target = plan.nodes.find((node) => node.vp && node.hostname === hostnames[0])
      if (target === undefined) {
        const vps = plan.nodes.filter((node) => node.vp)
        const what = hostnames[0] === undefined ? 'which VP?' : `${hostnames[0]} is not a VP of ${dir}.`
        const next = `node${Math.max(...vps.map((node) => node.id)) + 1}`
        // the example names a VP that exists, never the name just refused
        const example =
          vps.length > 4
            ? `e.g. \`npm run network -- delete-vp ${vps.at(-1)?.hostname}\``
            : `a group of 4 cannot lose one: \`npm run network -- add-vp\` first (it adds ${next}), then \`npm run network -- delete-vp ${next}\``
        throw new Error(`delete-vp: ${what} Its VPs: ${vps.map((node) => node.hostname).join(', ')}; ${example}`)
      }
      const hash = (await rpc(nodeUrl(target), 'node_getNodeHash')) as string
      // node_deleteVP is an operator method: signed by the genesis account, the network's admin (no [genesis] admins)
      const keyFile = join(dir, 'genesis-account.json')
      if (!existsSync(keyFile)) throw new Error(`delete-vp signs as the network's admin with the key in ${keyFile}, which is missing`)
      const operator = accountFromPrivateKey(devAccount(keyFile).privateKey)
      console.log(`signing node_deleteVP as operator ${operator.address} (the genesis account, ${keyFile})`)
      let refused = 0
      for (const node of plan.nodes.filter((n) => n.vp)) {
        try {
          console.log(`${node.hostname}: ${await rpc(nodeUrl(node), 'node_deleteVP', [{ nodehash: hash }], operator)}`)
        } catch (error) {
          refused++
          console.log(`${node.hostname}: ${(error as Error).message}`)
        }
      }
      console.log(
        refused === 0
          ? `every VP voted; ${target.hostname} leaves the group once the votes are ordered and 40 more blocks pass (watch node_getNodes with status)`
          : `${refused} VP(s) did not vote: nothing changes until every VP of the group has voted (send it again to those)`,
      )
      return
    }
    case 'add':
    case 'add-vp': {
      const node = await addVp(dir)
      console.log(`created ${node.hostname} (VP ${node.id}, new = true) in ${join(dir, node.hostname)}`)
      const plan = readNetwork(dir)
      await startNodes(dir, plan, [node.hostname], { nodeArgs })
      console.log(table(await rowsOf(dir, plan)))
      console.log(
        `${node.hostname} follows the chain; each VP of the group votes to add it when it links, and it joins 40 blocks after the last vote is ordered (watch with status)`,
      )
      return
    }
    default:
      throw new UsageError(
        command === undefined ? 'keel network: which command?' : `keel network: unknown command ${JSON.stringify(command)}`,
        usageOf(networkCommand),
      )
  }
}

if (isEntryModule(import.meta.url)) await runNetwork(process.argv.slice(2))
