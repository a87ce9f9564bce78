import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { assertNoFork, assertSameOutcomes, call, height } from '../helpers/audit.ts'
import { waitCommitted } from '../helpers/client-load.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { wallet } from '../helpers/wallet.ts'

const net = processNetwork('members', { logs: true })
const { processes } = net
const { accepted, send } = net
const survivors = ['node1', 'node2', 'node3', 'node4']

const urlOf = net.urlOf

const start = net.start

const committed = waitCommitted

const { vpsListedBy } = net

test.before(async () => {
  await net.up({ vps: 5, nvps: 1 })
})

test.after(async () => {
  await net.killAll()
})

test('node_deleteVP refuses an unknown hash with -32602 and a reason', async () => {
  await committed(await send(10, ['node1', 'node5', 'nvp1']), ['node1', 'node5', 'nvp1'].map(urlOf), 60_000)
  const reply = await call(urlOf('node1'), 'node_deleteVP', [{ nodehash: 'ab'.repeat(32) }], { operator: net.adminKey() })
  assert.is(reply.code, -32602)
  assert.match(reply.message, /no VP with hash/)
})

test('node_deleteVP is an operator method: unsigned, or signed by a key that is no admin, on each of the five VPs, it is refused (-32008) and removes no one', async () => {
  const target = (await call(urlOf('node5'), 'node_getNodeHash', [])).result as string
  const outsider = wallet().privateKey
  for (const hostname of [...survivors, 'node5']) {
    const unsigned = await call(urlOf(hostname), 'node_deleteVP', [{ nodehash: target }])
    assert.is(unsigned.code, -32008, `${hostname}: ${unsigned.message}`)
    assert.match(unsigned.message, /^node_deleteVP is an operator method .*operator-signature/)
    const stranger = await call(urlOf(hostname), 'node_deleteVP', [{ nodehash: target }], { operator: outsider })
    assert.is(stranger.code, -32008, `${hostname}: ${stranger.message}`)
    assert.match(stranger.message, /is not one \(account_getAccountsByRole/)
  }
  // had the five calls been votes, the removal would be decided once they are ordered, a block or two later
  await committed(await send(20, survivors), survivors.map(urlOf), 60_000)
  assert.not.match(readFileSync(join(net.dir, 'node1', 'node.log'), 'utf8'), /leaves the group/)
  for (const hostname of survivors) assert.ok((await vpsListedBy(hostname)).includes('node5'), `${hostname} still lists node5`)
})

test('node_deleteVP sent to all five VPs (four of them while node5 is down): the group shrinks to 4, the chain goes on with an NVP following, no fork; node5, down across the change, retires when it restarts', async () => {
  const target = (await call(urlOf('node5'), 'node_getNodeHash', [])).result as string
  assert.match(target, /^[0-9a-f]{64}$/)
  const started = Date.now()
  // a VP that is down is found by its hash among the group's members, not only among linked peers
  await processes.get('node5')!.kill('SIGKILL')
  for (const hostname of [...survivors, 'node5']) {
    if (hostname === 'node5') await start('node5')
    const reply = await call(urlOf(hostname), 'node_deleteVP', [{ nodehash: target }], { operator: net.adminKey() })
    assert.is(reply.code, 0, `${hostname}: ${reply.message}`)
    assert.ok((reply.result as string).includes(target), 'the answer names the hash')
  }
  // node5 goes down once every vote is ordered and stays down while the group passes the boundary
  const log1 = join(net.dir, 'node1', 'node.log')
  while (!readFileSync(log1, 'utf8').includes('replica 5 leaves the group (decided at block')) {
    assert.ok(Date.now() - started < 60_000, 'the removal of node5 not decided after 60 s')
    await send(3, ['node1', 'node2'])
  }
  await processes.get('node5')!.kill('SIGKILL')
  // the change takes effect at the first checkpoint boundary 40 blocks after the last vote is ordered: keep blocks coming
  const startHeight = await height(urlOf('node1'))
  let rounds = 0
  while ((await vpsListedBy('node1')).includes('node5')) {
    assert.ok(Date.now() - started < 180_000, 'node5 still listed after 180 s')
    await send(3, ['node1', 'node2', 'node3', 'node4', 'nvp1'])
    rounds++
  }
  const blocks = (await height(urlOf('node1'))) - startHeight
  console.log(`  node5 left the group ${Date.now() - started} ms after the votes (${blocks} blocks, ${rounds * 3} transfers)`)
  // each member applies the change at the same boundary block, but reaches that block in its own time
  for (const hostname of survivors) {
    assert.equal(
      await net.vpsOnceListed(hostname, (listed) => !listed.includes('node5'), 30_000),
      survivors,
      `${hostname} lists the 4 VPs left`,
    )
  }
  // restarted after the members dropped its links (a view-change period, 4 s with test timers), node5
  // cannot fetch the blocks up to its removal; the members' refusals (f + 1 of them) retire it
  await new Promise((resolve) => setTimeout(resolve, 5000))
  await start('node5')
  const retiredBy = Date.now() + 60_000
  while ((await net.consensusOf('node5')).state !== 'retired') {
    assert.ok(Date.now() < retiredBy, 'node5 does not report itself retired 60 s after its restart')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.match(readFileSync(join(net.dir, 'node5', 'node.log'), 'utf8'), /applied its removal from the group and refuse its links/)
  const stoppedAt = await height(urlOf('node5'))
  const after = await send(30, [...survivors, 'nvp1'])
  const ms = await committed(after, [...survivors, 'nvp1'].map(urlOf), 60_000)
  console.log(`  30 transfers committed by the 4 VPs (and the NVP) in ${ms} ms`)
  assert.ok((await height(urlOf('node1'))) > stoppedAt, 'the group of 4 goes on')
  assert.is(await height(urlOf('node5')), stoppedAt, 'the removed VP is idle: it orders nothing any more')
  await assertNoFork([...survivors, 'nvp1', 'node5'].map(urlOf))
  await assertSameOutcomes([...survivors, 'nvp1'].map(urlOf), accepted)
})

test('a group of 4 refuses to shrink; with quorum 3 it commits with one VP down, and a restarted VP knows the group', async () => {
  const hash = (await call(urlOf('node4'), 'node_getNodeHash', [])).result as string
  const refused = await call(urlOf('node1'), 'node_deleteVP', [{ nodehash: hash }], { operator: net.adminKey() })
  assert.is(refused.code, -32602)
  assert.match(refused.message, /fewer than 4/)
  // `npm run network -- delete-vp` signs as the operator (the network's genesis account): each VP answers the vote itself
  // the test run's build of the sources when there is one (scripts/run-tests.ts), else through tsx
  const built = process.env.KEEL_NODE_BUILD ? join(process.env.KEEL_NODE_BUILD, 'src', 'cli.js') : undefined
  const entry = built !== undefined && existsSync(built) ? [built] : ['--import', 'tsx', 'src/cli.ts']
  const cli = spawnSync(process.execPath, [...entry, 'network', 'delete-vp', 'node4', '--dir', net.dir], {
    cwd: join(import.meta.dirname, '..', '..'),
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.match(cli.stdout, /signing node_deleteVP as operator 0x[0-9a-f]{40} \(the genesis account/, cli.stderr)
  for (const hostname of survivors) assert.match(cli.stdout, new RegExp(`${hostname}: -32602 .*fewer than 4`), cli.stdout)
  assert.not.match(cli.stdout, /-32008/)
  await processes.get('node5')!.kill('SIGKILL')
  await processes.get('node4')!.kill('SIGKILL')
  const hashes = await send(20, ['node1', 'node2', 'node3'])
  const ms = await committed(hashes, ['node1', 'node2', 'node3', 'nvp1'].map(urlOf), 60_000)
  console.log(`  3 of the 4 VPs (quorum 3) committed 20 transfers in ${ms} ms`)
  // node4 restarts after the change: it rebuilds the group from its blocks and takes part again
  await start('node4')
  const more = await send(20, ['node1', 'node4'])
  await committed([...hashes, ...more], [...survivors, 'nvp1'].map(urlOf), 90_000)
  assert.equal(await vpsListedBy('node4'), survivors, 'the restarted VP lists the group of 4, not node5')
  await assertNoFork([...survivors, 'nvp1'].map(urlOf))
  await assertSameOutcomes([...survivors, 'nvp1'].map(urlOf), accepted)
})

test('the restarted VP takes part: with another VP down, it is needed for the quorum of 3', async () => {
  await processes.get('node3')!.kill('SIGKILL')
  const live = ['node1', 'node2', 'node4', 'nvp1']
  const ms = await committed(await send(20, ['node1', 'node2', 'node4']), live.map(urlOf), 90_000)
  console.log(`  node1, node2 and the restarted node4 committed 20 transfers in ${ms} ms`)
  await assertNoFork(live.map(urlOf))
  await assertSameOutcomes(live.map(urlOf), accepted)
})

// The other operator methods on the network's nodes (node3 and node5 are down from here on)
const liveNodes = ['node1', 'node2', 'node4', 'nvp1']
let snapshotId: string

/** `method` unsigned on every live node, and signed by a key that is no admin on the first: -32008 each time */
async function refusedEverywhere(method: string, params: unknown[]): Promise<void> {
  for (const hostname of liveNodes) {
    const unsigned = await call(urlOf(hostname), method, params)
    assert.is(unsigned.code, -32008, `${method} on ${hostname}: ${unsigned.message}`)
    assert.match(unsigned.message, new RegExp(`^${method} is an operator method`))
  }
  const stranger = await call(urlOf('node1'), method, params, { operator: wallet().privateKey })
  assert.is(stranger.code, -32008, `${method} signed by a stranger: ${stranger.message}`)
}

const asAdmin = async (hostname: string, method: string, params: unknown[]): Promise<unknown> => {
  const reply = await call(urlOf(hostname), method, params, { operator: net.adminKey() })
  assert.is(reply.code, 0, `${method} on ${hostname}: ${reply.message}`)
  return reply.result
}

test('archive_snapshot on a network: refused on every node unless an admin signed it', async () => {
  await refusedEverywhere('archive_snapshot', [0])
  for (const hostname of liveNodes)
    assert.equal((await call(urlOf(hostname), 'archive_listSnapshot', [])).result, [], `${hostname} made none`)
  snapshotId = (await asAdmin('node1', 'archive_snapshot', [0])) as string
  for (let deadline = Date.now() + 30_000; (await call(urlOf('node1'), 'archive_querySnapshotExist', [snapshotId])).result !== true; ) {
    assert.ok(Date.now() < deadline, 'the snapshot is not made after 30 s')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
})

test('archive_archive on a network: refused on every node unless an admin signed it', async () => {
  await refusedEverywhere('archive_archive', [snapshotId, true])
  assert.is((await call(urlOf('node1'), 'archive_queryArchiveExist', [snapshotId])).result, false, 'nothing archived')
  assert.is(await asAdmin('node1', 'archive_archive', [snapshotId, true]), true)
  assert.is((await call(urlOf('node1'), 'archive_queryArchiveExist', [snapshotId])).result, true)
})

test('archive_restore on a network: refused on every node unless an admin signed it', async () => {
  await refusedEverywhere('archive_restore', [snapshotId, true])
  assert.is((await call(urlOf('node1'), 'archive_queryArchiveExist', [snapshotId])).result, true, 'still archived')
  assert.is(await asAdmin('node1', 'archive_restore', [snapshotId, true]), true)
  assert.is((await call(urlOf('node1'), 'archive_queryArchiveExist', [snapshotId])).result, false)
})

test('archive_restoreAll on a network: refused on every node unless an admin signed it', async () => {
  assert.is(await asAdmin('node1', 'archive_archive', [snapshotId, true]), true)
  await refusedEverywhere('archive_restoreAll', [true])
  assert.is((await call(urlOf('node1'), 'archive_queryArchiveExist', [snapshotId])).result, true, 'still archived')
  assert.is(await asAdmin('node1', 'archive_restoreAll', [true]), true)
  assert.is((await call(urlOf('node1'), 'archive_queryArchiveExist', [snapshotId])).result, false)
})

test('archive_deleteSnapshot on a network: refused on every node unless an admin signed it', async () => {
  await refusedEverywhere('archive_deleteSnapshot', [snapshotId])
  assert.is((await call(urlOf('node1'), 'archive_querySnapshotExist', [snapshotId])).result, true, 'the snapshot is still there')
  assert.is(await asAdmin('node1', 'archive_deleteSnapshot', [snapshotId]), true)
  assert.is((await call(urlOf('node1'), 'archive_querySnapshotExist', [snapshotId])).result, false)
})

test('node_deleteNVP on a network: refused on every node unless an admin signed it; signed, the VP drops the NVP', async () => {
  const nvpHash = (await call(urlOf('nvp1'), 'node_getNodeHash', [])).result as string
  const linksNvp = async (hostname: string): Promise<boolean> =>
    ((await call(urlOf(hostname), 'node_getNodes', [])).result as { hostname: string }[]).some((node) => node.hostname === 'nvp1')
  assert.ok(await linksNvp('node1'), 'node1 lists nvp1')
  await refusedEverywhere('node_deleteNVP', [{ nodehash: nvpHash }])
  assert.ok(await linksNvp('node1'), 'node1 still lists nvp1')
  assert.match((await asAdmin('node1', 'node_deleteNVP', [{ nodehash: nvpHash }])) as string, /successful request to delete nvp node/)
  for (let deadline = Date.now() + 10_000; await linksNvp('node1'); ) {
    assert.ok(Date.now() < deadline, 'node1 still lists nvp1 10 s after its deletion')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
})

test('node_startNamespace and node_stopNamespace on a network: refused on every node unless an admin signed it', async () => {
  const namespacesOn = async (hostname: string): Promise<string[]> =>
    ((await call(urlOf(hostname), 'node_getNamespaces', [])).result as { name: string; state: string }[]).map(
      ({ name, state }) => `${name} ${state}`,
    )
  await refusedEverywhere('node_startNamespace', ['ns9'])
  await refusedEverywhere('node_stopNamespace', ['ns9'])
  for (const hostname of liveNodes) assert.equal(await namespacesOn(hostname), ['global running'], `${hostname} started nothing`)
  // signed, node1 tries: ns9 has no network files of its own on this network, so it is reported failed and global serves on
  const started = (await asAdmin('node1', 'node_startNamespace', ['ns9'])) as { name: string; state: string; reason?: string }
  assert.is(started.state, 'failed', JSON.stringify(started))
  assert.match(started.reason ?? '', /ns9/)
  assert.equal(await namespacesOn('node1'), ['global running', 'ns9 failed'])
  assert.is((await call(urlOf('node1'), 'block_latestBlock', [])).code, 0, 'global still answers')
})

test.run()
