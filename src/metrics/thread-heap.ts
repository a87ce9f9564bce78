/**
 * The V8 heap of every thread of the node, for `keel_thread_heap_*_bytes{thread=...}`.
 *
 * Node 20 cannot read another thread's heap (`Worker.getHeapStatistics` came in Node 22), so each
 * worker writes its own figures into a small shared buffer the thread that started it lent it
 * (`workerData.heapSlot`, made by `heapSlotFor` in workers/start.ts), every PUBLISH_MS and once at
 * load. The starting thread's registry reads those buffers at each scrape along with its own heap:
 * the chain thread reports itself, the request threads, the verify workers and the state hasher; a
 * request thread reports itself and the compiler workers it started.
 */
import { getHeapStatistics } from 'node:v8'
import { workerData } from 'node:worker_threads'

/** how often a worker writes its heap figures: a scrape sees them at most this old */
const PUBLISH_MS = 5_000

/** the figures of one thread, in the order they sit in its slot */
export interface ThreadHeap {
  thread: string
  /** bytes of live and not yet collected objects */
  used: number
  /** bytes V8 has reserved for the heap */
  total: number
  /** bytes outside the heap held by its objects (Buffers, ArrayBuffers, native handles) */
  external: number
}

const FIELDS = 3

/** slots lent to the workers this thread started, by the name the metrics give them */
const lent = new Map<string, Float64Array>()

function ownFigures(): [number, number, number] {
  const heap = getHeapStatistics()
  return [heap.used_heap_size, heap.total_heap_size, heap.external_memory]
}

/**
 * A slot for a worker this thread is about to start as `name` ("verify", "solc 0.8.26"): a second
 * worker of the same name is "verify 2", and so on, lowest free number first, so a restarted
 * worker takes the name its predecessor freed. `release` when the worker has exited.
 */
export function heapSlotFor(name: string): { buffer: SharedArrayBuffer; release(): void } {
  let label = name
  for (let n = 2; lent.has(label); n++) label = `${name} ${n}`
  const buffer = new SharedArrayBuffer(FIELDS * Float64Array.BYTES_PER_ELEMENT)
  const slot = new Float64Array(buffer).fill(Number.NaN)
  lent.set(label, slot)
  return { buffer, release: () => lent.get(label) === slot && lent.delete(label) }
}

/**
 * In a worker: writes this thread's heap into the slot its starter lent it, now and every
 * PUBLISH_MS (a timer that does not keep the thread alive). Nothing without a slot.
 */
export function publishThreadHeap(): void {
  const buffer = (workerData as { heapSlot?: unknown } | null)?.heapSlot
  if (!(buffer instanceof SharedArrayBuffer)) return
  const slot = new Float64Array(buffer)
  // a reader may see one field from the write before the others: a scrape's figure is approximate anyway
  const write = (): void => slot.set(ownFigures())
  write()
  setInterval(write, PUBLISH_MS).unref()
}

/**
 * This thread's heap (as `self`) and that of every worker it started that has written its slot;
 * a worker's name is prefixed with `prefix` (a request thread's name, so that two request threads'
 * compilers do not share a series).
 */
export function threadHeaps(self: string, prefix = ''): ThreadHeap[] {
  const [used, total, external] = ownFigures()
  const heaps: ThreadHeap[] = [{ thread: self, used, total, external }]
  for (const [name, slot] of lent) {
    if (Number.isNaN(slot[0])) continue
    heaps.push({ thread: `${prefix}${name}`, used: slot[0], total: slot[1], external: slot[2] })
  }
  return heaps
}
