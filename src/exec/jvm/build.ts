/**
 * Building the Java contract executor from the repository's own sources (jvm/src) with the JDK's
 * javac and jar: no Maven, no downloads. `build/jvm/keel-executor.jar` is rebuilt when the hash of
 * the sources differs from the one recorded beside it, so a node's first JVM transaction (or
 * `npm run build:jvm`) always runs the executor of the checked-out sources. Builds write to
 * temporary names and rename into place: nodes building at once cannot leave a torn jar.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { delimiter, join, relative } from 'node:path'

export const repoRoot = join(import.meta.dirname, '..', '..', '..')
export const JVM_SOURCES = join(repoRoot, 'jvm', 'src')
export const JVM_BUILD_DIR = join(repoRoot, 'build', 'jvm')
/** the executor and the contract API in one jar; contracts compile against it (`javac -cp`) */
export const EXECUTOR_JAR = join(JVM_BUILD_DIR, 'keel-executor.jar')
/**
 * Hyperchain's contract APIs as Keel provides them (cn.hyperchain.*, and the log4j Logger type
 * 1.x's ContractTemplate names), for compiling a Hyperchain-style contract the way one compiles
 * against Hyperchain's SDK jar: `javac --release 17 -cp build/jvm/hyperchain-api.jar …`. A contract
 * compiled against it runs on Keel unchanged; the classes stay out of the contract's jar (the
 * engine provides them, as Hyperchain's does).
 */
export const HYPERCHAIN_API_JAR = join(JVM_BUILD_DIR, 'hyperchain-api.jar')
const STAMP = join(JVM_BUILD_DIR, 'keel-executor.stamp')

/** The JDK is not there: JVM contracts cannot run on this node. */
export class JdkMissingError extends Error {
  override name = 'JdkMissingError'
}

/** A JDK tool (`java`, `javac`, `jar`): $JAVA_HOME/bin first, then PATH. */
export function jdkTool(tool: 'java' | 'javac' | 'jar', javaHome = process.env.JAVA_HOME): string {
  const candidates: string[] = []
  if (javaHome !== undefined && javaHome !== '') candidates.push(join(javaHome, 'bin', tool))
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir !== '') candidates.push(join(dir, tool))
  for (const candidate of candidates) {
    try {
      if (statSync(candidate).isFile()) return candidate
    } catch {}
  }
  throw new JdkMissingError(
    `${tool} not found ($JAVA_HOME/bin or PATH): install a JDK 17 (Debian: apt-get install -y openjdk-17-jdk-headless) to run JVM contracts`,
  )
}

function javaSources(dir = JVM_SOURCES): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...javaSources(path))
    else if (entry.name.endsWith('.java')) out.push(path)
  }
  return out
}

/** Hash of every source file's path and content: what the jar was built from. */
export function sourceStamp(): string {
  const hash = createHash('sha256')
  for (const file of javaSources()) {
    hash.update(relative(JVM_SOURCES, file))
    hash.update('\0')
    hash.update(readFileSync(file))
    hash.update('\0')
  }
  return hash.digest('hex')
}

export function executorIsCurrent(): boolean {
  return (
    existsSync(EXECUTOR_JAR) && existsSync(HYPERCHAIN_API_JAR) && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === sourceStamp()
  )
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    const collect = (chunk: Buffer): void => {
      output += chunk.toString()
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.slice(0, 3).join(' ')} … failed (exit ${code}):\n${output.slice(0, 4000)}`)),
    )
  })
}

let building: Promise<string> | undefined
/** a build that failed is not retried until the sources change */
let failed: { stamp: string; error: Error } | undefined

/** Builds the executor jar unless it is current; resolves with its path. One build at a time per process. */
export function ensureExecutor(javaHome?: string): Promise<string> {
  if (executorIsCurrent()) return Promise.resolve(EXECUTOR_JAR)
  if (failed !== undefined && failed.stamp === sourceStamp()) return Promise.reject(failed.error)
  building ??= (async () => {
    const stamp = sourceStamp()
    try {
      const javac = jdkTool('javac', javaHome)
      const jar = jdkTool('jar', javaHome)
      mkdirSync(JVM_BUILD_DIR, { recursive: true })
      const work = mkdtempSync(join(JVM_BUILD_DIR, 'build-'))
      try {
        const classes = join(work, 'classes')
        await run(javac, ['--release', '17', '-Xlint:all,-serial', '-Werror', '-encoding', 'UTF-8', '-d', classes, ...javaSources()])
        const built = join(work, 'keel-executor.jar')
        await run(jar, ['--create', '--file', built, '-C', classes, '.'])
        const api = join(work, 'hyperchain-api.jar')
        await run(jar, ['--create', '--file', api, '-C', classes, 'cn', '-C', classes, 'org'])
        renameSync(api, HYPERCHAIN_API_JAR)
        renameSync(built, EXECUTOR_JAR)
        const stampFile = join(work, 'stamp')
        writeFileSync(stampFile, `${stamp}\n`)
        renameSync(stampFile, STAMP)
      } finally {
        rmSync(work, { recursive: true, force: true })
      }
      return EXECUTOR_JAR
    } catch (error) {
      if (!(error instanceof JdkMissingError)) failed = { stamp, error: error as Error }
      throw error
    } finally {
      building = undefined
    }
  })()
  return building
}
