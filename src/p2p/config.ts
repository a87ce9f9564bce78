/**
 * The three peer configuration files of a Hyperchain node (spec "Node configuration files",
 * protocol.md §9): `peerconfig.toml` (who this node is and which VPs exist), `hosts.toml` (host
 * name → address) and `addr.toml` (this node's domain and how other domains reach it).
 *
 * Read as Hyperchain writes them: keys are case-insensitive (`"N"` and `n` are the same key).
 * Unknown keys are refused, like Keel's own config file, so a typo is seen at start rather than
 * silently ignored. Every error names the file, the key and what to write instead.
 *
 * addr.toml is parsed and checked but not used for dialling: Keel carries both directions of a
 * peer link on the connection whichever side opened it, so nobody ever has to "connect in reverse"
 * through another domain's address. Nodes reach each other by hosts.toml only.
 *
 * Hyperchain rewrites `new`/`org`/`rec` in peerconfig.toml after every start (consensus.md §7), and
 * so does Keel (rewriteOneShotFlags, once the node runs): any later start is a reconnect. Keel
 * reads `new` only at a VP's first start, for the group it starts from (network/vp.ts saves it
 * with the chain); whether a VP is still joining comes from the chain, never from the flag.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { join } from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { writeFileAtomically } from '../fs-atomic.ts'

export const PEERCONFIG_FILE = 'peerconfig.toml'
export const HOSTS_FILE = 'hosts.toml'
export const ADDR_FILE = 'addr.toml'

/** `[self]` of peerconfig.toml */
export interface SelfConfig {
  /** this node's id: 1..n for a VP, 0 for an NVP */
  id: number
  hostname: string
  /** VP: number of VPs including this one; NVP: number of VPs to connect to */
  n: number
  /** newly joining VP (one-shot flag, consensus.md §7) */
  new: boolean
  /** original member of the network */
  org: boolean
  /** reconnecting after a restart */
  rec: boolean
  vp: boolean
  /** path of the namespace configuration (Hyperchain's caconf); kept, not read by Keel */
  caconf: string
}

/** one `[[nodes]]` table of peerconfig.toml: a VP of the network */
export interface NodeEntry {
  id: number
  hostname: string
  static: boolean
}

export interface HostAddress {
  hostname: string
  /** IPv4, IPv6 (written `[::1]:port` in the file) or a DNS name */
  ip: string
  port: number
}

export interface DomainAddress {
  domain: string
  ip: string
  port: number
}

export interface AddrConfig {
  /** this node's own domain */
  domain: string
  /** how nodes of each domain reach this node */
  addrs: DomainAddress[]
}

export interface PeerConfig {
  self: SelfConfig
  /** the VPs (a VP's list includes itself; an NVP's may include itself with id 0, kept out of here) */
  nodes: NodeEntry[]
  /** hostname → address, every line of hosts.toml */
  hosts: Map<string, HostAddress>
  /** absent when the directory has no addr.toml */
  addr?: AddrConfig
}

/** What writePeerConfigFiles writes; `self` fields other than id/hostname/n/vp default as in the samples. */
export interface PeerConfigInput {
  self: Pick<SelfConfig, 'id' | 'hostname' | 'n' | 'vp'> & Partial<SelfConfig>
  nodes: (Pick<NodeEntry, 'id' | 'hostname'> & Partial<NodeEntry>)[]
  hosts: HostAddress[]
  addr?: AddrConfig
}

/** A configuration mistake: `file` and `key` say where, the message says what to write instead. */
export class PeerConfigError extends Error {
  override readonly name = 'PeerConfigError'
  constructor(
    readonly file: string,
    readonly key: string,
    problem: string,
  ) {
    super(`${file}: ${key ? `${key}: ` : ''}${problem}`)
  }
}

/** Host names appear in `hosts` lines split on spaces and are hashed into node hashes: keep them plain. */
const HOSTNAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** Reads and checks the three files of `dir`; addr.toml is optional. */
export function loadPeerConfig(dir: string): PeerConfig {
  const read = (name: string): string => {
    const file = join(dir, name)
    try {
      return readFileSync(file, 'utf8')
    } catch (error) {
      throw new PeerConfigError(file, '', `cannot be read (${(error as Error).message}); write it next to the others`)
    }
  }
  const addrFile = join(dir, ADDR_FILE)
  return parsePeerConfig(
    { peerconfig: read(PEERCONFIG_FILE), hosts: read(HOSTS_FILE), addr: existsSync(addrFile) ? read(ADDR_FILE) : undefined },
    { peerconfig: join(dir, PEERCONFIG_FILE), hosts: join(dir, HOSTS_FILE), addr: addrFile },
  )
}

