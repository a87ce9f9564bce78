/**
 * keel-client's BVM builders (sdk/src/bvm.ts) against the official SDK's own (@hyperchain/jssdk
 * 1.1.0, unmodified): for each operation family the payload bytes, the built-in address and the
 * system fields of the SDK's BVMBuilder transaction; and the decoding of a BVM receipt's `ret`
 * against the SDK's DecodeUtil.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { accountFromPrivateKey } from '../../../sdk/src/account.ts'
import {
  accountOperation,
  type BuiltinOperation,
  BVM_ADDRESS,
  balanceOperation,
  bvmPayload,
  caModeContent,
  certOperation,
  cnsContent,
  configContent,
  contractContent,
  decodeBvmRet,
  decodeProposalExecution,
  didOperation,
  encodeProposalContents,
  hashChangeOperation,
  hashOperation,
  mpcOperation,
  nodeContent,
  permissionContent,
  proposalOperation,
  rootCAOperation,
  SYSTEM_OPERATION_MAX,
  signBvm,
  systemUpgradeContent,
  versionOperation,
} from '../../../sdk/src/bvm.ts'
import type { TxFields } from '../../../sdk/src/sign-string.ts'
import { checkTransactionSignature } from '../../../src/crypto/signature.ts'
import { loadSdk } from '../../helpers/jssdk.ts'

const sdk = loadSdk()
const { BvmOperation, EncodeUtil, ByteUtil, DecodeUtil, Transaction, TxVersion } = sdk
const FROM = '0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd'
const ADDRESS = '0x3434343434343434343434343434343434343434'
const SOURCE = 'contract A { function f() public {} }\n// 中文'
const BIN = '6080604052348015600f57600080fd5b50'
const NS_RULE = { allow_anyone: false, authorized_roles: ['admin'], forbidden_roles: [], id: 1, name: 'rule', to: ['0x1'], vm: ['evm'] }

type SdkBuiltin = InstanceType<typeof BvmOperation.Builtin>

/** What the SDK's BVMBuilder makes of an operation: payload, to, gasPrice and expirationTimestamp. */
function sdkTransaction(operation: SdkBuiltin) {
  const tx = new Transaction.BVMBuilder(FROM, 0n, TxVersion.GLOBAL_TX_VERSION).invoke(operation).build()
  return { payload: tx.getPayload(), to: tx.getTo(), gasPrice: tx.getGasPrice(), expirationTimestamp: tx.getExpirationTimestamp() }
}

function same(name: string, mine: BuiltinOperation, theirs: SdkBuiltin): void {
  const expected = sdkTransaction(theirs)
  assert.is(bvmPayload(mine), expected.payload, `${name}: payload`)
  assert.is(bvmPayload(mine), `0x${ByteUtil.toHex(EncodeUtil.encodeOperation(theirs))}`, `${name}: encodeOperation`)
  assert.is(mine.to, expected.to, `${name}: to`)
  const system = BigInt(expected.gasPrice as bigint) === SYSTEM_OPERATION_MAX
  assert.is(mine.system, system, `${name}: system operation (gasPrice ${expected.gasPrice})`)
  if (system) assert.is(BigInt(expected.expirationTimestamp as bigint), SYSTEM_OPERATION_MAX, `${name}: expirationTimestamp`)
}

test('Hash: set, get and the genesis-info forms', () => {
  same('set', hashOperation.set('key 键', 'value 值'), new BvmOperation.Hash.Builder().set('key 键', 'value 值').build())
  same('get', hashOperation.get('key'), new BvmOperation.Hash.Builder().get('key').build())
  const info = { genesisAccount: { [FROM]: '1000' }, genesisNodes: [] }
  same(
    'setGenesisInfo',
    hashOperation.setGenesisInfoForHpc(info),
    new BvmOperation.Hash.Builder().setGenesisInfoForHpc(info as never).build(),
  )
  same('getGenesisInfo', hashOperation.getGenesisInfoForHpc(), new BvmOperation.Hash.Builder().getGenesisInfoForHpc().build())
  assert.is(hashOperation.set('k', 'v').to, BVM_ADDRESS.hash)
})

