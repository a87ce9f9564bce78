/**
 * contract_ handlers against a real node: compile, deploy, invoke, maintain (freeze, unfreeze,
 * upgrade, permission) and the contract queries, all with real signed transactions (protocol.md
 * §2 and §5, reliability.md S3 and S6).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { contractAddress } from '../../src/crypto/tx-hash.ts'
import type { KeelNode } from '../../src/node.ts'
import {
  artifact,
  call,
  calldata,
  commit,
  decodeAddress,
  decodeString,
  decodeUint,
  deploy,
  fails,
  goUtcString,
  height,
  invoke,
  invokeUint,
  ok,
  receiptOf,
  STORE_SOURCE,
  SUBMIT,
  send,
  submit,
  topic,
  type WireBlock,
  type WireReceipt,
  type WireTx,
} from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

const ZERO = `0x${'00'.repeat(20)}`
let node: KeelNode
let url: string
const owner = wallet()
const other = wallet()
const store = artifact(STORE_SOURCE, 'Store')
const storeV2 = artifact(STORE_SOURCE, 'StoreV2')
const broken = artifact(STORE_SOURCE, 'Broken')

/** the first Store, deployed by `owner` at deploy count 0 */
let first: { address: string; hash: string; receipt: WireReceipt }

test.before(async () => {
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5 },
      genesis: {
        accounts: [
          { address: owner.address, balance: '1000000' },
          { address: other.address, balance: '1000000' },
        ],
      },
    },
    { verifyWorkers: 1 },
  )
  url = node.url
  first = await deploy(url, owner, store.bin)
})

test.after(async () => {
  await node?.stop()
})

test('contract_compileContract: a real source gives abi, bin and types per contract', async () => {
  const result = await ok<{ abi: string[]; bin: string[]; types: string[] }>(url, 'contract_compileContract', [STORE_SOURCE])
  assert.equal([...result.types].sort(), ['Broken', 'Store', 'StoreV2'])
  assert.is(result.abi.length, 3)
  assert.is(result.bin.length, 3)
  const i = result.types.indexOf('Store')
  const abi = JSON.parse(result.abi[i]) as { type: string; name?: string }[]
  const names = abi.filter((entry) => entry.type === 'function').map((entry) => entry.name)
  for (const name of ['set', 'get', 'add', 'greet', 'spin', 'fail', 'value', 'lastWriter']) assert.ok(names.includes(name), name)
  assert.ok(abi.some((entry) => entry.type === 'event' && entry.name === 'Set'))
  for (const bin of result.bin) assert.match(bin, /^0x([0-9a-f]{2})+$/)

  // what the node compiled deploys and runs
  const deployed = await deploy(url, other, result.bin[i])
  assert.is(await invokeUint(url, other, deployed.address, 'get()'), 7n)
})

test('contract_compileContract: a syntax error is -32000 with the compiler message', async () => {
  const reply = await fails(url, 'contract_compileContract', ['pragma solidity ^0.8.0;\ncontract X { function f( }'], -32000)
  assert.match(reply.message, /^compile failed: /)
  assert.match(reply.message, /ParserError/)
  const typeError = await fails(
    url,
    'contract_compileContract',
    ['pragma solidity ^0.8.0;\ncontract Y { function f() public pure returns (uint) { return "x"; } }'],
    -32000,
  )
  assert.match(typeError.message, /TypeError/)
  await fails(url, 'contract_compileContract', [], -32602)
})

test('deploy: the receipt address follows keccak(rlp([from, count])) and ret is the runtime code', async () => {
  assert.is(first.receipt.contractAddress, contractAddress(owner.address, 0))
  assert.is(first.receipt.ret, store.runtime, 'ret is the deployed runtime code')
  assert.is(first.receipt.vmType, 'EVM')
  assert.is(first.receipt.version, '1.3')
  assert.ok(first.receipt.gasUsed > 53_000, `gas of a creation: ${first.receipt.gasUsed}`)
  const tx = await ok<WireTx>(url, 'tx_getTransactionByHash', [first.hash])
  assert.is(tx.to, ZERO, 'a deployment shows the zero address as `to`')
  assert.is(tx.payload, store.bin)
})

