#!/usr/bin/env node
// The `keel` command: the built node (dist/, `npm run build`) when it is current, else the TypeScript sources through tsx.
import { buildIsCurrent, DEFAULT_OUT_DIR } from '../scripts/build.mjs'

let cli
if (buildIsCurrent()) cli = await import(new URL('../dist/src/cli.js', import.meta.url).href)
else {
  let tsx
  try {
    tsx = await import('tsx/esm/api')
  } catch {
    console.error(
      `keel: ${DEFAULT_OUT_DIR} is missing or older than the sources and tsx is not installed: run \`npm run build\` (or npm start, which builds)`,
    )
    process.exit(1)
  }
  tsx.register()
  cli = await import(new URL('../src/cli.ts', import.meta.url).href)
}
await cli.runKeel(process.argv.slice(2))
