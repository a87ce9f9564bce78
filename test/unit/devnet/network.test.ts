/** The files `npm run network -- up` writes: every node's configuration loads as a node would load it. */
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readConfigFile, resolveConfig } from '../../../src/config.ts'
import { createNetwork, readNetwork } from '../../../src/devnet/network.ts'
import { loadPeerConfig } from '../../../src/p2p/config.ts'
import { loadNodeIdentity, loadPeerKeys } from '../../../src/p2p/identity.ts'

test('four VPs and an NVP: peer files, certificates and keel.toml agree, ports distinct, one genesis', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'keel-devnet-')), 'network')
  const plan = await createNetwork(dir, { vps: 4, nvps: 1, timers: 'test', jsonrpcPort: 0, p2pPort: 0 })
  assert.equal(readNetwork(dir), plan)
  assert.equal(
    plan.nodes.map((node) => [node.hostname, node.vp, node.id]),
    [
      ['node1', true, 1],
      ['node2', true, 2],
      ['node3', true, 3],
      ['node4', true, 4],
      ['nvp1', false, 0],
    ],
  )
  const ports = plan.nodes.flatMap((node) => [node.jsonrpcPort, node.p2pPort])
  assert.is(new Set(ports).size, ports.length, 'every port distinct')
  for (const node of plan.nodes) {
    const config = resolveConfig(readConfigFile(join(dir, node.hostname, 'keel.toml')))
    assert.is(config.node.hostname, node.hostname)
    assert.is(config.jsonrpc.port, node.jsonrpcPort)
    assert.equal(config.network, { configDir: join(dir, node.hostname, 'config'), timers: 'test' })
    assert.equal(config.genesis.accounts, [{ address: plan.genesis.address, balance: plan.genesis.balance }])
    const peers = loadPeerConfig(config.network.configDir)
    assert.is(peers.self.hostname, node.hostname)
    assert.is(peers.self.vp, node.vp)
    assert.is(peers.hosts.get(node.hostname)?.port, node.p2pPort)
    const identity = loadNodeIdentity(join(config.network.configDir, 'certs'))
    assert.is(identity.hostname, node.hostname)
    assert.is(identity.role, node.vp ? 'VP' : 'NVP')
    assert.is(statSync(join(config.network.configDir, 'certs', 'ecert.priv')).mode & 0o777, 0o600)
    // every VP's key, checked against the CA, so proofs signed by a VP that is down still verify
    assert.equal([...loadPeerKeys(join(config.network.configDir, 'certs'), identity.ca).keys()].sort(), [
      'node1',
      'node2',
      'node3',
      'node4',
    ])
  }
  await createNetwork(dir, { vps: 4 }).then(
    () => assert.unreachable('a second network in the same directory is refused'),
    (error: Error) => assert.match(error.message, /already holds a network/),
  )
  await createNetwork(join(dir, '..', 'three'), { vps: 3 }).then(
    () => assert.unreachable('three VPs tolerate no fault'),
    (error: Error) => assert.match(error.message, /at least 4 VPs/),
  )
})

test.run()
