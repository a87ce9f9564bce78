/**
 * node_ on a node running alone (no [network] configDir). The same methods on a network of VPs
 * and NVPs are tested with the network (issue 6).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { accountFromPrivateKey } from '../../sdk/src/account.ts'
import { operatorHeaders } from '../../sdk/src/operator.ts'
import type { KeelNode } from '../../src/node.ts'
import { fails, ok, transfers, waitForHeight } from '../helpers/chain.ts'
import { loadSdk } from '../helpers/jssdk.ts'
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

test('node_deleteVP, its alias node_delNode and node_deleteNVP: operator methods, refused (-32008) unless an admin signed the request', async () => {
  const hash = '34d299742260716bab353995fe98727004b5c27bde52489f61de093176e82088'
  for (const method of ['node_deleteVP', 'node_delNode', 'node_deleteNVP']) {
    await fails(url(), method, [{ nodehash: hash }], -32008, /is an operator method .*operator-timestamp.*operator-signature/)
    await fails(url(), method, [{ nodehash: hash }], -32008, /is not one \(account_getAccountsByRole/, { operator: wallet().privateKey })
  }
})

test('node_deleteVP, its alias node_delNode and node_deleteNVP signed by the admin: no such peer, and the reply says why', async () => {
  const hash = '34d299742260716bab353995fe98727004b5c27bde52489f61de093176e82088'
  const operator = { operator: alice.privateKey }
  for (const method of ['node_deleteVP', 'node_delNode'])
    await fails(
      url(),
      method,
      [{ nodehash: hash }],
      -32602,
      `no VP with hash ${hash} among this node's peers: it runs alone (no [network] configDir), so node_getNodes lists only itself`,
      operator,
    )
  await fails(url(), 'node_deleteNVP', [{ nodehash: hash.toUpperCase() }], -32602, /^no NVP with hash 34d2997/, operator)
  await fails(url(), 'node_deleteVP', [{ nodehash: `0x${hash}` }], -32602, /must be a node hash: 64 hex digits without 0x/)
})

test('the official SDK sends an operator method: its Request with the two headers signed over the body its HttpProvider sends', async () => {
  const { HttpProvider, JSONBigintUtil, ProviderManager, Request, RequestError } = loadSdk()
  const manager = await ProviderManager.createManager({ httpProviders: [new HttpProvider(1, url().replace(/^http:\/\//, ''))] })
  const hash = 'cd'.repeat(32)
  const request = (signer?: string) => {
    const made = new Request<string>('node_deleteNVP', manager)
    made.addParam({ nodehash: hash })
    if (signer !== undefined)
      for (const [name, value] of Object.entries(operatorHeaders(accountFromPrivateKey(signer), JSONBigintUtil.stringify(made.body()))))
        made.addHeader(name, value)
    return made
  }
  const codeOf = async (made: ReturnType<typeof request>): Promise<[number, string]> => {
    try {
      await made.send()
    } catch (error) {
      const response = (error as InstanceType<typeof RequestError>).getResponse() as { code: number; message: string }
      return [response.code, response.message]
    }
    return [0, 'SUCCESS']
  }
  assert.equal((await codeOf(request()))[0], -32008)
  const [code, message] = await codeOf(request(alice.privateKey))
  assert.is(code, -32602, message)
  assert.match(message, /^no NVP with hash cdcd/)
})

test('node_getConsensusStatus: a node alone orders its own blocks, view 0, itself the primary; the height follows the chain', async () => {
  assert.equal(await ok(url(), 'node_getConsensusStatus'), { role: 'solo', state: 'normal', view: 0, primary: 'node1', height: 0 })
  await transfers(url(), alice, wallet().address, 1)
  await waitForHeight(url(), 1)
  assert.equal(await ok(url(), 'node_getConsensusStatus'), { role: 'solo', state: 'normal', view: 0, primary: 'node1', height: 1 })
  await fails(url(), 'node_getConsensusStatus', [1], -32602, 'too many params: node_getConsensusStatus takes 0, got 1')
})

test.run()