test('Account, Balance, DID, HashChange, RootCA, Version, MPC: payloads, addresses and which are system operations', () => {
  same('register', accountOperation.register(ADDRESS, 'cert'), new BvmOperation.Account.Builder().register(ADDRESS, 'cert').build())
  same('abandon', accountOperation.abandon(ADDRESS, 'sdkCert'), new BvmOperation.Account.Builder().abandon(ADDRESS, 'sdkCert').build())
  same(
    'issue',
    balanceOperation.issue(ADDRESS, 12345678901234567890n),
    new BvmOperation.Balance.Builder().issue(ADDRESS, 12345678901234567890n).build(),
  )
  same('setChainID', didOperation.setChainID('chain-1'), new BvmOperation.DID.Builder().setChainID('chain-1').build())
  const algo = { hash_algo: 'SM3', encrypt_algo: 'SM4_CBC' }
  same(
    'changeHashAlgo',
    hashChangeOperation.changeHashAlgo(algo),
    new BvmOperation.HashChange.Builder().changeHashAlgo(algo as never).build(),
  )
  same('getHashAlgo', hashChangeOperation.getHashAlgo(), new BvmOperation.HashChange.Builder().getHashAlgo().build())
  same('getSupportHashAlgo', hashChangeOperation.getSupportHashAlgo(), new BvmOperation.HashChange.Builder().getSupportHashAlgo().build())
  same(
    'addRootCA',
    rootCAOperation.addRootCA('-----BEGIN CERTIFICATE-----'),
    new BvmOperation.RootCA.Builder().addRootCA('-----BEGIN CERTIFICATE-----').build(),
  )
  same('getRootCAs', rootCAOperation.getRootCAs(), new BvmOperation.RootCA.Builder().getRootCAs().build())
  same('getLatestVersions', versionOperation.getLatestVersions(), new BvmOperation.Version.Builder().getLatestVersions().build())
  same(
    'getSupportedVersionByHostname',
    versionOperation.getSupportedVersionByHostname('node1'),
    new BvmOperation.Version.Builder().getSupportedVersionByHostname('node1').build(),
  )
  same('getInfo', mpcOperation.getInfo('tag', 'sm9'), new BvmOperation.MPC.Builder().getInfo('tag', 'sm9').build())
  same('beacon', mpcOperation.beacon(Uint8Array.of(1, 2, 255)), new BvmOperation.MPC.Builder().beacon(Uint8Array.of(1, 2, 255)).build())
  same('getHis', mpcOperation.getHis('bn254'), new BvmOperation.MPC.Builder().getHis('bn254').build())
})

test('Cert: revoke (with and without a signature), check, freeze and unfreeze', () => {
  const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----'
  same('revoke', certOperation.revoke(cert), new BvmOperation.Cert.Builder().revoke(cert).build())
  // with a key the SDK could not use it signs "sign": the same arguments as a given signature "sign"
  same('revoke signed', certOperation.revoke(cert, 'sign'), new BvmOperation.Cert.Builder().revoke(cert, 'not a key').build())
  same('check', certOperation.check(cert), new BvmOperation.Cert.Builder().check(cert).build())
  same('freeze', certOperation.freeze(cert), new BvmOperation.Cert.Builder().freeze(cert, null as never).build())
  same('unfreeze', certOperation.unfreeze(cert), new BvmOperation.Cert.Builder().unfreeze(cert, null as never).build())
})

