/**
 * A local network of Keel nodes on one machine, each its own process on loopback: what
 * `npm run network` and the network's fault tests build on.
 *
 * Layout of a network directory:
 *   network.json            the plan: namespace, timers, genesis account, each node's ports and role
 *   genesis-account.json    the funded account every node's genesis holds (its key, mode 0600)
 *   ca/eca.cert, eca.priv   the namespace CA that issued every node's certificate
 *   <hostname>/keel.toml    the node's configuration (`npm start -- --config <hostname>/keel.toml`)
 *   <hostname>/config/      peerconfig.toml, hosts.toml, addr.toml, certs/ (its ECert, key, the CA)
 *   <hostname>/config/<ns>/ the same for a second namespace the node serves (issue 30), whose VPs
 *                           are the first `second.vps` nodes: its own CA (ca/<ns>/), ports and group
 *   <hostname>/data/        its ledger
 *   processes.json          the one record of which node runs as which process (pid, ports), written
 *                           as each is spawned and removed as it stops: `up`, `start`, `stop`,
 *                           `down` and `status` all read it
 *   <hostname>/node.log     its output
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { devAccount } from '../chain/genesis.ts'
import { writeFileAtomically } from '../fs-atomic.ts'
import { loadPeerConfig, localNetworkPlan, writePeerConfigFiles } from '../p2p/config.ts'
import {
  createNamespaceCa,
  issueNodeCert,
  loadNamespaceCa,
  PEER_CERTS_DIR,
  writeNamespaceCa,
  writeNodeIdentity,
  writePeerCerts,
} from '../p2p/identity.ts'
import { coresPerNode } from '../thread-layout.ts'
import { type NodeConfigFile, type NodeProcess, startNodeProcess, waitForExit, writeNodeConfig } from './node-process.ts'

export const PLAN_FILE = 'network.json'

export interface PlannedNode {
  hostname: string
  vp: boolean
  /** VP id, 0 for an NVP */
  id: number
  jsonrpcPort: number
  p2pPort: number
  /** a VP added after genesis (add-vp); absent for the VPs the network was created with */
  added?: true
  /** issue 30: the second namespace's p2p port, on a node that serves it too */
  secondP2pPort?: number
}

export interface NetworkPlan {
  namespace: string
  /** issue 30: a second namespace that the first `vps` VPs serve too */
  second?: { namespace: string; vps: number }
  timers: 'default' | 'test'
  genesis: { address: string; balance: string }
  nodes: PlannedNode[]
}

export interface CreateNetworkOptions {
  vps: number
  nvps?: number
  /** host names of the NVPs (default nvp1, nvp2, …) */
  nvpNames?: readonly string[]
  namespace?: string
  timers?: 'default' | 'test'
  /** first JSON-RPC port (then one per node); 0 picks free ports */
  jsonrpcPort?: number
  /** first p2p port (then one per node); 0 picks free ports */
  p2pPort?: number
  /** [chain] settings written into every node's keel.toml */
  chain?: { batchSize?: number; batchTimeoutMs?: number; poolCapacity?: number }
  /**
   * [node] cores of every node (its thread layout, src/thread-layout.ts); default this machine's
   * cores shared equally among the nodes, at least one each: four VPs on two cores run one thread each
   */
  cores?: number
  /**
   * issue 30: a second namespace served by VPs 1…`vps` beside the first (a group of its own: 3 VPs
   * order with f = 0), with its own namespace CA, p2p ports and consensus
   */
  second?: { namespace: string; vps: number }
}

/**
 * Free TCP ports on loopback for nodes started a moment later. Picked below the system's range of
 * ephemeral ports when it is known (Linux): a port found by binding port 0 comes from that range,
 * and an outgoing connection of a node already running can take it before its own node binds it
 * (CI saw EADDRINUSE so). Each port picked is also reserved for a while (`reservePort`), so that two
 * processes picking at once (two test files, each starting a network) do not both take a port that
 * neither has bound yet (CI saw that too: two networks' nodes on one port).
 */
