/**
 * A minimal HTTP/1.1 keep-alive client for the load generator: one request in flight per
 * connection, the request written as one string, the reply read by Content-Length (or chunked).
 * node:http's client costs ~150 µs of CPU a request on these machines, which capped the read
 * workloads at ~5,500 requests/s while the node sat 60% idle: the benchmark measured itself.
 */
import net from 'node:net'

const HEADER_END = Buffer.from('\r\n\r\n')

export interface RawConnection {
  /** POSTs `body` and resolves with the reply body; rejects on a non-2xx status or a closed connection */
  post(body: string): Promise<string>
  /** true once the socket is gone (the node closes idle keep-alive connections): open a new one */
  readonly closed: boolean
  close(): void
}

export async function rawConnection(url: string): Promise<RawConnection> {
  const target = new URL(url)
  const socket = net.connect(Number(target.port || 80), target.hostname)
  socket.setNoDelay(true)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const head = `POST ${target.pathname || '/'} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\ncontent-length: `
  let buffered: Buffer = Buffer.alloc(0)
  let waiting: { resolve(text: string): void; reject(error: Error): void } | undefined
  let closed = false
  const fail = (error: Error): void => {
    waiting?.reject(error)
    waiting = undefined
  }
  socket.on('error', fail)
  socket.on('close', () => {
    closed = true
    fail(new Error('connection closed by the node'))
  })
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
    const reply = takeReply()
    if (reply === undefined || waiting === undefined) return
    const { resolve, reject } = waiting
    waiting = undefined
    if (reply.status >= 200 && reply.status < 300) resolve(reply.body)
    else reject(new Error(`HTTP ${reply.status}: ${reply.body.slice(0, 200)}`))
  })

  /** one complete reply off the front of the buffer, if there is one */
  const takeReply = (): { status: number; body: string } | undefined => {
    const end = buffered.indexOf(HEADER_END)
    if (end < 0) return undefined
    const headers = buffered.subarray(0, end).toString('latin1')
    const status = Number(headers.slice(9, 12))
    const length = /\r\ncontent-length: *(\d+)/i.exec(headers)
    if (length !== null) {
      const total = end + 4 + Number(length[1])
      if (buffered.length < total) return undefined
      const body = buffered.subarray(end + 4, total).toString()
      buffered = buffered.subarray(total)
      return { status, body }
    }
    // chunked: sizes in hex, each chunk followed by CRLF, a zero-size chunk ends the body
    const parts: Buffer[] = []
    let at = end + 4
    for (;;) {
      const lineEnd = buffered.indexOf('\r\n', at)
      if (lineEnd < 0) return undefined
      const size = Number.parseInt(buffered.subarray(at, lineEnd).toString('latin1'), 16)
      if (buffered.length < lineEnd + 2 + size + 2) return undefined
      if (size === 0) {
        buffered = buffered.subarray(lineEnd + 4)
        return { status, body: Buffer.concat(parts).toString() }
      }
      parts.push(buffered.subarray(lineEnd + 2, lineEnd + 2 + size))
      at = lineEnd + 2 + size + 2
    }
  }

  return {
    post(body) {
      if (waiting !== undefined) throw new Error('rawConnection: one request at a time')
      // a write to a closed socket neither fails nor calls back: the reply would be awaited for ever
      if (closed) return Promise.reject(new Error('connection closed by the node'))
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject }
        socket.write(`${head}${Buffer.byteLength(body)}\r\n\r\n${body}`)
      })
    },
    get closed() {
      return closed
    },
    close: () => socket.destroy(),
  }
}
