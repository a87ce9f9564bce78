/** Peer link frames: round trips, refusal of malformed bytes, and the handshake transcript's binding. */
import { randomBytes } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { nodeHash } from '../../../src/crypto/hash.ts'
import {
  authTranscript,
  decodeBatch,
  decodeFrame,
  encodeAuth,
  encodeBatch,
  encodeData,
  encodeHello,
  encodePing,
  encodeRequest,
  encodeResponse,
  FrameError,
  type Hello,
} from '../../../src/p2p/link-frames.ts'

const hello: Hello = {
  version: 1,
  vp: true,
  bootId: randomBytes(16),
  nonce: randomBytes(32),
  listenPort: 50011,
  hostname: 'node1',
  namespace: 'global',
  certDer: randomBytes(400),
}

test('node hash: protocol.md vectors (Keccak-256 of hostname + namespace, lower-case hex, no 0x)', () => {
  const hash = nodeHash('node1', 'global')
  assert.match(hash, /^fa34664e[0-9a-f]{52}663a$/)
  assert.match(nodeHash('node5', 'global'), /^55d3c05f[0-9a-f]{52}03bc$/)
})

test('every frame kind round-trips', () => {
  assert.equal(decodeFrame(encodeHello(hello)), { kind: 'hello', ...hello })
  const signature = randomBytes(64)
  assert.equal(decodeFrame(encodeAuth(signature)), { kind: 'auth', signature })
  const payload = Buffer.from('payload')
  assert.equal(decodeFrame(encodeData(65535, 2n ** 64n - 1n, payload)), { kind: 'data', channel: 65535, seq: 2n ** 64n - 1n, payload })
  assert.equal(decodeFrame(encodeRequest(7, 3n, 0xffffffff, payload)), {
    kind: 'request',
    channel: 7,
    seq: 3n,
    requestId: 0xffffffff,
    payload,
  })
  assert.equal(decodeFrame(encodeResponse(4n, 9, false, payload)), { kind: 'response', seq: 4n, requestId: 9, ok: false, payload })
  assert.equal(decodeFrame(encodePing('ping', 5, 123n)), { kind: 'ping', id: 5, time: 123n })
  assert.equal(decodeFrame(encodePing('pong', 5, 123n)), { kind: 'pong', id: 5, time: 123n })
  assert.equal(decodeFrame(encodeData(1, 1n, Buffer.alloc(0))), { kind: 'data', channel: 1, seq: 1n, payload: Buffer.alloc(0) })
})

test('malformed frames throw FrameError, never anything else', () => {
  const bad = [
    Buffer.alloc(0),
    Buffer.from([0]),
    Buffer.from([99, 1, 2]),
    Buffer.from([3, 0, 1]),
    Buffer.from([4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]),
    encodeResponse(1n, 1, true, Buffer.alloc(0)).fill(7, 13, 14),
    encodeAuth(randomBytes(63)),
    encodePing('ping', 1, 1n).subarray(0, 12),
    encodeHello(hello).subarray(0, 60),
    Buffer.concat([encodeHello(hello), Buffer.from([0])]),
    Buffer.from(encodeHello(hello)).fill(2, 2, 3),
  ]
  for (const bytes of bad)
    assert.throws(
      () => decodeFrame(bytes),
      (e: unknown) => e instanceof FrameError,
      bytes.toString('hex').slice(0, 40),
    )
  // random garbage of every length: FrameError or a frame, no other exception
  for (let i = 0; i < 2000; i++) {
    const bytes = randomBytes(i % 120)
    try {
      decodeFrame(bytes)
    } catch (error) {
      assert.instance(error, FrameError)
    }
  }
})

test('BATCH: the frames of a burst in one message, in order; only sequenced frames inside; malformed batches refused', () => {
  const frames = [
    encodeData(1, 1n, Buffer.from('a')),
    encodeRequest(2, 2n, 7, Buffer.from('b')),
    encodeResponse(3n, 8, true, Buffer.alloc(0)),
  ]
  const batch = encodeBatch(frames)
  assert.equal(decodeBatch(batch), frames)
  assert.equal(decodeBatch(encodeBatch([])), [])
  const refused = (bytes: Buffer, message: RegExp): void =>
    assert.throws(
      () => decodeBatch(bytes),
      (e: unknown) => e instanceof FrameError && message.test(e.message),
    )
  refused(encodeBatch([encodeHello(hello)]), /frame kind 1 cannot be batched/)
  refused(encodeBatch([encodeBatch([frames[0]])]), /frame kind 8 cannot be batched/)
  refused(encodeBatch([encodePing('ping', 1, 1n)]), /frame kind 6/)
  refused(Buffer.from(batch).fill(0xff, 1, 5), /cannot fit/)
  refused(Buffer.concat([batch, Buffer.from([0])]), /trailing bytes/)
  refused(batch.subarray(0, batch.length - 1), /out of range/)
  refused(Buffer.from([8, 0, 0, 0, 1, 0, 0, 0, 0, 3]), /out of range/)
  refused(Buffer.from([8, 0]), /malformed header/)
  assert.throws(
    () => decodeFrame(batch),
    (e: unknown) => e instanceof FrameError,
    'not a single frame',
  )
})

test('the auth transcript binds both hellos and the signer side', () => {
  const dialer = encodeHello(hello)
  const listener = encodeHello({ ...hello, hostname: 'node2', nonce: randomBytes(32) })
  const base = authTranscript('dialer', dialer, listener)
  assert.not.equal(base, authTranscript('listener', dialer, listener), 'a reflected signature does not pass')
  assert.not.equal(
    base,
    authTranscript('dialer', dialer, encodeHello({ ...hello, hostname: 'node2', nonce: randomBytes(32) })),
    'fresh nonce',
  )
  assert.not.equal(base, authTranscript('dialer', listener, dialer))
  assert.equal(base, authTranscript('dialer', dialer, listener), 'deterministic')
})

test.run()
