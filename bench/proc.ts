/** A process's CPU and memory as the kernel counts them (Linux /proc), for the bench and the soak. */
import { readFileSync } from 'node:fs'

const CLOCK_TICKS = 100

/** CPU seconds of all the processes together */
export function cpuSeconds(pids: number[]): number {
  let sum = 0
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    sum += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS // utime + stime, fields 14 and 15
  }
  return sum
}

/** resident memory of the largest of the processes */
export function rssBytes(pids: number[]): number {
  return Math.max(0, ...pids.map((pid) => residentOf(pid).rss))
}

/**
 * resident memory of one process, whole and split: anonymous (heaps, buffers: where a leak shows)
 * and file-backed (the program, and LMDB's data file mapped in, which grows with the chain)
 */
export function residentOf(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
  return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile') }
}
