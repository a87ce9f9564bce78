/**
 * The outgoing side of one WebSocket connection: replies and notifications in order, with
 * back-pressure that counts what the reader has not taken yet wherever it waits in this process.
 *
 * A message goes straight to the socket while the socket holds less than WRITE_HIGH_WATER bytes;
 * otherwise it waits in a queue here, and each write callback (the kernel took a write) sends more.
 * What the reader has not taken is counted as
 *
 * - messages: those still in the socket (handed to ws, not yet taken by the kernel: derived from
 *   the socket's buffered byte count and the sizes of the frames written, so a burst the kernel
 *   takes at once counts nothing even though its write callbacks run a tick later) plus the queue;
 * - bytes: ws `bufferedAmount` (the socket's buffer and anything ws holds back) plus the queue.
 *
 * Past either limit the reader is cut off: the queue is dropped and `onCut` says why (the caller
 * closes the connection with 1008; the close frame follows what the socket already holds). What
 * the kernel has taken (its send buffer and the reader's receive buffer: about 4 MiB on a Linux
 * loopback, more over a long fat link) is not visible from here and comes on top of the limits.
 */
import type { WebSocket } from 'ws'

/** bytes in the socket's buffer below which messages are written straight away */
export const WRITE_HIGH_WATER = 256 * 1024

export interface OutboundLimits {
  /** messages the reader may leave untaken (socket and queue) */
  maxMessages: number
  /** bytes the reader may leave untaken (socket and queue) */
  maxBytes: number
}

export interface Outbound {
  /** sends or queues one text message; nothing once the reader was cut off or the socket is not open */
  write(text: string): void
  /** true once the limits were passed (the queue is gone) */
  readonly cut: boolean
  /** what the reader has not taken yet, as the limits count it */
  waiting(): { messages: number; bytes: number }
  /** drops the queue (the connection closed) */
  clear(): void
}

/** the size on the wire of an unmasked (server-to-client) frame carrying `payload` bytes */
const frameSize = (payload: number): number => payload + (payload < 126 ? 2 : payload < 65_536 ? 4 : 10)

/** A FIFO that keeps the sum of its items' sizes; taking from the front is O(1). */
class SizedFifo<T> {
  private items: T[] = []
  private head = 0
  bytes = 0
  constructor(private readonly sizeOf: (item: T) => number) {}
  get length(): number {
    return this.items.length - this.head
  }
  front(): T {
    return this.items[this.head]
  }
  push(item: T): void {
    this.items.push(item)
    this.bytes += this.sizeOf(item)
  }
  shift(): T {
    const item = this.items[this.head++]
    this.bytes -= this.sizeOf(item)
    if (this.head === this.items.length) this.clear()
    else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }
  clear(): void {
    this.items = []
    this.head = 0
    this.bytes = 0
  }
}

export function createOutbound(ws: WebSocket, limits: OutboundLimits, onCut: (why: string) => void): Outbound {
  const queue = new SizedFifo<Buffer>((bytes) => bytes.length)
  // frame sizes of messages handed to the socket, oldest first, not yet known to be taken by the kernel
  const inSocket = new SizedFifo<number>((size) => size)
  let cut = false

  /** forgets the frames the kernel has taken: the socket's buffer holds only the newest bytes written */
  const settle = (): void => {
    const buffered = ws.bufferedAmount
    while (inSocket.length > 0 && inSocket.bytes - inSocket.front() >= buffered) inSocket.shift()
  }

  const afterWrite = (error?: Error | null): void => {
    // Node calls write callbacks with null on success
    if (error != null || cut) return
    settle()
    if (queue.length > 0) flush()
  }

  const send = (bytes: Buffer): void => {
    inSocket.push(frameSize(bytes.length))
    ws.send(bytes, { binary: false }, afterWrite)
  }

  const flush = (): void => {
    while (queue.length > 0 && ws.readyState === ws.OPEN && ws.bufferedAmount < WRITE_HIGH_WATER) send(queue.shift())
  }

  const clear = (): void => queue.clear()

  const waiting = (): { messages: number; bytes: number } => {
    settle()
    return { messages: inSocket.length + queue.length, bytes: ws.bufferedAmount + queue.bytes }
  }

  return {
    write(text) {
      if (cut || ws.readyState !== ws.OPEN) return
      const bytes = Buffer.from(text, 'utf8')
      if (queue.length === 0 && ws.bufferedAmount < WRITE_HIGH_WATER) send(bytes)
      else queue.push(bytes)
      const { messages, bytes: waitingBytes } = waiting()
      let why: string | undefined
      if (messages > limits.maxMessages) why = `more than ${limits.maxMessages} messages waiting to be read`
      else if (waitingBytes > limits.maxBytes) why = `more than ${limits.maxBytes} bytes waiting to be read`
      if (why === undefined) return
      cut = true
      clear()
      onCut(why)
    },
    get cut() {
      return cut
    },
    waiting,
    clear,
  }
}
