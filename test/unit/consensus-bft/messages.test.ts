/** The consensus wire codec and the commit certificate check (what NVPs and state transfer rely on). */
import { generateKeyPairSync, sign, verify } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  batchDigest,
  type Commit,
  decodeMessage,
  encodeMessage,
  type Hex,
  type MemberVote,
  MessageError,
  type PrePrepare,
  type Signed,
  signingBytes,
} from '../../../src/consensus/bft/messages.ts'
import { quorumOf, verifyCommitCertificate } from '../../../src/consensus/bft/replica.ts'
import { pack } from '../../../src/wire/binary.ts'

const keys = new Map([1, 2, 3, 4, 5].map((id) => [id, generateKeyPairSync('ed25519')]))
const signAs = <T extends Signed['body']>(from: number, body: T): Signed<T> => ({
  from,
  body,
  sig: sign(null, signingBytes(from, body), keys.get(from)!.privateKey).toString('hex'),
})
const check = (replica: number, bytes: Uint8Array, signature: Uint8Array) => {
  const key = keys.get(replica)
  return key !== undefined && verify(null, bytes, key.publicKey, signature)
}
const h = (c: string) => `0x${c.repeat(64)}` as Hex

test('every message type round-trips through the wire exactly, bigints included', () => {
  const timestamp = 1_800_000_000_123_456_789n
  const pp = signAs(1, {
    type: 'pre-prepare',
    view: 3,
    seq: 41,
    timestamp,
    txHashes: [h('a'), h('b')],
    digest: batchDigest(41, timestamp, [h('a'), h('b')]),
  })
  const prepare = signAs(2, { type: 'prepare', view: 3, seq: 41, digest: pp.body.digest })
  const checkpoint = signAs(3, { type: 'checkpoint', seq: 40, blockHash: h('c') })
  const viewChange = signAs(4, {
    type: 'view-change',
    view: 4,
    stable: { seq: 40, blockHash: h('c'), proof: [checkpoint] },
    prepared: [{ prePrepare: pp, prepares: [prepare] }],
  })
  const newView = signAs(1, { type: 'new-view', view: 4, viewChanges: [viewChange], prePrepares: [pp] })
  const slotRequest = signAs(3, { type: 'slot-request', view: 3, seq: 41 })
  for (const message of [pp, prepare, checkpoint, viewChange, newView, signAs(2, { type: 'heartbeat', view: 3, seq: 41 }), slotRequest]) {
    assert.equal(decodeMessage(encodeMessage(message)), message)
  }
})

test('malformed and unknown messages are refused by the codec, never half-read', () => {
  const bad = [
    'not json',
    '{"from":1,"sig":"ab","body":{"type":"steal"}}',
    '{"from":1,"sig":"ab","body":{"type":"prepare","view":-1,"seq":1,"digest":"0x00"}}',
    '{"from":"1","sig":"ab","body":{"type":"heartbeat","view":0,"seq":0}}',
    '{"from":1,"sig":"zz","body":{"type":"heartbeat","view":0,"seq":0}}',
    `{"from":1,"sig":"ab","body":{"type":"pre-prepare","view":0,"seq":1,"timestamp":1,"txHashes":${JSON.stringify(Array(2001).fill(h('a')))},"digest":"${h('a')}"}}`,
    `${'['.repeat(50)}${']'.repeat(50)}`,
    '{"from":1,"sig":"ab","body":{"type":"slot-request","view":0}}',
    '{"from":1,"sig":"ab","body":{"type":"slot-request","view":0,"seq":1.5}}',
    '{"from":1,"sig":"ab","body":{"type":"slot-request","view":"0","seq":1}}',
    '{"from":1,"sig":"ab","body":{"type":"slot-request","view":0,"seq":-1}}',
  ]
  // the wire is msgpack: each case is the JSON's value packed, as a peer could send it
  const packed = bad.map((text): [Uint8Array, string] => {
    try {
      return [pack(JSON.parse(text)), text]
    } catch {
      return [new TextEncoder().encode(text), text]
    }
  })
  const nested = new Uint8Array(200_001).fill(0x91) // 200,000 lists in lists: too deep to decode
  packed.push([nested, 'nested lists'], [Uint8Array.of(0x92, 0x01), 'cut short'])
  for (const [bytes, text] of packed)
    assert.throws(
      () => decodeMessage(bytes),
      (e: Error) => e instanceof MessageError,
      text.slice(0, 60),
    )
})

test('a commit certificate needs a quorum of distinct, valid signers for that seq and digest', () => {
  const digest = h('d')
  const commit = (from: number, over: Partial<Commit> = {}) => signAs(from, { type: 'commit', view: 2, seq: 7, digest, ...over } as Commit)
  const expected = { seq: 7, digest, members: [1, 2, 3, 4] }
  assert.is(quorumOf(4), 3)
  assert.ok(verifyCommitCertificate([commit(1), commit(2), commit(3)], expected, check))
  assert.not.ok(verifyCommitCertificate([commit(1), commit(2), commit(2)], expected, check), 'the same signer twice')
  assert.not.ok(verifyCommitCertificate([commit(1), commit(2), commit(3, { digest: h('e') })], expected, check), 'another digest')
  assert.not.ok(verifyCommitCertificate([commit(1), commit(2), commit(3, { view: 3 })], expected, check), 'mixed views')
  const forged = { ...commit(3), from: 4 }
  assert.not.ok(verifyCommitCertificate([commit(1), commit(2), forged], expected, check), 'a signature of another replica')
  assert.not.ok(verifyCommitCertificate([commit(1), commit(2), commit(5)], expected, check), 'no such replica')
})

test('membership votes: a pre-prepare carries them signed, its digest covers them, and a malformed one is refused', () => {
  const timestamp = 1_800_000_000_000_000_000n
  const votes = [signAs<MemberVote>(2, { type: 'member-vote', action: 'delete', target: 5 })]
  const withVotes = batchDigest(12, timestamp, [h('a')], votes)
  assert.is.not(withVotes, batchDigest(12, timestamp, [h('a')]), 'the digest covers the votes')
  assert.is(batchDigest(12, timestamp, [h('a')], []), batchDigest(12, timestamp, [h('a')]), 'no votes: the digest of before')
  const pp = signAs<PrePrepare>(1, { type: 'pre-prepare', view: 0, seq: 12, timestamp, txHashes: [h('a')], votes, digest: withVotes })
  const back = decodeMessage(encodeMessage(pp)) as Signed<PrePrepare>
  assert.equal(back, pp)
  assert.ok(
    check(2, signingBytes(2, back.body.votes![0].body), Buffer.from(back.body.votes![0].sig, 'hex')),
    "the voter's signature survives",
  )
  const isMessageError = (error: unknown) => error instanceof MessageError
  const bad = (body: unknown) => () => decodeMessage(pack({ from: 2, sig: 'aa', body }))
  assert.throws(bad({ type: 'member-vote', action: 'join', target: 5 }), isMessageError)
  assert.throws(bad({ type: 'member-vote', action: 'delete', target: -1 }), isMessageError)
  assert.throws(
    bad({ ...pp.body, timestamp: 1, votes: [{ from: 2, sig: 'aa', body: { type: 'prepare', view: 0, seq: 1, digest: h('a') } }] }),
    isMessageError,
  )
})

test.run()
