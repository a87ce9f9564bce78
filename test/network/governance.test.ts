/**
 * Governance on a network of four VPs, each a process of its own (docs/governance.md): proposals
 * created on one VP and voted on others through the official SDK, the same proposal, roles and
 * receipts on every VP, a VP killed (SIGKILL) in the middle of a vote that restarts and catches up
 * with the governance state, a VP added by a NODE proposal (AddNode, AddVP) and removed by one
 * (RemoveVP); then every other call family (CNS, CONTRACT by vote, CONFIG, and the operations that
 * need no vote) sent on one VP, voted on others, with the same state and receipts on all four; and a
 * system upgrade: the chain starts at tx_version 3.6, every VP declares what it supports through its
 * own version_setSupportedVersion, a forged declaration is refused, a SYSTEM proposal raises it.
 *
 *   npx tsx test/network/governance.test.ts
 */
import { generateKeyPairSync, sign } from 'node:crypto'
import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { accountFromPrivateKey } from '../../sdk/src/account.ts'
import { signBvm } from '../../sdk/src/bvm.ts'
import { loadOrCreateNodeCa } from '../../src/cert/ca.ts'
import { BUILD_SUPPORTED, nodeBindingBytes } from '../../src/governance/versions.ts'
import { BuiltinAddress } from '../../src/governance/wire.ts'
import { ECERT_FILE } from '../../src/p2p/identity.ts'
import { assertNoFork, assertSameOutcomes, call, height } from '../helpers/audit.ts'
import { waitCommitted } from '../helpers/client-load.ts'
import {
  Algo,
  BvmOperation,
  type BvmOutcome,
  Cns,
  COUNTER,
  ContractOp,
  counterContract,
  DecodeUtil,
  declareVersions,
  filterRulesProposal,
  type GovClient,
  govClient,
  keyOf,
  NodeOp,
  newAccount,
  Permission,
  Proposal,
  ProviderManager,
  plain,
  RequestError,
  ServiceManager,
  systemUpgradeProposal,
  Transaction,
} from '../helpers/governance.ts'
import { waitForReceipt } from '../helpers/node.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { wallet } from '../helpers/wallet.ts'

const net = processNetwork('governance', { logs: true })
const vps = ['node1', 'node2', 'node3', 'node4']
const [x, y] = [newAccount(), newAccount()]
/** the network's funded genesis account: its single admin at the start */
let admin: ReturnType<typeof newAccount>
const clients = new Map<string, GovClient>()
const governance: string[] = []

/** every VP's genesis starts the chain at tx_version 3.6 (this build supports 4.1 too): the system upgrade case raises it */
const startAt36 = (hostname: string) =>
  appendFileSync(join(net.dir, hostname, 'keel.toml'), '\n[genesis.runningVersions]\ntx_version = "3.6"\n')

test.before(async () => {
  await net.create({ vps: 4, nvps: 0 })
  for (const vp of vps) startAt36(vp)
  await Promise.all(vps.map((vp) => net.start(vp)))
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
  // the VP that answered a receipt may be a block ahead of the others
  await level(among)
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

/** sends transfers until `done` holds (blocks keep coming: a group change waits for a boundary 40 blocks on) */
async function until(done: () => Promise<boolean>, what: string, among = vps, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `${what}: not after ${timeoutMs / 1000} s`)
    await net.send(3, among)
  }
}

/**
 * Creates a proposal on node1 as the admin (through contract_manageContractByVote when `byVote`), x
 * and y vote for it on node2 and node3 (in one block when they can), the admin executes it on node4.
 */
async function passed(operation: Parameters<GovClient['ok']>[1], label: string, byVote = false): Promise<unknown> {
  const created = byVote
    ? await on('node1').byVote(admin.account, operation)
    : await on('node1').ok(admin.account, operation, `${label}: Create on node1`)
  assert.ok(created.Success, `${label}: Create on node1: ${created.Err}`)
  const id = created.Ret as number
  const votes = await Promise.all([
    on('node2').ok(x.account, Proposal().vote(id, true).build(), `${label}: vote on node2`),
    on('node3').ok(y.account, Proposal().vote(id, true).build(), `${label}: vote on node3`),
  ])
  const executed = await on('node4').ok(admin.account, Proposal().execute(id).build(), `${label}: Execute on node4`)
  governance.push(created.txHash, ...votes.map((vote) => vote.txHash), executed.txHash)
  return executed.Ret
}

