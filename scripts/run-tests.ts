/**
 * Runs every uvu test file in its own process (a crash or a hang stays in its file), then prints
 * one closing line `N passed, N failed, N skipped` that CI reads.
 *
 *   tsx scripts/run-tests.ts [filter ...]   only files whose path contains a filter
 *   --typecheck                             also runs `tsc -p tsconfig.json` (npm test): beside the
 *                                           first files, as a failed file when it finds errors
 *   KEEL_TEST_JOBS=N                        files run at once (default 2; 1 runs them one by one)
 *   KEEL_NODE_BUILD=                        node processes run the TypeScript through tsx (below)
 *
 * The node processes and worker threads the tests start (src/workers/start.ts) run a build of the
 * sources made once at the start (`scripts/build.mjs --no-check`, while the unit tests run) rather
 * than the TypeScript through tsx: a node process compiled through tsx at each start costs twice the
 * CPU (7 s against 3.3 s to listen) and the tests start a few hundred processes and threads. Its
 * source maps point at src/, so c8 (`exclude-after-remap`) counts their coverage against the
 * sources as before.
 *
 * Two files at a time: most of a network test's time is spent waiting on consensus timers, not on
 * the CPU, so a second file beside it halves the run's wall time on two cores. The longest files
 * (LONG_FIRST) start first so the run does not end waiting on one of them; a file's output is
 * printed whole when it ends, so two files' lines never interleave.
 *
 * Under c8 (npm test) each process and thread writes its V8 coverage at exit, ~80% of it Node's own
 * modules and node_modules, which the report then reads and drops (~700 MB, 17-24 s after the last
 * file). As each file ends, its processes' coverage files are trimmed of those entries
 * (trimCoverage): the same report, read from ~150 MB.
 *
 * The type check (npm test's) runs here beside the unit tests rather than before them: tsc keeps one
 * core busy for ~25 s, which before the run left the other one idle.
 */

const USAGE = `usage: npx tsx scripts/run-tests.ts [filter ...] [--typecheck]

Runs every uvu test file (test/, conformance/) in its own process, two at a time, and ends with the
line "N passed, N failed, N skipped".

  filter ...    only the files whose path contains one of these
  --typecheck   also runs tsc -p tsconfig.json (npm test does)
  KEEL_TEST_JOBS=N   files at once (default 2)
  KEEL_NODE_BUILD=   node processes run the TypeScript through tsx instead of a build made at the start`

import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, relative } from 'node:path'

const root = join(import.meta.dirname, '..')
const FILE_TIMEOUT_MS = 5 * 60_000
/** removed when the run ends, so a run leaves no data directories behind, whatever its tests forget */
const runTmpDir = mkdtempSync(join(tmpdir(), 'keel-tests-'))

function findTests(dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) found.push(...findTests(path))
    else if (entry.endsWith('.test.ts')) found.push(path)
  }
  return found
}

interface FileResult {
  file: string
  passed: number
  failed: number
  skipped: number
  ok: boolean
  seconds: number
  /** CPU seconds of the file's process and every process it started and waited for (undefined off Linux) */
  cpuSeconds: number | undefined
}

/**
 * CPU seconds (user + system) of this process's children that have ended and been waited for, from
 * /proc/self/stat: read as each file ends, the growth is that file's whole process tree (its nodes
 * included) — a figure a loaded machine does not inflate the way it does wall time.
 */
function endedChildrenCpu(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
    // cutime and cstime (fields 16 and 17 of proc(5)), in clock ticks of 1/100 s
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return undefined
  }
}
let childrenCpuSeen = endedChildrenCpu()

/** files that take longest (seconds on a quiet machine, roughly), started first */
const LONG_FIRST = [
  'test/network/sdk.test.ts',
  'test/durability.test.ts',
  'conformance/conformance.test.ts',
  'test/network/partition.test.ts',
  'test/network/jvm-hostile.test.ts',
  'test/network/membership.test.ts',
  'test/network/join.test.ts',
  'test/network/adversary.test.ts',
  'test/examples.test.ts',
  'test/client-package.test.ts',
  'test/metrics.test.ts',
  'test/rpc/compile.test.ts',
  'test/rpc/cert.test.ts',
  'test/cli.test.ts',
  'test/unit/consensus-bft/membership.test.ts',
]

