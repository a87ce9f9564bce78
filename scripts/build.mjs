#!/usr/bin/env node
/**
 * `npm run build`: compiles the node (src/ and what it imports: generated/, sdk/src/) with tsc into dist/, laid
 * out like the repository (dist/src/main.js beside dist/openrpc.json, dist/playground/, dist/jvm/src/),
 * so every path the node reads relative to its own modules holds in both. Plain JavaScript: `npm
 * start` runs this check without a TypeScript runtime.
 *
 *   node scripts/build.mjs [--out-dir <dir>] [--no-check]
 *
 * --no-check skips tsc's type check (emit only: `npm run typecheck` checks the same sources).
 * `npm start` (scripts/start.mjs) builds when `buildIsCurrent` says dist/ is missing or stale.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { bundlePlaygroundClient, PLAYGROUND_CLIENT_FILE } from '../playground/bundle.mjs'

const repoRoot = fileURLToPath(new URL('..', import.meta.url))
export const DEFAULT_OUT_DIR = join(repoRoot, 'dist')
/** read by path at run time, relative to the modules: copied as they are */
const ASSETS = ['openrpc.json', 'playground', join('jvm', 'src')]
/** besides the compiled sources (the stamp lists them) and ASSETS, a change to any of these makes a build stale */
const SETTINGS = ['package.json', 'tsconfig.json', 'tsconfig.build.json', join('scripts', 'build.mjs')]
/** written last, dated when the build began (a source saved during the build leaves it stale); lists the compiled sources */
const STAMP = '.build-stamp'

/** Newest modification time (ms) under `path`, directories included: a deleted or renamed file changes its directory's. */
function newestChange(path) {
  const stat = statSync(path)
  let newest = stat.mtimeMs
  if (stat.isDirectory()) for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)))
  return newest
}

/**
 * true when `outDir` holds a finished build that no input is newer than: each source tsc compiled
 * and its directory (a file added beside it), the assets, the settings. A few hundred stat calls.
 */
export function buildIsCurrent(outDir = DEFAULT_OUT_DIR) {
  let stamp
  try {
    stamp = { built: statSync(join(outDir, STAMP)).mtimeMs, ...JSON.parse(readFileSync(join(outDir, STAMP), 'utf8')) }
  } catch {
    return false
  }
  if (!Array.isArray(stamp.sources)) return false
  const sources = stamp.sources.map((source) => join(repoRoot, source))
  try {
    // a source's directory changes when a file is added beside it, which an edited source may import
    for (const path of new Set([...sources, ...sources.map((source) => dirname(source))]))
      if (statSync(path).mtimeMs > stamp.built) return false
    for (const input of [...ASSETS, ...SETTINGS]) if (newestChange(join(repoRoot, input)) > stamp.built) return false
  } catch {
    return false // a source or an asset is gone
  }
  return true
}

/** The repository's own files in tsc's `--listFiles` output; the other lines are its messages. */
function splitListing(output) {
  const sources = []
  const messages = []
  for (const line of output.split('\n')) {
    const file = relative(repoRoot, line.trim())
    if (isAbsolute(line.trim()) && !file.startsWith('..') && !file.split(sep).includes('node_modules')) sources.push(file)
    else if (!isAbsolute(line.trim()) && line.trim() !== '') messages.push(line)
  }
  return { sources, messages }
}

/**
 * Compiles into a staging directory beside `outDir`, then moves each part into place (dist/build/, the JVM
 * executor built at run time, stays). Beside, not inside: the source maps' relative paths back to src/
 * hold only when the staging directory sits as deep as `outDir`.
 */
export function build({ outDir = DEFAULT_OUT_DIR, check = true } = {}) {
  const out = resolve(outDir)
  const staging = `${out}.partial-${process.pid}`
  let tsc
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  } catch {
    throw new Error('TypeScript is not installed: building needs the dev dependencies (npm ci, without --omit=dev)')
  }
  rmSync(staging, { recursive: true, force: true })
  const began = new Date()
  try {
    const args = [tsc, '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', staging, '--listFiles', ...(check ? [] : ['--noCheck'])]
    const compiled = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    const { sources, messages } = splitListing(`${compiled.stdout ?? ''}\n${compiled.stderr ?? ''}`)
    if (messages.length > 0) console.error(messages.join('\n'))
    if (compiled.status !== 0)
      throw new Error(`tsc failed (exit ${compiled.status ?? compiled.signal})${messages.length > 0 ? ': see its messages above' : ''}`)
    for (const asset of ASSETS) cpSync(join(repoRoot, asset), join(staging, asset), { recursive: true })
    // the page's signing code, bundled from the client package (playground/bundle.mjs)
    writeFileSync(join(staging, 'playground', PLAYGROUND_CLIENT_FILE), bundlePlaygroundClient())
    const { name, version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'))
    // the node reads its version from here; `type` makes the .js files ES modules wherever dist/ is put
    writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ name, version, private: true, type: 'module' }, null, 2)}\n`)
    mkdirSync(out, { recursive: true })
    rmSync(join(out, STAMP), { force: true })
    for (const entry of readdirSync(staging)) {
      rmSync(join(out, entry), { recursive: true, force: true })
      renameSync(join(staging, entry), join(out, entry))
    }
    writeFileSync(join(out, STAMP), `${JSON.stringify({ began: began.toISOString(), sources }, null, 1)}\n`)
    utimesSync(join(out, STAMP), began, began)
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

const BUILD_USAGE = `usage: node scripts/build.mjs [--out-dir <dir>] [--no-check]   (npm run build)

Type-checks and compiles src/ and what it imports into dist/ (or <dir>), with openrpc.json,
playground/ and jvm/src/ beside them; \`npm start\` runs it.

  --out-dir <dir>   where the build goes (default dist/)
  --no-check        compile without the type check
  --help            prints this`

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  let values
  try {
    ;({ values } = parseArgs({ options: { 'out-dir': { type: 'string' }, 'no-check': { type: 'boolean' }, help: { type: 'boolean' } } }))
  } catch (error) {
    console.error(`keel build: ${error.message}\n\n${BUILD_USAGE}`)
    process.exit(2)
  }
  if (values.help) {
    console.log(BUILD_USAGE)
    process.exit(0)
  }
  const outDir = values['out-dir'] ?? DEFAULT_OUT_DIR
  const started = Date.now()
  try {
    build({ outDir, check: values['no-check'] !== true })
  } catch (error) {
    console.error(`keel build: ${error.message}`)
    process.exit(1)
  }
  console.error(`keel: built ${outDir} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}