test('contract_getCode: runtime code of a contract; 0x0 for a plain account; -32009 for an unknown address', async () => {
  assert.is(await ok(url, 'contract_getCode', [first.address]), store.runtime)
  assert.is(await ok(url, 'contract_getCode', [first.address.slice(2).toUpperCase()]), store.runtime)
  assert.is(await ok(url, 'contract_getCode', [owner.address]), '0x0')
  const stranger = wallet().address
  await fails(url, 'contract_getCode', [stranger], -32009, `The account does not exist '${stranger}'`)
})

test('contract_getContractCountByAddr counts successful deployments only', async () => {
  const deployer = wallet()
  await commit(url, SUBMIT.transfer, owner.transfer(deployer.address, 10))
  assert.is(await ok(url, 'contract_getContractCountByAddr', [deployer.address]), '0x0')
  assert.is(await ok(url, 'contract_getContractCountByAddr', [wallet().address]), '0x0', 'an unknown address deployed nothing')
  const a = await deploy(url, deployer, store.bin)
  const failed = await send(url, SUBMIT.deploy, deployer.deploy(broken.bin))
  assert.is(failed.reply.code, -32004)
  assert.is(failed.reply.message, 'DEPLOY_CONTRACT_FAILED')
  const b = await deploy(url, deployer, store.bin)
  assert.is(await ok(url, 'contract_getContractCountByAddr', [deployer.address]), '0x2')
  assert.is(a.address, contractAddress(deployer.address, 0))
  assert.is(b.address, contractAddress(deployer.address, 1), 'a failed deployment does not use up a contract address')
  assert.equal(await ok(url, 'contract_getDeployedList', [deployer.address]), [a.address, b.address])
  assert.equal(await ok(url, 'contract_getDeployedList', [deployer.address.slice(2).toUpperCase()]), [a.address, b.address])
  assert.equal(await ok(url, 'contract_getDeployedList', [wallet().address]), [])
  const ownerList = await ok<string[]>(url, 'contract_getDeployedList', [owner.address.slice(2)])
  assert.is(ownerList[0], first.address, 'the first deployment comes first')
})

const FACTORY_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

contract Child {
    uint256 public x = 1;
}

