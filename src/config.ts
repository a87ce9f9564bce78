/**
 * Node configuration: embedded defaults (ARCHITECTURE.md decision 10), overridden by a TOML file
 * and then by command-line flags. Unknown keys in the file are refused, so a typo is seen at start.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseToml } from 'smol-toml'
import type { LogFormat, LogLevel } from './log.ts'

export interface KeelConfig {
  node: {
    /** host name other nodes know this one by; with the namespace it gives the node hash */
    hostname: string
    /** the namespace a request naming none is handled in: the first of `namespaces` */
    namespace: string
    /**
     * the namespaces this process serves (issue 30), each a ledger of its own in
     * `<dataDir>/<namespace>/`; [] (the default): `namespace` alone. Given, `namespace` becomes its first.
     */
    namespaces: string[]
    dataDir: string
    /**
     * the cores this node may use (0: all the machine has); the thread layout follows from it
     * (src/thread-layout.ts): on one core everything runs on the chain thread, with no worker.
     * `npm run network` gives each node of one machine its share.
     */
    cores: number
  }
  jsonrpc: {
    host: string
    port: number
    /** Access-Control-Allow-Origin; "" turns CORS off */
    corsOrigin: string
    maxBodyBytes: number
    maxJsonDepth: number
    maxBatchLength: number
    maxBatchResponseBytes: number
    maxHeaderBytes: number
    headersTimeoutMs: number
    requestTimeoutMs: number
    keepAliveTimeoutMs: number
    /** WebSocket on the same port: most open connections; one more is refused with HTTP 503 at upgrade */
    wsMaxConnections: number
    /** most push subscriptions on one WebSocket connection; one more → -32006 */
    wsMaxSubscriptions: number
    /** largest WebSocket message accepted; a bigger one closes the connection with 1009 */
    wsMaxFrameBytes: number
    /** messages waiting for a slow reader (in the socket's buffer and the queue); one more → the connection is closed with 1008 */
    wsMaxQueuedMessages: number
    /** bytes waiting for a slow reader (socket buffer plus queue); past it → closed with 1008 */
    wsMaxBufferedBytes: number
    /**
     * request threads beside the chain thread (src/front/): they own HTTP and WebSocket, parse,
     * check, decode and hash transactions, read the store and answer; 0 serves requests on the
     * chain thread itself (docs/pipeline.md)
     */
    threads: number
  }
  chain: {
    /** solo ordering: cut a block at this many transactions… */
    batchSize: number
    /** …or when the oldest waiting transaction has waited this long */
    batchTimeoutMs: number
    /** most transactions waiting in the pool; past it submissions get -32006 */
    poolCapacity: number
    /**
     * admission rate limit: clients' transactions admitted per second, node-wide; past it → -32006
     * saying when to retry. 0 (the default) turns it off. A peer's relayed transaction is not limited;
     * an NVP's clients meet the limit of the VP their transactions are forwarded to.
     */
    txRatePerSecond: number
    /** transactions admitted at once after a quiet spell; 0 means one second's worth (txRatePerSecond) */
    txRateBurst: number
    /** deterministic execution budget per transaction (gas) */
    txGasLimit: number
    /** gas budget of a whole block; later transactions fail deterministically */
    blockGasLimit: number
    /**
     * issue 28: the chain id: the EVM's CHAINID opcode, eth_chainId/net_version, and the EIP-155
     * signing domain of eth_sendRawTransaction. Every VP of a network must have the same.
     */
    chainId: number
  }
  /** the Java contract executor (docs/jvm.md): a child process started on the first JVM transaction */
  jvm: {
    /** JDK home directory holding bin/java and bin/javac; "" (the default): $JAVA_HOME, then PATH */
    javaHome: string
    /** the executor's heap, MiB */
    heapMiB: number
    /** wall-clock safety net per call, ms; the step budget (chain.txGasLimit) is the real limit */
    callTimeoutMs: number
  }
  archive: {
    /** blocks moved per LMDB transaction by archive_archive and archive_restore: bounds each transaction's size */
    batchBlocks: number
    /** TESTS ONLY: pause this long after each batch, so a test can kill the node mid-operation; 0 (the default) = off */
    testBatchDelayMs: number
  }
  genesis: {
    /** funded accounts of a new chain; empty: one account is generated and its key kept in the data directory */
    accounts: { address: string; balance: string | number }[]
    /**
     * the chain's first administrators (docs/governance.md); empty: every genesis account, or the
     * generated account when none is configured. Written into the genesis state: every VP of a
     * network must list the same. Operator methods (node_deleteVP, archive_snapshot, …) need a request
     * signed by one (src/rpc/operator-auth.ts).
     */
    admins: string[]
    /** votes a proposal needs; 0 (the default): every admin's (Hyperchain's default) */
    adminThreshold: number
    /**
     * proposals' timeout, seconds (Hyperchain: 5 minutes, also the least a SetProposalTimeout
     * proposal may set); a shorter genesis value is for tests that watch a proposal expire
     */
    proposalTimeoutSeconds: number
    /**
     * the versions the chain starts at, by kind (`tx_version = "3.6"`), over the ones this build
     * runs; each must be one the build supports. A SYSTEM proposal raises them later
     * (docs/governance.md §17). Written into the genesis governance: every VP must list the same.
     */
    runningVersions: Record<string, string>
  }
  /** TCerts (protocol.md §3); the node CA that issues them lives in the data directory */
  tcert: {
    /** refuse every JSON-RPC request (HTTP, and WebSocket upgrades) without valid `tcert`, `timestamp` and `signature` headers (-32098; src/rpc/tcert-check.ts) */
    check: boolean
    /**
     * PEM files of the enrollment CAs whose certificates may call cert_getTCert while `check` is on;
     * empty: cert_getTCert is exempt from the check. Relative paths are taken from the working directory.
     */
    enrollmentCaFiles: string[]
  }
  /** the namespace's network of VPs and NVPs (issue 6) */
  network: {
    /**
     * directory holding peerconfig.toml, hosts.toml and addr.toml (spec "configuration files") and
     * this node's certificates; "" (the default) runs a single VP that orders alone
     */
    configDir: string
    /** consensus timers: "default" (Hyperchain's, consensus.md §8) or "test" (scaled down, §10.12) */
    timers: 'default' | 'test'
    /**
     * the ids of the chain's first VP group; [] (the default): the VPs of peerconfig.toml, less
     * this node when its `new = true`. A node set up after VPs were added (its files list them) needs
     * it: the group of each block comes from the genesis group and the votes the chain ordered.
     */
    genesisVps: number[]
  }
  log: {
    level: LogLevel
    /** "text" (the default) or "json": one JSON object per line (time, level, module, msg, fields) */
    format: LogFormat
  }
}