const five = [...vps, 'node5']

/** `hostname` lists exactly `expected` as VPs in node_getNodes, within 60 s */
async function listsWithin(hostname: string, expected: string[]): Promise<void> {
  const listed = await net.vpsOnceListed(hostname, (vps) => JSON.stringify(vps) === JSON.stringify(expected))
  assert.equal(listed, expected, `${hostname} lists ${listed.join(', ')}, not ${expected.join(', ')}, after 60 s`)
}

test('a VP added by proposal: AddNode (its ECert) and AddVP, voted by the admins on other VPs; node5, started afterwards, is admitted by the proposal alone (no VP votes it in) and the group of 5 commits', async () => {
  // a NODE proposal of a host the chain has no certificate for is refused at creation, on every VP alike
  const refused = await on('node2').refused(
    admin.account,
    Proposal().createForNode(NodeOp().addVP('node5', 'global').build()).build(),
    /the proposal's operations are not valid: 0 AddVP: node5 is not registered: AddNode\(its ECert, "node5", "VP", "global"\) comes first/,
    'AddVP before AddNode',
  )
  governance.push(refused.txHash)
  const node5 = await net.addVp()
  assert.is(node5.id, 5)
  startAt36('node5')
  const ecert = readFileSync(join(net.dir, 'node5', 'config', 'certs', ECERT_FILE))
  const results = (await passed(
    Proposal()
      .createForNode(NodeOp().addNode(ecert, 'node5', 'VP', 'global').build(), NodeOp().addVP('node5', 'global').build())
      .build(),
    'AddNode + AddVP',
  )) as { code: number; msg: string }[]
  assert.is(results[0].code, 200)
  assert.is(results[1].code, 200)
  assert.match(results[1].msg, /^node5 joins the VP group as replica 5 from block \d+ \(its peerconfig.toml \[self\] says id = 5\)$/)
  const from = Number(/from block (\d+)/.exec(results[1].msg)?.[1])
  await net.start('node5')
  await until(
    async () => (await net.vpsListedBy('node1')).includes('node5') && (await net.consensusOf('node5')).state === 'normal',
    'node5 in the group and normal',
  )
  assert.ok((await height(net.urlOf('node1'))) >= from, `the group changed at block ${from}`)
  const log1 = readFileSync(join(net.dir, 'node1', 'node.log'), 'utf8')
  assert.match(log1, /replica 5 joins the group \(decided at block \d+ by a NODE proposal\)/)
  assert.not.match(log1, /asks to join as VP 5: this VP votes to add it/, 'no VP voted node5 in: the proposal did')
  clients.set('node5', await govClient(net.urlOf('node5')))
  // the group of 5 needs node5 for a quorum of 4 with node4 down
  await net.processes.get('node4')?.kill('SIGKILL')
  const live = ['node1', 'node2', 'node3', 'node5']
  await waitCommitted(await net.send(10, live), live.map(net.urlOf), 90_000)
  await net.start('node4')
  clients.set('node4', await govClient(net.urlOf('node4')))
  await until(async () => (await height(net.urlOf('node4'))) >= (await height(net.urlOf('node1'))), 'node4 caught up', ['node1', 'node2'])
  await level(five)
  assert.equal(await sameEverywhere('config_getProposal', [], five), await sameEverywhere('config_getProposal', [], vps))
  // node_getNodes lists the linked members: node5 dials the restarted node4 again after its back-off
  for (const hostname of five) await listsWithin(hostname, five)
  await assertSameOutcomes(five.map(net.urlOf), governance)
  await assertNoFork(five.map(net.urlOf))
})

