/**
 * What one hop between two threads costs in CPU when the receiving thread is asleep (each message
 * wakes it: a node at half load) against when it is already running (messages queue behind each
 * other: a node at full load). issue 27: the ledger's hop row comes from V8's sampler, which charges
 * a thread's descheduled time to the frame it stopped in, and cannot see the kernel's part of a
 * wake-up at all; here each thread's own CPU comes from /proc/thread-self/schedstat over the whole
 * run (exact over many messages), and its wake-ups from voluntary_ctxt_switches.
 *
 *   npx tsx bench/hop-cost.ts [--messages 20000] [--rounds 3]
 *
 * The message is what a request thread sends the chain thread per group: `admit` with one record of
 * the bench's transfer size (~600 bytes) packed in a transferred buffer (wire/frames.ts), answered
 * by a small `admitted` message. "asleep": the sender sends one, waits for the answer and then
 * 0.5 ms more (so both threads go back to epoll); "running": 16 in flight, sent as answers come.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import { packFrames } from '../src/wire/frames.ts'

interface ThreadCost {
  cpuNs: number
  wakeUps: number
}

function threadCost(): ThreadCost {
  const cpuNs = Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0])
  const status = readFileSync('/proc/thread-self/status', 'utf8')
  return { cpuNs, wakeUps: Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0) }
}

const since = (start: ThreadCost): ThreadCost => {
  const now = threadCost()
  return { cpuNs: now.cpuNs - start.cpuNs, wakeUps: now.wakeUps - start.wakeUps }
}

/** the chain thread's side: unpack the records (wire/frames.ts: u32 length ‖ bytes each), answer the group */
const RECEIVER = `const { parentPort } = require('node:worker_threads'); const { readFileSync } = require('node:fs');
  const cost = () => { const status = readFileSync('/proc/thread-self/status', 'utf8');
    return { cpuNs: Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]),
             wakeUps: Number(/\\nvoluntary_ctxt_switches:\\s+(\\d+)/.exec(status)[1]) } };
  let started = cost();
  parentPort.on('message', (m) => {
    if (m.t === 'start') { started = cost(); parentPort.postMessage({ t: 'started' }); return }
    if (m.t === 'stop') { const now = cost(); parentPort.postMessage({ t: 'cost', cost: { cpuNs: now.cpuNs - started.cpuNs, wakeUps: now.wakeUps - started.wakeUps } }); return }
    const view = new DataView(m.records.buffer, m.records.byteOffset, m.records.byteLength); const frames = []; let at = 0;
    while (at < m.records.length) { const n = view.getUint32(at); at += 4; frames.push(m.records.subarray(at, at + n)); at += n }
    if (frames.length !== m.ids.length) throw new Error('records lost');
    parentPort.postMessage({ t: 'admitted', ids: m.ids });
  })`

{
  const { values } = parseArgs({ options: { messages: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } } })
  const messages = Number(values.messages)
  const record = new Uint8Array(600).fill(7)
  const worker = new Worker(RECEIVER, { eval: true })
  const answers: ((message: { t: string; cost?: ThreadCost }) => void)[] = []
  worker.on('message', (message: { t: string; cost?: ThreadCost }) => answers.shift()?.(message))
  const ask = (message: unknown, transfer: ArrayBuffer[] = []): Promise<{ t: string; cost?: ThreadCost }> =>
    new Promise((resolve) => {
      answers.push(resolve)
      worker.postMessage(message, transfer)
    })
  const admit = (id: number): Promise<unknown> => {
    const records = packFrames([record])
    return ask({ t: 'admit', ids: [id], records }, [records.buffer as ArrayBuffer])
  }
  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

  async function run(mode: 'asleep' | 'running'): Promise<string> {
    await ask({ t: 'start' })
    const started = threadCost()
    const wall = performance.now()
    if (mode === 'asleep') {
      for (let i = 0; i < messages; i++) {
        await admit(i)
        await pause(0.5)
      }
    } else {
      let next = 0
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < messages) await admit(next++)
        }),
      )
    }
    const sender = since(started)
    const receiver = (await ask({ t: 'stop' })).cost as ThreadCost
    const us = (cost: ThreadCost): string =>
      `${(cost.cpuNs / 1000 / messages).toFixed(1)} µs, ${(cost.wakeUps / messages).toFixed(2)} wake-ups`
    return `${mode.padEnd(8)} sender ${us(sender)} · receiver ${us(receiver)} · both ${((sender.cpuNs + receiver.cpuNs) / 1000 / messages).toFixed(1)} µs per message (${((performance.now() - wall) / 1000).toFixed(1)} s)`
  }

  // a first pass of each compiles the code
  await run('running')
  for (let round = 0; round < Number(values.rounds); round++) {
    console.log(await run('asleep'))
    console.log(await run('running'))
  }
  console.log(
    `load average ${(await import('node:os'))
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  )
  await worker.terminate()
}
