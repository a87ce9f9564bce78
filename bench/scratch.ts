/**
 * Temporary directories of a bench run (node data, logs, loop figures): removed when the run
 * ends well, kept and named when it fails, so the node log of a run that went wrong can be read.
 * KEEL_BENCH_KEEP=1 keeps them after a good run too (a node started with --node-flags=--trace-… logs there).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made: string[] = []

process.on('exit', (code) => {
  if (made.length === 0) return
  if (code === 0 && process.env.KEEL_BENCH_KEEP === '1') console.log(`kept: ${made.join(', ')}`)
  else if (code === 0) for (const dir of made) rmSync(dir, { recursive: true, force: true })
  else console.error(`kept for reading (the run failed): ${made.join(', ')}`)
})

/** a new directory under the system's temporary directory, named `<prefix>…` */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}