export async function freePorts(count: number): Promise<number[]> {
  const ephemeralFrom = firstEphemeralPort()
  if (ephemeralFrom === undefined || ephemeralFrom < LOWEST_PICKED_PORT + 1000) return portsFromTheSystem(count)
  sweepPortReservations()
  const picked = new Set<number>()
  for (let tries = 0; picked.size < count; tries++) {
    if (tries > 50 * count) throw new Error(`no ${count} free ports found between ${LOWEST_PICKED_PORT} and ${ephemeralFrom}`)
    const port = LOWEST_PICKED_PORT + Math.floor(Math.random() * (ephemeralFrom - LOWEST_PICKED_PORT))
    if (!picked.has(port) && (await canListen(port)) && reservePort(port)) picked.add(port)
  }
  return [...picked]
}

const LOWEST_PICKED_PORT = 10_000

/** how long a picked port stays reserved for the node it was picked for: it binds it within seconds */
const PORT_RESERVATION_MS = 10 * 60_000

/** the reservation files of every process of this machine that picks ports (reservePort) */
const PORT_RESERVATIONS = join(tmpdir(), 'keel-port-reservations')

/**
 * Deletes the reservation files in `dir` older than twice PORT_RESERVATION_MS: expired, so taking one
 * over and deleting it mean the same, and without this they pile up, one per port ever picked. A file
 * is looked at again just before it goes: one taken over meanwhile (its time renewed) stays.
 */
export function sweepPortReservations(dir = PORT_RESERVATIONS, now = Date.now()): number {
  let swept = 0
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return 0
  }
  for (const name of names) {
    const file = join(dir, name)
    try {
      if (now - statSync(file).mtimeMs <= 2 * PORT_RESERVATION_MS) continue
      unlinkSync(file)
      swept++
    } catch {
      // gone already, or another process's to sweep
    }
  }
  return swept
}

/**
 * Reserves `port` among the processes of this machine that share the temporary directory: a file
 * made with O_EXCL, which exactly one of them can create; false when another reserved it less than
 * PORT_RESERVATION_MS ago. An older reservation is taken over (its node has bound the port by then,
 * or never will).
 */
export function reservePort(port: number): boolean {
  const dir = PORT_RESERVATIONS
  const file = join(dir, String(port))
  try {
    mkdirSync(dir, { recursive: true })
    writeFileSync(file, String(process.pid), { flag: 'wx' })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return true // no directory to share: as before, the bind check alone
  }
  try {
    if (Date.now() - statSync(file).mtimeMs < PORT_RESERVATION_MS) return false
    utimesSync(file, new Date(), new Date())
    return true
  } catch {
    return false
  }
}

function firstEphemeralPort(): number | undefined {
  try {
    const first = Number.parseInt(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0], 10)
    return Number.isInteger(first) ? first : undefined
  } catch {
    return undefined
  }
}

const canListenOn = (port: number, host: string): Promise<boolean> =>
  new Promise((done) => {
    const server = createServer()
    server.once('error', () => done(false))
    server.listen(port, host, () => server.close(() => done(true)))
  })

/** free for a node: neither loopback nor every address is taken (a process on either refuses the other on Linux) */
const canListen = async (port: number): Promise<boolean> => (await canListenOn(port, '127.0.0.1')) && (await canListenOn(port, '0.0.0.0'))

export interface BusyPort {
  hostname: string
  what: 'JSON-RPC' | 'peer'
  port: number
}

/** The ports of `nodes` that another process holds now, each with its node. */
export async function busyPorts(
  nodes: readonly { hostname: string; jsonrpcPort: number | undefined; p2pPort: number | undefined }[],
): Promise<BusyPort[]> {
  const busy: BusyPort[] = []
  for (const node of nodes) {
    if (node.jsonrpcPort !== undefined && !(await canListen(node.jsonrpcPort)))
      busy.push({ hostname: node.hostname, what: 'JSON-RPC', port: node.jsonrpcPort })
    if (node.p2pPort !== undefined && !(await canListen(node.p2pPort)))
      busy.push({ hostname: node.hostname, what: 'peer', port: node.p2pPort })
  }
  return busy
}

