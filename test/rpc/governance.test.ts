/**
 * Governance on one node (docs/governance.md), driven through the official SDK's BVMBuilder, its
 * operation builders, its ContractService and its decoders: BVM transactions and their receipts,
 * roles and their queries, proposals from creation to execution (and every way one is refused),
 * account status, the Version and HashChange contracts, a system upgrade (the chain starts at
 * tx_version 3.6: version_setSupportedVersion, a SYSTEM proposal, the tx_version gate), the records
 * through a snapshot and an archive. One node shared by every case, with three genesis admins
 * (threshold: all three), plus a node process killed with SIGKILL in the middle of a vote and
 * restarted, and a second small node whose proposals time out after two seconds.
 *
 *   npx tsx test/rpc/governance.test.ts
 */
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { accountFromPrivateKey } from '../../sdk/src/account.ts'
import { hashOperation, signBvm } from '../../sdk/src/bvm.ts'
import { readEntries } from '../../src/archive/file.ts'
import { loadOrCreateNodeCa } from '../../src/cert/ca.ts'
import { issueTcert } from '../../src/cert/tcert.ts'
import { startNodeProcess, writeNodeConfig } from '../../src/devnet/node-process.ts'
import { BuiltinAddress } from '../../src/governance/wire.ts'
import type { KeelNode } from '../../src/node.ts'
import { Keyspace } from '../../src/store/keyspace.ts'
import { call } from '../helpers/chain.ts'
import {
  BvmOperation,
  type BvmOutcome,
  Cns,
  COUNTER,
  Config,
  ContractOp,
  counterContract,
  DecodeUtil,
  declareVersions,
  type GovClient,
  govClient,
  keyOf,
  newAccount,
  Permission,
  Proposal,
  plain,
  RequestError,
  systemUpgradeProposal,
  Transaction,
} from '../helpers/governance.ts'
import { envelope, post, startTestNode, waitForReceipt } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

const [a, b, c] = [newAccount(), newAccount(), newAccount()]
/** a funded account that holds no role */
const user = newAccount()
/** an account that abandons itself */
const leaver = newAccount()
const admins = [a, b, c].map((x) => x.address).sort()
const funded = [a, b, c, user, leaver].map(({ address }) => ({ address, balance: '1000000' }))

let node: KeelNode
let gov: GovClient

test.before(async () => {
  // the chain starts at tx_version 3.6, which this build supports beside 4.1: the system upgrade case raises it
  node = await startTestNode({ genesis: { accounts: funded, admins, runningVersions: { tx_version: '3.6' } } })
  gov = await govClient(node.url)
})

test.after(async () => {
  await node?.stop()
})

const rpc = async (method: string, params: unknown[] = [], url = node.url) =>
  (await post(url, envelope(method, params))).body as { code: number; message: string; result?: unknown }

const versionsOf = async () =>
  Object.values(
    ((await rpc('version_getVersions')).result as { runningHyperchainVersions: Record<string, Record<string, string>> })
      .runningHyperchainVersions,
  )[0]

test('a system upgrade through the SDK: refused while the node has not declared 4.1, declared by version_setSupportedVersion (an operator call), voted, executed; the tx_version gate refuses 4.1 before and admits it after', async () => {
  const hostname = node.config.node.hostname
  const running = await versionsOf()
  assert.is(running.tx_version, '3.6', 'the genesis runningVersions')
  assert.is((await rpc('tx_getTransactionsVersion')).result, '3.6')
  const target = { ...running, tx_version: '4.1' }
  const upgrade = () => systemUpgradeProposal(target)
  // keel-client signs version 4.1: newer than the chain runs
  const newer = () => signBvm(accountFromPrivateKey(keyOf(user)), hashOperation.set('upgrade', 'newer'))
  const before = await rpc('contract_invokeContract', [newer()])
  assert.is(before.code, -32008, before.message)
  assert.match(before.message, /this chain runs tx_version 3\.6 \(tx_getTransactionsVersion\); the transaction declares version 4\.1/)
  await gov.refused(a.account, upgrade(), /tx_version 4\.1 is not supported by node1 \(of the VPs node1\)/, 'SYSTEM before the declaration')

  const unsigned = (await declareVersions(gov.pm)) as { code: number; message: string }
  assert.is(unsigned.code, -32008)
  assert.match(unsigned.message, /^version_setSupportedVersion is an operator method/)
  const byUser = (await declareVersions(gov.pm, user)) as { code: number; message: string }
  assert.is(byUser.code, -32008, 'signed by an account that is no admin')
  const declared = (await declareVersions(gov.pm, a)) as BvmOutcome
  assert.ok(declared.Success, declared.Err)
  const supported = (await rpc('version_getSupportedVersionByHostname', [hostname])).result as Record<string, string[]>
  assert.equal(supported.tx_version, ['2.1', '2.2', '3.6', '4.1'])
  const nodeAccounts = (await gov.accounts.getAccountsByRole('nodeOfVP').send()).result
  assert.is(nodeAccounts.length, 1, 'the node account holds nodeOfVP')
  assert.is(declared.receipt.txHash.length, 66)
  const available = (await rpc('version_getVersions')).result as { availableHyperchainVersions: Record<string, Record<string, string>> }
  assert.equal(Object.values(available.availableHyperchainVersions), [target], 'what a SYSTEM proposal could run')

  const created = await gov.ok(a.account, upgrade(), 'SYSTEM after the declaration')
  const id = Number(created.Ret)
  await gov.ok(b.account, Proposal().vote(id, true).build(), 'vote b')
  await gov.refused(a.account, upgrade(), /proposal \d+ is still open/, 'one proposal open at a time')
  assert.match((await rpc('contract_invokeContract', [newer()])).message, /runs tx_version 3\.6/, 'voted is not executed')
  await gov.ok(c.account, Proposal().vote(id, true).build(), 'vote c')
  const executed = await gov.ok(a.account, Proposal().execute(id).build(), 'execute')
  const [outcome] = plain(executed.Ret) as { code: number; msg: string }[]
  assert.is(outcome.code, 200)
  assert.match(outcome.msg, /^the chain runs tx_version 4\.1 \(was 3\.6\) from block \d+$/)
  assert.equal(await versionsOf(), target)
  assert.is((await rpc('tx_getTransactionsVersion')).result, '4.1')
  const after = await rpc('contract_invokeContract', [newer()])
  assert.is(after.code, 0, after.message)
  const afterReceipt = await waitForReceipt(node.url, after.result as string)
  assert.is(afterReceipt.code, 0, afterReceipt.message)
  assert.ok((DecodeUtil.decodeBvmResultRet(afterReceipt.result?.ret as string) as { Success: boolean }).Success, 'the 4.1 transaction ran')
  const latest = await gov.ok(user.account, new BvmOperation.Version.Builder().getLatestVersions().build(), 'GetLatestVersions')
  const tags = Object.fromEntries(Object.entries(target).filter(([, version]) => version !== ''))
  assert.equal(plain(latest.Ret), { maxSupportedVersions: { [hostname]: tags }, availableVersions: {}, runningVersions: tags })
  assert.equal((await gov.proposal()).status, 'COMPLETED')
})