/** Parses the files' texts; `names` are used in the error messages (default: the bare file names). */
export function parsePeerConfig(
  texts: { peerconfig: string; hosts: string; addr?: string },
  names: { peerconfig: string; hosts: string; addr: string } = { peerconfig: PEERCONFIG_FILE, hosts: HOSTS_FILE, addr: ADDR_FILE },
): PeerConfig {
  const peer = lowerKeys(parseFile(texts.peerconfig, names.peerconfig), names.peerconfig, '')
  const hostsTable = lowerKeys(parseFile(texts.hosts, names.hosts), names.hosts, '')
  refuseUnknown(peer, ['self', 'nodes'], names.peerconfig, '', 'only [self] and [[nodes]] tables belong here')
  refuseUnknown(hostsTable, ['hosts'], names.hosts, '', 'only `hosts = [ "<hostname> <ip>:<port>", … ]` belongs here')

  const self = parseSelf(peer.self, names.peerconfig)
  const nodes = parseNodes(peer.nodes, names.peerconfig)
  const hosts = parseHosts(hostsTable.hosts, names.hosts)
  const addr = texts.addr === undefined ? undefined : parseAddr(texts.addr, names.addr)
  const config = checkRules(self, nodes, hosts, names)
  return addr ? { ...config, addr } : config
}

function parseFile(text: string, file: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>
  } catch (error) {
    throw new PeerConfigError(file, '', `is not valid TOML: ${(error as Error).message.split('\n')[0]}`)
  }
}

/** Keys are case-insensitive in Hyperchain (Go's viper); two spellings of one key are refused. */
function lowerKeys(table: unknown, file: string, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(table as Record<string, unknown>)) {
    const lower = key.toLowerCase()
    if (lower in out) throw new PeerConfigError(file, `${where}${key}`, `is given twice (keys are case-insensitive); keep one`)
    out[lower] = value
  }
  return out
}

function refuseUnknown(table: Record<string, unknown>, known: string[], file: string, where: string, hint: string): void {
  for (const key of Object.keys(table))
    if (!known.includes(key)) throw new PeerConfigError(file, `${where}${key}`, `unknown key; ${hint} (known: ${known.join(', ')})`)
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
}

function integer(table: Record<string, unknown>, key: string, file: string, where: string, example: string): number {
  const value = table[key]
  if (value === undefined) throw new PeerConfigError(file, `${where}${key}`, `is missing; write ${example}`)
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new PeerConfigError(file, `${where}${key}`, `must be a non-negative integer without quotes, e.g. ${example}`)
  return value
}

function boolean(table: Record<string, unknown>, key: string, file: string, where: string, fallback?: boolean): boolean {
  const value = table[key]
  if (value === undefined) {
    if (fallback !== undefined) return fallback
    throw new PeerConfigError(file, `${where}${key}`, `is missing; write ${key} = true or ${key} = false`)
  }
  if (typeof value !== 'boolean')
    throw new PeerConfigError(file, `${where}${key}`, `must be true or false without quotes, not ${JSON.stringify(value)}`)
  return value
}

function hostname(table: Record<string, unknown>, file: string, where: string): string {
  const value = table.hostname
  if (value === undefined) throw new PeerConfigError(file, `${where}hostname`, 'is missing; write hostname = "node1"')
  if (typeof value !== 'string' || !HOSTNAME.test(value))
    throw new PeerConfigError(
      file,
      `${where}hostname`,
      `must be a quoted name of letters, digits, '.', '_' or '-' (e.g. hostname = "node1"), not ${JSON.stringify(value)}`,
    )
  return value
}

function parseSelf(raw: unknown, file: string): SelfConfig {
  if (raw === undefined) throw new PeerConfigError(file, '[self]', 'is missing; add a [self] table with id, hostname, n and vp')
  if (!isTable(raw)) throw new PeerConfigError(file, '[self]', 'must be one table, written [self]')
  const table = lowerKeys(raw, file, '[self] ')
  refuseUnknown(table, ['id', 'hostname', 'n', 'new', 'org', 'rec', 'vp', 'caconf'], file, '[self] ', 'check the spelling')
  const caconf = table.caconf ?? ''
  if (typeof caconf !== 'string')
    throw new PeerConfigError(file, '[self] caconf', 'must be a quoted path, e.g. caconf = "config/namespace.toml"')
  const n = integer(table, 'n', file, '[self] ', '"N" = 4')
  if (n < 1) throw new PeerConfigError(file, '[self] n', 'must be at least 1: the number of VPs (including this one on a VP)')
  return {
    id: integer(table, 'id', file, '[self] ', 'id = 1 (0 on an NVP)'),
    hostname: hostname(table, file, '[self] '),
    n,
    new: boolean(table, 'new', file, '[self] ', false),
    org: boolean(table, 'org', file, '[self] ', false),
    rec: boolean(table, 'rec', file, '[self] ', false),
    vp: boolean(table, 'vp', file, '[self] '),
    caconf,
  }
}