/** the error naming busy ports, started nothing */
function busyError(busy: BusyPort[], advice: string): Error {
  const list = busy.map((b) => `${b.port} (${b.what} port of ${b.hostname})`).join(', ')
  return new Error(`port${busy.length === 1 ? '' : 's'} already in use: ${list}; nothing was started. ${advice}`)
}

async function portsFromTheSystem(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((done, fail) => {
          const server = createServer()
          server.once('error', fail)
          server.listen(0, '127.0.0.1', () => done(server))
        }),
    ),
  )
  const ports = servers.map((server) => (server.address() as { port: number }).port)
  await Promise.all(servers.map((server) => new Promise((done) => server.close(done))))
  return ports
}

const portsFrom = async (first: number, count: number): Promise<number[]> =>
  first === 0 ? freePorts(count) : Array.from({ length: count }, (_, i) => first + i)

/** `npm run network -- up`'s first ports when none are given: 8081 is also `npm start`'s, so `up` checks them first */
export const DEFAULT_RPC_PORT = 8081
export const DEFAULT_P2P_PORT = 50011

/** Writes a new network directory (refusing one that already holds a plan). */
export async function createNetwork(dir: string, options: CreateNetworkOptions): Promise<NetworkPlan> {
  const root = resolve(dir)
  if (existsSync(join(root, PLAN_FILE))) throw new Error(`${root} already holds a network; remove it first or use it as it is`)
  if (!Number.isInteger(options.vps) || options.vps < 4)
    throw new Error(`a network needs at least 4 VPs (N = 3f+1 with f ≥ 1), got ${options.vps}`)
  const nvps = options.nvps ?? 0
  const namespace = options.namespace ?? 'global'
  const count = options.vps + nvps
  // the second namespace's peer ports follow the first's, picked at once so none is picked twice
  const p2pPorts = await portsFrom(options.p2pPort ?? DEFAULT_P2P_PORT, count + (options.second?.vps ?? 0))
  const jsonrpcPorts = await portsFrom(options.jsonrpcPort ?? DEFAULT_RPC_PORT, count)
  mkdirSync(root, { recursive: true })
  const ca = await createNamespaceCa({ namespace })
  writeNamespaceCa(join(root, 'ca'), ca)
  const genesis = devAccount(join(root, 'genesis-account.json'))
  const second = await createSecondNamespace(root, options, namespace, p2pPorts.slice(count))
  const files = localNetworkPlan({ vps: options.vps, nvps, nvpNames: options.nvpNames, ports: p2pPorts })
  const nodes: PlannedNode[] = []
  const issuedCerts = new Map<string, Awaited<ReturnType<typeof issueNodeCert>>>()
  for (const [hostname, input] of files)
    issuedCerts.set(hostname, await issueNodeCert(ca, { hostname, role: input.self.vp ? 'VP' : 'NVP' }))
  for (const [i, [hostname, input]] of [...files.entries()].entries()) {
    const nodeDir = join(root, hostname)
    writePeerConfigFiles(join(nodeDir, 'config'), input)
    const issued = issuedCerts.get(hostname)!
    writeNodeIdentity(join(nodeDir, 'config', 'certs'), { caPem: ca.certPem, certPem: issued.certPem, keyPem: issued.keyPem })
    // every VP's certificate: a signature in a proof is checked even while its signer is down
    writePeerCerts(
      join(nodeDir, 'config', 'certs'),
      [...issuedCerts.values()].filter((cert) => cert.role === 'VP').map((cert) => ({ hostname: cert.hostname, certPem: cert.certPem })),
    )
    const secondInput = second?.files.get(hostname)
    if (second !== undefined && secondInput !== undefined) await writeSecondNamespaceFiles(join(nodeDir, 'config'), second, hostname)
    writeNodeConfig(join(nodeDir, 'keel.toml'), {
      dataDir: join(nodeDir, 'data'),
      ...(secondInput === undefined || second === undefined ? {} : { namespaces: [namespace, second.namespace] }),
      hostname,
      cores: options.cores ?? coresPerNode(count),
      port: jsonrpcPorts[i],
      ...options.chain,
      network: { configDir: join(nodeDir, 'config'), timers: options.timers ?? 'default' },
      genesis: [{ address: genesis.address, balance: genesis.balance }],
    })
    nodes.push({
      hostname,
      vp: input.self.vp,
      id: input.self.id,
      jsonrpcPort: jsonrpcPorts[i],
      p2pPort: p2pPorts[i],
      ...(secondInput === undefined ? {} : { secondP2pPort: secondInput.hosts[secondInput.self.id - 1].port }),
    })
  }
  const plan: NetworkPlan = {
    namespace,
    ...(second === undefined ? {} : { second: { namespace: second.namespace, vps: second.vps } }),
    timers: options.timers ?? 'default',
    genesis: { address: genesis.address, balance: genesis.balance.toString() },
    nodes,
  }
  writePlan(root, plan)
  // the CA key stays only as long as nodes may be added; it is checked to load back here
  await loadNamespaceCa(join(root, 'ca'), namespace)
  return plan
}

