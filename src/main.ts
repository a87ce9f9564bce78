/**
 * `npm start`: runs one Keel node on embedded defaults (ARCHITECTURE.md decision 10).
 *
 *   npm start -- [--config keel.toml] [--port 8081] [--host 127.0.0.1] [--data-dir ./data] [--log-level info]
 */
import { parseArgs } from 'node:util'
import { type ConfigOverrides, readConfigFile, resolveConfig } from './config.ts'
import type { LogLevel } from './log.ts'
import { startNode } from './node.ts'

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'log-level': { type: 'string' },
    },
  })
  const flags: ConfigOverrides = {
    jsonrpc: { port: values.port === undefined ? undefined : Number(values.port), host: values.host },
    node: { dataDir: values['data-dir'] },
    log: { level: values['log-level'] as LogLevel | undefined },
  }
  const config = resolveConfig(values.config === undefined ? undefined : readConfigFile(values.config), flags)
  const node = await startNode(config)
  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    node.log.info(`${signal} received, stopping`)
    node.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        node.log.error('stop failed', error)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
}

main().catch((error: unknown) => {
  console.error(`keel: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
