/**
 * Block sync between two real stores: the source serves consensus blocks (batch and proof kept in
 * keyspace 24), the receiver walks forward from its tip. `apply` here commits the source's own
 * block record (replaying through the producer is the integration test's job); the transport is
 * a direct call into the serving handler.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { batchDigest, type Commit, type Signed } from '../../../src/consensus/bft/messages.ts'
import type { Hex } from '../../../src/domain.ts'
import { createLogger } from '../../../src/log.ts'
import { createBlockSync, decodeBlocks, readBlocks, SyncError, type SyncNetwork, serveBlocks } from '../../../src/network/block-sync.ts'
import { Channel } from '../../../src/network/channels.ts'
import { decodeProof, encodeProof } from '../../../src/network/proof.ts'
import { openStore, type Store } from '../../../src/store/index.ts'
import type { BlockCommit } from '../../../src/store/types.ts'
import { pack } from '../../../src/wire/binary.ts'
import { openReply, packReply } from '../../helpers/block-reply.ts'
import { wallet } from '../../helpers/wallet.ts'
import { nextBlock, tempDir } from '../store/fixtures.ts'

const nowNs = () => BigInt(Date.now()) * 1_000_000n
const alice = wallet()
const log = createLogger({ level: 'silent' })

/** a source store with `count` consensus blocks of two real signed transfers each (one recorded invalid) */
async function sourceChain(count: number): Promise<{ store: Store; commits: Map<number, BlockCommit> }> {
  const store = await openStore(`${tempDir('sync-source')}/ledger`)
  const commits = new Map<number, BlockCommit>()
  for (let i = 0; i < count; i++) {
    const [good, bad] = [1, 2].map(() => admitTransaction('transfer', alice.transfer(wallet().address, 1), { nowNs }))
    const block = { ...nextBlock(store, { valid: [good], invalid: [bad] }) }
    // the batch also names a transaction of the block before, skipped at execution
    const earlier = commits.get(block.header.number - 1)?.txs[0].tx.hash
    block.batch = {
      view: 0,
      txHashes: earlier === undefined ? [bad.hash, good.hash] : [bad.hash, earlier, good.hash],
      proof: Uint8Array.of(block.header.number),
    }
    await store.commitBlock(block)
    commits.set(block.header.number, block)
  }
  return { store, commits }
}

type Handler = (from: { hostname: string }, payload: Uint8Array) => Promise<Uint8Array>

/** peers by name, each answering requests with its own serving handler */
function network(peers: Record<string, Handler>): SyncNetwork {
  return {
    onRequest: () => assert.unreachable('the receiver serves nothing here'),
    request: async (hostname, channel, payload) => {
      assert.is(channel, Channel.fetchBlocks)
      const handler = peers[hostname]
      if (handler === undefined) throw new Error(`${hostname} is not connected`)
      return handler({ hostname: 'receiver' }, payload)
    },
  }
}

function servingHandler(store: Store) {
  let handler: Handler | undefined
  serveBlocks(
    {
      onRequest: (_channel, h) => {
        handler = h
      },
      request: () => Promise.reject(new Error('the source asks nothing here')),
    },
    store,
  )
  return handler!
}

const tipOf = (store: Store) => () => {
  const number = store.height()
  return { number, hash: (number === 0 ? `0x${'0'.repeat(64)}` : store.getBlock(number)!.hash) as Hex }
}

test('blocks travel with their batch in execution order, transactions re-admitted, proof and time exact', async () => {
  const { store, commits } = await sourceChain(3)
  const blocks = decodeBlocks(readBlocks(store, 2, 10), nowNs)
  assert.equal(
    blocks.map((b) => b.number),
    [2, 3],
  )
  assert.equal(blocks[0].txHashes, commits.get(2)!.batch!.txHashes, 'the batch as named, the skipped one included')
  assert.equal(
    blocks[0].txs.map((tx) => tx.hash),
    [commits.get(2)!.invalid[0].tx.hash, commits.get(2)!.txs[0].tx.hash],
    'bodies of what the block executed, in batch order',
  )
  assert.is(blocks[0].timestamp, commits.get(2)!.header.writeTime)
  assert.equal([...blocks[1].proof], [3])
  assert.is(blocks[1].parentHash, commits.get(2)!.header.hash)
  await store.close()
})

test("a reply whose bodies are not its batch's, in order, is refused", async () => {
  const { store } = await sourceChain(2)
  const reply = openReply(readBlocks(store, 2, 2))
  ;(reply[0].txHashes as string[]).reverse()
  assert.throws(() => decodeBlocks(packReply(reply), nowNs), /which its batch does not name in that place/)
  await store.close()
})

/** a proof whose commits name `digest` (signatures are not checked here: the digest is what the served time must reproduce) */
const proofNaming = (seq: number, digest: Hex): Uint8Array =>
  encodeProof([1, 2, 3].map((from): Signed<Commit> => ({ from, sig: 'ab'.repeat(64), body: { type: 'commit', view: 2, seq, digest } })))

