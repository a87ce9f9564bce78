#!/usr/bin/env node
/**
 * `npm start`: `keel start` from the built node in dist/, built first when it is missing or older
 * than the sources (scripts/build.mjs). One process: the node gets the signals npm passes on.
 */
import { build, buildIsCurrent, DEFAULT_OUT_DIR } from './build.mjs'

if (!buildIsCurrent()) {
  console.error(`keel: building ${DEFAULT_OUT_DIR} first (missing or older than the sources; about a minute)…`)
  const began = Date.now()
  try {
    build()
  } catch (error) {
    console.error(`keel build: ${error.message}`)
    process.exit(1)
  }
  console.error(`keel: built in ${((Date.now() - began) / 1000).toFixed(1)} s`)
}
const { runKeel } = await import(new URL('../dist/src/cli.js', import.meta.url).href)
await runKeel(['start', ...process.argv.slice(2)])
