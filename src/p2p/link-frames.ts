/**
 * Frames of Keel's peer link. One gRPC message on the bidirectional `Link` stream carries one frame;
 * integers are big-endian. Exported on their own so test stubs (and later the byzantine peer of
 * reliability.md Part C 4) speak the same bytes as the node.
 *
 *   HELLO    01 | version u8 | role u8 (1 VP, 0 NVP) | bootId 16 | nonce 32 | listenPort u16
 *               | hostname (u16 length + UTF-8) | namespace (u16 + UTF-8) | cert DER (u32 + bytes)
 *   AUTH     02 | signature (ECDSA P-256/SHA-256, IEEE P1363 r‖s, 64 bytes) over authTranscript()
 *   DATA     03 | channel u16 | seq u64 | payload
 *   REQUEST  04 | channel u16 | seq u64 | requestId u32 | payload
 *   RESPONSE 05 | seq u64 | requestId u32 | ok u8 | payload (the error text when ok = 0)
 *   PING     06 | id u32 | time u64 (sender's monotonic clock, ns)
 *   PONG     07 | id u32 | time u64 (echoed)
 *   BATCH    08 | count u32 | count × (length u32 | DATA, REQUEST or RESPONSE frame)
 *
 * BATCH exists for throughput: grpc-js costs about the same per message whatever its size, so the
 * frames queued for a link during one turn of the event loop leave as one gRPC message.
 *
 * `seq` counts DATA, REQUEST and RESPONSE frames from one sender process (bootId) to one receiver,
 * across connections; a receiver delivers only a seq above the last it delivered from that boot.
 * So a frame replayed from an earlier connection, or overtaken on a replaced connection, is dropped.
 */
import { createHash } from 'node:crypto'

/**
 * 2: the channels' payloads are msgpack (transactions, consensus messages, block sync), where 1's
 * were JSON; a peer of the other version is refused at the hello, with both versions named.
 */
export const PROTOCOL_VERSION = 2
export const FRAME = { hello: 1, auth: 2, data: 3, request: 4, response: 5, ping: 6, pong: 7, batch: 8 } as const

export interface Hello {
  version: number
  vp: boolean
  bootId: Buffer
  nonce: Buffer
  listenPort: number
  hostname: string
  namespace: string
  certDer: Buffer
}

export type Frame =
  | ({ kind: 'hello' } & Hello)
  | { kind: 'auth'; signature: Buffer }
  | { kind: 'data'; channel: number; seq: bigint; payload: Buffer }
  | { kind: 'request'; channel: number; seq: bigint; requestId: number; payload: Buffer }
  | { kind: 'response'; seq: bigint; requestId: number; ok: boolean; payload: Buffer }
  | { kind: 'ping' | 'pong'; id: number; time: bigint }

/** Thrown on any malformed frame; the link that sent it is closed. */
export class FrameError extends Error {
  override readonly name = 'FrameError'
}

export function encodeHello(hello: Hello): Buffer {
  const host = Buffer.from(hello.hostname, 'utf8')
  const ns = Buffer.from(hello.namespace, 'utf8')
  const out = Buffer.alloc(1 + 1 + 1 + 16 + 32 + 2 + 2 + host.length + 2 + ns.length + 4 + hello.certDer.length)
  let at = out.writeUInt8(FRAME.hello, 0)
  at = out.writeUInt8(hello.version, at)
  at = out.writeUInt8(hello.vp ? 1 : 0, at)
  at += hello.bootId.copy(out, at, 0, 16)
  at += hello.nonce.copy(out, at, 0, 32)
  at = out.writeUInt16BE(hello.listenPort, at)
  at = out.writeUInt16BE(host.length, at)
  at += host.copy(out, at)
  at = out.writeUInt16BE(ns.length, at)
  at += ns.copy(out, at)
  at = out.writeUInt32BE(hello.certDer.length, at)
  hello.certDer.copy(out, at)
  return out
}

export function encodeAuth(signature: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([FRAME.auth]), signature])
}

export function encodeData(channel: number, seq: bigint, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(11 + payload.length)
  out.writeUInt8(FRAME.data, 0)
  out.writeUInt16BE(channel, 1)
  out.writeBigUInt64BE(seq, 3)
  out.set(payload, 11)
  return out
}

export function encodeRequest(channel: number, seq: bigint, requestId: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(15 + payload.length)
  out.writeUInt8(FRAME.request, 0)
  out.writeUInt16BE(channel, 1)
  out.writeBigUInt64BE(seq, 3)
  out.writeUInt32BE(requestId, 11)
  out.set(payload, 15)
  return out
}

export function encodeResponse(seq: bigint, requestId: number, ok: boolean, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(14 + payload.length)
  out.writeUInt8(FRAME.response, 0)
  out.writeBigUInt64BE(seq, 1)
  out.writeUInt32BE(requestId, 9)
  out.writeUInt8(ok ? 1 : 0, 13)
  out.set(payload, 14)
  return out
}

export function encodePing(kind: 'ping' | 'pong', id: number, time: bigint): Buffer {
  const out = Buffer.allocUnsafe(13)
  out.writeUInt8(kind === 'ping' ? FRAME.ping : FRAME.pong, 0)
  out.writeUInt32BE(id, 1)
  out.writeBigUInt64BE(time, 5)
  return out
}