test('a batch is served with the time its proof signs, not its block time the producer moved past the parent (a view change leaves empty batches at time 0; a clock may step back)', async () => {
  const { store } = await sourceChain(2)
  // an empty batch of time 0 after a view change: its block's time is its parent's + 1
  const empty = nextBlock(store, { writeTime: store.getBlock(2)!.writeTime + 1n })
  empty.batch = { view: 2, txHashes: [], proof: proofNaming(3, batchDigest(3, 0n, [])), timestamp: 0n }
  await store.commitBlock(empty)
  // a batch timed before its parent (the new primary's clock behind the old one's)
  const tx = admitTransaction('transfer', alice.transfer(wallet().address, 1), { nowNs })
  const stepped = nextBlock(store, { valid: [tx], writeTime: store.getBlock(3)!.writeTime + 1n })
  const steppedTime = store.getBlock(3)!.writeTime - 5_000n
  stepped.batch = { view: 2, txHashes: [tx.hash], proof: proofNaming(4, batchDigest(4, steppedTime, [tx.hash])), timestamp: steppedTime }
  await store.commitBlock(stepped)
  const [third, fourth] = decodeBlocks(readBlocks(store, 3, 4), nowNs)
  assert.is(third.timestamp, 0n)
  assert.is(fourth.timestamp, steppedTime)
  for (const block of [third, fourth]) {
    const { body } = decodeProof(block.proof).commits[0]
    assert.is(
      batchDigest(block.number, block.timestamp, block.txHashes),
      body.digest,
      `block ${block.number}: the served time reproduces the signed digest`,
    )
  }
  await store.close()
})

test('a record written before batches kept their time: an empty batch whose proof signs time 0 is served with 0; others with the block time', async () => {
  const { store } = await sourceChain(2)
  const empty = nextBlock(store, { writeTime: store.getBlock(2)!.writeTime + 1n })
  empty.batch = { view: 2, txHashes: [], proof: proofNaming(3, batchDigest(3, 0n, [])) }
  await store.commitBlock(empty)
  const dated = nextBlock(store)
  dated.batch = { view: 2, txHashes: [], proof: proofNaming(4, batchDigest(4, dated.header.writeTime, [])) }
  await store.commitBlock(dated)
  const [third, fourth] = decodeBlocks(readBlocks(store, 3, 4), nowNs)
  assert.is(third.timestamp, 0n)
  assert.is(fourth.timestamp, dated.header.writeTime)
  await store.close()
})

test("a null slot's empty block (batch time 0, as a view change leaves it) travels; time 0 with transactions does not", async () => {
  const { store } = await sourceChain(2)
  const reply = openReply(readBlocks(store, 2, 2))
  const nullSlot = [{ ...reply[0], timestamp: 0, txHashes: [], txs: [] }]
  assert.is(decodeBlocks(packReply(nullSlot), nowNs)[0].timestamp, 0n)
  const dated0 = [{ ...reply[0], timestamp: 0 }]
  assert.throws(() => decodeBlocks(packReply(dated0), nowNs), /block 0 of the reply is malformed/)
  assert.throws(
    () => decodeBlocks(pack([pack({ ...reply[0], proof: 'ab' })]), nowNs),
    /block 0 of the reply is malformed/,
    'a proof is bytes',
  )
  assert.throws(() => decodeBlocks(pack(reply), nowNs), /block 0 of the reply is malformed/, 'each block is packed on its own')
  await store.close()
})

test('a lagging store syncs to the target from peers in turn, skipping a dead one and one that lies', async () => {
  const { store: source, commits } = await sourceChain(120)
  const receiver = await openStore(`${tempDir('sync-receiver')}/ledger`)
  const honest = servingHandler(source)
  const liar = async (from: { hostname: string }, payload: Uint8Array) => {
    const reply = openReply(await honest(from, payload))
    reply[0].parentHash = `0x${'ab'.repeat(32)}`
    return packReply(reply)
  }
  const applied: number[] = []
  const sync = createBlockSync({
    network: network({ liar, honest }),
    tip: tipOf(receiver),
    verify: (block) => block.proof[0] === block.number % 256,
    apply: async (block) => {
      applied.push(block.number)
      await receiver.commitBlock(commits.get(block.number)!)
    },
    nowNs,
    log,
  })
  const target = { number: 120, hash: source.getBlock(120)!.hash }
  await sync.syncTo(target, ['gone', 'liar', 'honest'])
  assert.is(receiver.height(), 120)
  assert.is(receiver.getBlock(120)!.hash, target.hash)
  assert.equal(
    applied,
    Array.from({ length: 120 }, (_, i) => i + 1),
    'every block applied once, in order',
  )
  await source.close()
  await receiver.close()
})

test('no proof, no block; a target hash that differs from where the chain arrives is a SyncError', async () => {
  const { store: source, commits } = await sourceChain(3)
  const receiver = await openStore(`${tempDir('sync-receiver')}/ledger`)
  const base = {
    network: network({ honest: servingHandler(source) }),
    tip: tipOf(receiver),
    apply: async (block: { number: number }) => receiver.commitBlock(commits.get(block.number)!),
    nowNs,
    log,
  }
  try {
    await createBlockSync({ ...base, verify: () => false }).syncTo({ number: 3, hash: source.getBlock(3)!.hash }, ['honest'])
    assert.unreachable('a block without a valid proof is never applied')
  } catch (error) {
    assert.instance(error, SyncError)
    assert.is(receiver.height(), 0)
  }
  try {
    await createBlockSync({ ...base, verify: () => true }).syncTo({ number: 3, hash: `0x${'cd'.repeat(32)}` }, ['honest'])
    assert.unreachable('arriving at another hash than the quorum names is an error')
  } catch (error) {
    assert.match((error as Error).message, /chain differs/)
  }
  await source.close()
  await receiver.close()
})

test.run()
