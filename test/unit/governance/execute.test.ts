/**
 * BVM transactions in the executor (src/governance/, src/exec/executor.ts): the wire decoder, the
 * deterministic outcome of a block, and an account abandoned in a block whose later transactions of
 * the same block were pooled before: discarded at execution, the same on every node.
 */
import { bytesToHex } from '@noble/hashes/utils.js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ExecutionOutcome, Hex } from '../../../src/domain.ts'
import { createExecutor } from '../../../src/exec/executor.ts'
import type { NodeHooks } from '../../../src/governance/execute.ts'
import { GovernanceView } from '../../../src/governance/state.ts'
import {
  BuiltinAddress,
  BvmDecodeError,
  decodeContents,
  decodeOperation,
  encodeContents,
  encodeOperation,
} from '../../../src/governance/wire.ts'
import { DEPLOYER, MapState, mkTx, OTHER, transferTx } from '../exec/helpers.ts'

const hex = (bytes: Uint8Array): Hex => `0x${bytesToHex(bytes)}`
const genesis = { admins: [DEPLOYER], adminThreshold: 0, proposalTimeoutNs: 300_000_000_000n }
const bvmTx = (to: Hex, method: string, args: (string | Uint8Array)[], from = DEPLOYER) =>
  mkTx({ kind: 'invoke', to, from, vmType: 'BVM', payload: hex(encodeOperation(method, args)) })
const result = (outcome: ExecutionOutcome) => {
  if (!outcome.ok) throw new Error(`discarded: ${outcome.detail}`)
  return JSON.parse(Buffer.from(outcome.ret.slice(2), 'hex').toString('utf8')) as { Success: boolean; Ret: string | null; Err: string }
}

test('the wire: an operation and proposal contents round-trip; truncated or trailing bytes are refused with where', () => {
  const op = encodeOperation('Grant', ['admin', '0x12'])
  assert.equal(decodeOperation(op), { method: 'Grant', args: [new TextEncoder().encode('admin'), new TextEncoder().encode('0x12')] })
  const contents = encodeContents([op, encodeOperation('CreateRole', ['x'])])
  assert.equal(
    decodeContents(contents).map((o) => o.method),
    ['Grant', 'CreateRole'],
  )
  assert.throws(
    () => decodeOperation(op.subarray(0, op.length - 1)),
    (e: Error) => e instanceof BvmDecodeError && /argument 1 needs 4 bytes/.test(e.message),
  )
  assert.throws(
    () => decodeOperation(new Uint8Array([...op, 0])),
    (e: Error) => /1 bytes follow the end/.test(e.message),
  )
  assert.throws(
    () => decodeOperation(new Uint8Array([0, 0, 0, 9])),
    (e: Error) => /the method name needs 9 bytes/.test(e.message),
  )
})

test('an account abandoned early in a block: its later transactions of the block are discarded with INVALID_PERMISSION', async () => {
  const executor = createExecutor({ governance: genesis })
  const state = new MapState().fund(DEPLOYER, 1000n).fund(OTHER, 1000n)
  const block = [
    bvmTx(BuiltinAddress.account, 'Abandon', [OTHER, ''], OTHER),
    transferTx(OTHER, DEPLOYER, 5n),
    bvmTx(BuiltinAddress.hash, 'Set', ['k', 'v'], OTHER),
    transferTx(DEPLOYER, OTHER, 7n),
  ].map((tx) => ({ tx, signatureValid: true }))
  const { outcomes, changes } = await executor.executeBlock(state, block, { number: 1, timestamp: 1n })
  assert.ok(result(outcomes[0]).Success)
  for (const i of [1, 2]) {
    const outcome = outcomes[i]
    assert.ok(!outcome.ok && outcome.invalidMsg === 'INVALID_PERMISSION', JSON.stringify(outcome))
    assert.match(!outcome.ok ? outcome.detail : '', /is abandoned: its transactions are refused/)
  }
  assert.ok(outcomes[3].ok, 'others go on')
  state.apply(changes)
  assert.is(new GovernanceView(state, genesis).accountStatus(OTHER), 'abandoned')
  assert.is(state.getAccount(OTHER)?.balance, 1007n)
})

