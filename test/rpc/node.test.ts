/**
 * node_ on a node running alone (no [network] configDir). The same methods on a network of VPs
 * and NVPs are tested with the network (issue 6).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import { fails, ok, transfers, waitForHeight } from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

let node: KeelNode | undefined
const url = () => node!.url
const alice = wallet()

test.before(async () => {
  node = await startTestNode({
    node: { hostname: 'node1' },
    chain: { batchTimeoutMs: 5 },
    genesis: { accounts: [{ address: alice.address, balance: '1000' }] },
  })
})
test.after(async () => {
  await node?.stop()
})

test('node_getNodeHash: Keccak-256(hostname + namespace), the manual value for node1 in global', async () => {
  assert.is(await ok(url(), 'node_getNodeHash'), 'fa34664ec14727c34943045bcaba9ef05d2c48e06d294c15effc900a5b4b663a')
})

test('node_getNodes: a node alone lists only itself, the primary VP, with no peer port', async () => {
  assert.equal(await ok(url(), 'node_getNodes'), [
    {
      id: 1,
      ip: '127.0.0.1',
      port: 0,
      namespace: 'global',
      hash: 'fa34664ec14727c34943045bcaba9ef05d2c48e06d294c15effc900a5b4b663a',
      hostname: 'node1',
      isPrimary: true,
      isvp: true,
      status: 0,
      delay: 0,
    },
  ])
})

test('node_deleteVP, its alias node_delNode and node_deleteNVP: no such peer, and the reply says why', async () => {
  const hash = '34d299742260716bab353995fe98727004b5c27bde52489f61de093176e82088'
  for (const method of ['node_deleteVP', 'node_delNode'])
    await fails(
      url(),
      method,
      [{ nodehash: hash }],
      -32602,
      `no VP with hash ${hash} among this node's peers: it runs alone (no [network] configDir), so node_getNodes lists only itself`,
    )
  await fails(url(), 'node_deleteNVP', [{ nodehash: hash.toUpperCase() }], -32602, /^no NVP with hash 34d2997/)
  await fails(url(), 'node_deleteVP', [{ nodehash: `0x${hash}` }], -32602, /must be a node hash: 64 hex digits without 0x/)
})

test('node_getConsensusStatus: a node alone orders its own blocks, view 0, itself the primary; the height follows the chain', async () => {
  assert.equal(await ok(url(), 'node_getConsensusStatus'), { role: 'solo', state: 'normal', view: 0, primary: 'node1', height: 0 })
  await transfers(url(), alice, wallet().address, 1)
  await waitForHeight(url(), 1)
  assert.equal(await ok(url(), 'node_getConsensusStatus'), { role: 'solo', state: 'normal', view: 0, primary: 'node1', height: 1 })
  await fails(url(), 'node_getConsensusStatus', [1], -32602, 'too many params: node_getConsensusStatus takes 0, got 1')
})

test.run()
