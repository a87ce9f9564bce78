#!/usr/bin/env node
// The `keel` command: the built node (dist/) when there is one, else the TypeScript sources through tsx.
import { existsSync } from 'node:fs'

const built = new URL('../dist/src/cli.js', import.meta.url)
let cli
if (existsSync(built)) cli = await import(built.href)
else {
  const tsx = await import('tsx/esm/api')
  tsx.register()
  cli = await import(new URL('../src/cli.ts', import.meta.url).href)
}
await cli.runKeel(process.argv.slice(2))