test('Proposal: create with Permission, CNS, Config, Node, Contract, CA and System contents; vote, cancel, execute, direct', () => {
  const P = BvmOperation.Proposal.Builder
  const permission = () => new BvmOperation.Permission.Builder()
  same(
    'create permission',
    proposalOperation.createForPermission(
      permissionContent.createRole('auditor'),
      permissionContent.grant('auditor', ADDRESS.slice(2)),
      permissionContent.revoke('admin', ADDRESS),
      permissionContent.grant('admin', 'did:hpc:chain:alice'),
      permissionContent.deleteRole('old'),
    ),
    new P()
      .createForPermission(
        permission().createRole('auditor').build(),
        permission().grant('auditor', ADDRESS.slice(2)).build(),
        permission().revoke('admin', ADDRESS).build(),
        permission().grant('admin', 'did:hpc:chain:alice').build(),
        permission().deleteRole('old').build(),
      )
      .build(),
  )
  same(
    'create cns',
    proposalOperation.createForCNS(cnsContent.setCName(ADDRESS, 'counter')),
    new P().createForCNS(new BvmOperation.CNS.Builder().setCName(ADDRESS, 'counter').build()).build(),
  )
  const config = () => new BvmOperation.Config.Builder()
  same(
    'create config',
    proposalOperation.createForConfig(
      configContent.setFilterEnable(true),
      configContent.setFilterRules([NS_RULE]),
      configContent.setConsensusAlgo('RBFT'),
      configContent.updateConsensusAlgo('NoxBFT'),
      configContent.setConsensusSetSize(4),
      configContent.setConsensusBatchSize(500),
      configContent.setConsensusPoolSize(50000),
      configContent.setProposalTimeout(300_000_000_000n),
      configContent.setProposalThreshold(2),
      configContent.setContractVoteEnable(false),
      configContent.setContractVoteThreshold(1),
      configContent.setGasPrice(10_000n),
    ),
    new P()
      .createForConfig(
        config().setFilterEnable(true).build(),
        config().setFilterRules([NS_RULE]).build(),
        config().setConsensusAlgo('RBFT').build(),
        config().updateConsensusAlgo('NoxBFT').build(),
        config().setConsensusSetSize(4).build(),
        config().setConsensusBatchSize(500).build(),
        config().setConsensusPoolSize(50000).build(),
        config().setProposalTimeout(300_000_000_000n).build(),
        config().setProposalThreshold(2).build(),
        config().setContractVoteEnable(false).build(),
        config().setContractVoteThreshold(1).build(),
        config().setGasPrice(10_000n).build(),
      )
      .build(),
  )
  const node = () => new BvmOperation.Node.Builder()
  const publicKey = new TextEncoder().encode('-----BEGIN PUBLIC KEY-----')
  same(
    'create node',
    proposalOperation.createForNode(
      nodeContent.addNode(publicKey, 'node5', 'vp', 'global'),
      nodeContent.addVP('node5', 'global'),
      nodeContent.removeVP('node4', 'global'),
    ),
    new P()
      .createForNode(
        node().addNode(publicKey, 'node5', 'vp', 'global').build(),
        node().addVP('node5', 'global').build(),
        node().removeVP('node4', 'global').build(),
      )
      .build(),
  )
  same(
    'direct node',
    proposalOperation.directForNode(nodeContent.addVP('node5', 'global')),
    new P().directForNode(node().addVP('node5', 'global').build()).build(),
  )
  const contract = () => new BvmOperation.Contract.Builder()
  same(
    'create contract',
    proposalOperation.createForContract(
      contractContent.deploy(SOURCE, BIN, 'EVM', null),
      contractContent.deploy(SOURCE, `0x${BIN}`, 'EVM', { optimize: 'true' }),
      contractContent.upgrade(SOURCE, BIN, 'EVM', ADDRESS, { optimize: 'true' }),
      contractContent.upgradeByName(SOURCE, BIN, 'EVM', 'counter', { optimize: 'true' }),
      contractContent.maintain('EVM', ADDRESS, 2),
      contractContent.maintainByName('EVM', 'counter', 3),
    ),
    new P()
      .createForContract(
        contract()
          .deploy(SOURCE, BIN, 'EVM' as never, null)
          .build(),
        contract()
          .deploy(SOURCE, `0x${BIN}`, 'EVM' as never, { optimize: 'true' })
          .build(),
        contract()
          .upgrade(SOURCE, BIN, 'EVM' as never, ADDRESS, { optimize: 'true' })
          .build(),
        contract()
          .upgradeByName(SOURCE, BIN, 'EVM' as never, 'counter', { optimize: 'true' })
          .build(),
        contract()
          .maintain('EVM' as never, ADDRESS, 2)
          .build(),
        contract()
          .maintainByName('EVM' as never, 'counter', 3)
          .build(),
      )
      .build(),
  )
  const ca = () => new BvmOperation.CAMode.Builder()
  same(
    'create ca',
    proposalOperation.createForCAMode(caModeContent.setCAMode(2), caModeContent.getCAMode()),
    new P().createForCAMode(ca().setCAMode(2).build(), ca().getCAMode().build()).build(),
  )
  same(
    'direct ca',
    proposalOperation.directForCAMode(caModeContent.setCAMode(3)),
    new P().directForCAMode(ca().setCAMode(3).build()).build(),
  )
  const version = { 'tx.version': '4.1', 'block.version': '3.0' }
  same(
    'create system',
    proposalOperation.createForSystemUpgrade(systemUpgradeContent.systemUpgrade(version)),
    new P().createForSystemUpgrade(new BvmOperation.SystemUpgrade.Builder().systemUpgrade(version as never).build()).build(),
  )
  same('create with no contents', proposalOperation.createForCNS(), new P().createForCNS().build())
  same('vote for', proposalOperation.vote(1, true), new P().vote(1, true).build())
  same('vote against', proposalOperation.vote(12, false), new P().vote(12, false).build())
  same('cancel', proposalOperation.cancel(3), new P().cancel(3).build())
  same('execute', proposalOperation.execute(4), new P().execute(4).build())
})

