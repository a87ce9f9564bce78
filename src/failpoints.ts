/**
 * Failpoints, for tests only (reliability.md part C): named places where a test makes the node
 * fail as a real fault would (a full disk, a broken file system), without mocking anything
 * around it. Switched on by the environment variable KEEL_FAILPOINTS, read at every pass (so a test
 * can arm and disarm one in a running node), e.g.
 *
 *   KEEL_FAILPOINTS="store.commitBlock=throw@3"
 *
 * `name=throw` throws at every pass, `name=throw@N` from the Nth pass on (counted from the moment
 * this setting was first seen). Several are separated by `;`. Unset, a pass costs one lookup.
 *
 * Named points: `store.commitBlock` (before a block's LMDB transaction: nothing of it is written);
 * `fs.renamed` (src/fs-atomic.ts: after a file is renamed into place, before its directory is
 * synced); threads that die as a crash would kill them (docs/reliability.md "Threads that die"):
 * `front.thread` (a request thread, on a request), `verify.worker` (on a job), `state-hash.worker`
 * (on a job), `solc.worker` (on a compile). A worker thread reads its own copy of the environment,
 * taken when it starts: arm those before it starts.
 */

interface Armed {
  from: number
  passes: number
}

let setting: string | undefined
let armed = new Map<string, Armed>()

function parse(text: string): Map<string, Armed> {
  const points = new Map<string, Armed>()
  for (const entry of text.split(';')) {
    const match = /^\s*([\w.-]+)\s*=\s*throw(?:@(\d+))?\s*$/.exec(entry)
    if (match === null) {
      if (entry.trim() !== '') throw new Error(`KEEL_FAILPOINTS: cannot read ${JSON.stringify(entry)}; write name=throw or name=throw@N`)
      continue
    }
    points.set(match[1], { from: Number(match[2] ?? 1), passes: 0 })
  }
  return points
}

/** throws `failpoint <name>` when KEEL_FAILPOINTS arms it for this pass */
export function failpoint(name: string): void {
  const text = process.env.KEEL_FAILPOINTS
  if (text === undefined || text === '') {
    setting = undefined
    return
  }
  if (text !== setting) {
    armed = parse(text)
    setting = text
  }
  const point = armed.get(name)
  if (point === undefined) return
  point.passes++
  if (point.passes >= point.from) throw new Error(`failpoint ${name} (KEEL_FAILPOINTS)`)
}