/** the first BVM transaction of the run: its block is archived in the archive case */
let firstHashSet = ''

test('a BVM transaction: Hash Set and Get through the SDK, its receipt decoded by the SDK', async () => {
  const set = await gov.ok(user.account, new BvmOperation.Hash.Builder().set('key-1', 'value-1').build(), 'Hash.Set')
  firstHashSet = set.txHash
  assert.is(set.Ret, null)
  assert.is(set.receipt.gasUsed, 0, 'a built-in contract charges nothing')
  const get = await gov.ok(user.account, new BvmOperation.Hash.Builder().get('key-1').build(), 'Hash.Get')
  assert.is(get.Ret, 'value-1')
  await gov.refused(user.account, new BvmOperation.Hash.Builder().get('key-2').build(), /no value is set for key "key-2"/, 'Hash.Get unset')
})

test('a system operation is signed with gasPrice and expirationTimestamp 2^63-1, accepted and charged nothing', async () => {
  const tx = (
    new Transaction.BVMBuilder(user.account.getAddress(), gov.pm) as unknown as {
      invoke(op: unknown): { build(): ReturnType<InstanceType<typeof Transaction.Builder>['build']> }
    }
  )
    .invoke(Proposal().vote(99, true).build())
    .build()
  tx.sign(user.account)
  const params = tx.commonParam() as Record<string, unknown>
  assert.is(BigInt(params.gasPrice as bigint), 2n ** 63n - 1n)
  assert.is(BigInt(params.expirationTimestamp as bigint), 2n ** 63n - 1n)
  const sent = await gov.contracts.invoke(tx).send()
  const receipt = (await sent.poll()).result
  assert.is(receipt.gasUsed, 0)
  const balance = await rpc('account_getBalance', [user.address])
  assert.is(balance.result, '0xf4240', 'the balance is untouched')
})

test('a malformed operation fails its transaction with the reason; a BVM transaction to another address is refused at admission', async () => {
  const raw = wallet()
  const garbage = raw.invoke('0x0000000000000000000000000000000000ffff01', '0x0000000953657400', { type: 'BVM' })
  const sent = await rpc('contract_invokeContract', [garbage])
  assert.is(sent.code, 0, sent.message)
  const receipt = await waitForReceipt(node.url, sent.result as string)
  assert.is(receipt.code, -32005)
  const elsewhere = raw.invoke('0x3434343434343434343434343434343434343434', '0x00', { type: 'BVM' })
  const refused = await rpc('contract_invokeContract', [elsewhere])
  assert.is(refused.code, -32602)
  assert.match(refused.message, /a BVM transaction goes to a built-in contract/)
  // the chain goes on
  await gov.ok(user.account, new BvmOperation.Hash.Builder().set('after', 'garbage').build(), 'a later BVM transaction')
})

test('Balance.Issue: an admin issues native balance to an account; a non-admin, a zero and a malformed amount change nothing', async () => {
  const target = newAccount().address
  const Balance = () => new BvmOperation.Balance.Builder()
  const balance = async () => (await rpc('account_getBalance', [target])).result
  await gov.ok(a.account, Balance().issue(target, 500n).build(), 'Issue by an admin')
  assert.is(await balance(), '0x1f4', 'the new account holds what was issued')
  await gov.refused(user.account, Balance().issue(target, 7n).build(), /Issue needs an admin/, 'Issue by a non-admin')
  await gov.refused(a.account, Balance().issue(target, 0n).build(), /zero or would take .* past 9223372036854775807/, 'Issue of zero')
  await gov.refused(
    a.account,
    Balance()
      .issue(target, 2n ** 63n)
      .build(),
    /past 9223372036854775807 \(int64\)/,
    'Issue past int64',
  )
  await gov.refused(a.account, Balance().issue(target, -5n).build(), /not a positive decimal amount/, 'Issue of a negative amount')
  assert.is(await balance(), '0x1f4', 'the refusals issued nothing')
  await gov.ok(b.account, Balance().issue(target, 12n).build(), 'Issue by another admin')
  assert.is(await balance(), '0x200', '500 + 12')
})

test('the Version contract answers the versions the chain runs; HashChange answers Keccak-256 and refuses a change, naming why', async () => {
  const chain = Object.values(
    ((await rpc('version_getVersions')).result as { runningHyperchainVersions: Record<string, Record<string, string>> })
      .runningHyperchainVersions,
  )[0]
  const tags = Object.fromEntries(Object.entries(chain).filter(([, version]) => version !== ''))
  const hostname = node.config.node.hostname
  const latest = await gov.ok(user.account, new BvmOperation.Version.Builder().getLatestVersions().build(), 'GetLatestVersions')
  assert.equal(plain(latest.Ret), { maxSupportedVersions: { [hostname]: tags }, availableVersions: {}, runningVersions: tags })
  const supported = await gov.ok(
    user.account,
    new BvmOperation.Version.Builder().getSupportedVersionByHostname(hostname).build(),
    'GetSupportedVersionByHostname',
  )
  const byRpc = (await rpc('version_getSupportedVersionByHostname', [hostname])).result as Record<string, string[]>
  assert.equal(
    plain(supported.Ret),
    Object.fromEntries(Object.entries(byRpc).filter(([, list]) => list.length > 0)),
    'as version_getSupportedVersionByHostname says',
  )
  await gov.refused(
    user.account,
    new BvmOperation.Version.Builder().getSupportedVersionByHostname('node9').build(),
    /"node9" is no VP of this chain \(node1\)/,
    'an unknown host',
  )
  const hashChange = () => new BvmOperation.HashChange.Builder()
  const support = await gov.ok(user.account, hashChange().getSupportHashAlgo().build(), 'GetSupportHashAlgo')
  assert.equal(plain(support.Ret), { hash_algo: 'KECCAK_256', encrypt_algo: '' })
  const history = await gov.ok(user.account, hashChange().getHashAlgo().build(), 'GetHashAlgo')
  assert.equal(plain(history.Ret), [])
  const change = { hash_algo: 'KECCAK_224', encrypt_algo: '3DES_CBC' } as unknown as Parameters<
    ReturnType<typeof hashChange>['changeHashAlgo']
  >[0]
  await gov.refused(user.account, hashChange().changeHashAlgo(change).build(), /ChangeHashAlgo needs an admin/, 'a change by a non-admin')
  await gov.refused(
    a.account,
    hashChange().changeHashAlgo(change).build(),
    /Keel does not change its hash algorithm \(asked: KECCAK_224, 3DES_CBC\): transaction, block and contract hashes and addresses are KECCAK_256/,
    'a change by an admin',
  )
})

