/**
 * Two VPs added one after the other (issue 6): node6's files list node5, which the chain added, so
 * its genesis group comes from keel.toml's genesisVps (add-vp writes it). Then N = 6, quorum 4:
 * with node3 and node4 down, every commit needs both added VPs.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { assertNoFork, assertSameOutcomes } from '../helpers/audit.ts'
import { waitCommitted } from '../helpers/client-load.ts'
import { processNetwork } from '../helpers/process-network.ts'

const net = processNetwork('join-twice', { logs: true })
const { processes, urlOf } = net
const { accepted, send } = net
const vps = net.vpsListedBy
async function addAndWait(name: string) {
  const node = await net.addVp()
  assert.is(node.hostname, name)
  const t = Date.now()
  await net.start(name)
  for (;;) {
    if ((await vps('node1')).includes(name) && (await net.consensusOf(name)).state === 'normal') break
    assert.ok(Date.now() - t < 120_000, `${name} not joined`)
    await send(3, ['node1', 'node2', 'node3', 'node4'])
  }
  console.log(`  ${name} joined in ${Date.now() - t} ms`)
}
test.before(async () => {
  await net.up({ vps: 4 })
})
test.after(async () => net.killAll())
test('two adds, then node5 and node6 needed (N=6, quorum 4) with node3 and node4 down', async () => {
  await addAndWait('node5')
  await addAndWait('node6')
  await processes.get('node3')!.kill('SIGKILL')
  await processes.get('node4')!.kill('SIGKILL')
  const live = ['node1', 'node2', 'node5', 'node6']
  const ms = await waitCommitted(await send(20, live), live.map(urlOf), 90_000)
  console.log(`  committed in ${ms} ms`)
  await assertNoFork(live.map(urlOf))
  await assertSameOutcomes(live.map(urlOf), accepted)
})
test.run()