function parseNodes(raw: unknown, file: string): NodeEntry[] {
  if (raw === undefined) throw new PeerConfigError(file, '[[nodes]]', 'is missing; add one [[nodes]] table (id, hostname, static) per VP')
  if (!Array.isArray(raw) || !raw.every(isTable))
    throw new PeerConfigError(file, '[[nodes]]', 'must be an array of tables, each written [[nodes]] (double brackets)')
  return raw.map((entry, index) => {
    const where = `[[nodes]] #${index + 1} `
    const table = lowerKeys(entry, file, where)
    refuseUnknown(table, ['id', 'hostname', 'static'], file, where, 'check the spelling')
    return {
      id: integer(table, 'id', file, where, 'id = 1'),
      hostname: hostname(table, file, where),
      static: boolean(table, 'static', file, where, true),
    }
  })
}

/** `<name> <ip>:<port>`, the ip possibly a bracketed IPv6 address. */
function parseAddressLine(line: unknown, file: string, key: string, what: string): { name: string; ip: string; port: number } {
  const example = `"${what === 'hostname' ? 'node1' : 'domain1'} 127.0.0.1:50011"`
  if (typeof line !== 'string') throw new PeerConfigError(file, key, `each entry must be a quoted string like ${example}`)
  const match = /^\s*(\S+)\s+(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):(\d{1,5})\s*$/.exec(line)
  if (!match) throw new PeerConfigError(file, key, `${JSON.stringify(line)} is not "<${what}> <ip>:<port>"; write e.g. ${example}`)
  const [, name, host, portText] = match
  const ip = host.startsWith('[') ? host.slice(1, -1) : host
  const port = Number(portText)
  if (host.startsWith('[') && isIP(ip) !== 6)
    throw new PeerConfigError(file, key, `${JSON.stringify(line)}: ${host} is not an IPv6 address`)
  if (!host.startsWith('[') && isIP(ip) !== 4 && !HOSTNAME.test(ip))
    throw new PeerConfigError(file, key, `${JSON.stringify(line)}: ${ip} is neither an IPv4 address nor a DNS name`)
  if (port < 1 || port > 65535) throw new PeerConfigError(file, key, `${JSON.stringify(line)}: port ${port} is outside 1..65535`)
  if (what === 'hostname' && !HOSTNAME.test(name))
    throw new PeerConfigError(
      file,
      key,
      `${JSON.stringify(line)}: host name ${JSON.stringify(name)} may only hold letters, digits, '.', '_' or '-'`,
    )
  return { name, ip, port }
}

function parseHosts(raw: unknown, file: string): Map<string, HostAddress> {
  if (raw === undefined) throw new PeerConfigError(file, 'hosts', 'is missing; write hosts = [ "node1 127.0.0.1:50011", … ]')
  if (!Array.isArray(raw)) throw new PeerConfigError(file, 'hosts', 'must be an array of strings: hosts = [ "node1 127.0.0.1:50011", … ]')
  const hosts = new Map<string, HostAddress>()
  for (const line of raw) {
    const { name, ip, port } = parseAddressLine(line, file, 'hosts', 'hostname')
    if (hosts.has(name)) throw new PeerConfigError(file, 'hosts', `${name} is listed twice; keep one line per host name`)
    hosts.set(name, { hostname: name, ip, port })
  }
  return hosts
}

function parseAddr(text: string, file: string): AddrConfig {
  const table = lowerKeys(parseFile(text, file), file, '')
  refuseUnknown(table, ['domain', 'addrs'], file, '', 'only domain and addrs belong here')
  const domain = table.domain
  if (typeof domain !== 'string' || domain.trim() === '' || /\s/.test(domain))
    throw new PeerConfigError(file, 'domain', 'must be a quoted domain name without spaces, e.g. domain = "domain1"')
  if (!Array.isArray(table.addrs))
    throw new PeerConfigError(file, 'addrs', 'must be an array of strings: addrs = [ "domain1 127.0.0.1:50011", … ]')
  const addrs: DomainAddress[] = []
  for (const line of table.addrs) {
    const { name, ip, port } = parseAddressLine(line, file, 'addrs', 'domain')
    if (addrs.some((a) => a.domain === name))
      throw new PeerConfigError(file, 'addrs', `domain ${name} is listed twice; keep one line per domain`)
    addrs.push({ domain: name, ip, port })
  }
  if (!addrs.some((a) => a.domain === domain))
    throw new PeerConfigError(file, 'addrs', `has no line for this node's own domain ${domain}; add "${domain} <ip>:<port>"`)
  return { domain, addrs }
}

