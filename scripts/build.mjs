#!/usr/bin/env node
/**
 * `npm run build`: compiles the node (src/ and the generated/ it imports) with tsc into dist/, laid
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
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const repoRoot = fileURLToPath(new URL('..', import.meta.url))
export const DEFAULT_OUT_DIR = join(repoRoot, 'dist')
/** what tsc compiles (tsconfig.build.json) */
const COMPILED = ['src', 'generated']
/** read by path at run time, relative to the modules: copied as they are */
const ASSETS = ['openrpc.json', 'playground', join('jvm', 'src')]
/** a change to any of these makes a build stale */
const INPUTS = [...COMPILED, ...ASSETS, 'package.json', 'tsconfig.json', 'tsconfig.build.json', join('scripts', 'build.mjs')]
/** written last, dated when the build began: a source saved during the build leaves it stale */
const STAMP = '.build-stamp'

/** Newest modification time (ms) under `path`, directories included: a deleted or renamed file changes its directory's. */
function newestChange(path) {
  const stat = statSync(path)
  let newest = stat.mtimeMs
  if (stat.isDirectory()) for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)))
  return newest
}

/** true when `outDir` holds a finished build no source is newer than (a few hundred stat calls) */
export function buildIsCurrent(outDir = DEFAULT_OUT_DIR) {
  const stamp = join(outDir, STAMP)
  if (!existsSync(stamp)) return false
  const built = statSync(stamp).mtimeMs
  return INPUTS.every((input) => !existsSync(join(repoRoot, input)) || newestChange(join(repoRoot, input)) <= built)
}

/** Compiles into a staging directory inside `outDir`, then moves each part into place (dist/build/, the JVM executor built at run time, stays). */
export function build({ outDir = DEFAULT_OUT_DIR, check = true } = {}) {
  const out = resolve(outDir)
  const staging = join(out, `.partial-${process.pid}`)
  let tsc
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  } catch {
    throw new Error('TypeScript is not installed: building needs the dev dependencies (npm ci, without --omit=dev)')
  }
  rmSync(staging, { recursive: true, force: true })
  const began = new Date()
  try {
    const args = [tsc, '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', staging, ...(check ? [] : ['--noCheck'])]
    const compiled = spawnSync(process.execPath, args, { cwd: repoRoot, stdio: 'inherit' })
    if (compiled.status !== 0) throw new Error(`tsc failed (exit ${compiled.status ?? compiled.signal}): see its messages above`)
    for (const asset of ASSETS) cpSync(join(repoRoot, asset), join(staging, asset), { recursive: true })
    const { name, version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'))
    // the node reads its version from here; `type` makes the .js files ES modules wherever dist/ is put
    writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ name, version, private: true, type: 'module' }, null, 2)}\n`)
    rmSync(join(out, STAMP), { force: true })
    for (const entry of readdirSync(staging)) {
      rmSync(join(out, entry), { recursive: true, force: true })
      renameSync(join(staging, entry), join(out, entry))
    }
    writeFileSync(join(out, STAMP), `${began.toISOString()}\n`)
    utimesSync(join(out, STAMP), began, began)
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  let values
  try {
    ;({ values } = parseArgs({ options: { 'out-dir': { type: 'string' }, 'no-check': { type: 'boolean' } } }))
  } catch (error) {
    console.error(`keel build: ${error.message}\n\nusage: node scripts/build.mjs [--out-dir <dir>] [--no-check]`)
    process.exit(2)
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