test('genesis roles: the configured admins are admins and contract managers; the role queries answer the SDK', async () => {
  assert.equal((await gov.accounts.getRoles(a.address).send()).result, ['admin', 'contractManager'])
  assert.equal((await gov.accounts.getRoles(user.address).send()).result, [])
  assert.equal((await gov.accounts.getAccountsByRole('admin').send()).result, admins)
  assert.equal((await gov.accounts.getAccountsByRole('audit').send()).result, [])
  assert.equal(plain((await gov.config.getAllRoles().send()).result), { admin: 1, contractManager: 1, nodeOfVP: 1, audit: 1 })
  assert.is((await gov.config.isRoleExist('nodeOfVP').send()).result, true)
  assert.is((await gov.config.isRoleExist('auditor').send()).result, false)
  assert.is((await gov.accounts.getStatus(user.address).send()).result, 'normal')
  try {
    await gov.accounts.getAccountsByRole('auditor').send()
    assert.unreachable('an unknown role')
  } catch (error) {
    assert.instance(error, RequestError)
    assert.is((error as InstanceType<typeof RequestError>).getCode(), -32602)
  }
})

let permissionId = 0

test('a PERMISSION proposal: created by an admin, refused votes, execution only at the threshold and by its creator', async () => {
  const created = await gov.ok(
    a.account,
    Proposal()
      .createForPermission(
        Permission().createRole('auditor').build(),
        Permission().grant('auditor', user.address).build(),
        Permission().grant('admin', user.address).build(),
      )
      .build(),
    'Create',
  )
  permissionId = created.Ret as number
  assert.type(permissionId, 'number')
  let proposal = await gov.proposal()
  assert.is(proposal.id, permissionId)
  assert.is(proposal.status, 'VOTING')
  assert.is(proposal.type, 'PERMISSION')
  assert.is(proposal.threshold, 3, 'every admin by default')
  assert.is(proposal.score, 1, "the creator's vote counts")
  assert.is(proposal.creator, a.address)
  assert.equal(
    JSON.parse(proposal.code).map((op: { MethodName: string }) => op.MethodName),
    ['CreateRole', 'Grant', 'Grant'],
  )
  assert.equal(plain(proposal.assentor), [{ addr: a.address, txHash: created.txHash, weight: 1 }])

  await gov.refused(
    user.account,
    Proposal().vote(permissionId, true).build(),
    /may not vote on a PERMISSION proposal: it needs the admin role/,
    'a vote by a non-admin',
  )
  await gov.refused(
    a.account,
    Proposal().vote(permissionId, true).build(),
    /has voted on proposal \d+ already/,
    'a second vote by the same admin',
  )
  await gov.refused(
    a.account,
    Proposal().execute(permissionId).build(),
    /it runs once it is WAITING_EXE \(1 of 3 votes\)/,
    'execute below the threshold',
  )
  await gov.refused(
    user.account,
    Proposal().createForPermission(Permission().createRole('other').build()).build(),
    /may not create a PERMISSION proposal: it needs the admin role/,
    'a proposal by a non-admin',
  )
  await gov.refused(
    b.account,
    Proposal().createForConfig(Config().setProposalThreshold(2).build()).build(),
    /proposal \d+ is still open \(VOTING\)/,
    'a second open proposal',
  )

  await gov.ok(b.account, Proposal().vote(permissionId, true).build(), 'vote 2')
  proposal = await gov.proposal()
  assert.is(proposal.status, 'VOTING')
  assert.is(proposal.score, 2)
  await gov.ok(c.account, Proposal().vote(permissionId, true).build(), 'vote 3')
  proposal = await gov.proposal()
  assert.is(proposal.status, 'WAITING_EXE')
  await gov.refused(
    c.account,
    Proposal().vote(permissionId, true).build(),
    /is WAITING_EXE, votes are taken while it is VOTING/,
    'a vote after the threshold',
  )
  await gov.refused(b.account, Proposal().execute(permissionId).build(), /only the creator .* may execute/, 'execute by another admin')
  // operator methods answer to the same admin set (rpc/operator-auth.ts): not yet an admin, refused
  const operatorCall = () => call(node.url, 'archive_deleteSnapshot', ['0x00000000000000000000000000000000'], { operator: keyOf(user) })
  const before = await operatorCall()
  assert.is(before.code, -32008, before.message)
  assert.match(before.message, /is not one \(account_getAccountsByRole/)

  const executed = await gov.ok(a.account, Proposal().execute(permissionId).build(), 'Execute')
  assert.equal(executed.Ret, [{ code: 200 }, { code: 200 }, { code: 200 }])
  proposal = await gov.proposal()
  assert.is(proposal.status, 'COMPLETED')
  assert.is(proposal.completed, executed.txHash)
  assert.equal((await gov.accounts.getRoles(user.address).send()).result, ['admin', 'auditor'])
  assert.is((await gov.config.isRoleExist('auditor').send()).result, true)
  assert.equal((await gov.accounts.getAccountsByRole('admin').send()).result, [...admins, user.address].sort())
  const after = await operatorCall()
  assert.is.not(after.code, -32008, `an admin by proposal may call an operator method: ${after.message}`)
})

test('a proposal voted down is REJECT; a cancelled one is CANCEL; only the creator cancels', async () => {
  // four admins now (threshold: all four): one objection rejects
  const created = await gov.ok(b.account, Proposal().createForPermission(Permission().createRole('temporary').build()).build(), 'Create')
  const id = created.Ret as number
  assert.is(id, permissionId + 1)
  await gov.ok(c.account, Proposal().vote(id, false).build(), 'vote against')
  let proposal = await gov.proposal()
  assert.is(proposal.status, 'REJECT')
  assert.equal(
    proposal.objector.map((vote) => vote.addr),
    [c.address],
  )
  await gov.refused(b.account, Proposal().execute(id).build(), /proposal \d+ is REJECT/, 'execute a rejected proposal')

  const again = await gov.ok(
    b.account,
    Proposal().createForPermission(Permission().createRole('temporary').build()).build(),
    'Create again',
  )
  const againId = again.Ret as number
  await gov.refused(a.account, Proposal().cancel(againId).build(), /only the creator .* may cancel/, 'cancel by another admin')
  const cancelled = await gov.ok(b.account, Proposal().cancel(againId).build(), 'Cancel')
  proposal = await gov.proposal()
  assert.is(proposal.status, 'CANCEL')
  assert.is(proposal.cancel, cancelled.txHash)
  assert.is((await gov.config.isRoleExist('temporary').send()).result, false)
  await gov.refused(
    b.account,
    Proposal().vote(permissionId, true).build(),
    /proposal \d+ is closed: COMPLETED/,
    'a vote on an old proposal',
  )
})

test('a CONFIG proposal: settings Keel does not take by proposal are refused at creation, per operation; the threshold changes', async () => {
  const refused = await gov.refused(
    a.account,
    Proposal().createForConfig(Config().setConsensusBatchSize(100).build(), Config().setProposalThreshold(2).build()).build(),
    /the proposal's operations are not valid: 0 SetConsensusBatchSize/,
    'consensus settings',
  )
  assert.equal(refused.Ret, [
    { code: -30004, msg: 'Keel does not change consensus.pool.batch_size ([chain] batchSize in keel.toml) by proposal' },
    { code: 200 },
  ])
  const created = await gov.ok(a.account, Proposal().createForConfig(Config().setProposalThreshold(2).build()).build(), 'Create')
  const id = created.Ret as number
  for (const voter of [b, c, user]) await gov.ok(voter.account, Proposal().vote(id, true).build(), 'vote')
  await gov.ok(a.account, Proposal().execute(id).build(), 'Execute')
  // two votes now pass a proposal
  const next = await gov.ok(a.account, Proposal().createForPermission(Permission().revoke('admin', user.address).build()).build(), 'Create')
  await gov.ok(
    b.account,
    Proposal()
      .vote(next.Ret as number, true)
      .build(),
    'vote',
  )
  assert.is((await gov.proposal()).status, 'WAITING_EXE')
  await gov.ok(
    a.account,
    Proposal()
      .execute(next.Ret as number)
      .build(),
    'Execute',
  )
  assert.equal((await gov.accounts.getRoles(user.address).send()).result, ['auditor'])
})

test('an abandoned account: Account.Abandon by itself; its transactions are refused at admission with -32008', async () => {
  await gov.refused(
    user.account,
    new BvmOperation.Account.Builder().abandon(leaver.address, '').build(),
    /only 0x[0-9a-f]+ itself or an admin may abandon it/,
    'abandon by someone else',
  )
  await gov.ok(leaver.account, new BvmOperation.Account.Builder().abandon(leaver.address, '').build(), 'Abandon')
  assert.is((await gov.accounts.getStatus(leaver.address).send()).result, 'abandoned')
  const transfer = new Transaction.EVMBuilder(leaver.account.getAddress(), gov.pm).transfer(user.address, 1).build()
  transfer.sign(leaver.account)
  try {
    await gov.tx.sendTx(transfer).send()
    assert.unreachable('a transfer by an abandoned account')
  } catch (error) {
    assert.instance(error, RequestError)
    assert.is((error as InstanceType<typeof RequestError>).getCode(), -32008)
    assert.match((error as Error).message, /is abandoned: its transactions are refused/)
  }
})

const compiled = counterContract()
let counterAddress = ''

/** a signed transaction (built with the SDK's builder) as the SDK sends it */
function signedBy<T extends { build(): InstanceType<typeof Transaction> }>(builder: T, account: ReturnType<typeof newAccount>['account']) {
  const tx = builder.build()
  tx.sign(account)
  return tx
}

async function proposalPasses(
  id: number,
  voters: ReturnType<typeof newAccount>[],
  creator: ReturnType<typeof newAccount>,
): Promise<unknown> {
  for (const voter of voters) await gov.ok(voter.account, Proposal().vote(id, true).build(), `vote by ${voter.address}`)
  return (await gov.ok(creator.account, Proposal().execute(id).build(), 'Execute')).Ret
}

test('a CONTRACT proposal sent with contract_manageContractByVote (and simulated first) deploys a contract when the contract managers agree', async () => {
  const operation = Proposal()
    .createForContract(
      ContractOp()
        .deploy(COUNTER, compiled.bin, 'EVM' as never, {})
        .build(),
    )
    .build()
  const bvm = () =>
    new Transaction.BVMBuilder(a.account.getAddress(), gov.pm) as unknown as {
      invoke(op: unknown): { simulate(): { build(): InstanceType<typeof Transaction> }; build(): InstanceType<typeof Transaction> }
    }
  const latestBefore = (await gov.proposal()).id
  const simulated = bvm().invoke(operation).simulate().build()
  simulated.sign(a.account)
  const simulation = await gov.contracts.manageContractByVote(simulated).send()
  assert.is(simulation.code, 0, simulation.message)
  const simulatedResult = DecodeUtil.decodeBvmResultRet((simulation.result as unknown as { ret: string }).ret) as { Success: boolean }
  assert.ok(simulatedResult.Success, 'the simulation creates the proposal')
  assert.is((await gov.proposal()).id, latestBefore, 'a simulation changes nothing')

  const tx = bvm().invoke(operation).build()
  tx.sign(a.account)
  const sent = await gov.contracts.manageContractByVote(tx).send()
  assert.is(sent.code, 0, sent.message)
  for (let i = 0; i < 200 && (await rpc('tx_getTransactionReceipt', [sent.result])).code !== 0; i++)
    await new Promise((r) => setTimeout(r, 25))
  const proposal = await gov.proposal()
  assert.is(proposal.type, 'CONTRACT')
  assert.is(proposal.threshold, 3, 'every contract manager (the three genesis admins)')
  await gov.refused(
    user.account,
    Proposal().vote(proposal.id, true).build(),
    /needs the contractManager role/,
    'a vote by an admin who is no contract manager',
  )
  const results = (await proposalPasses(proposal.id, [b, c], a)) as { code: number; msg: string }[]
  assert.is(results[0].code, 200)
  counterAddress = results[0].msg
  assert.match(counterAddress, /^0x[0-9a-f]{40}$/)
  assert.is((await gov.contracts.getStatus(counterAddress).send()).result, 'normal')
  assert.is((await gov.contracts.getCreator(counterAddress).send()).result, a.address, 'the proposal creator deploys')
})

test('CNS: a name set by proposal; invoke by cname; the ByCName queries; rename and removal', async () => {
  const created = await gov.ok(a.account, Proposal().createForCNS(Cns().setCName(counterAddress, 'Counter').build()).build(), 'Create CNS')
  await proposalPasses(created.Ret as number, [b], a)
  assert.equal(plain((await gov.config.getAllCNS().send()).result), { [counterAddress]: 'Counter' })
  assert.is((await gov.config.getAddressByName('Counter').send()).result, counterAddress)
  assert.is((await gov.config.getNameByAddress(counterAddress).send()).result, 'Counter')
  assert.is((await gov.contracts.getStatusByCName('Counter').send()).result, 'normal')
  assert.is((await gov.contracts.getCreatorByCName('Counter').send()).result, a.address)
  assert.match((await gov.contracts.getCreateTimeByCName('Counter').send()).result, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/)

  // invoke by name: the SDK's Builder.contractName sets `to` to the zero address and signs `cname`
  const byName = signedBy(
    new Transaction.EVMBuilder(user.account.getAddress(), gov.pm).invoke(counterAddress, 'add()', compiled.abi, []).contractName('Counter'),
    user.account,
  )
  assert.is((byName.commonParam() as { to: string }).to, '0x0000000000000000000000000000000000000000')
  const invoked = await (await gov.contracts.invoke(byName).send()).poll()
  assert.is(invoked.code, 0)
  const read = await (
    await gov.contracts
      .invoke(
        signedBy(
          new Transaction.EVMBuilder(user.account.getAddress(), gov.pm).invoke(counterAddress, 'count()', compiled.abi, []),
          user.account,
        ),
      )
      .send()
  ).poll()
  assert.equal(DecodeUtil.decodeEvmResult(read as never, compiled.abi, 'count()').map(String), ['1'])
  const unknown = signedBy(
    new Transaction.EVMBuilder(user.account.getAddress(), gov.pm).invoke(counterAddress, 'add()', compiled.abi, []).contractName('Nobody'),
    user.account,
  )
  try {
    await (await gov.contracts.invoke(unknown).send()).poll()
    assert.unreachable('an unknown name')
  } catch (error) {
    assert.is((error as InstanceType<typeof RequestError>).getCode(), -32005)
  }

  const renamed = await gov.ok(a.account, Proposal().createForCNS(Cns().setCName(counterAddress, 'Tally').build()).build(), 'rename')
  await proposalPasses(renamed.Ret as number, [b], a)
  assert.is((await gov.config.getNameByAddress(counterAddress).send()).result, 'Tally')
  assert.is((await rpc('config_getAddressByCName', ['Counter'])).code, -32001, 'the old name is free')
  const removed = await gov.ok(a.account, Proposal().createForCNS(Cns().setCName(counterAddress, '').build()).build(), 'remove')
  await proposalPasses(removed.Ret as number, [b], a)
  assert.equal(plain((await gov.config.getAllCNS().send()).result), {})
  const named = await gov.ok(a.account, Proposal().createForCNS(Cns().setCName(counterAddress, 'Counter').build()).build(), 'name again')
  await proposalPasses(named.Ret as number, [b], a)
})

test('CONTRACT proposals freeze and unfreeze by name and upgrade by address; with contract votes on, a plain deployment is refused', async () => {
  const freeze = await gov.ok(
    a.account,
    Proposal()
      .createForContract(
        ContractOp()
          .maintainByName('EVM' as never, 'Counter', 2)
          .build(),
      )
      .build(),
    'freeze',
  )
  await proposalPasses(freeze.Ret as number, [b, c], a)
  assert.is((await gov.contracts.getStatusByCName('Counter').send()).result, 'frozen')
  const unfreeze = await gov.ok(
    a.account,
    Proposal()
      .createForContract(
        ContractOp()
          .maintain('EVM' as never, counterAddress, 3)
          .build(),
      )
      .build(),
    'unfreeze',
  )
  await proposalPasses(unfreeze.Ret as number, [b, c], a)
  assert.is((await gov.contracts.getStatus(counterAddress).send()).result, 'normal')

  const upgrade = await gov.ok(
    a.account,
    Proposal()
      .createForContract(
        ContractOp()
          .upgrade(COUNTER, compiled.binV2, 'EVM' as never, counterAddress, {})
          .build(),
      )
      .build(),
    'upgrade',
  )
  await proposalPasses(upgrade.Ret as number, [b, c], a)
  const count = async () => {
    const read = await (
      await gov.contracts
        .invoke(
          signedBy(
            new Transaction.EVMBuilder(user.account.getAddress(), gov.pm).invoke(counterAddress, 'count()', compiled.abi, []),
            user.account,
          ),
        )
        .send()
    ).poll()
    return DecodeUtil.decodeEvmResult(read as never, compiled.abi, 'count()').map(String)[0]
  }
  const before = Number(await count())
  await (
    await gov.contracts
      .invoke(
        signedBy(
          new Transaction.EVMBuilder(user.account.getAddress(), gov.pm).invoke(counterAddress, 'add()', compiled.abi, []),
          user.account,
        ),
      )
      .send()
  ).poll()
  assert.is(Number(await count()), before + 2, 'the upgraded code runs on the kept storage')

  const on = await gov.ok(a.account, Proposal().createForConfig(Config().setContractVoteEnable(true).build()).build(), 'contract votes on')
  await proposalPasses(on.Ret as number, [b], a)
  const deploy = signedBy(new Transaction.EVMBuilder(a.account.getAddress(), gov.pm).deploy(compiled.bin), a.account)
  try {
    await gov.contracts.deploy(deploy).send()
    assert.unreachable('a plain deployment')
  } catch (error) {
    assert.is((error as InstanceType<typeof RequestError>).getCode(), -32008)
    assert.match((error as Error).message, /by vote on this chain \(proposal\.contract\.vote\.enable\)/)
  }
  const off = await gov.ok(
    a.account,
    Proposal().createForConfig(Config().setContractVoteEnable(false).build()).build(),
    'contract votes off',
  )
  await proposalPasses(off.Ret as number, [b], a)
})

test('CA mode and root CAs: SetCAMode by a voted CA proposal, once; Direct answers GetCAMode and runs NODE contents only in center or none; AddRootCA by admins in center mode; account certificates checked against the root CAs', async () => {
  const CAMode = () => new BvmOperation.CAMode.Builder()
  const RootCA = () => new BvmOperation.RootCA.Builder()
  const NodeOp = () => new BvmOperation.Node.Builder()
  const unset = await gov.ok(user.account, Proposal().directForCAMode(CAMode().getCAMode().build()).build(), 'GetCAMode before any')
  assert.equal(unset.Ret, [{ code: -30004, msg: "this chain has no CA mode yet (a CA proposal's SetCAMode sets it once)" }])
  const dir = mkdtempSync(join(tmpdir(), 'keel-rootca-'))
  try {
    const root = await loadOrCreateNodeCa(join(dir, 'root'), { hostname: 'root' })
    const other = await loadOrCreateNodeCa(join(dir, 'other'), { hostname: 'other' })
    await gov.refused(
      a.account,
      RootCA().addRootCA(root.pem).build(),
      /AddRootCA needs CA mode center \(1\); this chain's CA mode is not set/,
      'AddRootCA without a CA mode',
    )
    await gov.refused(
      a.account,
      Proposal().directForNode(NodeOp().removeVP('node1', 'global').build()).build(),
      /Direct NODE operations need CA mode center \(1\) or none \(3\); this chain's CA mode is not set/,
      'Direct NODE without a CA mode',
    )
    const created = await gov.ok(
      a.account,
      Proposal()
        .createForCAMode(
          CAMode()
            .setCAMode(1 as never)
            .build(),
        )
        .build(),
      'Create CA',
    )
    assert.is((await gov.proposal()).type, 'CA')
    assert.equal(await proposalPasses(created.Ret as number, [b], a), [{ code: 200 }])
    const again = await gov.refused(
      a.account,
      Proposal()
        .createForCAMode(
          CAMode()
            .setCAMode(3 as never)
            .build(),
        )
        .build(),
      /0 SetCAMode: this chain's CA mode is center \(1\) already: it is set once/,
      'a second SetCAMode',
    )
    assert.equal(again.Ret, [{ code: -30004, msg: "this chain's CA mode is center (1) already: it is set once" }])
    const mode = await gov.ok(user.account, Proposal().directForCAMode(CAMode().getCAMode().build()).build(), 'GetCAMode by Direct')
    assert.equal(mode.Ret, [{ code: 200, msg: '1' }])
    await gov.refused(
      a.account,
      Proposal()
        .directForCAMode(
          CAMode()
            .setCAMode(2 as never)
            .build(),
        )
        .build(),
      /Direct runs GetCAMode only; SetCAMode goes through a voted CA proposal/,
      'SetCAMode by Direct',
    )
    await gov.refused(
      user.account,
      Proposal().directForNode(NodeOp().removeVP('node1', 'global').build()).build(),
      /Direct NODE operations need an admin/,
      'Direct NODE by a non-admin',
    )
    // center mode: an admin's Direct reaches the NODE operation itself (a node that runs alone has no VP group)
    const direct = await gov.ok(a.account, Proposal().directForNode(NodeOp().removeVP('node1', 'global').build()).build(), 'Direct NODE')
    assert.is((direct.Ret as { code: number }[])[0].code, -30004)
    assert.match((direct.Ret as { msg: string }[])[0].msg, /this node runs alone \(solo ordering\)/)

    const tcertOf = async (ca: typeof root) =>
      (
        await issueTcert(
          ca,
          generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' }),
          new Date(),
        )
      ).pem
    const leaf = await tcertOf(root)
    await gov.refused(user.account, RootCA().addRootCA(root.pem).build(), /AddRootCA needs an admin/, 'AddRootCA by a non-admin')
    await gov.refused(a.account, RootCA().addRootCA('not a certificate').build(), /is not an X.509 certificate in PEM/, 'not a certificate')
    await gov.refused(a.account, RootCA().addRootCA(leaf).build(), /is not a CA certificate \(basicConstraints CA:TRUE\)/, 'a leaf')
    await gov.ok(a.account, RootCA().addRootCA(root.pem).build(), 'AddRootCA')
    await gov.refused(b.account, RootCA().addRootCA(root.pem).build(), /is on the chain already/, 'the same root again')
    const roots = await gov.ok(user.account, RootCA().getRootCAs().build(), 'GetRootCAs')
    assert.equal(
      (roots.Ret as string[]).map((pem) => pem.trim()),
      [root.pem.trim()],
    )
    // with a root CA on the chain, an account's certificate must come from one
    const holder = newAccount()
    await gov.refused(
      holder.account,
      new BvmOperation.Account.Builder().register(holder.address, await tcertOf(other)).build(),
      /is not issued by any of the chain's 1 root CAs \(RootCA.GetRootCAs\)/,
      'a certificate of another CA',
    )
    await gov.ok(
      holder.account,
      new BvmOperation.Account.Builder().register(holder.address, leaf).build(),
      'Register a certificate of the root',
    )
    const checked = await gov.ok(user.account, new BvmOperation.Cert.Builder().check(leaf).build(), 'CertCheck')
    assert.equal(plain(checked.Ret), { address: holder.address, status: 'normal' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('filter rules: each transaction kind refused by the rule that names it (-32008 naming the rule), then allowed by a role', async () => {
  const rules = [
    {
      id: 1,
      name: 'deployers',
      to: ['0x0000000000000000000000000000000000000000'],
      vm: ['evm'],
      allow_anyone: false,
      authorized_roles: ['deployer'],
      forbidden_roles: [],
    },
    {
      id: 2,
      name: 'no auditor transfers',
      to: ['*'],
      vm: ['transfer'],
      allow_anyone: true,
      authorized_roles: [],
      forbidden_roles: ['auditor'],
    },
    { id: 3, name: 'no java', to: ['*'], vm: ['jvm'], allow_anyone: false, authorized_roles: [], forbidden_roles: [] },
    {
      id: 4,
      name: 'hash for admins',
      to: ['0x0000000000000000000000000000000000ffff01'],
      vm: ['bvm'],
      allow_anyone: false,
      authorized_roles: ['admin'],
      forbidden_roles: [],
    },
    {
      id: 5,
      name: 'counter callers',
      to: [counterAddress],
      vm: ['evm'],
      allow_anyone: false,
      authorized_roles: ['caller'],
      forbidden_roles: [],
    },
  ]
  const created = await gov.ok(
    a.account,
    Proposal()
      .createForConfig(
        Config()
          .setFilterRules(rules as never)
          .build(),
        Config().setFilterEnable(true).build(),
      )
      .build(),
    'rules',
  )
  await proposalPasses(created.Ret as number, [b], a)
  const refused = async (label: string, send: () => Promise<unknown>, rule: RegExp) => {
    try {
      await send()
      assert.unreachable(`${label}: expected -32008`)
    } catch (error) {
      assert.instance(error, RequestError, `${label}: ${String(error)}`)
      assert.is((error as InstanceType<typeof RequestError>).getCode(), -32008, `${label}: ${(error as Error).message}`)
      assert.match((error as Error).message, rule, label)
    }
  }
  const evm = () => new Transaction.EVMBuilder(user.account.getAddress(), gov.pm)
  await refused(
    'transfer',
    () => gov.tx.sendTx(signedBy(evm().transfer(a.address, 1), user.account)).send(),
    /filter rule 2 "no auditor transfers" forbids the role auditor/,
  )
  await refused(
    'deploy',
    () => gov.contracts.deploy(signedBy(evm().deploy(compiled.bin), user.account)).send(),
    /filter rule 1 "deployers" admits only the roles deployer/,
  )
  await refused(
    'invoke',
    () => gov.contracts.invoke(signedBy(evm().invoke(counterAddress, 'add()', compiled.abi, []), user.account)).send(),
    /filter rule 5 "counter callers"/,
  )
  await refused(
    'maintain',
    () => gov.contracts.maintain(signedBy(evm().freeze(counterAddress), user.account)).send(),
    /filter rule 5 "counter callers"/,
  )
  await refused(
    'BVM',
    () => gov.bvm(user.account, new BvmOperation.Hash.Builder().set('k', 'v').build()),
    /filter rule 4 "hash for admins" admits only the roles admin/,
  )
  const jvm = wallet()
  const java = await rpc('contract_deployContract', [jvm.deploy('0xfefffbcd00', { type: 'JVM' })])
  assert.is(java.code, -32008, `JVM: ${java.message}`)
  assert.match(java.message, /filter rule 3 "no java" admits nobody/)

  const granted = await gov.ok(
    a.account,
    Proposal()
      .createForPermission(
        Permission().createRole('deployer').build(),
        Permission().createRole('caller').build(),
        Permission().grant('deployer', user.address).build(),
        Permission().grant('caller', user.address).build(),
      )
      .build(),
    'grant deployer and caller',
  )
  await proposalPasses(granted.Ret as number, [b], a)
  const deployed = await (await gov.contracts.deploy(signedBy(evm().deploy(compiled.bin), user.account)).send()).poll()
  assert.match(deployed.result.contractAddress, /^0x[0-9a-f]{40}$/, 'a deployer deploys')
  const invoked = await (
    await gov.contracts.invoke(signedBy(evm().invoke(counterAddress, 'add()', compiled.abi, []), user.account)).send()
  ).poll()
  assert.is(invoked.code, 0, 'a caller invokes')
  // an admin can always reach the Proposal contract: the rules are turned off again
  const off = await gov.ok(a.account, Proposal().createForConfig(Config().setFilterEnable(false).build()).build(), 'rules off')
  await proposalPasses(off.Ret as number, [b], a)
})

let snapshotId = ''

test('the governance records are world state: a snapshot (archive_snapshot) holds the storage of the Proposal, Account, Hash and RootCA contracts', async () => {
  const id = (await call(node.url, 'archive_snapshot', [0], { operator: keyOf(a) })).result as string
  assert.match(id, /^0x[0-9a-f]+$/)
  snapshotId = id
  for (let i = 0; (await rpc('archive_querySnapshotExist', [id])).result !== true; i++) {
    assert.ok(i < 400, 'the snapshot was not made in 20 s')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const file = join(node.config.node.dataDir, node.config.node.namespace, 'snapshots', `${id}.snap`)
  const holders = new Set<string>()
  for await (const entry of readEntries(file))
    if (entry.space === Keyspace.storage) holders.add(`0x${entry.key.subarray(0, 20).toString('hex')}`)
  assert.ok(holders.has(BuiltinAddress.proposal), 'roles, proposals, settings and names')
  assert.ok(holders.has(BuiltinAddress.account), 'account statuses')
  assert.ok(holders.has(BuiltinAddress.hash), 'Hash values')
  assert.ok(holders.has(BuiltinAddress.rootCA), 'root CAs')
})

/** what the governance queries answer on `url`: the latest proposal, roles, names and account statuses */
async function governanceState(url: string, accounts: string[]): Promise<unknown> {
  const answers: Record<string, unknown> = {}
  for (const [method, params] of [
    ['config_getProposal', []],
    ['config_getRoles', []],
    ['config_getAllCNS', []],
    ['account_getAccountsByRole', ['admin']],
    ...accounts.flatMap((address) => [
      ['account_getRoles', [address]],
      ['account_getStatus', [address]],
    ]),
  ] as [string, unknown[]][]) {
    const reply = await rpc(method, params, url)
    assert.is(reply.code, 0, `${method}: ${reply.message}`)
    answers[`${method}(${params.join(', ')})`] = reply.result
  }
  return answers
}

test('archive_archive, then archive_restore: the governance records read back the same throughout; the receipts of the archived governance blocks are gone, then back unchanged', async () => {
  const accounts = [a, b, c, user, leaver].map(({ address }) => address)
  const before = await governanceState(node.url, accounts)
  assert.ok(snapshotId !== '', 'the snapshot case made one')
  // the first Hash.Set of the first case is in a block the snapshot covers
  const receipt = await rpc('tx_getTransactionReceipt', [firstHashSet])
  assert.is(receipt.code, 0, receipt.message)
  assert.is((await call(node.url, 'archive_archive', [snapshotId, true], { operator: keyOf(a) })).result, true)
  assert.is((await rpc('tx_getTransactionReceipt', [firstHashSet])).code, -32001, 'its block is archived')
  assert.equal(await governanceState(node.url, accounts), before, 'the records are world state, not blocks')
  const hash = await gov.ok(user.account, new BvmOperation.Hash.Builder().get('key-1').build(), 'Hash.Get after the archive')
  assert.is(hash.Ret, 'value-1', 'a Hash value set in an archived block')
  assert.is((await call(node.url, 'archive_restore', [snapshotId, true], { operator: keyOf(a) })).result, true)
  assert.equal((await rpc('tx_getTransactionReceipt', [firstHashSet])).result, receipt.result, 'the receipt reads back unchanged')
  assert.equal(await governanceState(node.url, accounts), before)
})

test('governance state survives kill -9: a proposal mid-vote (its last vote sent, not yet answered), roles, a contract name, an abandoned account, the CA mode and a root CA, after a SIGKILL and a restart on the same data directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-gov-kill-'))
  const configFile = join(dir, 'keel.toml')
  writeNodeConfig(configFile, { dataDir: join(dir, 'data'), genesis: funded, admins })
  let child = await startNodeProcess({ configFile, timeoutMs: 120_000 })
  try {
    const client = await govClient(child.url)
    const passes = async (operation: Parameters<GovClient['ok']>[1], label: string): Promise<void> => {
      const id = (await client.ok(a.account, operation, `${label}: Create`)).Ret as number
      for (const voter of [b, c]) await client.ok(voter.account, Proposal().vote(id, true).build(), `${label}: vote`)
      await client.ok(a.account, Proposal().execute(id).build(), `${label}: Execute`)
    }
    await passes(
      Proposal().createForPermission(Permission().createRole('keeper').build(), Permission().grant('keeper', user.address).build()).build(),
      'a role',
    )
    const deployed = await (
      await client.contracts
        .deploy(signedBy(new Transaction.EVMBuilder(a.account.getAddress(), client.pm).deploy(compiled.bin), a.account))
        .send()
    ).poll()
    const kept = deployed.result.contractAddress.toLowerCase()
    await passes(Proposal().createForCNS(Cns().setCName(kept, 'Kept').build()).build(), 'a name')
    await client.ok(leaver.account, new BvmOperation.Account.Builder().abandon(leaver.address, '').build(), 'Abandon')
    await passes(
      Proposal()
        .createForCAMode(new BvmOperation.CAMode.Builder().setCAMode(1 as never).build())
        .build(),
      'CA mode center',
    )
    const root = await loadOrCreateNodeCa(join(dir, 'root-ca'), { hostname: 'root' })
    await client.ok(a.account, new BvmOperation.RootCA.Builder().addRootCA(root.pem).build(), 'AddRootCA')
    const id = (
      await client.ok(a.account, Proposal().createForPermission(Permission().grant('admin', user.address).build()).build(), 'Create')
    ).Ret as number
    await client.ok(b.account, Proposal().vote(id, true).build(), 'vote by b')
    // the last vote: its hash is answered, then the node is killed before it is polled
    const lastVote = new Transaction.BVMBuilder(c.account.getAddress(), client.pm) as unknown as {
      invoke(op: unknown): { build(): InstanceType<typeof Transaction> }
    }
    const voteTx = lastVote.invoke(Proposal().vote(id, true).build()).build()
    voteTx.sign(c.account)
    const voteHash = (await client.contracts.invoke(voteTx).send()).result as string
    const accounts = [a, b, c, user, leaver].map(({ address }) => address)
    const before = (await governanceState(child.url, accounts)) as Record<string, unknown>
    await child.kill('SIGKILL')
    child = await startNodeProcess({ configFile, timeoutMs: 120_000 })
    const voted = await waitForReceipt(child.url, voteHash, 30_000)
    assert.is(voted.code, 0, `the last vote has its outcome after the restart: ${voted.message}`)
    const after = (await governanceState(child.url, accounts)) as Record<string, unknown>
    const proposal = after['config_getProposal()'] as { status: string; assentor: { addr: string }[] }
    assert.is(proposal.status, 'WAITING_EXE', 'the vote sent before the kill counted once')
    assert.equal(
      proposal.assentor.map((vote) => vote.addr),
      [a.address, b.address, c.address],
    )
    assert.equal(
      { ...after, 'config_getProposal()': undefined },
      { ...before, 'config_getProposal()': undefined },
      'roles, names and statuses as before the kill',
    )
    assert.equal(after[`account_getRoles(${user.address})`], ['keeper'])
    assert.equal(after['config_getAllCNS()'], { [kept]: 'Kept' })
    assert.is(after[`account_getStatus(${leaver.address})`], 'abandoned')
    const restarted = await govClient(child.url)
    const roots = await restarted.ok(user.account, new BvmOperation.RootCA.Builder().getRootCAs().build(), 'GetRootCAs after the restart')
    assert.equal(
      (roots.Ret as string[]).map((pem) => pem.trim()),
      [root.pem.trim()],
    )
    const mode = await restarted.ok(
      user.account,
      Proposal().directForCAMode(new BvmOperation.CAMode.Builder().getCAMode().build()).build(),
      'GetCAMode after the restart',
    )
    assert.equal(mode.Ret, [{ code: 200, msg: '1' }])
    await restarted.ok(a.account, Proposal().execute(id).build(), 'Execute after the restart')
    assert.equal((await restarted.accounts.getRoles(user.address).send()).result, ['admin', 'keeper'])
  } finally {
    await child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
})

test('config_getProposal before any proposal, and expiry against block time (a node whose proposals time out after 2 s)', async () => {
  const short = await startTestNode({ genesis: { accounts: funded, admins: [a.address, b.address], proposalTimeoutSeconds: 2 } })
  try {
    const empty = await rpc('config_getProposal', [], short.url)
    assert.is(empty.code, -32001)
    const client = await govClient(short.url)
    const created = await client.ok(a.account, Proposal().createForPermission(Permission().createRole('late').build()).build(), 'Create')
    const id = created.Ret as number
    const proposal = await client.proposal()
    assert.is(BigInt(proposal.timeout) - BigInt(proposal.timestamp), 2_000_000_000n)
    // wait past the timeout; the next block's time decides
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    await client.ok(user.account, new BvmOperation.Hash.Builder().set('tick', 'tock').build(), 'a later block')
    assert.is((await client.proposal()).status, 'TIMEOUT')
    await client.refused(
      b.account,
      Proposal().vote(id, true).build(),
      /is TIMEOUT, votes are taken while it is VOTING/,
      'a vote after the timeout',
    )
    // a timed-out proposal is closed: a new one may be created
    await client.ok(b.account, Proposal().createForPermission(Permission().createRole('early').build()).build(), 'Create after the timeout')
  } finally {
    await short.stop()
  }
})

test.run()
