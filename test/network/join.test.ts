/**
 * Adding a VP to running processes (issue 6, consensus.md §7 and §10.10): 4 VPs and an NVP under
 * load; node5 is created as an operator would (`npm run network -- add-vp`: ECert from the
 * network's CA, peerconfig.toml `new = true`) and started. It links, sends ATTEND, each VP votes
 * it in, the votes are ordered, and 40 blocks later the group is 5. With one original VP down,
 * N = 5 needs node5 for every quorum of 4.
 *
 * Then a second VP is added the same way, on the same network (one network start fewer than a file
 * of its own): node6's files list node5, which the chain added, so its genesis group comes from
 * keel.toml's genesisVps (add-vp writes it). Then N = 6, quorum 4: with node3 and node4 down, every
 * commit needs both added VPs.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { assertNoFork, assertSameOutcomes, call, height } from '../helpers/audit.ts'
import { waitCommitted } from '../helpers/client-load.ts'
import { processNetwork } from '../helpers/process-network.ts'

const net = processNetwork('join', { logs: true })
const { processes, urlOf } = net
const { accepted, send } = net

const { vpsListedBy } = net

const { consensusOf } = net

test.before(async () => {
  await net.up({ vps: 4, nvps: 1 })
})

test.after(async () => {
  await net.killAll()
})

test('node5 with new = true follows, is voted in by the 4 VPs, and the group of 5 takes effect on every node', async () => {
  await waitCommitted(await send(10, ['node1', 'nvp1']), ['node1', 'node4', 'nvp1'].map(urlOf), 60_000)
  const node5 = await net.addVp()
  assert.is(node5.hostname, 'node5')
  assert.is(node5.id, 5)
  const started = Date.now()
  await net.start('node5')
  assert.match(
    readFileSync(join(net.dir, 'node5', 'config', 'peerconfig.toml'), 'utf8'),
    /new = false\norg = false\nrec = true/,
    'the one-shot flags are rewritten after start',
  )
  // the change takes effect 40 blocks after the last vote is ordered: keep blocks coming
  const startHeight = await height(urlOf('node1'))
  const everyone = ['node1', 'node2', 'node3', 'node4']
  for (;;) {
    const listed = await vpsListedBy('node1')
    const state = (await consensusOf('node5')).state
    if (listed.includes('node5') && state === 'normal') break
    assert.ok(Date.now() - started < 120_000, `node5 not in the group after 120 s (node1 lists ${listed}, node5 is ${state})`)
    await send(3, [...everyone, 'nvp1'])
  }
  const blocks = (await height(urlOf('node1'))) - startHeight
  console.log(`  node5 joined ${Date.now() - started} ms after it started (${blocks} blocks)`)
  for (const hostname of everyone) {
    assert.equal(
      await net.vpsOnceListed(hostname, (listed) => listed.includes('node5')),
      [...everyone, 'node5'],
      `${hostname} lists node5 as a VP`,
    )
  }
  await assertNoFork([...everyone, 'node5', 'nvp1'].map(urlOf))
})

test('with node4 down the 5-VP group (quorum 4) commits only with node5; all hold the same blocks and outcomes', async () => {
  await processes.get('node4')!.kill('SIGKILL')
  const live = ['node1', 'node2', 'node3', 'node5', 'nvp1']
  const ms = await waitCommitted(await send(20, ['node1', 'node2', 'node5', 'nvp1']), live.map(urlOf), 60_000)
  console.log(`  node1, node2, node3 and node5 committed 20 transfers in ${ms} ms`)
  assert.ok((await consensusOf('node5')).height >= (await height(urlOf('node1'))) - 1, 'node5 keeps up')
  await assertNoFork(live.map(urlOf))
  await assertSameOutcomes(live.map(urlOf), accepted)
})

test('restarted after the change, node5 (now rec = true) and node4 know the group of 5 from the chain; with node3 down both are needed', async () => {
  await processes.get('node5')!.kill('SIGKILL')
  await Promise.all([net.start('node5'), net.start('node4')])
  await processes.get('node3')!.kill('SIGKILL')
  const live = ['node1', 'node2', 'node4', 'node5', 'nvp1']
  const ms = await waitCommitted(await send(20, ['node1', 'node4', 'node5', 'nvp1']), live.map(urlOf), 90_000)
  console.log(`  node1, node2 and the restarted node4 and node5 committed 20 transfers in ${ms} ms`)
  for (const hostname of ['node4', 'node5']) {
    assert.equal(await vpsListedBy(hostname), ['node1', 'node2', 'node3', 'node4', 'node5'], `${hostname} lists the group of 5`)
  }
  // each VP voted once; the restarted new VP did not ask again (the chain knows it)
  const log1 = readFileSync(join(net.dir, 'node1', 'node.log'), 'utf8')
  assert.is(log1.match(/asks to join as VP 5: this VP votes to add it/g)?.length, 1, 'node1 voted once')
  assert.not.match(log1, /node5 asks to join the VP group: refused/)
  await assertNoFork(live.map(urlOf))
  await assertSameOutcomes(live.map(urlOf), accepted)
})

test('the NVP forwards to and follows a VP the chain added: with its links to the other VPs deleted, it works through node5 alone', async () => {
  for (const hostname of ['node1', 'node2', 'node4']) {
    const hash = (await call(urlOf(hostname), 'node_getNodeHash', [])).result as string
    const reply = await call(urlOf('nvp1'), 'node_deleteVP', [{ nodehash: hash }], { operator: net.adminKey() })
    assert.is(reply.code, 0, `nvp1 deleting ${hostname}: ${reply.message}`)
  }
  const linked = ((await call(urlOf('nvp1'), 'node_getNodes', [])).result as { hostname: string; isvp: boolean; status: number }[])
    .filter((node) => node.isvp && node.status === 0)
    .map((node) => node.hostname)
  assert.equal(linked, ['node5'], 'nvp1 links node5 only')
  const live = ['node1', 'node2', 'node4', 'node5', 'nvp1']
  const ms = await waitCommitted(await send(10, ['nvp1']), live.map(urlOf), 60_000)
  console.log(`  10 transfers sent to nvp1 committed through node5 in ${ms} ms`)
  await assertNoFork(live.map(urlOf))
  await assertSameOutcomes(live.map(urlOf), accepted)
})

test('a second add: node6 (whose files list node5, added by the chain) is voted in by all five; then N = 6, quorum 4, and with node3 and node4 down every commit needs node5 and node6', async () => {
  // every member votes on a change: node3, down since the third case, comes back first
  await net.start('node3')
  const node6 = await net.addVp()
  assert.is(node6.hostname, 'node6')
  assert.is(node6.id, 6)
  const started = Date.now()
  await net.start('node6')
  const five = ['node1', 'node2', 'node3', 'node4', 'node5']
  for (;;) {
    const listed = await vpsListedBy('node1')
    const state = (await consensusOf('node6')).state
    if (listed.includes('node6') && state === 'normal') break
    assert.ok(Date.now() - started < 120_000, `node6 not in the group after 120 s (node1 lists ${listed}, node6 is ${state})`)
    await send(3, ['node1', 'node2', 'node3', 'node4'])
  }
  console.log(`  node6 joined ${Date.now() - started} ms after it started`)
  for (const hostname of five)
    assert.ok(
      (await net.vpsOnceListed(hostname, (listed) => listed.includes('node6'))).includes('node6'),
      `${hostname} lists node6 as a VP`,
    )
  await processes.get('node3')!.kill('SIGKILL')
  await processes.get('node4')!.kill('SIGKILL')
  const live = ['node1', 'node2', 'node5', 'node6']
  const ms = await waitCommitted(await send(20, live), live.map(urlOf), 90_000)
  console.log(`  node1, node2, node5 and node6 (quorum 4 of 6) committed 20 transfers in ${ms} ms`)
  await assertNoFork(live.map(urlOf))
  await assertSameOutcomes(live.map(urlOf), accepted)
})

test.run()
