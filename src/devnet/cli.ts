/**
 * `npm run network -- <command>`: a local network of Keel nodes on this machine.
 *
 *   up     [--vp 4] [--nvp 1] [--dir ./network] [--timers default|test] [--rpc-port 8081] [--p2p-port 50011]
 *          [--cpu-prof <dir>]
 *          creates the network directory when it holds none, then starts every node not running
 *          (--cpu-prof: each node writes a V8 CPU profile into <dir> when it stops; up and start)
 *   down   [--dir ./network]                      stops every node (SIGTERM, SIGKILL after 10 s)
 *   stop   <hostname…> / start <hostname…>        one node at a time (for trying faults by hand)
 *   status [--dir ./network] [--watch]            each node's height, view, consensus state, primary and peers
 *   delete-vp <hostname>                          removes a VP from the group: reads its hash, sends
 *                                                 node_deleteVP to every VP (hypercli node delete's job)
 *   add-vp                                        adds the next VP (node<N+1>): its ECert from the network's CA,
 *                                                 its files with new = true, the others' hosts.toml; starts it.
 *                                                 The group's VPs vote it in when it links (ATTEND)
 */

import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { addVp, createNetwork, type NetworkPlan, nodeUrl, PLAN_FILE, readNetwork, runningPid, startNodes, stopNodes } from './network.ts'

interface NodeRow {
  hostname: string
  role: string
  url: string
  pid: string
  height: string
  view: string
  state: string
  primary: string
  peers: string
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
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

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      dir: { type: 'string', default: 'network' },
      vp: { type: 'string', default: '4' },
      nvp: { type: 'string', default: '0' },
      timers: { type: 'string', default: 'default' },
      'rpc-port': { type: 'string', default: '8081' },
      'p2p-port': { type: 'string', default: '50011' },
      watch: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
    },
  })
  const [command, ...hostnames] = positionals
  const dir = resolve(values.dir)
  // Node refuses --cpu-prof in NODE_OPTIONS, so profiling a network's nodes needs it on their command line
  const nodeArgs = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof'])}`]
  switch (command) {
    case 'up': {
      if (!existsSync(join(dir, PLAN_FILE))) {
        if (values.timers !== 'default' && values.timers !== 'test') throw new Error('--timers is "default" or "test"')
        await createNetwork(dir, {
          vps: Number(values.vp),
          nvps: Number(values.nvp),
          timers: values.timers,
          jsonrpcPort: Number(values['rpc-port']),
          p2pPort: Number(values['p2p-port']),
        })
        console.log(`created ${dir}`)
      }
      const plan = readNetwork(dir)
      await startNodes(dir, plan, undefined, { nodeArgs })
      console.log(table(await rowsOf(dir, plan)))
      console.log(`genesis account ${plan.genesis.address}: its key is in ${join(dir, 'genesis-account.json')}`)
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
      if (target === undefined) throw new Error(`delete-vp takes the host name of one VP of ${dir}, e.g. delete-vp node5`)
      const hash = (await rpc(nodeUrl(target), 'node_getNodeHash')) as string
      let refused = 0
      for (const node of plan.nodes.filter((n) => n.vp)) {
        try {
          console.log(`${node.hostname}: ${await rpc(nodeUrl(node), 'node_deleteVP', [{ nodehash: hash }])}`)
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
      throw new Error(
        `unknown command ${JSON.stringify(command ?? '')}: use up, down, start, stop, status, delete-vp or add-vp (see src/devnet/cli.ts)`,
      )
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