test('RemoveVP by proposal: node5 leaves the group at the boundary on every VP; the four go on; a removal below 4 VPs is refused at creation', async () => {
  const results = (await passed(Proposal().createForNode(NodeOp().removeVP('node5', 'global').build()).build(), 'RemoveVP')) as {
    code: number
    msg: string
  }[]
  assert.match(results[0].msg, /^node5 \(replica 5\) leaves the VP group from block \d+$/)
  await until(async () => !(await net.vpsListedBy('node1')).includes('node5'), 'node5 out of the group')
  for (const hostname of vps) await listsWithin(hostname, vps)
  assert.match(
    readFileSync(join(net.dir, 'node1', 'node.log'), 'utf8'),
    /replica 5 leaves the group \(decided at block \d+ by a NODE proposal\)/,
  )
  const refused = await on('node1').refused(
    admin.account,
    Proposal().createForNode(NodeOp().removeVP('node4', 'global').build()).build(),
    /the group has 4 VPs; removing node4 would leave fewer than 4/,
    'RemoveVP of a group of 4',
  )
  governance.push(refused.txHash)
  await waitCommitted(await net.send(10, vps), vps.map(net.urlOf), 90_000)
  await level()
  await assertSameOutcomes(vps.map(net.urlOf), governance)
  await assertNoFork(vps.map(net.urlOf))
})

const counter = counterContract()

/** a transaction built with the SDK's EVMBuilder, signed, sent to `vp` and polled: its receipt */
async function evm(
  vp: string,
  account: ReturnType<typeof newAccount>['account'],
  build: (b: InstanceType<typeof Transaction.EVMBuilder>) => { build(): InstanceType<typeof Transaction> },
  deploy = false,
) {
  const tx = build(new Transaction.EVMBuilder(account.getAddress(), on(vp).pm)).build()
  tx.sign(account)
  const request = deploy ? on(vp).contracts.deploy(tx) : on(vp).contracts.invoke(tx)
  const receipt = (await (await request.send()).poll()).result
  governance.push(receipt.txHash)
  return receipt
}

/** Counter's count() read on `vp` (a transaction, so its receipt joins the compared ones) */
async function count(vp: string, address: string): Promise<number> {
  const read = await evm(vp, x.account, (b) => b.invoke(address, 'count()', counter.abi, []))
  return Number(DecodeUtil.decodeEvmResult({ result: read } as never, counter.abi, 'count()').map(String)[0])
}

