/**
 * Java contracts for the tests: compiled with the JDK's javac during the test run against the
 * executor jar (built first when missing, like a node does), from sources given as text or from
 * examples/jvm/.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { type JavaContract, readClassDirectory } from '../../sdk/src/jvm.ts'
import { ensureExecutor, HYPERCHAIN_API_JAR, jdkTool, repoRoot } from '../../src/exec/jvm/build.ts'

const run = promisify(execFile)

/** What a contract compiles against: Keel's own API (the executor jar) or Hyperchain's APIs only (as against Hyperchain's SDK jar). */
export type JavaApi = 'keel' | 'hyperchain'

/** Compiles `sources` (path under the source root → Java text) and returns the classes with `main`. */
export async function compileJava(sources: Record<string, string>, main: string, api: JavaApi = 'keel'): Promise<JavaContract> {
  const executor = await ensureExecutor()
  const jar = api === 'keel' ? executor : HYPERCHAIN_API_JAR
  const dir = mkdtempSync(join(tmpdir(), 'keel-javac-'))
  try {
    const files: string[] = []
    for (const [path, text] of Object.entries(sources)) {
      const file = join(dir, 'src', path)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, text)
      files.push(file)
    }
    await run(jdkTool('javac'), ['--release', '17', '-encoding', 'UTF-8', '-cp', jar, '-d', join(dir, 'out'), ...files])
    return readClassDirectory(join(dir, 'out'), main)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Compiles the sources of one examples/jvm/<name> directory. */
export async function compileExample(name: string, main: string, api: JavaApi = 'keel'): Promise<JavaContract> {
  const root = join(repoRoot, 'examples', 'jvm', name)
  const sources: Record<string, string> = {}
  const walk = (at: string, prefix: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name), `${prefix}${entry.name}/`)
      else if (entry.name.endsWith('.java')) sources[`${prefix}${entry.name}`] = readFileSync(join(at, entry.name), 'utf8')
    }
  }
  walk(root, '')
  return compileJava(sources, main, api)
}

/** The Java executor child of node process `nodePid` (its parent is the node; it runs keel.jvm.Main), if one runs. */
export function executorPidOf(nodePid: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== nodePid) continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('keel.jvm.Main')) return Number(entry)
    } catch {
      // the process ended while it was read
    }
  }
  return undefined
}