/** the run's own build of the sources for the node processes, inside node_modules so its modules find the packages */
const nodeBuildDir = join(root, 'node_modules', '.cache', `keel-test-build-${process.pid}`)

/** Builds the sources for the node processes; undefined (nodes run through tsx) when KEEL_NODE_BUILD is set or the build fails. */
async function buildForNodes(): Promise<string | undefined> {
  if (process.env.KEEL_NODE_BUILD !== undefined) return process.env.KEEL_NODE_BUILD || undefined
  const started = performance.now()
  const { NODE_V8_COVERAGE: _notTscs, ...env } = process.env
  const child = spawn(process.execPath, [join(root, 'scripts', 'build.mjs'), '--out-dir', nodeBuildDir, '--no-check'], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString()
  })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  // the build's CPU is its own, not that of the next test file to end
  const childrenCpu = endedChildrenCpu()
  const buildCpu = childrenCpu === undefined || childrenCpuSeen === undefined ? undefined : childrenCpu - childrenCpuSeen
  childrenCpuSeen = childrenCpu
  if (code !== 0) {
    console.error(`building the sources for the test nodes failed; they run through tsx:\n${errors}`)
    return undefined
  }
  // the JVM contract executor setup:test built (build/jvm, stamped by the hash of jvm/src): the built nodes find it under their own root
  const jvmBuild = join(root, 'build', 'jvm')
  if (existsSync(jvmBuild)) cpSync(jvmBuild, join(nodeBuildDir, 'build', 'jvm'), { recursive: true })
  console.log(
    `test nodes run a build of the sources, made in ${((performance.now() - started) / 1000).toFixed(1)} s${buildCpu === undefined ? '' : ` (${buildCpu.toFixed(1)} s CPU)`}`,
  )
  return nodeBuildDir
}

/** `tsc -p tsconfig.json` as a file of the run: its errors are its output, any error fails it */
function typecheck(): Promise<FileResult> {
  const started = performance.now()
  // not covered: its coverage would only be node_modules/typescript for the report to skip
  const { NODE_V8_COVERAGE: _notTsc, ...env } = process.env
  const child = spawn(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  running.add(child)
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  return new Promise((resolve) => {
    child.on('close', (code) => {
      running.delete(child)
      const childrenCpu = endedChildrenCpu()
      const cpuSeconds = childrenCpu === undefined || childrenCpuSeen === undefined ? undefined : childrenCpu - childrenCpuSeen
      childrenCpuSeen = childrenCpu
      const ok = code === 0
      process.stdout.write(`\n── typecheck (tsc -p tsconfig.json)\n${ok ? 'no type errors\n' : output}`)
      const seconds = (performance.now() - started) / 1000
      resolve({ file: 'typecheck (tsc)', passed: 0, failed: ok ? 0 : 1, skipped: 0, ok, seconds, cpuSeconds })
    })
  })
}

/** coverage files trimmed already (or that cannot be parsed: left to c8 as they are) */
const coverageSeen = new Set<string>()

/**
 * Drops from the V8 coverage files in NODE_V8_COVERAGE what the report never counts: Node's internal
 * modules, eval'd code and node_modules (except the run's build of the sources, whose source maps
 * point at src/), with their source maps. Anything else (a build in a temporary directory that maps
 * to sdk/, say) stays for c8 to judge. A file still being written does not parse: it is tried
 * again at the next call (`final` gives up on it).
 */
function trimCoverage(final: boolean): void {
  const dir = process.env.NODE_V8_COVERAGE
  if (dir === undefined || !existsSync(dir)) return
  const rootUrl = `file://${root}/`
  const buildUrl = `${rootUrl}node_modules/.cache/keel-test-build-`
  const counted = (url: string): boolean =>
    !(url === '' || url.startsWith('node:') || (url.startsWith(`${rootUrl}node_modules/`) && !url.startsWith(buildUrl)))
  for (const name of readdirSync(dir)) {
    if (coverageSeen.has(name) || !name.endsWith('.json')) continue
    const path = join(dir, name)
    let coverage: { result: { url: string }[]; 'source-map-cache'?: Record<string, unknown> }
    try {
      coverage = JSON.parse(readFileSync(path, 'utf8'))
    } catch {
      if (final) coverageSeen.add(name)
      continue
    }
    coverageSeen.add(name)
    coverage.result = coverage.result.filter((script) => counted(script.url))
    const maps = coverage['source-map-cache']
    if (maps !== undefined) coverage['source-map-cache'] = Object.fromEntries(Object.entries(maps).filter(([url]) => counted(url)))
    writeFileSync(path, JSON.stringify(coverage))
  }
}

const running = new Set<ChildProcess>()
const killGroup = (child: ChildProcess): void => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
  } catch {
    // the group is gone already
  }
}
// a run stopped by Ctrl-C or a CI timeout stops its test files and the nodes they started
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    for (const child of running) killGroup(child)
    rmSync(runTmpDir, { recursive: true, force: true })
    rmSync(nodeBuildDir, { recursive: true, force: true })
    process.exit(130)
  })