/** Limits follow reliability.md part B. */
export const defaultConfig: KeelConfig = {
  node: { hostname: 'node1', namespace: 'global', namespaces: [], dataDir: './data', cores: 0 },
  jsonrpc: {
    host: '127.0.0.1',
    port: 8081,
    corsOrigin: '*',
    maxBodyBytes: 1024 * 1024,
    maxJsonDepth: 64,
    maxBatchLength: 100,
    maxBatchResponseBytes: 10 * 1024 * 1024,
    maxHeaderBytes: 16 * 1024,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    wsMaxConnections: 100,
    wsMaxSubscriptions: 10,
    wsMaxFrameBytes: 1024 * 1024,
    wsMaxQueuedMessages: 1000,
    wsMaxBufferedBytes: 16 * 1024 * 1024,
    threads: 1,
  },
  chain: {
    batchSize: 500,
    batchTimeoutMs: 10,
    poolCapacity: 50_000,
    txRatePerSecond: 0,
    txRateBurst: 0,
    txGasLimit: 10_000_000,
    blockGasLimit: 100_000_000,
    // issue 28: not 1 (Ethereum mainnet), so mainnet-signed transactions cannot be replayed here (docs/ethereum.md)
    chainId: 1337,
  },
  jvm: { javaHome: '', heapMiB: 256, callTimeoutMs: 5_000 },
  archive: { batchBlocks: 100, testBatchDelayMs: 0 },
  genesis: { accounts: [], admins: [], adminThreshold: 0, proposalTimeoutSeconds: 300, runningVersions: {} },
  tcert: { check: false, enrollmentCaFiles: [] },
  network: { configDir: '', timers: 'default', genesisVps: [] },
  log: { level: 'info', format: 'text' },
}

