/**
 * An NVP following pushes: real stores on both sides (the VP's blocks carry batch and proof), the
 * VP's serving handler behind a direct-call transport, `apply` committing the VP's block record.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import type { Hex } from '../../../src/domain.ts'
import { createLogger } from '../../../src/log.ts'
import { createBlockSync, readBlocks, serveBlocks } from '../../../src/network/block-sync.ts'
import { Channel } from '../../../src/network/channels.ts'
import { createNvpFeed, pushBlock } from '../../../src/network/nvp-feed.ts'
import { openStore } from '../../../src/store/index.ts'
import type { BlockCommit } from '../../../src/store/types.ts'
import { openReply, packReply } from '../../helpers/block-reply.ts'
import { wallet } from '../../helpers/wallet.ts'
import { nextBlock, tempDir } from '../store/fixtures.ts'

const nowNs = () => BigInt(Date.now()) * 1_000_000n
const log = createLogger({ level: 'silent' })
const alice = wallet()

type Push = (from: { hostname: string; vp: boolean }, payload: Uint8Array) => void
type Serve = (from: { hostname: string }, payload: Uint8Array) => Promise<Uint8Array>

async function vpChain(count: number) {
  const store = await openStore(`${tempDir('feed-vp')}/ledger`)
  const commits = new Map<number, BlockCommit>()
  for (let i = 0; i < count; i++) {
    const tx = admitTransaction('transfer', alice.transfer(wallet().address, 1), { nowNs })
    const block = { ...nextBlock(store, { valid: [tx] }) }
    block.batch = { view: 0, txHashes: [tx.hash], proof: Uint8Array.of(block.header.number) }
    await store.commitBlock(block)
    commits.set(block.header.number, block)
  }
  let serve: Serve | undefined
  serveBlocks(
    {
      onRequest: (_channel, handler) => {
        serve = handler
      },
      request: () => Promise.reject(new Error('the VP asks nothing here')),
    },
    store,
  )
  return { store, commits, serve: serve! }
}

test('an NVP applies pushed blocks in order, fills a gap by syncing from the VPs, ignores old, unproven and non-VP pushes', async () => {
  const vp = await vpChain(6)
  const nvp = await openStore(`${tempDir('feed-nvp')}/ledger`)
  const tip = () => {
    const number = nvp.height()
    return { number, hash: (number === 0 ? `0x${'0'.repeat(64)}` : nvp.getBlock(number)!.hash) as Hex }
  }
  const network = {
    request: async (hostname: string, _channel: number, payload: Uint8Array) => {
      if (hostname !== 'node1') throw new Error(`${hostname} is not linked`)
      return vp.serve({ hostname: 'nvp1' }, payload)
    },
    onRequest: () => undefined,
  }
  let onPush: Push | undefined
  const applied: number[] = []
  const verify = (block: { number: number; proof: Uint8Array }) => block.proof[0] === block.number && block.number !== 99
  const feed = createNvpFeed({
    network: {
      on: (channel, handler) => {
        assert.is(channel, Channel.blockPush)
        onPush = handler
      },
    },
    tip,
    verify,
    apply: async (block) => {
      applied.push(block.number)
      await nvp.commitBlock(vp.commits.get(block.number)!)
    },
    sync: createBlockSync({ network, tip, verify, apply: async (b) => nvp.commitBlock(vp.commits.get(b.number)!), nowNs, log }),
    vps: () => ['node2', 'node1'],
    nowNs,
    log,
  })
  // VP side: pushBlock broadcasts to NVPs only, and reads no block while no NVP is linked
  const pushes: { payload: Uint8Array; to: boolean }[] = []
  const linked = [{ vp: true, status: 0 }]
  const pushNetwork = {
    broadcast: (_c: number, payload: Uint8Array, to?: (peer: { vp: boolean }) => boolean) =>
      void pushes.push({ payload, to: to!({ vp: false }) && !to!({ vp: true }) }),
    peers: () => linked,
  }
  pushBlock(pushNetwork, vp.store, 1)
  assert.equal(pushes.length, 0, 'no NVP linked: nothing pushed')
  linked.push({ vp: false, status: 2 })
  pushBlock(pushNetwork, vp.store, 1)
  assert.equal(pushes.length, 0, 'an NVP whose link is down gets nothing')
  linked.push({ vp: false, status: 0 })
  pushBlock(pushNetwork, vp.store, 1)
  assert.equal(pushes.length, 1)
  assert.ok(pushes[0].to, 'pushed to NVPs, not VPs')
  const push = (n: number, from = { hostname: 'node1', vp: true }) => onPush!(from, readBlocks(vp.store, n, n))

  onPush!({ hostname: 'node1', vp: true }, pushes[0].payload)
  push(2)
  push(2)
  push(1)
  await feed.idle()
  assert.is(nvp.height(), 2)
  assert.equal(applied, [1, 2], 'each block once, old ones ignored')
  push(3, { hostname: 'nvp2', vp: false })
  await feed.idle()
  assert.is(nvp.height(), 2, 'an NVP cannot feed another NVP')
  push(5)
  await feed.idle()
  assert.is(nvp.height(), 5, 'the gap 3-4 synced from node1 (node2 is not linked), then 5 applied')
  assert.is(nvp.getBlock(5)!.hash, vp.store.getBlock(5)!.hash)
  const forged = openReply(readBlocks(vp.store, 6, 6))
  forged[0].proof = Uint8Array.of(0)
  onPush!({ hostname: 'node1', vp: true }, packReply(forged))
  onPush!({ hostname: 'node1', vp: true }, Buffer.from('not msgpack'))
  await feed.idle()
  assert.is(nvp.height(), 5, 'no proof, no block; garbage dropped')
  push(6)
  await feed.idle()
  assert.is(nvp.height(), 6)
  await vp.store.close()
  await nvp.close()
})

test.run()
