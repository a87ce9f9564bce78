/** The files `npm run network -- up` writes: every node's configuration loads as a node would load it. */
import { mkdtempSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readConfigFile, resolveConfig } from '../../../src/config.ts'
import { addVp, createNetwork, freePorts, readNetwork, reservePort, sweepPortReservations } from '../../../src/devnet/network.ts'
import { loadPeerConfig } from '../../../src/p2p/config.ts'
import { loadNodeIdentity, loadPeerKeys } from '../../../src/p2p/identity.ts'
import { coresPerNode } from '../../../src/thread-layout.ts'

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
    // five nodes on this machine share its cores: at least one each (src/thread-layout.ts)
    assert.is(config.node.cores, coresPerNode(5))
    assert.equal(config.network, { configDir: join(dir, node.hostname, 'config'), timers: 'test', genesisVps: [] })
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

test('free ports picked by one process are reserved from the others until their nodes bind them', async () => {
  const picked = await freePorts(6)
  assert.is(new Set(picked).size, 6)
  // another process picking now (the reservation files are shared through the temporary directory)
  for (const port of picked) assert.is(reservePort(port), false, `port ${port} is reserved`)
  const again = await freePorts(6)
  for (const port of again) assert.not.ok(picked.includes(port), `port ${port} picked twice`)
})

test('port reservations expired twice over are swept; a recent or renewed one stays', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-reservations-'))
  const now = Date.now()
  const minutesAgo = (minutes: number): Date => new Date(now - minutes * 60_000)
  for (const [port, age] of [
    [40001, 30],
    [40002, 21],
    [40003, 15],
    [40004, 1],
  ]) {
    writeFileSync(join(dir, String(port)), '1')
    utimesSync(join(dir, String(port)), minutesAgo(age), minutesAgo(age))
  }
  assert.is(sweepPortReservations(dir, now), 2)
  assert.equal(readdirSync(dir).sort(), ['40003', '40004'])
  assert.is(sweepPortReservations(join(dir, 'missing'), now), 0, 'no directory: nothing to sweep')
})

test('add-vp: node5 with new = true, id = N = 5, an ECert of the same CA; the others learn its address, not a genesis VP', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'keel-devnet-')), 'network')
  await createNetwork(dir, { vps: 4, nvps: 1, timers: 'test', jsonrpcPort: 0, p2pPort: 0, chain: { batchSize: 50 } })
  const node = await addVp(dir, { jsonrpcPort: 0, p2pPort: 0 })
  assert.equal([node.hostname, node.id, node.vp], ['node5', 5, true])
  assert.equal(readNetwork(dir).nodes.at(-1), node)
  const peers = loadPeerConfig(join(dir, 'node5', 'config'))
  assert.equal([peers.self.id, peers.self.n, peers.self.new, peers.self.org, peers.self.vp], [5, 5, true, false, true])
  assert.equal(
    peers.nodes.map((n) => n.hostname),
    ['node1', 'node2', 'node3', 'node4', 'node5'],
  )
  const identity = loadNodeIdentity(join(dir, 'node5', 'config', 'certs'))
  assert.equal([identity.hostname, identity.role], ['node5', 'VP'])
  assert.is(identity.caPem, loadNodeIdentity(join(dir, 'node1', 'config', 'certs')).caPem, 'the network CA issued it')
  const config = resolveConfig(readConfigFile(join(dir, 'node5', 'keel.toml')))
  assert.is(config.node.hostname, 'node5')
  assert.is(config.chain.batchSize, 50, "the first VP's chain settings")
  assert.equal(config.network.genesisVps, [1, 2, 3, 4], 'the genesis group, which its files cannot tell')
  // a second one: its files list node5, the genesis group is still 1..4
  const node6 = await addVp(dir, { jsonrpcPort: 0, p2pPort: 0 })
  assert.equal([node6.hostname, node6.id], ['node6', 6])
  assert.equal(
    loadPeerConfig(join(dir, 'node6', 'config')).nodes.map((n) => n.id),
    [1, 2, 3, 4, 5, 6],
  )
  assert.equal(resolveConfig(readConfigFile(join(dir, 'node6', 'keel.toml'))).network.genesisVps, [1, 2, 3, 4])
  for (const other of ['node1', 'nvp1']) {
    const theirs = loadPeerConfig(join(dir, other, 'config'))
    assert.is(theirs.hosts.get('node5')?.port, node.p2pPort, `${other} can reach node5`)
    assert.is(theirs.nodes.length, 4, `${other}'s [[nodes]] (the genesis group) unchanged`)
    assert.ok(loadPeerKeys(join(dir, other, 'config', 'certs'), identity.ca).has('node5'), `${other} holds node5's certificate`)
  }
})

test.run()
