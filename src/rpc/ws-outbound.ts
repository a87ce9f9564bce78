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

export function createOutbound(ws: WebSocket, limits: OutboundLimits, onCut: (why: string) => void): Outbound {
  let queue: Buffer[] = []
  let queueHead = 0
  let queuedBytes = 0
  // frame sizes of messages handed to the socket, oldest first, not yet known to be taken by the kernel
  let inSocket: number[] = []
  let inSocketHead = 0
  let inSocketBytes = 0
  let cut = false

  const queued = (): number => queue.length - queueHead

  /** forgets the frames the kernel has taken: the socket's buffer holds only the newest bytes written */
  const settle = (): void => {
    const buffered = ws.bufferedAmount
    while (inSocketHead < inSocket.length && inSocketBytes - inSocket[inSocketHead] >= buffered) {
      inSocketBytes -= inSocket[inSocketHead]
      inSocketHead++
    }
    if (inSocketHead === inSocket.length) {
      inSocket = []
      inSocketHead = 0
    } else if (inSocketHead > 1024 && inSocketHead * 2 > inSocket.length) {
      inSocket = inSocket.slice(inSocketHead)
      inSocketHead = 0
    }
  }

  const afterWrite = (error?: Error | null): void => {
    // Node calls write callbacks with null on success
    if (error != null || cut) return
    settle()
    if (queued() > 0) flush()
  }

  const send = (bytes: Buffer): void => {
    inSocket.push(frameSize(bytes.length))
    inSocketBytes += inSocket[inSocket.length - 1]
    ws.send(bytes, { binary: false }, afterWrite)
  }

  const flush = (): void => {
    while (queued() > 0 && ws.readyState === ws.OPEN && ws.bufferedAmount < WRITE_HIGH_WATER) {
      const bytes = queue[queueHead] as Buffer
      queueHead++
      queuedBytes -= bytes.length
      send(bytes)
    }
    if (queueHead === queue.length) {
      queue = []
      queueHead = 0
    } else if (queueHead > 1024 && queueHead * 2 > queue.length) {
      queue = queue.slice(queueHead)
      queueHead = 0
    }
  }

  const clear = (): void => {
    queue = []
    queueHead = 0
    queuedBytes = 0
  }

  const waiting = (): { messages: number; bytes: number } => {
    settle()
    return { messages: inSocket.length - inSocketHead + queued(), bytes: ws.bufferedAmount + queuedBytes }
  }

  return {
    write(text) {
      if (cut || ws.readyState !== ws.OPEN) return
      const bytes = Buffer.from(text, 'utf8')
      if (queued() === 0 && ws.bufferedAmount < WRITE_HIGH_WATER) send(bytes)
      else {
        queue.push(bytes)
        queuedBytes += bytes.length
      }
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
