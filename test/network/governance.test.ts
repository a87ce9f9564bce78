/**
 * Governance on a network of four VPs, each a process of its own (docs/governance.md): proposals
 * created on one VP and voted on others through the official SDK, the same proposal, roles and
 * receipts on every VP, a VP killed (SIGKILL) in the middle of a vote that restarts and catches up
 * with the governance state, and a NODE proposal answered with what Keel does not run yet.
 *
 *   npx tsx test/network/governance.test.ts
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { assertNoFork, assertSameOutcomes, call, height } from '../helpers/audit.ts'
import { waitCommitted } from '../helpers/client-load.ts'
import {
  Algo,
  type GovClient,
  govClient,
  NodeOp,
  newAccount,
  Permission,
  Proposal,
  ProviderManager,
  plain,
  ServiceManager,
} from '../helpers/governance.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { wallet } from '../helpers/wallet.ts'

const net = processNetwork('governance', { logs: true })
const vps = ['node1', 'node2', 'node3', 'node4']
const [x, y] = [newAccount(), newAccount()]
/** the network's funded genesis account: its single admin at the start */
let admin: ReturnType<typeof newAccount>
const clients = new Map<string, GovClient>()
const governance: string[] = []

test.before(async () => {
  await net.up({ vps: 4, nvps: 0 })
  const { privateKey } = JSON.parse(readFileSync(join(net.dir, 'genesis-account.json'), 'utf8')) as { privateKey: string }
  const account = ServiceManager.getAccountService(ProviderManager.emptyManager()).fromPrivateKey(privateKey.replace(/^0x/, ''), Algo.ECRAW)
  admin = { account, address: wallet(privateKey).address.toLowerCase() }
  for (const vp of vps) clients.set(vp, await govClient(net.urlOf(vp)))
  // the VPs agree on a view before the first case: a few transfers committed everywhere
  await waitCommitted(await net.send(4, vps), vps.map(net.urlOf), 120_000)
})

test.after(async () => {
  await net.killAll()
})

const on = (vp: string): GovClient => clients.get(vp) as GovClient

/** the same answer from every VP in `among` (after they reach the same height) */
async function sameEverywhere(method: string, params: unknown[], among = vps): Promise<unknown> {
  const answers = await Promise.all(among.map(async (vp) => (await call(net.urlOf(vp), method, params)).result))
  for (const [i, answer] of answers.entries()) assert.equal(answer, answers[0], `${method} on ${among[i]} and ${among[0]}`)
  return answers[0]
}

async function level(among = vps, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const heights = await Promise.all(among.map((vp) => height(net.urlOf(vp))))
    if (heights.every((h) => h === heights[0])) return
    assert.ok(Date.now() < deadline, `the VPs stay at different heights: ${heights.join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

test('the genesis account is the single admin on every VP; its proposal on node1 passes at once and grants two more admins', async () => {
  assert.equal(await sameEverywhere('account_getAccountsByRole', ['admin']), [admin.address])
  const created = await on('node1').ok(
    admin.account,
    Proposal().createForPermission(Permission().grant('admin', x.address).build(), Permission().grant('admin', y.address).build()).build(),
    'Create on node1',
  )
  governance.push(created.txHash)
  const executed = await on('node2').ok(
    admin.account,
    Proposal()
      .execute(created.Ret as number)
      .build(),
    'Execute on node2',
  )
  governance.push(executed.txHash)
  await level()
  assert.equal(await sameEverywhere('account_getAccountsByRole', ['admin']), [admin.address, x.address, y.address].sort())
})

test('a proposal created on node1 and voted on node2 and node3, with node4 killed (SIGKILL) mid-vote: node4 restarts and catches up with the same proposal, roles and receipts', async () => {
  const created = await on('node1').ok(
    admin.account,
    Proposal().createForPermission(Permission().createRole('operator').build(), Permission().grant('operator', x.address).build()).build(),
    'Create',
  )
  const id = created.Ret as number
  governance.push(created.txHash)
  const voted = await on('node2').ok(x.account, Proposal().vote(id, true).build(), 'vote on node2')
  governance.push(voted.txHash)
  await on('node3').refused(
    x.account,
    Proposal().vote(id, true).build(),
    /has voted on proposal \d+ already/,
    'a second vote, sent to another VP',
  )
  await net.processes.get('node4')?.kill('SIGKILL')
  const third = await on('node3').ok(y.account, Proposal().vote(id, true).build(), 'vote on node3 while node4 is down')
  governance.push(third.txHash)
  const executed = await on('node1').ok(admin.account, Proposal().execute(id).build(), 'Execute on node1')
  governance.push(executed.txHash)
  assert.equal(executed.Ret, [{ code: 200 }, { code: 200 }])
  await net.start('node4')
  clients.set('node4', await govClient(net.urlOf('node4')))
  // blocks keep coming until node4 is level with the others
  const deadline = Date.now() + 120_000
  while ((await height(net.urlOf('node4'))) < (await height(net.urlOf('node1')))) {
    assert.ok(Date.now() < deadline, 'node4 did not catch up in 120 s')
    await net.send(2, ['node1', 'node2'])
  }
  await level()
  const proposal = plain(await sameEverywhere('config_getProposal', []))
  assert.is((proposal as { status: string }).status, 'COMPLETED')
  assert.equal(await sameEverywhere('account_getRoles', [x.address]), ['admin', 'operator'])
  assert.equal(plain((await on('node4').config.getAllRoles().send()).result), {
    admin: 1,
    contractManager: 1,
    nodeOfVP: 1,
    audit: 1,
    operator: 1,
  })
  await assertSameOutcomes(vps.map(net.urlOf), governance)
  await assertNoFork(vps.map(net.urlOf))
})

test('a NODE proposal (AddVP) answers, on every VP alike, that Keel does not run NODE proposals yet, naming node_deleteVP and add-vp', async () => {
  const refused = await on('node2').refused(
    admin.account,
    Proposal().createForNode(NodeOp().addVP('node5', 'global').build()).build(),
    /the proposal's operations are not valid/,
    'AddVP',
  )
  assert.match(
    JSON.stringify(refused.Ret),
    /Keel does not run NODE proposals yet \(AddVP\): add a VP with `npm run network -- add-vp` and remove one with node_deleteVP/,
  )
  governance.push(refused.txHash)
  await level()
  await assertSameOutcomes(vps.map(net.urlOf), governance)
})

test.run()
