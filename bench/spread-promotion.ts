/**
 * What an object literal that spreads an object and then adds properties costs this Node's garbage
 * collector, against the same object made by `Object.assign` (issue 27; src/copy-with.ts and
 * scripts/patch-deps.mjs rest on it). Each form runs in a process of its own with `--trace-gc-nvp`;
 * the figures are the bytes its minor GCs promoted to the old generation and the time per object.
 *
 *   npx tsx bench/spread-promotion.ts [--objects 300000]
 *
 * Each round makes a small young graph (an object holding a 30-element array, ~300 bytes) and an
 * object of 13 fields referencing it, then copies that object with one more field and drops both.
 * On Node 20 (V8 11.3) the spread-then-extended copy is allocated in the old generation, so every
 * young graph it references survives the minor GCs until the next full one and is promoted; the
 * `Object.assign` copy is young and dies young. A Node whose figures show no difference no longer
 * needs the two workarounds.
 */
import { spawnSync } from 'node:child_process'
import { parseArgs } from 'node:util'

const FORMS = {
  'no copy': 'r = a',
  '{ ...a }': 'r = { ...a }',
  '{ ...a, z }': 'r = { ...a, z: 1 }',
  '{ z, ...a }': 'r = { z: 1, ...a }',
  'Object.assign({}, a, { z })': 'r = Object.assign({}, a, { z: 1 })',
} as const

const program = (form: string, objects: number): string => `
  let sink = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < ${objects}; i++) {
    const young = { list: new Array(30).fill(i) }
    const a = { a0: young, a1: i, a2: 2, a3: 3, a4: 4, a5: 5, a6: 6, a7: 7, a8: 8, a9: 9, a10: 10, a11: 11, a12: 12 }
    let r
    ${form}
    sink += r.a1
  }
  console.log('ns', Number(process.hrtime.bigint() - start) / ${objects}, sink)`

function measure(form: string, objects: number): { promotedBytes: number; scavenges: number; nsPerObject: number } {
  const run = spawnSync(process.execPath, ['--trace-gc-nvp', '-e', program(form, objects)], { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`spread-promotion: the child failed: ${run.stderr}`)
  let promotedBytes = 0
  let scavenges = 0
  let nsPerObject = Number.NaN
  for (const line of run.stdout.split('\n')) {
    if (line.startsWith('ns ')) nsPerObject = Number(line.split(' ')[1])
    if (!line.includes(' gc=s ')) continue
    scavenges++
    promotedBytes += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0)
  }
  return { promotedBytes, scavenges, nsPerObject }
}

const { values } = parseArgs({ options: { objects: { type: 'string', default: '300000' } } })
const objects = Number(values.objects)
console.log(`Node ${process.version}, ${objects} objects per form`)
console.log('| form | promoted by minor GCs | per object | minor GCs | time per object |')
console.log('|---|---|---|---|---|')
for (const [name, form] of Object.entries(FORMS)) {
  const { promotedBytes, scavenges, nsPerObject } = measure(form, objects)
  console.log(
    `| \`${name}\` | ${(promotedBytes / 1e6).toFixed(1)} MB | ${Math.round(promotedBytes / objects)} B | ${scavenges} | ${Math.round(nsPerObject)} ns |`,
  )
}