export type ConfigOverrides = { [S in keyof KeelConfig]?: Partial<KeelConfig[S]> }

/** Defaults, then each override in order; refuses unknown sections, keys and wrong types. */
export function resolveConfig(...overrides: (ConfigOverrides | undefined)[]): KeelConfig {
  const config = structuredClone(defaultConfig) as unknown as Record<string, Record<string, unknown>>
  for (const override of overrides) {
    for (const [section, values] of Object.entries(override ?? {})) {
      const target = config[section]
      if (target === undefined) throw new Error(`config: unknown section [${section}]`)
      for (const [key, value] of Object.entries(values ?? {})) {
        if (!(key in target)) throw new Error(`config: unknown key ${section}.${key}`)
        if (value === undefined) continue
        if (typeof value !== typeof target[key])
          throw new Error(`config: ${section}.${key} must be a ${typeof target[key]}, got ${JSON.stringify(value)}`)
        target[key] = value
      }
    }
  }
  const resolved = config as unknown as KeelConfig
  if (!Number.isInteger(resolved.jsonrpc.port) || resolved.jsonrpc.port < 0 || resolved.jsonrpc.port > 65535) {
    throw new Error(`config: jsonrpc.port must be 0..65535, got ${resolved.jsonrpc.port}`)
  }
  if (!Number.isInteger(resolved.node.cores) || resolved.node.cores < 0 || resolved.node.cores > 1024)
    throw new Error(`config: node.cores must be 0 (all the machine's) or the cores this node may use, got ${resolved.node.cores}`)
  if (!Number.isInteger(resolved.jsonrpc.threads) || resolved.jsonrpc.threads < 0 || resolved.jsonrpc.threads > 64)
    throw new Error(`config: jsonrpc.threads must be 0..64, got ${resolved.jsonrpc.threads}`)
  for (const key of ['txRatePerSecond', 'txRateBurst'] as const) {
    const value = resolved.chain[key]
    if (!Number.isFinite(value) || value < 0) throw new Error(`config: chain.${key} must be 0 or more, got ${value}`)
  }
  if (
    !Array.isArray(resolved.tcert.enrollmentCaFiles) ||
    resolved.tcert.enrollmentCaFiles.some((file) => typeof file !== 'string' || file === '')
  )
    throw new Error('config: tcert.enrollmentCaFiles must be a list of file paths')
  if (resolved.network.timers !== 'default' && resolved.network.timers !== 'test')
    throw new Error(`config: network.timers must be "default" or "test", got ${JSON.stringify(resolved.network.timers)}`)
  const genesisVps = resolved.network.genesisVps
  if (
    !Array.isArray(genesisVps) ||
    genesisVps.some((id) => !Number.isSafeInteger(id) || id < 1) ||
    new Set(genesisVps).size !== genesisVps.length
  )
    throw new Error(`config: network.genesisVps must be a list of distinct VP ids (1, 2, …), got ${JSON.stringify(genesisVps)}`)
  const { admins, adminThreshold, proposalTimeoutSeconds } = resolved.genesis
  if (!Array.isArray(admins) || admins.some((admin) => typeof admin !== 'string' || !/^(0x)?[0-9a-fA-F]{40}$/.test(admin)))
    throw new Error(`config: genesis.admins must be a list of 20-byte hex addresses, got ${JSON.stringify(admins)}`)
  if (!Number.isSafeInteger(adminThreshold) || adminThreshold < 0)
    throw new Error(`config: genesis.adminThreshold must be 0 (every admin) or more, got ${adminThreshold}`)
  if (!Number.isSafeInteger(proposalTimeoutSeconds) || proposalTimeoutSeconds < 1)
    throw new Error(`config: genesis.proposalTimeoutSeconds must be a whole number of seconds, at least 1, got ${proposalTimeoutSeconds}`)
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(resolved.log.level))
    throw new Error(`config: log.level must be debug, info, warn, error or silent, got ${JSON.stringify(resolved.log.level)}`)
  if (resolved.log.format !== 'text' && resolved.log.format !== 'json')
    throw new Error(`config: log.format must be "text" or "json", got ${JSON.stringify(resolved.log.format)}`)
  if (!Number.isInteger(resolved.jvm.heapMiB) || resolved.jvm.heapMiB < 64)
    throw new Error(`config: jvm.heapMiB must be an integer of at least 64, got ${resolved.jvm.heapMiB}`)
  if (!Number.isInteger(resolved.jvm.callTimeoutMs) || resolved.jvm.callTimeoutMs < 100)
    throw new Error(`config: jvm.callTimeoutMs must be an integer of at least 100, got ${resolved.jvm.callTimeoutMs}`)
  if (!/^[a-z0-9_]{1,64}$/.test(resolved.node.namespace)) throw new Error('config: node.namespace must match [a-z0-9_]{1,64}')
  const { namespaces } = resolved.node
  if (
    !Array.isArray(namespaces) ||
    namespaces.some((name) => typeof name !== 'string' || !NAMESPACE_NAME.test(name)) ||
    new Set(namespaces).size !== namespaces.length
  )
    throw new Error(`config: node.namespaces must be a list of distinct names matching [a-z0-9_]{1,64}, got ${JSON.stringify(namespaces)}`)
  if (namespaces.length > 0) resolved.node.namespace = namespaces[0]
  return resolved
}