/** issue 30: the second namespace's CA, peer files and certificates, made once for every node that serves it */
async function createSecondNamespace(root: string, options: CreateNetworkOptions, first: string, ports: number[]) {
  const wanted = options.second
  if (wanted === undefined) return undefined
  if (wanted.namespace === first) throw new Error(`the second namespace must differ from the first (${first})`)
  if (!Number.isInteger(wanted.vps) || wanted.vps < 1 || wanted.vps > options.vps)
    throw new Error(`the second namespace's VPs are the first 1…${options.vps} VPs, got ${wanted.vps}`)
  const ca = await createNamespaceCa({ namespace: wanted.namespace })
  writeNamespaceCa(join(root, 'ca', wanted.namespace), ca)
  const files = localNetworkPlan({ vps: wanted.vps, ports })
  const certs = new Map<string, Awaited<ReturnType<typeof issueNodeCert>>>()
  for (const hostname of files.keys()) certs.set(hostname, await issueNodeCert(ca, { hostname, role: 'VP' }))
  return { namespace: wanted.namespace, vps: wanted.vps, ca, files, certs }
}

/** a node's files of the second namespace, in `<its config dir>/<namespace>/` (config.ts namespaceConfig) */
async function writeSecondNamespaceFiles(
  configDir: string,
  second: NonNullable<Awaited<ReturnType<typeof createSecondNamespace>>>,
  hostname: string,
): Promise<void> {
  const dir = join(configDir, second.namespace)
  writePeerConfigFiles(dir, second.files.get(hostname)!)
  const issued = second.certs.get(hostname)!
  writeNodeIdentity(join(dir, 'certs'), { caPem: second.ca.certPem, certPem: issued.certPem, keyPem: issued.keyPem })
  writePeerCerts(
    join(dir, 'certs'),
    [...second.certs.values()].map((cert) => ({ hostname: cert.hostname, certPem: cert.certPem })),
  )
}

/** the Prometheus configuration `npm run network` writes beside the plan: every node's /metrics */
export const PROMETHEUS_FILE = 'prometheus.yml'

/** The plan, and the Prometheus scrape configuration of its nodes (rewritten as nodes are added). */
function writePlan(root: string, plan: NetworkPlan): void {
  writeFileAtomically(join(root, PLAN_FILE), `${JSON.stringify(plan, null, 2)}\n`)
  writeFileAtomically(join(root, PROMETHEUS_FILE), prometheusConfig(plan))
}

/** A Prometheus configuration scraping every node of `plan` (labels: node, role), every 5 s. */
export function prometheusConfig(plan: NetworkPlan, scrapeIntervalSeconds = 5): string {
  const targets = plan.nodes
    .map((node) =>
      [
        `      - targets: ['127.0.0.1:${node.jsonrpcPort}']`,
        '        labels:',
        `          node: ${node.hostname}`,
        `          role: ${node.vp ? 'vp' : 'nvp'}`,
      ].join('\n'),
    )
    .join('\n')
  return [
    '# Prometheus scrape configuration of this network: `prometheus --config.file=<this file>`',
    '# (written by `npm run network`; rewritten when a node is added)',
    'global:',
    `  scrape_interval: ${scrapeIntervalSeconds}s`,
    'scrape_configs:',
    '  - job_name: keel',
    '    metrics_path: /metrics',
    '    static_configs:',
    targets,
    '',
  ].join('\n')
}

