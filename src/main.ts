/**
 * `keel start` (`npm start`): runs one Keel node, on embedded defaults (ARCHITECTURE.md decision 10)
 * or a config file, with flags on top.
 */
import { join } from 'node:path'
import { type CommandSpec, integerOption, isEntryModule, runCommand, UsageError, usageOf } from './command-line.ts'
import { type ConfigOverrides, readConfigFile, resolveConfig } from './config.ts'
import type { LogFormat, LogLevel } from './log.ts'
import { type KeelNode, startNode } from './node.ts'

export const startCommand = {
  name: 'keel start',
  synopsis: '[options]',
  summary: 'Runs one Keel node. Without a config file: a solo VP on http://127.0.0.1:8081 with a funded genesis account.',
  options: {
    config: { type: 'string', value: 'file', description: 'a keel.toml; flags below override it' },
    port: { type: 'string', value: 'port', description: 'JSON-RPC port (0: any free port)' },
    host: { type: 'string', value: 'address', description: 'JSON-RPC address; 0.0.0.0 serves other machines' },
    'data-dir': { type: 'string', value: 'dir', description: 'where the ledgers live, one directory per namespace' },
    namespaces: {
      type: 'string',
      value: 'names',
      description: 'the namespaces to serve, comma-separated, the default first (e.g. global,ns2); each has its own ledger',
    },
    'log-level': { type: 'string', value: 'level', description: 'debug | info | warn | error | silent' },
    'log-format': { type: 'string', value: 'format', description: 'text | json (one JSON object per line)' },
  },
  details: ['The configuration keys and their defaults: README.md, "Configuration".'],
} satisfies CommandSpec

export async function runStart(argv: string[]): Promise<void> {
  await runCommand(startCommand, argv, async (values) => {
    const flags: ConfigOverrides = {
      jsonrpc: { port: integerOption(startCommand, 'port', values.port), host: values.host },
      node: { dataDir: values['data-dir'], namespaces: values.namespaces?.split(',').map((name) => name.trim()) },
      log: { level: values['log-level'] as LogLevel | undefined, format: values['log-format'] as LogFormat | undefined },
    }
    let config: ReturnType<typeof resolveConfig>
    try {
      config = resolveConfig(values.config === undefined ? undefined : readConfigFile(values.config), flags)
    } catch (error) {
      // a flag's bad value is a usage mistake too; name it with the usage
      if (values.config === undefined) throw new UsageError(`keel start: ${(error as Error).message}`, usageOf(startCommand))
      throw error
    }
    // a signal during start-up stops the node once it has started, rather than killing it half-opened
    let node: KeelNode | undefined
    let signalDuringStart: string | undefined
    let stopping = false
    const stop = (signal: string): void => {
      if (node === undefined) {
        signalDuringStart ??= signal
        return
      }
      if (stopping) return
      stopping = true
      const running = node
      running.log.info(`${signal} received, stopping`)
      running.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          running.log.error('stop failed', error)
          process.exit(1)
        },
      )
    }
    process.on('SIGINT', () => stop('SIGINT'))
    process.on('SIGTERM', () => stop('SIGTERM'))
    node = await startNode(config)
    if (signalDuringStart !== undefined) return stop(signalDuringStart)
    if (node.devAccount !== undefined) {
      const keyFile = join(config.node.dataDir, config.node.namespace, 'genesis-account.json')
      // with several namespaces, the hint uses the default one; each namespace's key file is in its own directory
      node.log.info(
        `next, in another terminal: npx tsx examples/sign-transfer.ts --url ${node.url} --key-file ${keyFile} --to 0x3434343434343434343434343434343434343434 --value 100`,
      )
    }
  })
}

if (isEntryModule(import.meta.url)) await runStart(process.argv.slice(2))