/** The rules of the spec's configuration table (and protocol.md §9). */
function checkRules(
  self: SelfConfig,
  entries: NodeEntry[],
  hosts: Map<string, HostAddress>,
  names: { peerconfig: string; hosts: string },
): PeerConfig {
  const file = names.peerconfig
  if (!self.vp && self.id !== 0)
    throw new PeerConfigError(file, '[self] id', `is ${self.id} but vp = false: an NVP has id = 0 (or set vp = true for a VP)`)
  if (self.vp && self.id === 0)
    throw new PeerConfigError(file, '[self] id', 'is 0 but vp = true: a VP has id 1..N (or set vp = false for an NVP)')
  if (self.vp && self.id > self.n)
    throw new PeerConfigError(
      file,
      '[self] id',
      `is ${self.id} but "N" = ${self.n}: a VP's id is 1..N, where N counts every VP including this one`,
    )

  const seenHosts = new Set<string>()
  const seenIds = new Map<number, string>()
  const nodes: NodeEntry[] = []
  for (const [index, entry] of entries.entries()) {
    const where = `[[nodes]] #${index + 1}`
    if (seenHosts.has(entry.hostname))
      throw new PeerConfigError(file, `${where} hostname`, `${entry.hostname} is listed twice; keep one [[nodes]] table per node`)
    seenHosts.add(entry.hostname)
    // an NVP may list itself with id 0; it is not one of the VPs
    if (!self.vp && entry.hostname === self.hostname) {
      if (entry.id !== 0) throw new PeerConfigError(file, `${where} id`, `is ${entry.id} for this NVP (${entry.hostname}); write id = 0`)
      continue
    }
    if (entry.id < 1 || entry.id > self.n)
      throw new PeerConfigError(
        file,
        `${where} id`,
        `is ${entry.id} (${entry.hostname}): VP ids run 1..N with "N" = ${self.n}; renumber, or raise "N" if the network has more VPs`,
      )
    const other = seenIds.get(entry.id)
    if (other !== undefined)
      throw new PeerConfigError(
        file,
        `${where} id`,
        `${entry.id} is used by both ${other} and ${entry.hostname}; every VP needs its own id`,
      )
    seenIds.set(entry.id, entry.hostname)
    nodes.push(entry)
  }

  if (self.vp) {
    const listed = nodes.find((node) => node.hostname === self.hostname)
    if (!listed)
      throw new PeerConfigError(
        file,
        '[[nodes]]',
        `this node (${self.hostname}) is not listed; add [[nodes]] with id = ${self.id}, hostname = "${self.hostname}"`,
      )
    if (listed.id !== self.id)
      throw new PeerConfigError(
        file,
        '[[nodes]] id',
        `${self.hostname} has id ${listed.id} in [[nodes]] but ${self.id} in [self]; make them equal`,
      )
    if (nodes.length !== self.n)
      throw new PeerConfigError(
        file,
        '[self] n',
        `is ${self.n} but ${nodes.length} VPs are listed in [[nodes]]: on a VP "N" counts every VP including this one; write "N" = ${nodes.length} or list the missing VPs`,
      )
  } else {
    if (nodes.length === 0) throw new PeerConfigError(file, '[[nodes]]', 'lists no VP: an NVP needs at least one VP to connect to')
    if (self.n > nodes.length)
      throw new PeerConfigError(
        file,
        '[self] n',
        `is ${self.n} but only ${nodes.length} VPs are listed in [[nodes]]: an NVP's "N" is the number of VPs to connect to; lower it or list more VPs`,
      )
  }

  for (const name of [self.hostname, ...nodes.map((node) => node.hostname)])
    if (!hosts.has(name)) throw new PeerConfigError(names.hosts, 'hosts', `has no line for ${name}; add "${name} <ip>:<port>"`)
  return { self, nodes, hosts }
}

/**
 * After a start, as Hyperchain does: `new = false`, `org = false`, `rec = true` in `dir`'s
 * peerconfig.toml, so a restart is a reconnect. Returns false when the flags already say so (the
 * file is then left as it is). The file is written anew (comments are not kept).
 */