export function readNetwork(dir: string): NetworkPlan {
  const file = join(resolve(dir), PLAN_FILE)
  if (!existsSync(file)) throw new Error(`${resolve(dir)} holds no network (no ${PLAN_FILE}); create one with \`npm run network -- up\``)
  return JSON.parse(readFileSync(file, 'utf8')) as NetworkPlan
}

export const nodeUrl = (node: PlannedNode): string => `http://127.0.0.1:${node.jsonrpcPort}`

export const STATE_FILE = 'processes.json'

/** A node process `npm run network` started. */
export interface NodeRecord {
  pid: number
  jsonrpcPort: number
  p2pPort: number
  /** ISO time of the spawn */
  started: string
}

/** processes.json: hostname -> its process, for every node started and not seen stopped */
type NetworkState = Record<string, NodeRecord>

function readState(root: string): NetworkState {
  const file = join(root, STATE_FILE)
  if (!existsSync(file)) return {}
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as NetworkState
  } catch (error) {
    throw new Error(`${file} cannot be read (${(error as Error).message}); stop the nodes it named by their pid and remove it`)
  }
}

/** read, change, write back at once (synchronous: two starts in this process never interleave) */
function changeState(root: string, change: (state: NetworkState) => void): void {
  const state = readState(root)
  change(state)
  writeFileAtomically(join(root, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`)
}

/**
 * Whether `pid` is alive and is this node: on Linux its command line must name the node's
 * keel.toml, so a pid the system gave to another process since is never signalled.
 */
function isNodeProcess(pid: number, configFile: string): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(configFile)
  } catch {
    // no /proc (macOS): the pid alone
    return true
  }
}

const configFileOf = (root: string, hostname: string): string => join(root, hostname, 'keel.toml')

/** The pid of a node started by startNodes, if that process is still running (a record of one gone is dropped). */
export function runningPid(dir: string, hostname: string): number | undefined {
  const root = resolve(dir)
  const record = readState(root)[hostname]
  if (record === undefined) return undefined
  if (isNodeProcess(record.pid, configFileOf(root, hostname))) return record.pid
  changeState(root, (state) => {
    if (state[hostname]?.pid === record.pid) delete state[hostname]
  })
  return undefined
}

/** SIGTERM, SIGKILL after `graceMs`; resolves once the process is gone */
async function stopPid(pid: number, graceMs: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM')
  } catch {
    return
  }
  const timer = setTimeout(() => {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }, graceMs)
  await waitForExit(pid)
  clearTimeout(timer)
}

/** the last lines of a start failure (the node's output follows the reason) */
const lastLines = (text: string, count: number): string => text.trim().split('\n').slice(-count).join('\n')

/**
 * Starts the named nodes (default: every node not running) as detached processes logging to
 * <hostname>/node.log, and resolves once each listens. All or nothing: every port is checked
 * before anything starts, and when one node fails to start, every node this call started is
 * stopped before the error is thrown, so a failed start leaves no process behind.
 */
export async function startNodes(
  dir: string,
  plan: NetworkPlan,
  hostnames?: readonly string[],
  options: { nodeArgs?: string[]; graceMs?: number } = {},
): Promise<NodeProcess[]> {
  const root = resolve(dir)
  const unknown = (hostnames ?? []).filter((name) => !plan.nodes.some((node) => node.hostname === name))
  if (unknown.length > 0)
    throw new Error(`${root} has no node ${unknown.join(', ')}; its nodes: ${plan.nodes.map((node) => node.hostname).join(', ')}`)
  const wanted = plan.nodes
    .filter((node) => hostnames === undefined || hostnames.includes(node.hostname))
    .filter((node) => runningPid(root, node.hostname) === undefined)
  const busy = await busyPorts(wanted)
  if (busy.length > 0)
    throw busyError(
      busy,
      `Stop what holds ${busy.length === 1 ? 'it' : 'them'} (\`npm start\` uses 8081 too), or create the network in another --dir with other --rpc-port/--p2p-port (0: free ports).`,
    )
  const spawned = new Map<string, number>()
  let failed = false
  const stopAll = (): Promise<unknown> => Promise.all([...spawned.values()].map((pid) => stopPid(pid, options.graceMs ?? 10_000)))
  const results = await Promise.allSettled(
    wanted.map(async (node) => {
      const nodeDir = join(root, node.hostname)
      try {
        return await startNodeProcess({
          configFile: configFileOf(root, node.hostname),
          port: node.jsonrpcPort,
          logFile: join(nodeDir, 'node.log'),
          detached: true,
          nodeArgs: options.nodeArgs,
          timeoutMs: 60_000,
          onSpawn: (pid) => {
            spawned.set(node.hostname, pid)
            changeState(root, (state) => {
              state[node.hostname] = { pid, jsonrpcPort: node.jsonrpcPort, p2pPort: node.p2pPort, started: new Date().toISOString() }
            })
            // a sibling failed while this one was being spawned
            if (failed) void stopPid(pid, options.graceMs ?? 10_000)
          },
        })
      } catch (error) {
        // the first failure stops the others at once, not after they have finished starting
        if (!failed) {
          failed = true
          void stopAll()
        }
        throw new Error(
          `${node.hostname} did not start (its log: ${join(nodeDir, 'node.log')}):\n${lastLines((error as Error).message, 12)}`,
        )
      }
    }),
  )
  const errors = results.filter((result) => result.status === 'rejected').map((result) => (result.reason as Error).message)
  if (errors.length === 0) return results.map((result) => (result as PromiseFulfilledResult<NodeProcess>).value)
  await stopAll()
  changeState(root, (state) => {
    for (const [hostname, pid] of spawned) if (state[hostname]?.pid === pid) delete state[hostname]
  })
  throw new Error(
    `${errors.join('\n')}\nstopped every node this start had spawned (${[...spawned.keys()].sort().join(', ')}): none is left running`,
  )
}

/** Stops the named nodes (default: all) that processes.json names: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopNodes(dir: string, plan: NetworkPlan, hostnames?: readonly string[], graceMs = 10_000): Promise<string[]> {
  const root = resolve(dir)
  const unknown = (hostnames ?? []).filter((name) => !plan.nodes.some((node) => node.hostname === name))
  if (unknown.length > 0)
    throw new Error(`${root} has no node ${unknown.join(', ')}; its nodes: ${plan.nodes.map((node) => node.hostname).join(', ')}`)
  const stopped: string[] = []
  await Promise.all(
    plan.nodes
      .filter((node) => hostnames === undefined || hostnames.includes(node.hostname))
      .map(async (node) => {
        const pid = runningPid(root, node.hostname)
        if (pid === undefined) return
        await stopPid(pid, graceMs)
        changeState(root, (state) => {
          if (state[node.hostname]?.pid === pid) delete state[node.hostname]
        })
        stopped.push(node.hostname)
      }),
  )
  return stopped
}

export interface UpOptions {
  vps?: number
  nvps?: number
  timers?: 'default' | 'test'
  jsonrpcPort?: number
  p2pPort?: number
  /** issue 30: a second namespace served by the first `vps` VPs (a new network only) */
  second?: { namespace: string; vps: number }
  nodeArgs?: string[]
}

/**
 * `npm run network -- up`: creates the network when `dir` holds none (after checking that its ports
 * are free: nothing is written otherwise), then starts every node not running (startNodes: all or
 * nothing). Options that would create another network are refused on an existing one rather than
 * ignored.
 */
export async function upNetwork(dir: string, options: UpOptions): Promise<{ created: boolean; plan: NetworkPlan; started: NodeProcess[] }> {
  const root = resolve(dir)
  let created = false
  if (existsSync(join(root, PLAN_FILE))) {
    const plan = readNetwork(root)
    const genesisVps = plan.nodes.filter((node) => node.vp && !node.added)
    const differs: string[] = []
    if (options.vps !== undefined && options.vps !== genesisVps.length) differs.push(`--vp ${options.vps} (it has ${genesisVps.length})`)
    const nvps = plan.nodes.filter((node) => !node.vp).length
    if (options.nvps !== undefined && options.nvps !== nvps) differs.push(`--nvp ${options.nvps} (it has ${nvps})`)
    if (options.timers !== undefined && options.timers !== plan.timers) differs.push(`--timers ${options.timers} (it has ${plan.timers})`)
    const first = plan.nodes[0]
    if (options.jsonrpcPort !== undefined && options.jsonrpcPort !== 0 && options.jsonrpcPort !== first.jsonrpcPort)
      differs.push(`--rpc-port ${options.jsonrpcPort} (its JSON-RPC ports: ${plan.nodes.map((n) => n.jsonrpcPort).join(', ')})`)
    if (options.p2pPort !== undefined && options.p2pPort !== 0 && options.p2pPort !== first.p2pPort)
      differs.push(`--p2p-port ${options.p2pPort} (its peer ports: ${plan.nodes.map((n) => n.p2pPort).join(', ')})`)
    if (options.jsonrpcPort === 0 || options.p2pPort === 0) differs.push('port 0 (its ports are fixed in its files)')
    if (options.second !== undefined && (options.second.namespace !== plan.second?.namespace || options.second.vps !== plan.second.vps))
      differs.push(
        `--second-namespace ${options.second.namespace}:${options.second.vps} (it has ${plan.second === undefined ? 'none' : `${plan.second.namespace}:${plan.second.vps}`})`,
      )
    if (differs.length > 0)
      throw new Error(
        `${root} holds a network already, and ${differs.join('; ')} would not change it. Run \`up\` without those options to start it as it is, or give another --dir for a new network (or \`down\` and remove ${root} first).`,
      )
  } else {
    const vps = options.vps ?? 4
    const count = vps + (options.nvps ?? 0)
    const firstRpc = options.jsonrpcPort ?? DEFAULT_RPC_PORT
    const firstP2p = options.p2pPort ?? DEFAULT_P2P_PORT
    // the host names are not known before the files are written: nodes by position; port 0 picks free ones later
    const planned = Array.from({ length: count }, (_, i) => ({
      hostname: `node #${i + 1}`,
      jsonrpcPort: firstRpc === 0 ? undefined : firstRpc + i,
      p2pPort: firstP2p === 0 ? undefined : firstP2p + i,
    }))
    const busy = await busyPorts(planned)
    if (busy.length > 0)
      throw busyError(
        busy,
        'Nothing was written either. Choose free ones with --rpc-port/--p2p-port, or 0 for free ports (printed when the nodes start).',
      )
    await createNetwork(root, {
      vps,
      nvps: options.nvps,
      timers: options.timers,
      jsonrpcPort: options.jsonrpcPort,
      p2pPort: options.p2pPort,
      second: options.second,
    })
    created = true
  }
  const plan = readNetwork(root)
  const started = await startNodes(root, plan, undefined, { nodeArgs: options.nodeArgs })
  return { created, plan, started }
}

/**
 * Adds the next VP to a network directory, as an operator does (consensus.md §7, issue 6): an
 * ECert from the network's CA (OU=VP), and files where `[self]` says `id = N+1`, `"N" = N+1`,
 * `new = true` and `[[nodes]]` lists every VP and itself. It is not started here (startNodes).
 *
 * The other nodes' hosts.toml get its address, and their certs/peers/ its certificate; their
 * peerconfig.toml [[nodes]] are left as they are: a node takes its files' VPs for the genesis group
 * unless keel.toml genesisVps names it (genesis configuration, like the accounts; written into the
 * new node's keel.toml, whose files list every VP), and learns the new VP from the
 * chain once the group votes it in. The running nodes need no restart: the new VP dials the VPs (its
 * certificate is checked against the CA on the link) and asks each to vote it in; an NVP dials it
 * once the chain has voted it in, at the address hosts.toml gives.
 */
export async function addVp(dir: string, options: { jsonrpcPort?: number; p2pPort?: number } = {}): Promise<PlannedNode> {
  const root = resolve(dir)
  const plan = readNetwork(root)
  const vps = plan.nodes.filter((node) => node.vp)
  const id = Math.max(...vps.map((node) => node.id)) + 1
  let hostname = `node${id}`
  for (let k = 2; plan.nodes.some((node) => node.hostname === hostname); k++) hostname = `node${id}-${k}`
  const next = (key: 'jsonrpcPort' | 'p2pPort'): number => Math.max(...plan.nodes.map((node) => node[key])) + 1
  const [freeRpc, freeP2p] = await freePorts(2)
  const pick = (given: number | undefined, key: 'jsonrpcPort' | 'p2pPort', free: number): number =>
    given === undefined ? next(key) : given === 0 ? free : given
  const node: PlannedNode = {
    hostname,
    vp: true,
    added: true,
    id,
    jsonrpcPort: pick(options.jsonrpcPort, 'jsonrpcPort', freeRpc),
    p2pPort: pick(options.p2pPort, 'p2pPort', freeP2p),
  }
  const ca = await loadNamespaceCa(join(root, 'ca'), plan.namespace)
  const issued = await issueNodeCert(ca, { hostname, role: 'VP' })
  const ip = '127.0.0.1'
  const address = { hostname, ip, port: node.p2pPort }
  const hosts = [...plan.nodes.map((n) => ({ hostname: n.hostname, ip, port: n.p2pPort })), address]
  const domain = 'domain1'
  const nodeDir = join(root, hostname)
  const configDir = join(nodeDir, 'config')
  const nodes = [...vps.map((n) => ({ id: n.id, hostname: n.hostname })), { id, hostname }]
  writePeerConfigFiles(configDir, {
    self: { id, hostname, n: nodes.length, vp: true, new: true, org: false, rec: false },
    nodes,
    hosts,
    addr: { domain, addrs: [{ domain, ip, port: node.p2pPort }] },
  })
  writeNodeIdentity(join(configDir, 'certs'), { caPem: ca.certPem, certPem: issued.certPem, keyPem: issued.keyPem })
  // the VPs' certificates, as every node of the network holds them, and its own
  const peersOf = (n: PlannedNode): string => join(root, n.hostname, 'config', 'certs', PEER_CERTS_DIR)
  const known = existsSync(peersOf(vps[0]))
    ? readdirSync(peersOf(vps[0]))
        .filter((file) => file.endsWith('.cert'))
        .map((file) => ({ hostname: file.slice(0, -'.cert'.length), certPem: readFileSync(join(peersOf(vps[0]), file), 'utf8') }))
    : []
  writePeerCerts(join(configDir, 'certs'), [...known, { hostname, certPem: issued.certPem }])
  // the same [chain], genesis and timers as the first VP's
  const model = parseToml(readFileSync(join(root, vps[0].hostname, 'keel.toml'), 'utf8')) as {
    chain?: { batchSize?: number; batchTimeoutMs?: number; poolCapacity?: number }
    network?: { timers?: 'default' | 'test' }
    genesis?: { accounts?: { address: string; balance: string }[] }
  }
  const config: NodeConfigFile = {
    dataDir: join(nodeDir, 'data'),
    hostname,
    // its share of this machine's cores, counting itself (the nodes started before keep theirs)
    cores: coresPerNode(plan.nodes.length + 1),
    port: node.jsonrpcPort,
    ...model.chain,
    // its files list the VPs added before it too: the group of genesis is said here
    network: { configDir, timers: model.network?.timers ?? plan.timers, genesisVps: vps.filter((n) => !n.added).map((n) => n.id) },
    genesis: model.genesis?.accounts ?? [],
  }
  writeNodeConfig(join(nodeDir, 'keel.toml'), config)
  // the operator's part on the other nodes: the new VP's address and certificate
  for (const other of plan.nodes) {
    const otherConfig = join(root, other.hostname, 'config')
    const current = loadPeerConfig(otherConfig)
    writePeerConfigFiles(otherConfig, {
      self: current.self,
      nodes: current.nodes,
      hosts: [...[...current.hosts.values()].filter((h) => h.hostname !== hostname), address],
      ...(current.addr === undefined ? {} : { addr: current.addr }),
    })
    writePeerCerts(join(otherConfig, 'certs'), [{ hostname, certPem: issued.certPem }])
  }
  plan.nodes.push(node)
  writePlan(root, plan)
  return node
}
