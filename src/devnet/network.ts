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
 *   <hostname>/data/        its ledger
 *   <hostname>/node.log     its output; <hostname>/node.pid while it runs
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { devAccount } from '../chain/genesis.ts'
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
}

export interface NetworkPlan {
  namespace: string
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
}

/**
 * Free TCP ports on loopback for nodes started a moment later. Picked below the system's range of
 * ephemeral ports when it is known (Linux): a port found by binding port 0 comes from that range,
 * and an outgoing connection of a node already running can take it before its own node binds it
 * (CI saw EADDRINUSE so). Another process could still take one.
 */
export async function freePorts(count: number): Promise<number[]> {
  const ephemeralFrom = firstEphemeralPort()
  if (ephemeralFrom === undefined || ephemeralFrom < LOWEST_PICKED_PORT + 1000) return portsFromTheSystem(count)
  const picked = new Set<number>()
  for (let tries = 0; picked.size < count; tries++) {
    if (tries > 50 * count) throw new Error(`no ${count} free ports found between ${LOWEST_PICKED_PORT} and ${ephemeralFrom}`)
    const port = LOWEST_PICKED_PORT + Math.floor(Math.random() * (ephemeralFrom - LOWEST_PICKED_PORT))
    if (!picked.has(port) && (await canListen(port))) picked.add(port)
  }
  return [...picked]
}

const LOWEST_PICKED_PORT = 10_000

function firstEphemeralPort(): number | undefined {
  try {
    const first = Number.parseInt(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0], 10)
    return Number.isInteger(first) ? first : undefined
  } catch {
    return undefined
  }
}

const canListen = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const server = createServer()
    server.once('error', () => done(false))
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)))
  })

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

/** Writes a new network directory (refusing one that already holds a plan). */
export async function createNetwork(dir: string, options: CreateNetworkOptions): Promise<NetworkPlan> {
  const root = resolve(dir)
  if (existsSync(join(root, PLAN_FILE))) throw new Error(`${root} already holds a network; remove it first or use it as it is`)
  if (!Number.isInteger(options.vps) || options.vps < 4)
    throw new Error(`a network needs at least 4 VPs (N = 3f+1 with f ≥ 1), got ${options.vps}`)
  const nvps = options.nvps ?? 0
  const namespace = options.namespace ?? 'global'
  const count = options.vps + nvps
  const p2pPorts = await portsFrom(options.p2pPort ?? 50011, count)
  const jsonrpcPorts = await portsFrom(options.jsonrpcPort ?? 8081, count)
  mkdirSync(root, { recursive: true })
  const ca = await createNamespaceCa({ namespace })
  writeNamespaceCa(join(root, 'ca'), ca)
  const genesis = devAccount(join(root, 'genesis-account.json'))
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
    writeNodeConfig(join(nodeDir, 'keel.toml'), {
      dataDir: join(nodeDir, 'data'),
      hostname,
      port: jsonrpcPorts[i],
      ...options.chain,
      network: { configDir: join(nodeDir, 'config'), timers: options.timers ?? 'default' },
      genesis: [{ address: genesis.address, balance: genesis.balance }],
    })
    nodes.push({ hostname, vp: input.self.vp, id: input.self.id, jsonrpcPort: jsonrpcPorts[i], p2pPort: p2pPorts[i] })
  }
  const plan: NetworkPlan = {
    namespace,
    timers: options.timers ?? 'default',
    genesis: { address: genesis.address, balance: genesis.balance.toString() },
    nodes,
  }
  writePlan(root, plan)
  // the CA key stays only as long as nodes may be added; it is checked to load back here
  await loadNamespaceCa(join(root, 'ca'), namespace)
  return plan
}

/** the Prometheus configuration `npm run network` writes beside the plan: every node's /metrics */
export const PROMETHEUS_FILE = 'prometheus.yml'

/** The plan, and the Prometheus scrape configuration of its nodes (rewritten as nodes are added). */
function writePlan(root: string, plan: NetworkPlan): void {
  writeFileSync(join(root, PLAN_FILE), `${JSON.stringify(plan, null, 2)}\n`)
  writeFileSync(join(root, PROMETHEUS_FILE), prometheusConfig(plan))
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

const pidFile = (dir: string, hostname: string): string => join(resolve(dir), hostname, 'node.pid')

/** The pid of a node started by startNodes, if that process is still running. */
export function runningPid(dir: string, hostname: string): number | undefined {
  const file = pidFile(dir, hostname)
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8'))
  try {
    process.kill(pid, 0)
    return pid
  } catch {
    rmSync(file, { force: true })
    return undefined
  }
}

/**
 * Starts the named nodes (default: every node not running) as detached processes logging to
 * <hostname>/node.log, and resolves once each listens.
 */
export async function startNodes(
  dir: string,
  plan: NetworkPlan,
  hostnames?: readonly string[],
  options: { nodeArgs?: string[] } = {},
): Promise<NodeProcess[]> {
  const wanted = plan.nodes.filter((node) => (hostnames ?? plan.nodes.map((n) => n.hostname)).includes(node.hostname))
  const started = await Promise.all(
    wanted
      .filter((node) => runningPid(dir, node.hostname) === undefined)
      .map(async (node) => {
        const nodeDir = join(resolve(dir), node.hostname)
        const child = await startNodeProcess({
          configFile: join(nodeDir, 'keel.toml'),
          port: node.jsonrpcPort,
          logFile: join(nodeDir, 'node.log'),
          detached: true,
          nodeArgs: options.nodeArgs,
          timeoutMs: 60_000,
        })
        writeFileSync(pidFile(dir, node.hostname), String(child.pid))
        return child
      }),
  )
  return started
}

/** Stops the named nodes (default: all): SIGTERM, then SIGKILL after `graceMs`. */
export async function stopNodes(dir: string, plan: NetworkPlan, hostnames?: readonly string[], graceMs = 10_000): Promise<string[]> {
  const stopped: string[] = []
  await Promise.all(
    plan.nodes
      .filter((node) => hostnames === undefined || hostnames.includes(node.hostname))
      .map(async (node) => {
        const pid = runningPid(dir, node.hostname)
        if (pid === undefined) return
        process.kill(pid, 'SIGTERM')
        const timer = setTimeout(() => {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            // gone meanwhile
          }
        }, graceMs)
        await waitForExit(pid)
        clearTimeout(timer)
        rmSync(pidFile(dir, node.hostname), { force: true })
        stopped.push(node.hostname)
      }),
  )
  return stopped
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