contract Factory {
    address public last;

    function make() public returns (address) {
        last = address(new Child());
        return last;
    }
}
`

test('a contract that deploys a contract: creator, deployed list, status of the child', async () => {
  const factory = await deploy(url, owner, artifact(FACTORY_SOURCE, 'Factory').bin)
  const made = await invoke(url, other, factory.address, 'make()')
  assert.is(made.reply.code, 0, made.reply.message)
  const child = decodeAddress((made.reply.result as WireReceipt).ret)
  assert.is(await ok(url, 'contract_getCreator', [child]), factory.address, 'the creating contract is the creator')
  assert.equal(await ok(url, 'contract_getDeployedList', [factory.address]), [child])
  assert.is(await ok(url, 'contract_getStatus', [child]), 'normal')
  assert.is(await ok(url, 'contract_getCode', [child]), artifact(FACTORY_SOURCE, 'Child').runtime)
  assert.is(await invokeUint(url, other, child, 'x()'), 1n)
})

test('contract_getContractCountByAddr of a contract counts the contracts it deployed', async () => {
  // openrpc.json: "the account's deployment nonce; 0x0 for an account that deployed nothing";
  // protocol.md §2: the nonce starts at 0 and increments per deployment
  const factory = await deploy(url, owner, artifact(FACTORY_SOURCE, 'Factory').bin)
  assert.is(await ok(url, 'contract_getContractCountByAddr', [factory.address]), '0x0', 'a new contract has deployed nothing')
  await invoke(url, other, factory.address, 'make()')
  assert.is(await ok(url, 'contract_getContractCountByAddr', [factory.address]), '0x1', 'one CREATE')
  assert.is(await ok(url, 'contract_getContractCountByAddr', [first.address]), '0x0', 'Store deployed nothing')
})

test('contract_getStatus: normal, non-contract, -32009', async () => {
  assert.is(await ok(url, 'contract_getStatus', [first.address]), 'normal')
  assert.is(await ok(url, 'contract_getStatus', [owner.address]), 'non-contract')
  const stranger = wallet().address
  await fails(url, 'contract_getStatus', [stranger], -32009, `The account does not exist '${stranger}'`)
})

test('contract_getCreator: the deployer; the zero address for a plain account; -32009', async () => {
  assert.is(await ok(url, 'contract_getCreator', [first.address]), owner.address)
  assert.is(await ok(url, 'contract_getCreator', [owner.address]), ZERO)
  const stranger = wallet().address
  await fails(url, 'contract_getCreator', [stranger.slice(2)], -32009, `The account does not exist '${stranger}'`)
})

test('contract_getCreateTime: the deploying block write time as a Go UTC time string', async () => {
  const tx = await ok<WireTx>(url, 'tx_getTransactionByHash', [first.hash])
  const block = await ok<WireBlock>(url, 'block_getBlockByNumber', [tx.blockNumber, true])
  const writeTime = BigInt(block.writeTime)
  const text = await ok<string>(url, 'contract_getCreateTime', [first.address])
  assert.is(text, goUtcString(writeTime))
  assert.match(text, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})? \+0000 UTC$/)
  const ms = Date.parse(`${text.slice(0, 10)}T${text.slice(11, 19)}Z`)
  assert.is(BigInt(ms), (writeTime / 1_000_000_000n) * 1000n)
  assert.ok(Math.abs(ms - Date.now()) < 5 * 60_000, 'written recently')
  // an account that holds no contract
  await fails(url, 'contract_getCreateTime', [owner.address], -32009, `The account does not exist '${owner.address}'`)
  const stranger = wallet().address
  await fails(url, 'contract_getCreateTime', [stranger], -32009, `The account does not exist '${stranger}'`)
})

test('invoke: a write then reads; return data and logs decode', async () => {
  const { address } = await deploy(url, owner, store.bin)
  assert.is(await invokeUint(url, owner, address, 'get()'), 7n, 'the constructor ran')
  const { hash, reply } = await invoke(url, other, address, 'set(uint256)', 42n)
  assert.is(reply.code, 0, reply.message)
  const receipt = reply.result as WireReceipt
  assert.is(receipt.txHash, hash)
  assert.is(receipt.ret, '0x0', 'no return data')
  assert.is(receipt.contractAddress, ZERO)
  assert.is(receipt.log.length, 1)
  const [log] = receipt.log
  assert.is(log.address, address)
  assert.equal(log.topics, [topic('Set(address,uint256)'), `0x${other.address.slice(2).padStart(64, '0')}`])
  assert.is(log.data, (42).toString(16).padStart(64, '0'), 'log data without 0x')
  assert.is(log.txHash, hash)
  assert.is(log.index, 0)
  const tx = await ok<WireTx>(url, 'tx_getTransactionByHash', [hash])
  assert.is(log.blockNumber, Number(tx.blockNumber))
  assert.is(log.blockHash, tx.blockHash)
  assert.is(log.txIndex, Number(tx.txIndex))

  assert.is(await invokeUint(url, owner, address, 'get()'), 42n)
  assert.is(await invokeUint(url, owner, address, 'value()'), 42n)
  const writer = await invoke(url, owner, address, 'lastWriter()')
  assert.is(decodeAddress((writer.reply.result as WireReceipt).ret), other.address)
  assert.is(await invokeUint(url, owner, address, 'add(uint256,uint256)', 2n, 3n), 5n)
  const greet = await invoke(url, owner, address, 'greet()')
  assert.is(decodeString((greet.reply.result as WireReceipt).ret), 'hello keel')
  assert.is(decodeUint((await invoke(url, owner, address, 'get()')).reply.result?.ret ?? '0x'), 42n)
})

test('invoke failures: a revert, an unknown selector, a plain account → -32005 INVOKE_CONTRACT_FAILED', async () => {
  const reverted = await invoke(url, owner, first.address, 'fail()')
  assert.is(reverted.reply.code, -32005)
  assert.is(reverted.reply.message, 'INVOKE_CONTRACT_FAILED')
  const unknown = await invoke(url, owner, first.address, 'nope()')
  assert.is(unknown.reply.code, -32005)
  const plain = await send(url, SUBMIT.invoke, owner.invoke(other.address, '0x12345678'))
  assert.is(plain.reply.code, -32005)
  const stranger = await send(url, SUBMIT.invoke, owner.invoke(wallet().address, '0x12345678'))
  assert.is(stranger.reply.code, -32005)
  // submission checks
  await fails(url, SUBMIT.invoke, [owner.invoke(first.address, '0x')], -32602, 'contract code is empty')
  await fails(url, SUBMIT.invoke, [owner.invoke(ZERO, '0x12345678')], -32602, 'address `to` is invalid')
  await fails(url, SUBMIT.deploy, [owner.deploy('0x')], -32602, 'contract code is empty')
})

test('maintain: freeze and unfreeze by the deployer; INVALID_PERMISSION for anyone else, state unchanged', async () => {
  const { address } = await deploy(url, owner, store.bin)
  await commit(url, SUBMIT.invoke, owner.invoke(address, calldata('set(uint256)', 5n)))
  assert.is(await invokeUint(url, owner, address, 'get()'), 5n)

  const stolen = await send(url, SUBMIT.maintain, other.maintain(address, 2))
  assert.is(stolen.reply.code, -32008)
  assert.is(stolen.reply.message, 'INVALID_PERMISSION')
  assert.is(await ok(url, 'contract_getStatus', [address]), 'normal')

  await commit(url, SUBMIT.maintain, owner.maintain(address, 2))
  assert.is(await ok(url, 'contract_getStatus', [address]), 'frozen')
  const frozenCall = await invoke(url, owner, address, 'set(uint256)', 9n)
  assert.is(frozenCall.reply.code, -32005, 'a frozen contract cannot be invoked')
  assert.is(frozenCall.reply.message, 'INVOKE_CONTRACT_FAILED')
  const frozenRead = await invoke(url, other, address, 'get()')
  assert.is(frozenRead.reply.code, -32005)
  const again = await send(url, SUBMIT.maintain, owner.maintain(address, 2))
  assert.is(again.reply.code, -32005, 'freezing a frozen contract fails in the receipt')

  const release = await send(url, SUBMIT.maintain, other.maintain(address, 3))
  assert.is(release.reply.code, -32008)
  assert.is(await ok(url, 'contract_getStatus', [address]), 'frozen')
  // code and creator are unaffected by the freeze
  assert.is(await ok(url, 'contract_getCode', [address]), store.runtime)
  assert.is(await ok(url, 'contract_getCreator', [address]), owner.address)

  await commit(url, SUBMIT.maintain, owner.maintain(address, 3))
  assert.is(await ok(url, 'contract_getStatus', [address]), 'normal')
  assert.is(await invokeUint(url, owner, address, 'get()'), 5n, 'storage survived freeze and unfreeze')
  const twice = await send(url, SUBMIT.maintain, owner.maintain(address, 3))
  assert.is(twice.reply.code, -32005, 'unfreezing a normal contract fails in the receipt')
  assert.is(await invokeUint(url, other, address, 'add(uint256,uint256)', 1n, 1n), 2n)
})

test('maintain: upgrade by the deployer keeps the storage; by another account it changes nothing', async () => {
  const { address } = await deploy(url, owner, store.bin)
  await commit(url, SUBMIT.invoke, owner.invoke(address, calldata('set(uint256)', 11n)))

  const stolen = await send(url, SUBMIT.maintain, other.maintain(address, 1, storeV2.bin))
  assert.is(stolen.reply.code, -32008)
  assert.is(stolen.reply.message, 'INVALID_PERMISSION')
  assert.is(await ok(url, 'contract_getCode', [address]), store.runtime, 'code unchanged')
  assert.is(await invokeUint(url, owner, address, 'get()'), 11n)

  await fails(url, SUBMIT.maintain, [owner.maintain(address, 1, '0x')], -32602, 'contract code is empty')

  await commit(url, SUBMIT.maintain, owner.maintain(address, 1, storeV2.bin))
  assert.is(await ok(url, 'contract_getCode', [address]), storeV2.runtime)
  assert.is(await invokeUint(url, owner, address, 'get()'), 1011n, 'new code, old storage')
  assert.is(await invokeUint(url, owner, address, 'version()'), 2n)
  assert.is(await ok(url, 'contract_getCreator', [address]), owner.address)
  assert.is(await ok(url, 'contract_getStatus', [address]), 'normal')
  const gone = await invoke(url, owner, address, 'greet()')
  assert.is(gone.reply.code, -32005, 'functions of the old code are gone')

  // back to Store: its constructor (value = 7) runs only to produce the code, the storage stays
  await commit(url, 'contarct_maintainContract', owner.maintain(address, 1, store.bin))
  assert.is(await ok(url, 'contract_getCode', [address]), store.runtime)
  assert.is(await invokeUint(url, owner, address, 'get()'), 11n, 'the init code of an upgrade writes nothing')

  // maintaining a plain account fails in the receipt
  const notContract = await send(url, SUBMIT.maintain, owner.maintain(other.address, 2))
  assert.is(notContract.reply.code, -32005)
})

test('the alias contarct_maintainContract reaches contract_maintainContract', async () => {
  const { address } = await deploy(url, owner, store.bin)
  const hash = await submit(url, 'contarct_maintainContract', owner.maintain(address, 2))
  const reply = await receiptOf(url, hash)
  assert.is(reply.code, 0, reply.message)
  assert.is(await ok(url, 'contract_getStatus', [address]), 'frozen')
  const denied = await submit(url, 'contarct_maintainContract', other.maintain(address, 3))
  const deniedReply = await receiptOf(url, denied)
  assert.is(deniedReply.code, -32008)
  assert.is(deniedReply.message, 'INVALID_PERMISSION')
  assert.is(await ok(url, 'contract_getStatus', [address]), 'frozen')
})

test('an infinite loop fails with -32005 and the chain goes on producing blocks', async () => {
  const { address } = await deploy(url, owner, store.bin)
  const startHeight = await height(url)
  const started = performance.now()
  const spin = await invoke(url, owner, address, 'spin()')
  const took = performance.now() - started
  assert.is(spin.reply.code, -32005)
  assert.is(spin.reply.message, 'INVOKE_CONTRACT_FAILED')
  assert.ok(took < 10_000, `the loop is cut by the gas budget (${Math.round(took)} ms)`)
  assert.is(await invokeUint(url, owner, address, 'get()'), 7n, 'the loop left no writes')
  const discarded = await ok<WireTx>(url, 'tx_getTransactionByHash', [spin.hash])
  assert.is(discarded.invalid, true)
  assert.is(discarded.invalidMsg, 'INVOKE_CONTRACT_FAILED')

  // a loop and a good call in one burst: the good one succeeds
  const [loopHash, goodHash] = await Promise.all([
    submit(url, SUBMIT.invoke, owner.invoke(address, calldata('spin()'))),
    submit(url, SUBMIT.invoke, other.invoke(address, calldata('set(uint256)', 3n))),
  ])
  assert.is((await receiptOf(url, loopHash)).code, -32005)
  assert.is((await receiptOf(url, goodHash)).code, 0)
  assert.is(await invokeUint(url, owner, address, 'get()'), 3n)

  await commit(url, SUBMIT.transfer, owner.transfer(other.address, 1))
  assert.ok((await height(url)) > startHeight + 2, 'blocks keep coming after the loops')
})

test('simulate: the hash has a receipt, no block is written and no state changes', async () => {
  const { address } = await deploy(url, owner, store.bin)
  const before = await height(url)
  const latest = await ok<WireBlock>(url, 'block_latestBlock')
  const hash = await submit(url, SUBMIT.invoke, owner.invoke(address, calldata('set(uint256)', 99n), { simulate: true }))
  const reply = await call<WireReceipt>(url, 'tx_getTransactionReceipt', [hash])
  assert.is(reply.code, 0, `the simulated receipt exists at once: ${reply.message}`)
  assert.is(reply.result?.txHash, hash)
  assert.is(reply.result?.log.length, 1, 'the simulated write logged')
  const read = await submit(url, SUBMIT.invoke, owner.invoke(address, calldata('get()'), { simulate: true }))
  const readReply = await call<WireReceipt>(url, 'tx_getTransactionReceipt', [read])
  assert.is(readReply.code, 0)
  assert.is(decodeUint(readReply.result?.ret ?? '0x'), 7n, 'the simulated write was not kept')
  assert.is(await height(url), before, 'no block for simulated calls')
  assert.is((await ok<WireBlock>(url, 'block_latestBlock')).hash, latest.hash)
  await fails(url, 'tx_getTransactionByHash', [hash], -32001, `Not found transaction ${hash}`)

  // a simulated failure answers its receipt code
  const spin = await submit(url, SUBMIT.invoke, owner.invoke(address, calldata('spin()'), { simulate: true }))
  const spinReply = await call(url, 'tx_getTransactionReceipt', [spin])
  assert.is(spinReply.code, -32005)
  assert.is(spinReply.message, 'INVOKE_CONTRACT_FAILED')
  assert.is(await height(url), before)
})

test('the getters reject malformed addresses with -32602', async () => {
  for (const method of [
    'contract_getCode',
    'contract_getStatus',
    'contract_getCreator',
    'contract_getCreateTime',
    'contract_getDeployedList',
  ]) {
    await fails(url, method, ['0x1234'], -32602)
  }
  const latest = await ok<WireBlock>(url, 'block_latestBlock')
  assert.ok(Number(latest.number) > 1)
})

test.run()