test('the same block on two executors gives the same outcomes and changes; a malformed payload is discarded, a refusal is a receipt', async () => {
  const block = () =>
    [
      bvmTx(BuiltinAddress.proposal, 'Create', [encodeContents([encodeOperation('CreateRole', ['auditor'])]), 'PERMISSION']),
      mkTx({ kind: 'invoke', to: BuiltinAddress.hash, vmType: 'BVM', payload: '0x00000009536574' }),
      bvmTx(BuiltinAddress.proposal, 'Vote', ['1', 'true'], OTHER),
      bvmTx(BuiltinAddress.proposal, 'Execute', ['1']),
      bvmTx(BuiltinAddress.did, 'SetChainID', ['x']),
    ].map((tx) => ({ tx: { ...tx, hash: `0x${'ab'.repeat(32)}` }, signatureValid: true }))
  const run = () =>
    createExecutor({ governance: genesis }).executeBlock(new MapState().fund(DEPLOYER, 1n), block(), { number: 1, timestamp: 5n })
  const [first, second] = [await run(), await run()]
  const strip = (outcomes: ExecutionOutcome[]) => outcomes.map(({ executeTimeNs: _, ...rest }) => rest)
  assert.equal(strip(first.outcomes), strip(second.outcomes))
  assert.equal(first.changes, second.changes)
  const [create, malformed, vote, execute, did] = first.outcomes
  assert.ok(result(create).Success)
  assert.ok(!malformed.ok && malformed.invalidMsg === 'INVOKE_CONTRACT_FAILED' && /malformed BVM operation/.test(malformed.detail))
  assert.match(result(vote).Err, /proposal 1 is WAITING_EXE, votes are taken while it is VOTING/)
  assert.equal(JSON.parse(Buffer.from(result(execute).Ret ?? '', 'base64').toString()), [{ code: 200 }])
  assert.equal(result(did), {
    Success: false,
    Ret: null,
    Err: 'Keel has no DID documents and credentials (the DID contract); SetChainID is not available',
  })
})

/** a network of node1…node4 (then `group`) for NODE proposals; a "certificate" is `cert:<hostname>` */
const fourVps = (group = [1, 2, 3, 4]): NodeHooks => ({
  namespace: 'global',
  minVps: 4,
  vps: () => group.map((id) => ({ id, hostname: `node${id}` })),
  everVps: () => group.map((id) => ({ id, hostname: `node${id}` })),
  readCert: (pem) =>
    pem.startsWith('cert:') ? { hostname: pem.slice(5), cert: Buffer.from(pem).toString('base64') } : 'not a certificate',
  effectiveFrom: (block) => 10 * Math.ceil((block + 40) / 10) + 1,
})

const nodeProposal = (...ops: [string, string[]][]) =>
  bvmTx(BuiltinAddress.proposal, 'Create', [encodeContents(ops.map(([method, args]) => encodeOperation(method, args))), 'NODE'])

