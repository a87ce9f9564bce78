/**
 * A minimal WebSocket client (RFC 6455) over a plain net.Socket, for tests that need a reader that
 * really stops reading: `pause()` stops taking bytes from the socket, so the kernel's buffers fill
 * and the node's writes stall, as with a stuck client (a library client may keep reading into its
 * own buffers). Text frames are parsed losslessly; the close frame is kept with its code and reason.
 */
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { parseJson, stringifyJson } from '../../src/wire/json.ts'
import { Arrivals } from './arrivals.ts'

export interface RawEnvelope {
  id?: unknown
  code?: number
  message?: string
  result?: unknown
  method?: string
  params?: { subscription: string; result: unknown }
}

export class RawWsClient {
  /** text messages received, parsed */
  readonly messages: RawEnvelope[] = []
  /** bytes of text payload received */
  textBytes = 0
  /** the close frame, when one arrived */
  closeFrame: { code: number; reason: string } | undefined
  /** the socket ended or closed (with or without a close frame) */
  ended = false
  private pending: Buffer = Buffer.alloc(0)
  private nextId = 1
  private readonly arrivals = new Arrivals()

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.take(chunk))
    const end = (): void => {
      this.ended = true
      this.arrivals.wake()
    }
    socket.on('end', end)
    socket.on('close', end)
    socket.on('error', () => undefined)
  }

  /** opens a connection to `url` (ws://host:port/…) and completes the upgrade */
  static open(url: string): Promise<RawWsClient> {
    const target = new URL(url)
    return new Promise((resolve, reject) => {
      const socket = connect(Number(target.port), target.hostname)
      socket.once('error', reject)
      socket.once('connect', () =>
        socket.write(
          `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        ),
      )
      let head = Buffer.alloc(0)
      const onHead = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk])
        const end = head.indexOf('\r\n\r\n')
        if (end < 0) return
        socket.off('data', onHead)
        socket.off('error', reject)
        const status = head.subarray(0, end).toString('latin1').split('\r\n')[0]
        if (!/^HTTP\/1\.1 101 /.test(status)) {
          socket.destroy()
          reject(new Error(`upgrade refused: ${status}`))
          return
        }
        const client = new RawWsClient(socket)
        client.take(head.subarray(end + 4))
        resolve(client)
      }
      socket.on('data', onHead)
    })
  }

  /** stops reading: bytes stay in the kernel, the node's writes stall */
  pause(): void {
    this.socket.pause()
  }

  resume(): void {
    this.socket.resume()
  }

  /** sends one masked text frame (a client must mask) */
  sendText(text: string): void {
    this.sendFrame(0x1, Buffer.from(text, 'utf8'))
  }

  private sendFrame(opcode: number, payload: Buffer): void {
    const length = payload.length
    const head = length < 126 ? Buffer.alloc(2) : length < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10)
    head[0] = 0x80 | opcode
    if (length < 126) head[1] = 0x80 | length
    else if (length < 65_536) {
      head[1] = 0x80 | 126
      head.writeUInt16BE(length, 2)
    } else {
      head[1] = 0x80 | 127
      head.writeBigUInt64BE(BigInt(length), 2)
    }
    const mask = randomBytes(4)
    for (let i = 0; i < length; i++) payload[i] ^= mask[i & 3]
    this.socket.write(Buffer.concat([head, mask, payload]))
  }

  /** sends a request; its id */
  send(method: string, params?: unknown[]): number {
    const id = this.nextId++
    this.sendText(stringifyJson({ jsonrpc: '2.0', namespace: 'global', id, method, ...(params === undefined ? {} : { params }) }))
    return id
  }

  reply(id: unknown): RawEnvelope | undefined {
    return this.messages.find((message) => message.id === id)
  }

  /** sends a request and waits for its reply */
  async request(method: string, params?: unknown[], timeoutMs = 10_000): Promise<RawEnvelope> {
    const id = this.send(method, params)
    await this.until(() => this.reply(id) !== undefined, `the reply to ${method}`, timeoutMs)
    return this.reply(id) as RawEnvelope
  }

  /** the results pushed to `subscription`, in arrival order */
  pushed<T = unknown>(subscription: string): T[] {
    return this.messages
      .filter((message) => message.method === 'sub_subscription' && message.params?.subscription === subscription)
      .map((message) => message.params?.result as T)
  }

  /** resolves when `predicate` holds; rejects after `timeoutMs` */
  until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return this.arrivals.until(predicate, what, timeoutMs)
  }

  destroy(): void {
    this.socket.destroy()
  }

  private take(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    for (;;) {
      const frame = this.pending
      if (frame.length < 2) break
      const opcode = frame[0] & 0x0f
      let length = frame[1] & 0x7f
      let offset = 2
      if (length === 126) {
        if (frame.length < 4) break
        length = frame.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (frame.length < 10) break
        length = Number(frame.readBigUInt64BE(2))
        offset = 10
      }
      if (frame.length < offset + length) break
      const payload = frame.subarray(offset, offset + length)
      this.pending = frame.subarray(offset + length)
      if (opcode === 0x1) {
        this.textBytes += length
        this.messages.push(parseJson(payload.toString('utf8'), { maxDepth: 512 }) as RawEnvelope)
      } else if (opcode === 0x8 && this.closeFrame === undefined) {
        this.closeFrame = { code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005, reason: payload.subarray(2).toString('utf8') }
        // the closing handshake: echo the code, as a client does
        if (!this.socket.destroyed) this.sendFrame(0x8, Buffer.from(payload.subarray(0, 2)))
      }
    }
    this.arrivals.wake()
  }
}
