/**
 * `keel init`: writes a commented keel.toml to start from (README "Build and run in production"):
 * the settings an operator changes first, each with what it does, and the genesis left empty, so
 * the first start generates the funded account and writes its key to
 * `<dataDir>/<namespace>/genesis-account.json`, the file its banner names. The text is made from
 * the defaults in config.ts, so it never disagrees with them; what it does not list keeps its
 * default (README "Configuration" lists every key).
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { type CommandSpec, integerOption, runCommand } from './command-line.ts'
import { type ConfigOverrides, defaultConfig, readConfigFile, resolveConfig } from './config.ts'
import { writeFileAtomically } from './fs-atomic.ts'

export const initCommand = {
  name: 'keel init',
  synopsis: '[options]',
  summary: 'Writes a commented keel.toml to start a node with (`npm start -- --config keel.toml`).',
  options: {
    config: { type: 'string', value: 'file', default: 'keel.toml', description: 'the file to write' },
    port: { type: 'string', value: 'port', description: `its JSON-RPC port (default ${defaultConfig.jsonrpc.port})` },
    'data-dir': { type: 'string', value: 'dir', description: `its data directory (default ${defaultConfig.node.dataDir})` },
    force: { type: 'boolean', default: false, description: 'replace the file when it exists' },
  },
} satisfies CommandSpec

const toml = (value: string | number | boolean): string => (typeof value === 'string' ? JSON.stringify(value) : String(value))

/** The commented file for a node on `port` with its ledger in `dataDir`. */
export function exampleConfig(port: number, dataDir: string): string {
  const d = defaultConfig
  const keyFile = join(dataDir, d.node.namespace, 'genesis-account.json')
  return `# keel.toml, written by \`keel init\`: \`npm start -- --config keel.toml\` runs a node on it.
# Keys left out keep their defaults; README "Configuration" lists every key and its default.
# Flags override this file: --port, --host, --data-dir, --log-level, --log-format.

[node]
hostname = ${toml(d.node.hostname)}        # with the namespace, gives the node hash (node_getNodeHash)
namespace = ${toml(d.node.namespace)}
dataDir = ${toml(dataDir)}     # the ledger, the node CA, snapshots; one process per directory (it is locked)
cores = ${d.node.cores}                      # the cores this node may use (0: all); on 1, no worker threads at all

[jsonrpc]
host = ${toml(d.jsonrpc.host)}      # "0.0.0.0" serves other machines
port = ${port}                 # JSON-RPC over HTTP POST and WebSocket; /playground, /metrics, /health, /ready
corsOrigin = ${toml(d.jsonrpc.corsOrigin)}          # "" turns CORS off
maxBodyBytes = ${d.jsonrpc.maxBodyBytes}    # a bigger request body answers HTTP 413

[chain]
batchSize = ${d.chain.batchSize}             # a block at this many waiting transactions…
batchTimeoutMs = ${d.chain.batchTimeoutMs}         # …or this long after the oldest arrived
poolCapacity = ${d.chain.poolCapacity}       # past it, submissions answer -32006
txRatePerSecond = ${d.chain.txRatePerSecond}         # admission rate limit (0: off)

[genesis]
# The funded accounts of a new chain (read once, when the ledger is created). Left empty, the first
# start generates one account and writes its address and private key to
#   ${keyFile}
# (mode 0600; the start banner names it): sign with it, e.g.
#   npx tsx examples/sign-transfer.ts --url http://127.0.0.1:${port} --key-file ${keyFile}
# For a real chain list your own accounts instead, whose keys you hold:
# accounts = [{ address = "0x…", balance = "1000000000" }]
accounts = []

[log]
level = ${toml(d.log.level)}          # debug | info | warn | error | silent
format = ${toml(d.log.format)}         # "json": one object per line
`
}

export async function runInit(argv: string[]): Promise<void> {
  await runCommand(initCommand, argv, async (values) => {
    const file = resolve(values.config)
    if (existsSync(file) && values.force !== true) throw new Error(`${file} exists; pass --force to replace it`)
    const port = integerOption(initCommand, 'port', values.port) ?? defaultConfig.jsonrpc.port
    const dataDir = values['data-dir'] ?? defaultConfig.node.dataDir
    writeFileAtomically(file, exampleConfig(port, dataDir))
    // what a start will read: the file must load as written
    const overrides: ConfigOverrides = readConfigFile(file)
    const config = resolveConfig(overrides)
    console.log(`wrote ${file}: a node on http://${config.jsonrpc.host}:${config.jsonrpc.port}, its ledger in ${config.node.dataDir}`)
    console.log(
      `next: npm start -- --config ${values.config}   (its genesis key goes to ${join(config.node.dataDir, config.node.namespace, 'genesis-account.json')})`,
    )
  })
}