export function rewriteOneShotFlags(dir: string, config: Pick<PeerConfig, 'self' | 'nodes'>): boolean {
  const { self } = config
  if (!self.new && !self.org && self.rec) return false
  writeFileAtomically(join(dir, PEERCONFIG_FILE), peerconfigText({ ...self, new: false, org: false, rec: true }, config.nodes))
  return true
}

function peerconfigText(self: SelfConfig, nodes: readonly NodeEntry[]): string {
  return [
    '[self]',
    `"N" = ${self.n}`,
    `id = ${self.id}`,
    `hostname = ${JSON.stringify(self.hostname)}`,
    `new = ${self.new}`,
    `org = ${self.org}`,
    `rec = ${self.rec}`,
    `vp = ${self.vp}`,
    `caconf = ${JSON.stringify(self.caconf)}`,
    ...nodes.flatMap((node) => [
      '',
      '[[nodes]]',
      `id = ${node.id}`,
      `hostname = ${JSON.stringify(node.hostname)}`,
      `static = ${node.static}`,
    ]),
    '',
  ].join('\n')
}

/** Writes the three files (each atomically), after checking that they parse back to the same rules. */
export function writePeerConfigFiles(dir: string, input: PeerConfigInput): PeerConfig {
  const self: SelfConfig = { new: false, org: true, rec: false, caconf: 'config/namespace.toml', ...input.self }
  const nodes = input.nodes.map((node) => ({ static: true, ...node }))
  const peerconfig = peerconfigText(self, nodes)
  const hosts = `hosts = [\n${input.hosts.map((h) => `  ${JSON.stringify(`${h.hostname} ${formatHost(h.ip)}:${h.port}`)},`).join('\n')}\n]\n`
  const addr = input.addr
    ? `domain = ${JSON.stringify(input.addr.domain)}\naddrs = [\n${input.addr.addrs.map((a) => `  ${JSON.stringify(`${a.domain} ${formatHost(a.ip)}:${a.port}`)},`).join('\n')}\n]\n`
    : undefined
  // refuse to write what a node would refuse to read
  const parsed = parsePeerConfig({ peerconfig, hosts, addr })
  mkdirSync(dir, { recursive: true })
  writeFileAtomically(join(dir, PEERCONFIG_FILE), peerconfig)
  writeFileAtomically(join(dir, HOSTS_FILE), hosts)
  if (addr !== undefined) writeFileAtomically(join(dir, ADDR_FILE), addr)
  return parsed
}

function formatHost(ip: string): string {
  return isIP(ip) === 6 ? `[${ip}]` : ip
}

/**
 * The files of a local network of `vps` VPs (node1…) and `nvps` NVPs (nvp1…, or `nvpNames`) on one
 * address, ports from `ports` (one per node, VPs first). Each NVP connects to every VP. Used by
 * tests and by the command that creates a local network.
 */
export function localNetworkPlan(options: {
  vps: number
  nvps?: number
  /** host names of the NVPs (the conformance examples' network calls its NVP node5) */
  nvpNames?: readonly string[]
  ip?: string
  ports: number[]
  domain?: string
}): Map<string, PeerConfigInput> {
  const ip = options.ip ?? '127.0.0.1'
  const nvps = options.nvps ?? 0
  if (options.ports.length < options.vps + nvps)
    throw new Error(`localNetworkPlan: ${options.vps + nvps} ports needed, ${options.ports.length} given`)
  const vpNames = Array.from({ length: options.vps }, (_, i) => `node${i + 1}`)
  const nvpNames = Array.from({ length: nvps }, (_, i) => options.nvpNames?.[i] ?? `nvp${i + 1}`)
  const taken = new Set(vpNames)
  for (const name of nvpNames) {
    if (taken.has(name)) throw new Error(`localNetworkPlan: host name ${name} is used twice; give every NVP a name of its own`)
    taken.add(name)
  }
  const hosts = [...vpNames, ...nvpNames].map((hostname, i) => ({ hostname, ip, port: options.ports[i] }))
  const nodes = vpNames.map((hostname, i) => ({ id: i + 1, hostname }))
  const domain = options.domain ?? 'domain1'
  const plan = new Map<string, PeerConfigInput>()
  for (const [i, hostname] of vpNames.entries()) {
    const addr = { domain, addrs: [{ domain, ip, port: hosts[i].port }] }
    plan.set(hostname, { self: { id: i + 1, hostname, n: options.vps, vp: true }, nodes, hosts, addr })
  }
  for (const [i, hostname] of nvpNames.entries()) {
    const addr = { domain, addrs: [{ domain, ip, port: hosts[options.vps + i].port }] }
    plan.set(hostname, { self: { id: 0, hostname, n: options.vps, vp: false, org: false }, nodes, hosts, addr })
  }
  return plan
}