function runFile(file: string, jobs: number, nodeBuild: string | undefined): Promise<FileResult> {
  const started = performance.now()
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      // everything a test (and every process it starts) makes under os.tmpdir() goes into the run's own directory
      env: { ...process.env, TMPDIR: runTmpDir, ...(nodeBuild === undefined ? {} : { KEEL_NODE_BUILD: nodeBuild }) },
      // its own process group: a killed file takes the nodes it started with it
      detached: true,
    })
    running.add(child)
    let output = ''
    let errors = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (jobs === 1) process.stdout.write(chunk)
    })
    child.stderr.on('data', (chunk: Buffer) => {
      if (jobs === 1) process.stderr.write(chunk)
      else errors += chunk.toString()
    })
    const timer = setTimeout(() => {
      console.error(`\n${relative(root, file)}: no result after ${FILE_TIMEOUT_MS / 1000} s, killed`)
      killGroup(child)
    }, FILE_TIMEOUT_MS)
    child.on('close', (code) => {
      clearTimeout(timer)
      const childrenCpu = endedChildrenCpu()
      const cpuSeconds = childrenCpu === undefined || childrenCpuSeen === undefined ? undefined : childrenCpu - childrenCpuSeen
      childrenCpuSeen = childrenCpu
      running.delete(child)
      // what the file started and left running (a node it forgot to stop) ends with it
      killGroup(child)
      trimCoverage(false)
      if (jobs > 1) {
        process.stdout.write(`\n── ${relative(root, file)}\n${output}`)
        if (errors !== '') process.stderr.write(errors)
      }
      // biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes from uvu's summary
      const plain = output.replace(/\u001b\[[0-9;]*m/g, '')
      const count = (label: string): number => Number(plain.match(new RegExp(`${label}:\\s+(\\d+)`))?.[1] ?? 0)
      const total = count('Total')
      // conformance examples skipped through deviations.ts end as passing uvu tests; it reports them apart
      const deviationSkips = count('Deviation skips')
      const passed = count('Passed') - deviationSkips
      const skipped = count('Skipped') + deviationSkips
      // uvu exits 0 when a before hook throws, so every test then counts as failed: that file is not ok
      const ok = code === 0 && /Total:\s+\d+/.test(plain) && total === passed + skipped
      const failed = Math.max(total - passed - skipped, ok ? 0 : 1)
      resolve({ file: relative(root, file), passed, failed, skipped, ok, seconds: (performance.now() - started) / 1000, cpuSeconds })
    })
  })
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(USAGE)
    return
  }
  const withTypecheck = process.argv.includes('--typecheck')
  const filters = process.argv.slice(2).filter((arg) => arg !== '--typecheck')
  const files = [...findTests(join(root, 'test')), ...findTests(join(root, 'conformance'))].filter(
    (file) => filters.length === 0 || filters.some((filter) => relative(root, file).includes(filter)),
  )
  const jobs = Math.max(1, Number(process.env.KEEL_TEST_JOBS ?? 2) || 1)
  const rank = (file: string): number => {
    const at = LONG_FIRST.indexOf(relative(root, file))
    return at === -1 ? LONG_FIRST.length : at
  }
  const queue = jobs === 1 ? [...files] : [...files].sort((a, b) => rank(a) - rank(b))
  // unit tests start no node processes: they run while the build for the others is made
  const needsBuild = (file: string): boolean => !relative(root, file).startsWith(join('test', 'unit'))
  let building = true
  const nodeBuild = (files.some(needsBuild) ? buildForNodes() : Promise.resolve(undefined)).finally(() => {
    building = false
  })
  const next = (): string | undefined => {
    const at = building ? queue.findIndex((file) => !needsBuild(file)) : 0
    return queue.splice(at === -1 ? 0 : at, 1)[0]
  }
  const results: FileResult[] = []
  const started = performance.now()
  const typechecked = withTypecheck ? typecheck() : undefined
  const worker = async (): Promise<void> => {
    for (let file = next(); file !== undefined; file = next()) {
      if (jobs === 1) console.log(`\n── ${relative(root, file)}`)
      results.push(await runFile(file, jobs, needsBuild(file) ? await nodeBuild : undefined))
    }
  }
  await Promise.all(Array.from({ length: jobs }, worker))
  if (typechecked !== undefined) results.push(await typechecked)
  results.sort((a, b) => a.file.localeCompare(b.file))
  console.log('\nTest files:')
  for (const r of results) {
    console.log(
      `  ${r.ok ? 'ok  ' : 'FAIL'} ${r.file.padEnd(48)} ${String(r.passed).padStart(4)} passed ${String(r.failed).padStart(3)} failed ${String(r.skipped).padStart(3)} skipped  ${r.seconds.toFixed(1).padStart(5)} s${r.cpuSeconds === undefined ? '' : `, ${r.cpuSeconds.toFixed(1).padStart(5)} s CPU`}`,
    )
  }
  const sum = (key: 'passed' | 'failed' | 'skipped'): number => results.reduce((total, r) => total + r[key], 0)
  const failed = sum('failed')
  const cpu = results.every((r) => r.cpuSeconds !== undefined) ? results.reduce((total, r) => total + (r.cpuSeconds ?? 0), 0) : undefined
  console.log(
    `${results.filter((r) => r.file.endsWith('.ts')).length} files, ${jobs} at a time, in ${((performance.now() - started) / 1000).toFixed(0)} s${cpu === undefined ? '' : ` (${cpu.toFixed(0)} s CPU)`}; load ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  )
  // run under `c8 --reporter=none` (npm test): the coverage summary of the sources (src/, sdk/src/, codegen/;
  // .c8rc.json) prints here, a few lines, so the summary stays the last line; per file: coverage/coverage-summary.json
  if (process.env.NODE_V8_COVERAGE !== undefined) {
    trimCoverage(true)
    console.log('\nCoverage of src/, sdk/src/ and codegen/ (per file: coverage/coverage-summary.json):')
    spawnSync(process.execPath, [join(root, 'node_modules', 'c8', 'bin', 'c8.js'), 'report'], { cwd: root, stdio: 'inherit' })
  }
  console.log(`${sum('passed')} passed, ${failed} failed, ${sum('skipped')} skipped`)
  process.exitCode = failed > 0 || results.length === 0 ? 1 : 0
}

try {
  await main()
} finally {
  rmSync(runTmpDir, { recursive: true, force: true })
  rmSync(nodeBuildDir, { recursive: true, force: true })
}