test('NODE proposals: AddNode then AddVP decide an addition with the next id; RemoveVP never below 4; a solo node refuses them', async () => {
  const solo = await createExecutor({ governance: genesis }).executeBlock(
    new MapState(),
    [{ tx: nodeProposal(['AddVP', ['node5', 'global']]), signatureValid: true }],
    { number: 1, timestamp: 1n },
  )
  assert.match(result(solo.outcomes[0]).Err, /this node runs alone \(solo ordering\): it has no VP group for AddVP to change/)

  const executor = createExecutor({ governance: genesis })
  const group = [1, 2, 3, 4]
  executor.attachNetwork(fourVps(group))
  const state = new MapState()
  const run = async (number: number, ...txs: ReturnType<typeof bvmTx>[]) => {
    const { outcomes, changes } = await executor.executeBlock(
      state,
      txs.map((tx, i) => ({
        tx: { ...tx, hash: `0x${number.toString(16).padStart(2, '0')}${i.toString(16).padStart(62, '0')}` },
        signatureValid: true,
      })),
      { number, timestamp: BigInt(number) },
    )
    state.apply(changes)
    return outcomes.map(result)
  }
  const refusedAtCreation = await run(
    2,
    nodeProposal(['AddVP', ['node6', 'global']]),
    nodeProposal(['RemoveVP', ['node9', 'global']]),
    nodeProposal(['AddNode', ['cert:node7', 'node6', 'VP', 'global']]),
    nodeProposal(['AddNode', ['cert:node6', 'node6', 'NVP', 'global']]),
    nodeProposal(['AddVP', ['node6', 'other']]),
    nodeProposal(['RemoveVP', ['node1', 'global']]),
  )
  for (const refused of refusedAtCreation) assert.not.ok(refused.Success)
  const errs = refusedAtCreation.map((refused) => refused.Err)
  assert.match(errs[0], /node6 is not registered: AddNode\(its ECert, "node6", "VP", "global"\) comes first/)
  assert.match(errs[1], /node9 is no VP of the group \(node1, node2, node3, node4\)/)
  assert.match(errs[2], /AddNode: the certificate is node7's, not node6's/)
  assert.match(errs[3], /an NVP needs no proposal/)
  assert.match(errs[4], /this network runs the namespace global, not "other"/)
  assert.match(errs[5], /the group has 4 VPs; removing node1 would leave fewer than 4/)

  const [created, executed] = await run(
    3,
    nodeProposal(['AddNode', ['cert:node5', 'node5', 'VP', 'global']], ['AddVP', ['node5', 'global']]),
    bvmTx(BuiltinAddress.proposal, 'Execute', ['1']),
  )
  assert.ok(created.Success, created.Err)
  assert.equal(JSON.parse(Buffer.from(executed.Ret ?? '', 'base64').toString()), [
    { code: 200, msg: 'node5 is registered with its ECert; AddVP admits it' },
    { code: 200, msg: 'node5 joins the VP group as replica 5 from block 51 (its peerconfig.toml [self] says id = 5)' },
  ])
  const view = new GovernanceView(state, genesis)
  assert.equal(view.nodeDecisionsAt(3), [
    { block: 3, action: 'add', id: 5, hostname: 'node5', cert: Buffer.from('cert:node5').toString('base64') },
  ])
  assert.equal(view.nodeDecisionsAt(2), [], 'no decision at another block')
  // what the network layer records after the block (membership.ts)
  group.push(5)
  // in the same block, the group counts the addition: node5 and then one more of the five may go, not two
  const [two, twoExecuted, again] = await run(
    4,
    nodeProposal(['RemoveVP', ['node5', 'global']], ['RemoveVP', ['node1', 'global']]),
    bvmTx(BuiltinAddress.proposal, 'Execute', ['2']),
    nodeProposal(['AddNode', ['cert:node5', 'node5', 'VP', 'global']]),
  )
  assert.not.ok(two.Success)
  assert.match(two.Err, /1 RemoveVP: the group has 4 VPs; removing node1 would leave fewer than 4/)
  assert.match(twoExecuted.Err, /there is no proposal 2/)
  assert.match(again.Err, /node5 is VP 5 of the group already/)
})

test("CA mode none, set by a proposal: CertRevoke is refused, AddRootCA needs center, an admin's Direct NODE reaches the operation", async () => {
  const executor = createExecutor({ governance: genesis })
  const state = new MapState().fund(DEPLOYER, 1000n).fund(OTHER, 1000n)
  const block = [
    bvmTx(BuiltinAddress.proposal, 'Create', [encodeContents([encodeOperation('SetCAMode', ['3'])]), 'CA']),
    bvmTx(BuiltinAddress.proposal, 'Execute', ['1']),
    bvmTx(BuiltinAddress.account, 'Register', [OTHER, 'a certificate'], OTHER),
    bvmTx(BuiltinAddress.cert, 'CertRevoke', ['a certificate', 'revoke', 'sign']),
    bvmTx(BuiltinAddress.rootCA, 'AddRootCA', ['-----BEGIN CERTIFICATE-----']),
    bvmTx(BuiltinAddress.proposal, 'Direct', [encodeContents([encodeOperation('RemoveVP', ['node1', 'global'])]), 'NODE']),
    bvmTx(BuiltinAddress.proposal, 'Direct', [encodeContents([encodeOperation('RemoveVP', ['node1', 'global'])]), 'NODE'], OTHER),
  ].map((tx) => ({ tx, signatureValid: true }))
  const { outcomes } = await executor.executeBlock(state, block, { number: 1, timestamp: 1n })
  const [created, executed, registered, revoked, rooted, direct, directByOther] = outcomes.map(result)
  assert.ok(created.Success && executed.Success && registered.Success, JSON.stringify([created, executed, registered]))
  assert.is(revoked.Err, 'in CA mode none (3) no certificate is revoked')
  assert.match(rooted.Err, /AddRootCA needs CA mode center \(1\); this chain's CA mode is none \(3\)/)
  const ops = JSON.parse(Buffer.from(direct.Ret ?? '', 'base64').toString('utf8')) as { code: number; msg: string }[]
  assert.is(ops[0].code, -30004)
  assert.match(ops[0].msg, /this node runs alone/)
  assert.match(directByOther.Err, /Direct NODE operations need an admin/)
})

test.run()