test('every other call family on the four VPs: Hash, Balance, Account, Cert, Version and HashChange without a vote; CNS, CONTRACT (contract_manageContractByVote), CONFIG and CA proposals voted on other VPs; RootCA; the same state and receipts everywhere', async () => {
  const z = newAccount()
  const w = newAccount()
  const cert = `-----BEGIN CERTIFICATE-----\n${z.address}\n-----END CERTIFICATE-----`
  const Hash = () => new BvmOperation.Hash.Builder()
  const Cert = () => new BvmOperation.Cert.Builder()
  const Account = () => new BvmOperation.Account.Builder()
  const done = <T extends { txHash: string }>(outcome: T): T => {
    governance.push(outcome.txHash)
    return outcome
  }
  // one round of independent calls, each on another VP: few blocks
  const [tally, spare, , issued, registered, latest, hashAlgo] = await Promise.all([
    evm('node1', admin.account, (b) => b.deploy(counter.bin), true),
    evm('node2', admin.account, (b) => b.deploy(counter.bin), true),
    on('node3').ok(x.account, Hash().set('on-chain', 'value-1').build(), 'Hash.Set').then(done),
    on('node4').ok(admin.account, new BvmOperation.Balance.Builder().issue(z.address, 500n).build(), 'Balance.Issue').then(done),
    on('node1').ok(z.account, Account().register(z.address, cert).build(), 'Account.Register by itself').then(done),
    on('node2').ok(w.account, new BvmOperation.Version.Builder().getLatestVersions().build(), 'GetLatestVersions').then(done),
    on('node3').ok(w.account, new BvmOperation.HashChange.Builder().getSupportHashAlgo().build(), 'GetSupportHashAlgo').then(done),
  ])
  assert.is(issued.Ret, null)
  assert.is(registered.Ret, null)
  assert.equal(plain(hashAlgo.Ret), { hash_algo: 'KECCAK_256', encrypt_algo: '' })
  assert.equal(Object.keys((latest.Ret as { maxSupportedVersions: object }).maxSupportedVersions).sort(), vps)
  const [tallyAddress, spareAddress] = [tally.contractAddress, spare.contractAddress]
  const [got, , named] = await Promise.all([
    on('node4').ok(w.account, Hash().get('on-chain').build(), 'Hash.Get').then(done),
    on('node1')
      .ok(
        admin.account,
        Cert()
          .freeze(cert, null as never)
          .build(),
        'CertFreeze',
      )
      .then(done),
    // a CNS proposal in the same blocks: the admin names the first contract on node1, x and y vote on node2 and node3
    passed(Proposal().createForCNS(Cns().setCName(tallyAddress, 'Tally').build()).build(), 'CNS'),
  ])
  assert.is(got.Ret, 'value-1')
  assert.equal(named, [{ code: 200 }])
  assert.is(await sameEverywhere('account_getStatus', [z.address]), 'frozen')
  const [abandoned] = await Promise.all([
    (async () => {
      const check = done(await on('node2').ok(w.account, Cert().check(cert).build(), 'CertCheck'))
      assert.equal(plain(check.Ret), { address: z.address, status: 'frozen' })
      done(
        await on('node3').ok(
          admin.account,
          Cert()
            .unfreeze(cert, null as never)
            .build(),
          'CertUnfreeze',
        ),
      )
      return done(await on('node4').ok(admin.account, Account().abandon(z.address, '').build(), 'Account.Abandon by an admin'))
    })(),
    // invoke by name on node2, through the SDK's Builder.contractName
    evm('node2', x.account, (b) => b.invoke(tallyAddress, 'add()', counter.abi, []).contractName('Tally')),
  ])
  assert.ok(abandoned.Success)
  assert.is(await sameEverywhere('account_getStatus', [z.address]), 'abandoned')
  assert.is(await sameEverywhere('account_getBalance', [z.address]), '0x1f4')
  assert.equal(await sameEverywhere('config_getAllCNS', []), { [tallyAddress]: 'Tally' })
  assert.is(await sameEverywhere('contract_getStatusByCName', ['Tally']), 'normal')
  assert.is(await count('node3', tallyAddress), 1)

  // contract managers vote on CONTRACT proposals: x and y become ones
  await passed(
    Proposal()
      .createForPermission(
        Permission().grant('contractManager', x.address).build(),
        Permission().grant('contractManager', y.address).build(),
      )
      .build(),
    'contract managers',
  )
  const results = (await passed(
    Proposal()
      .createForContract(
        ContractOp()
          .deploy(COUNTER, counter.bin, 'EVM' as never, {})
          .build(),
        ContractOp()
          .upgradeByName(COUNTER, counter.binV2, 'EVM' as never, 'Tally', {})
          .build(),
        ContractOp()
          .maintain('EVM' as never, spareAddress, 2)
          .build(),
      )
      .build(),
    'CONTRACT by vote',
    true,
  )) as { code: number; msg?: string }[]
  assert.equal(
    results.map((result) => result.code),
    [200, 200, 200],
  )
  const deployed = results[0].msg as string
  assert.match(deployed, /^0x[0-9a-f]{40}$/)
  assert.is(await sameEverywhere('contract_getCreator', [deployed]), admin.address, 'the proposal creator deploys')
  assert.is(await sameEverywhere('contract_getStatus', [spareAddress]), 'frozen')
  await evm('node4', x.account, (b) => b.invoke(tallyAddress, 'add()', counter.abi, []).contractName('Tally'))
  assert.is(await count('node1', tallyAddress), 3, 'the upgraded code adds 2 to the kept count')

  // a CONFIG proposal: a filter rule lets only admins write to the Hash contract
  const rule = {
    id: 1,
    name: 'hash for admins',
    to: ['0x0000000000000000000000000000000000ffff01'],
    vm: ['bvm'],
    allow_anyone: false,
    authorized_roles: ['admin'],
    forbidden_roles: [],
  }
  await passed(filterRulesProposal([rule]), 'CONFIG')
  for (const vp of ['node1', 'node4']) {
    try {
      await on(vp).bvm(w.account, Hash().set('on-chain', 'value-2').build())
      assert.unreachable(`a Hash.Set by a non-admin on ${vp}`)
    } catch (error) {
      assert.instance(error, RequestError, String(error))
      assert.is((error as InstanceType<typeof RequestError>).getCode(), -32008)
      assert.match((error as Error).message, /filter rule 1 "hash for admins"/)
    }
  }
  done(await on('node2').ok(x.account, Hash().set('on-chain', 'value-2').build(), 'Hash.Set by an admin'))

  // the CA mode by a CA proposal, then a root CA added on node2 and read on node3 and node4
  const CAMode = () => new BvmOperation.CAMode.Builder()
  const RootCA = () => new BvmOperation.RootCA.Builder()
  assert.equal(
    await passed(
      Proposal()
        .createForCAMode(
          CAMode()
            .setCAMode(1 as never)
            .build(),
        )
        .build(),
      'CA mode',
    ),
    [{ code: 200 }],
  )
  const root = await loadOrCreateNodeCa(join(net.dir, 'root-ca'), { hostname: 'root' })
  done(await on('node2').ok(x.account, RootCA().addRootCA(root.pem).build(), 'AddRootCA on node2'))
  const [roots, mode, direct] = await Promise.all([
    on('node3').ok(w.account, RootCA().getRootCAs().build(), 'GetRootCAs on node3').then(done),
    on('node4').ok(w.account, Proposal().directForCAMode(CAMode().getCAMode().build()).build(), 'GetCAMode on node4').then(done),
    // in center mode an admin's Direct runs NODE operations without a vote: here one the group refuses
    on('node1')
      .ok(admin.account, Proposal().directForNode(NodeOp().removeVP('node4', 'global').build()).build(), 'Direct NODE on node1')
      .then(done),
  ])
  assert.equal(plain(direct.Ret), [
    { code: -30004, msg: 'the group has 4 VPs; removing node4 would leave fewer than 4, which BFT consensus needs' },
  ])
  assert.equal(
    (roots.Ret as string[]).map((pem) => pem.trim()),
    [root.pem.trim()],
  )
  assert.equal(mode.Ret, [{ code: 200, msg: '1' }])
  await level()
  assert.is((plain(await sameEverywhere('config_getProposal', [])) as { status: string }).status, 'COMPLETED')
  assert.equal(await sameEverywhere('account_getAccountsByRole', ['contractManager']), [admin.address, x.address, y.address].sort())
  await assertSameOutcomes(vps.map(net.urlOf), governance)
  await assertNoFork(vps.map(net.urlOf))
})