/** Decodes one frame; payloads are views into `bytes`. Throws FrameError on anything malformed. */
export function decodeFrame(bytes: Buffer): Frame {
  const need = (length: number): void => {
    if (bytes.length < length) throw new FrameError(`frame of kind ${bytes[0]} too short (${bytes.length} bytes)`)
  }
  need(1)
  switch (bytes[0]) {
    case FRAME.hello: {
      need(56)
      const version = bytes.readUInt8(1)
      const role = bytes.readUInt8(2)
      if (role > 1) throw new FrameError(`hello: role byte ${role}`)
      const bootId = bytes.subarray(3, 19)
      const nonce = bytes.subarray(19, 51)
      const listenPort = bytes.readUInt16BE(51)
      let at = 53
      const text = (): string => {
        need(at + 2)
        const length = bytes.readUInt16BE(at)
        need(at + 2 + length)
        const value = bytes.subarray(at + 2, at + 2 + length).toString('utf8')
        at += 2 + length
        return value
      }
      const hostname = text()
      const namespace = text()
      need(at + 4)
      const certLength = bytes.readUInt32BE(at)
      if (bytes.length !== at + 4 + certLength) throw new FrameError('hello: certificate length does not match the frame')
      const certDer = bytes.subarray(at + 4)
      return { kind: 'hello', version, vp: role === 1, bootId, nonce, listenPort, hostname, namespace, certDer }
    }
    case FRAME.auth:
      if (bytes.length !== 65) throw new FrameError(`auth: signature of ${bytes.length - 1} bytes, 64 expected`)
      return { kind: 'auth', signature: bytes.subarray(1) }
    case FRAME.data:
      need(11)
      return { kind: 'data', channel: bytes.readUInt16BE(1), seq: bytes.readBigUInt64BE(3), payload: bytes.subarray(11) }
    case FRAME.request:
      need(15)
      return {
        kind: 'request',
        channel: bytes.readUInt16BE(1),
        seq: bytes.readBigUInt64BE(3),
        requestId: bytes.readUInt32BE(11),
        payload: bytes.subarray(15),
      }
    case FRAME.response: {
      need(14)
      const ok = bytes.readUInt8(13)
      if (ok > 1) throw new FrameError(`response: ok byte ${ok}`)
      return {
        kind: 'response',
        seq: bytes.readBigUInt64BE(1),
        requestId: bytes.readUInt32BE(9),
        ok: ok === 1,
        payload: bytes.subarray(14),
      }
    }
    case FRAME.ping:
    case FRAME.pong:
      if (bytes.length !== 13) throw new FrameError(`ping/pong of ${bytes.length} bytes, 13 expected`)
      return { kind: bytes[0] === FRAME.ping ? 'ping' : 'pong', id: bytes.readUInt32BE(1), time: bytes.readBigUInt64BE(5) }
    default:
      throw new FrameError(`unknown frame kind ${bytes[0]}`)
  }
}

export function encodeBatch(frames: Buffer[]): Buffer {
  let length = 5
  for (const frame of frames) length += 4 + frame.length
  const out = Buffer.allocUnsafe(length)
  out.writeUInt8(FRAME.batch, 0)
  out.writeUInt32BE(frames.length, 1)
  let at = 5
  for (const frame of frames) {
    out.writeUInt32BE(frame.length, at)
    at += 4 + frame.copy(out, at + 4)
  }
  return out
}

/** The frames of a BATCH (views into `bytes`); only DATA, REQUEST and RESPONSE may be inside. */
export function decodeBatch(bytes: Buffer): Buffer[] {
  if (bytes.length < 5 || bytes[0] !== FRAME.batch) throw new FrameError('batch: malformed header')
  const count = bytes.readUInt32BE(1)
  // each entry takes at least 5 bytes, so a lying count is caught before any allocation
  if (count * 5 > bytes.length - 5) throw new FrameError(`batch: ${count} frames cannot fit in ${bytes.length} bytes`)
  const frames: Buffer[] = []
  let at = 5
  for (let i = 0; i < count; i++) {
    if (at + 4 > bytes.length) throw new FrameError('batch: truncated')
    const length = bytes.readUInt32BE(at)
    if (length === 0 || at + 4 + length > bytes.length) throw new FrameError('batch: frame length out of range')
    const frame = bytes.subarray(at + 4, at + 4 + length)
    if (frame[0] !== FRAME.data && frame[0] !== FRAME.request && frame[0] !== FRAME.response)
      throw new FrameError(`batch: frame kind ${frame[0]} cannot be batched`)
    frames.push(frame)
    at += 4 + length
  }
  if (at !== bytes.length) throw new FrameError('batch: trailing bytes')
  return frames
}

/**
 * What each side signs to prove it holds its certificate's key on THIS connection: both HELLO frames
 * (so both fresh nonces, both host names, boot ids and certificates) and which side is signing.
 * A signature from another connection, or the other side's signature reflected back, never matches.
 */
export function authTranscript(signer: 'dialer' | 'listener', dialerHello: Buffer, listenerHello: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`keel-p2p-auth-v${PROTOCOL_VERSION}/${signer}\0`, 'utf8'),
    createHash('sha256').update(dialerHello).digest(),
    createHash('sha256').update(listenerHello).digest(),
  ])
}
