/**
 * ethers v6, unchanged, against one Keel node (issue 28): an ERC-20 deployed with ContractFactory,
 * transfers and waits, queryFilter and contract.on, waitForTransaction, reverts decoded with their
 * reason or custom error; and the same contract and account used from the Hyperchain dialect
 * through the official @hyperchain/jssdk (contract_invokeContract) and the reverse.
 */
import { Contract, ContractFactory, type EventLog, getCreateAddress, JsonRpcProvider, Wallet } from 'ethers'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import { tokenArtifact } from '../helpers/eth.ts'
import { loadSdk } from '../helpers/jssdk.ts'
import { startTestNode } from '../helpers/node.ts'

const sdk = loadSdk()
const { Algo, DecodeUtil, HttpProvider, ProviderManager, ServiceManager, Transaction } = sdk

let node: KeelNode
let provider: JsonRpcProvider
const aliceKey = `0x${'a7'.repeat(32)}`
let alice: Wallet
const bob = Wallet.createRandom()
const carol = Wallet.createRandom()
const token = tokenArtifact()
const abiText = JSON.stringify(token.abi)
let tokenContract: Contract
let pm: Awaited<ReturnType<typeof ProviderManager.createManager>>

test.before(async () => {
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5 },
      genesis: { accounts: [{ address: new Wallet(aliceKey).address.toLowerCase(), balance: (10n ** 18n).toString() }] },
    },
    { verifyWorkers: 1 },
  )
  provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 })
  alice = new Wallet(aliceKey, provider)
  pm = await ProviderManager.createManager({ httpProviders: [new HttpProvider(1, node.url.replace(/^http:\/\//, ''))] })
})
test.after(async () => {
  provider?.destroy()
  await node?.stop()
})

test('the network: chain id from eth_chainId', async () => {
  assert.is((await provider.getNetwork()).chainId, 1337n)
  assert.is(await provider.getBalance(alice.address), 10n ** 18n)
})

test('ContractFactory deploys the ERC-20 at the address ethers computed; transfer and wait', async () => {
  const factory = new ContractFactory(token.abi as never, token.bytecode, alice)
  const nonce = await alice.getNonce()
  const deployed = await factory.deploy('Keel', 'KEL', 1000n)
  await deployed.waitForDeployment()
  const address = await deployed.getAddress()
  assert.is(address, getCreateAddress({ from: alice.address, nonce }))
  tokenContract = new Contract(address, token.abi as never, alice)
  assert.is(await tokenContract.name(), 'Keel')
  const tx = await tokenContract.transfer(bob.address, 10n)
  const receipt = await tx.wait()
  assert.is(receipt?.status, 1)
  assert.is(receipt?.logs.length, 1)
  assert.is(await tokenContract.balanceOf(bob.address), 10n)
  const waited = await provider.waitForTransaction(tx.hash)
  assert.is(waited?.blockHash, receipt?.blockHash)
  // debug_traceTransaction through ethers' provider.send, as tools built on ethers ask for it
  const trace = await provider.send('debug_traceTransaction', [tx.hash, { tracer: 'callTracer', tracerConfig: { withLog: true } }])
  assert.is(trace.type, 'CALL')
  assert.is(trace.to, address.toLowerCase())
  assert.is(BigInt(trace.gasUsed), receipt?.gasUsed)
  assert.is(tokenContract.interface.parseLog(trace.logs[0])?.name, 'Transfer')
})

test('queryFilter and contract.on', async () => {
  const events = (await tokenContract.queryFilter(tokenContract.filters.Transfer(), 0, 'latest')) as EventLog[]
  assert.is(events.length, 2, 'the mint and the transfer')
  assert.is(events[1].args.to, bob.address)
  const seen = new Promise<bigint>((resolve) => {
    void tokenContract.on('Transfer', (_from: string, to: string, value: bigint) => {
      if (to === carol.address) resolve(value)
    })
  })
  await new Promise((resolve) => setTimeout(resolve, 200))
  await (await tokenContract.transfer(carol.address, 4n)).wait()
  assert.is(await seen, 4n)
  await tokenContract.removeAllListeners()
})

test('reverts come back decoded: a require reason and a custom error', async () => {
  const poor = Wallet.createRandom(provider)
  const asPoor = tokenContract.connect(poor) as Contract
  try {
    await asPoor.transfer(alice.address, 5n)
    assert.unreachable('the transfer reverts')
  } catch (error) {
    const e = error as { code: string; reason: string }
    assert.is(e.code, 'CALL_EXCEPTION')
    assert.is(e.reason, 'Token: insufficient balance')
  }
  // a custom error: decoded by the contract on a static call; a sent transaction's error carries its data
  try {
    await asPoor.transferFrom.staticCall(alice.address, poor.address, 5n)
    assert.unreachable('the transferFrom reverts')
  } catch (error) {
    const e = error as { code: string; revert: { name: string; args: unknown[] } }
    assert.is(e.code, 'CALL_EXCEPTION')
    assert.is(e.revert.name, 'Unauthorized')
    assert.is(e.revert.args[0], poor.address)
  }
  try {
    await asPoor.transferFrom(alice.address, poor.address, 5n)
    assert.unreachable('the transferFrom reverts')
  } catch (error) {
    const e = error as { code: string; data: string }
    assert.is(e.code, 'CALL_EXCEPTION')
    assert.is(tokenContract.interface.parseError(e.data)?.name, 'Unauthorized')
  }
})

test('cross-dialect: the official SDK invokes the ethers-deployed token with the same account; ethers sees its effect and event', async () => {
  const account = ServiceManager.getAccountService(pm).fromPrivateKey(aliceKey.slice(2), Algo.ECRAW)
  assert.is(`0x${account.getAddress()}`.toLowerCase().replace(/^0x0x/, '0x'), alice.address.toLowerCase())
  const before = (await tokenContract.balanceOf(alice.address)) as bigint
  const builder = new Transaction.EVMBuilder(account.getAddress(), pm).invoke(
    await tokenContract.getAddress(),
    'transfer(address,uint256)',
    abiText,
    [carol.address, 3],
  )
  const tx = builder.build()
  tx.sign(account)
  const response = await ServiceManager.getContractService(pm).invoke(tx).send()
  const polled = await response.poll()
  assert.is(polled.code, 0)
  assert.is(await tokenContract.balanceOf(carol.address), 7n)
  assert.is(await tokenContract.balanceOf(alice.address), before - 3n)
  // the Hyperchain-dialect transaction, seen by ethers: its receipt and its event
  const receipt = await provider.getTransactionReceipt(response.result as string)
  assert.is(receipt?.status, 1)
  const events = (await tokenContract.queryFilter(
    tokenContract.filters.Transfer(alice.address, carol.address),
    receipt?.blockNumber,
  )) as EventLog[]
  assert.is(events.length, 1)
  assert.is(events[0].args.value, 3n)
})

test('cross-dialect, the reverse: the SDK deploys, ethers transfers, the SDK reads the same state', async () => {
  const account = ServiceManager.getAccountService(pm).fromPrivateKey(aliceKey.slice(2), Algo.ECRAW)
  const contracts = ServiceManager.getContractService(pm)
  const deployTx = new Transaction.EVMBuilder(account.getAddress(), pm)
    .deploy(token.bytecode.slice(2), abiText, ['Hyper', 'HYP', 500])
    .build()
  deployTx.sign(account)
  const deployed = await (await contracts.deploy(deployTx).send()).poll()
  assert.is(deployed.code, 0)
  const address = deployed.result.contractAddress
  const viaEthers = new Contract(address, token.abi as never, alice)
  assert.is(await viaEthers.symbol(), 'HYP')
  await (await viaEthers.transfer(bob.address, 11n)).wait()
  const readTx = new Transaction.EVMBuilder(account.getAddress(), pm).invoke(address, 'balanceOf(address)', abiText, [bob.address]).build()
  readTx.sign(account)
  const read = await (await contracts.invoke(readTx).send()).poll()
  assert.is(String(DecodeUtil.decodeEvmResult(read, abiText, 'balanceOf(address)')[0]), '11')
})

test.run()