test('proposal contents: u32be(count) ‖ operation*, with each operation u32be-length-prefixed method and arguments', () => {
  const bytes = encodeProposalContents([cnsContent.setCName('0xab', 'n')])
  const expected = [
    0,
    0,
    0,
    1,
    0,
    0,
    0,
    8,
    ...new TextEncoder().encode('SetCName'),
    0,
    0,
    0,
    2,
    0,
    0,
    0,
    4,
    ...new TextEncoder().encode('0xab'),
  ]
  assert.equal([...bytes], [...expected, 0, 0, 0, 1, 0x6e])
})

test('signBvm: type BVM to the built-in contract, the payload, system fields signed; the node verifies the signature', () => {
  const account = accountFromPrivateKey('0x8c6b1f9b6f3f1f8e1f0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70')
  const create = signBvm(account, proposalOperation.createForCNS(cnsContent.setCName(ADDRESS, 'counter'))) as unknown as Record<
    string,
    unknown
  >
  assert.is(create.type, 'BVM')
  assert.is(create.to, BVM_ADDRESS.proposal)
  assert.is(create.payload, bvmPayload(proposalOperation.createForCNS(cnsContent.setCName(ADDRESS, 'counter'))))
  assert.is(create.gasPrice, SYSTEM_OPERATION_MAX)
  assert.is(create.expirationTimestamp, SYSTEM_OPERATION_MAX)
  const put = signBvm(account, hashOperation.set('k', 'v')) as unknown as Record<string, unknown>
  assert.is(put.gasPrice, 0)
  for (const tx of [create, put]) {
    const check = checkTransactionSignature({ ...(tx as unknown as TxFields), opcode: tx.opCode as number }, tx.signature as string)
    assert.ok(check.valid, check.reason)
  }
})

test("decodeBvmRet and decodeProposalExecution read a receipt's ret as the SDK's DecodeUtil does", () => {
  const hexOf = (value: unknown) => `0x${Buffer.from(JSON.stringify(value)).toString('hex')}`
  const results = [
    { code: 200, msg: 'success' },
    { code: -30001, msg: 'role exists' },
  ]
  const executed = hexOf({ Success: true, Ret: Buffer.from(JSON.stringify(results)).toString('base64'), Err: '' })
  const theirs = DecodeUtil.decodeBvmResultRet(executed) as { Success: boolean; Ret: string; Err: string }
  const mine = decodeBvmRet(executed)
  assert.is(mine.success, theirs.Success)
  assert.equal(mine.ret, DecodeUtil.decodeBvmResultRetRet(theirs.Ret))
  assert.equal(decodeProposalExecution(executed), results)
  const text = hexOf({ Success: true, Ret: Buffer.from('plain value').toString('base64'), Err: '' })
  assert.is(decodeBvmRet(text).ret, 'plain value')
  assert.is(decodeBvmRet(text).ret, DecodeUtil.decodeBvmResultRetRet((DecodeUtil.decodeBvmResultRet(text) as { Ret: string }).Ret))
  const failed = decodeBvmRet(hexOf({ Success: false, Ret: null, Err: 'only admins create proposals' }))
  assert.equal(failed, { success: false, ret: null, retBytes: null, err: 'only admins create proposals' })
  assert.throws(() => decodeProposalExecution(hexOf({ Success: false, Ret: null, Err: 'x' })), /not an Execute result/)
})

test.run()