test('a system upgrade on four VPs: a forged declaration is refused; each VP declares through its own version_setSupportedVersion (signed by an admin); the SYSTEM proposal is refused until node4 declared, then voted on three VPs; the same versions on all four', async () => {
  const running = Object.values(
    ((await sameEverywhere('version_getVersions', [])) as { runningHyperchainVersions: Record<string, Record<string, string>> })
      .runningHyperchainVersions,
  )[0]
  assert.is(running.tx_version, '3.6')
  assert.is(await sameEverywhere('tx_getTransactionsVersion', []), '3.6')

  // an outsider sends node2's ECert (public) with a binding its own P-256 key signed
  const outsider = newAccount()
  const ecert2 = readFileSync(join(net.dir, 'node2', 'config', 'certs', ECERT_FILE), 'utf8')
  const { privateKey: stranger } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const forgedBinding = sign('sha256', nodeBindingBytes('node2', outsider.address), { key: stranger, dsaEncoding: 'ieee-p1363' })
  const forged = signBvm(
    accountFromPrivateKey(keyOf(outsider)),
    {
      to: BuiltinAddress.version,
      system: false,
      method: 'SetSupportedVersion',
      args: ['node2', JSON.stringify(BUILD_SUPPORTED), ecert2, forgedBinding.toString('hex')],
    },
    { version: '3.6' },
  )
  const sent = await call(net.urlOf('node3'), 'contract_invokeContract', [forged])
  governance.push(sent.result as string)
  const receipt = await waitForReceipt(net.urlOf('node3'), sent.result as string, 60_000)
  const refused = DecodeUtil.decodeBvmResultRet((receipt.result as { ret: string }).ret) as { Success: boolean; Err: string }
  assert.not.ok(refused.Success, 'a forged binding')
  assert.match(refused.Err, new RegExp(`the binding of ${outsider.address} to node2 does not verify with the key of node2's certificate`))

  // an operator method: refused on every VP unless an admin signed it
  for (const vp of vps) {
    for (const signer of [undefined, outsider]) {
      const refusal = (await declareVersions(on(vp).pm, signer)) as { code: number; message: string }
      assert.is(refusal.code, -32008, `${vp}, ${signer === undefined ? 'unsigned' : 'signed by a non-admin'}: ${refusal.message}`)
    }
  }
  assert.equal(await sameEverywhere('account_getAccountsByRole', ['nodeOfVP']), [], 'no node account declared')
  const declare = async (vp: string) => {
    const declared = (await declareVersions(on(vp).pm, admin)) as BvmOutcome
    assert.ok(declared.Success, `${vp} declares: ${declared.Err}`)
    governance.push(declared.txHash)
  }
  await Promise.all(['node1', 'node2', 'node3'].map(declare))
  const target = { ...running, tx_version: '4.1' }
  const upgrade = () => systemUpgradeProposal(target)
  const early = await on('node2').refused(
    admin.account,
    upgrade(),
    /tx_version 4\.1 is not supported by node4 \(of the VPs node1, node2, node3, node4\)/,
    'SYSTEM before node4 declared',
  )
  governance.push(early.txHash)
  await declare('node4')
  await level()
  for (const vp of vps)
    assert.equal(((await sameEverywhere('version_getSupportedVersionByHostname', [vp])) as { tx_version: string[] }).tx_version, [
      '2.1',
      '2.2',
      '3.6',
      '4.1',
    ])
  assert.is(((await sameEverywhere('account_getAccountsByRole', ['nodeOfVP'])) as string[]).length, 4, 'four node accounts')
  assert.equal(await sameEverywhere('account_getRoles', [outsider.address]), [], 'the forger holds no role')

  const results = (await passed(upgrade(), 'SYSTEM')) as { code: number; msg: string }[]
  assert.is(results[0].code, 200)
  assert.match(results[0].msg, /^the chain runs tx_version 4\.1 \(was 3\.6\) from block \d+$/)
  await level()
  const after = (await sameEverywhere('version_getVersions', [])) as {
    availableHyperchainVersions: object
    runningHyperchainVersions: Record<string, object>
  }
  assert.equal(Object.values(after.runningHyperchainVersions), [target])
  assert.equal(after.availableHyperchainVersions, {})
  assert.is(await sameEverywhere('tx_getTransactionsVersion', []), '4.1')
  const latest = await Promise.all(
    vps.map((vp) =>
      on(vp).ok(newAccount().account, new BvmOperation.Version.Builder().getLatestVersions().build(), `GetLatestVersions on ${vp}`),
    ),
  )
  for (const answer of latest) {
    governance.push(answer.txHash)
    assert.equal(plain(answer.Ret), plain(latest[0].Ret))
  }
  assert.is((plain(latest[0].Ret) as { runningVersions: { tx_version: string } }).runningVersions.tx_version, '4.1')
  await level()
  await assertSameOutcomes(vps.map(net.urlOf), governance)
  await assertNoFork(vps.map(net.urlOf))
})

test.run()
