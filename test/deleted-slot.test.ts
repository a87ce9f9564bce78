/**
 * A deleted storage slot, end to end (domain.ts WorldChanges: the zero word deletes a slot). Real
 * transactions from a genesis set two slots of a contract, then delete one; the deleted slot must
 * read as zero and hold no entry after the commit, in a snapshot of the world state (whose root
 * must still match its block), after its blocks are archived and restored, and after a restart.
 */
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readEntries } from '../src/archive/file.ts'
import { resolveConfig } from '../src/config.ts'
import { ZERO_WORD } from '../src/domain.ts'
import { type KeelNode, startNode } from '../src/node.ts'
import { Keyspace, openStoreReader } from '../src/store/index.ts'
import { artifact, deploy, invoke, invokeUint, ok, sleep, type WireBlock } from './helpers/chain.ts'
import { startTestNode } from './helpers/node.ts'
import { type Wallet, wallet } from './helpers/wallet.ts'

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

contract Slots {
    uint256 public kept;
    uint256 public dropped;

    function set(uint256 v) public {
        kept = v;
        dropped = v;
    }

    function drop() public {
        delete dropped;
    }
}
`
const KEPT_SLOT = `0x${'00'.repeat(32)}`
const DROPPED_SLOT = `0x${'00'.repeat(31)}01`

let node: KeelNode
let dev: Wallet
let contract: string

const dataDirOf = (n: KeelNode): string => n.config.node.dataDir
/** snapshot, archive and restore are operator methods: the genesis account is the chain's admin */
const asAdmin = (): { operator: string } => ({ operator: dev.privateKey })

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

/** Both slots as the contract answers them (a committed call each). */
async function slotsOverRpc(): Promise<{ kept: bigint; dropped: bigint }> {
  return {
    kept: await invokeUint(node.url, dev, contract, 'kept()'),
    dropped: await invokeUint(node.url, dev, contract, 'dropped()'),
  }
}

/** The contract's storage entries as the store holds them on disk (read with the node stopped). */
async function storedSlots(dataDir: string): Promise<Map<string, string>> {
  const { reader, close } = openStoreReader(join(dataDir, 'global', 'ledger'))
  try {
    const slots = new Map<string, string>()
    for (const slot of [KEPT_SLOT, DROPPED_SLOT]) slots.set(slot, reader.state.getStorage(contract, slot))
    return slots
  } finally {
    await close()
  }
}

test.before(async () => {
  node = await startTestNode({ chain: { batchSize: 1, batchTimeoutMs: 1 }, archive: { batchBlocks: 2 } }, { verifyWorkers: 1 })
  dev = wallet(node.devAccount?.privateKey)
  contract = (await deploy(node.url, dev, artifact(SOURCE, 'Slots').bin)).address
})

test.after(async () => {
  await node?.stop()
})

test('after the commit: the deleted slot reads zero, the other keeps its value', async () => {
  assert.is((await invoke(node.url, dev, contract, 'set(uint256)', 9n)).reply.code, 0)
  assert.equal(await slotsOverRpc(), { kept: 9n, dropped: 9n })
  assert.is((await invoke(node.url, dev, contract, 'drop()')).reply.code, 0)
  assert.equal(await slotsOverRpc(), { kept: 9n, dropped: 0n })
})

test('in a snapshot: no entry for the deleted slot, and the root of its entries is the block merkleRoot', async () => {
  const id = await ok<string>(node.url, 'archive_snapshot', [0], asAdmin())
  await until('the snapshot', () => ok<boolean>(node.url, 'archive_querySnapshotExist', [id]))
  assert.is(await ok(node.url, 'archive_checkSnapshot', [id]), true, 'entries hash to the manifest root and the block root')
  const storageKeys: string[] = []
  for await (const entry of readEntries(join(dataDirOf(node), 'global', 'snapshots', `${id}.snap`))) {
    if (entry.space === Keyspace.storage && entry.key.subarray(0, 20).toString('hex') === contract.slice(2)) {
      storageKeys.push(`0x${entry.key.subarray(20).toString('hex')}`)
      assert.is.not(entry.value.toString('hex'), '00'.repeat(32), 'a stored slot is never the zero word')
    }
  }
  assert.equal(storageKeys, [KEPT_SLOT], 'only the kept slot is in the snapshot')

  // archive the blocks below the snapshot (the set and the delete among them), then restore them
  assert.is(await ok(node.url, 'archive_archive', [id, true], asAdmin()), true)
  assert.is(await ok(node.url, 'archive_restore', [id, true], asAdmin()), true)
  assert.equal(await slotsOverRpc(), { kept: 9n, dropped: 0n }, 'after archive and restore')
})

test('after a restart: the store holds no entry for the deleted slot and its root matches the tip', async () => {
  const dataDir = dataDirOf(node)
  const height = Number(await ok<string>(node.url, 'block_getChainHeight'))
  const tip = await ok<WireBlock>(node.url, 'block_getBlockByNumber', [height])
  await node.stop()
  const stored = await storedSlots(dataDir)
  assert.is(stored.get(DROPPED_SLOT), ZERO_WORD)
  assert.is.not(stored.get(KEPT_SLOT), ZERO_WORD)
  // a restart checks the saved state root against the tip's merkleRoot before it serves
  node = await startNode(
    resolveConfig({ jsonrpc: { port: 0 }, node: { dataDir }, log: { level: 'silent' }, chain: { batchSize: 1, batchTimeoutMs: 1 } }),
    { verifyWorkers: 1 },
  )
  assert.is((await ok<WireBlock>(node.url, 'block_getBlockByNumber', [height])).merkleRoot, tip.merkleRoot)
  assert.equal(await slotsOverRpc(), { kept: 9n, dropped: 0n })
})

test.run()