const NAMESPACE_NAME = /^[a-z0-9_]{1,64}$/

/** The namespaces a configuration serves, the default one first (`node.namespaces`, or `node.namespace` alone). */
export function namespacesOf(config: KeelConfig): string[] {
  return config.node.namespaces.length > 0 ? [...config.node.namespaces] : [config.node.namespace]
}

/**
 * The configuration one namespace runs with: `node.namespace` is that namespace, so every module
 * that reads it (node hash, archive, network) works unchanged. In a network, the default
 * namespace's files (peerconfig.toml, hosts.toml, certs/) are in `network.configDir`, as with one
 * namespace; each other namespace's in `<network.configDir>/<namespace>/`, with its own peers,
 * ports and consensus group.
 */
export function namespaceConfig(config: KeelConfig, namespace: string): KeelConfig {
  if (namespacesOf(config).length === 1 && namespace === config.node.namespace) return config
  const { configDir } = config.network
  const ownDir = configDir === '' || namespace === config.node.namespace ? configDir : join(configDir, namespace)
  return { ...config, node: { ...config.node, namespace, namespaces: [namespace] }, network: { ...config.network, configDir: ownDir } }
}

export function readConfigFile(path: string): ConfigOverrides {
  const text = readFileSync(path, 'utf8')
  return normaliseNumbers(parseToml(text)) as ConfigOverrides
}

/** smol-toml reads integers as bigint only when they pass 2^53; every config number fits a double. */
function normaliseNumbers(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value)
  if (Array.isArray(value)) return value.map(normaliseNumbers)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, normaliseNumbers(child)]))
  }
  return value
}
