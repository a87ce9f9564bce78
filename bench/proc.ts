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
  let largest = 0
  for (const pid of pids) {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/)
    if (match !== null) largest = Math.max(largest, Number(match[1]) * 1024)
  }
  return largest
}
