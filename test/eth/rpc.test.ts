/**
 * The Ethereum dialect on the wire (issue 28): its envelope beside Hyperchain's on one port, the
 * read methods and block tags, eth_sendRawTransaction of all three transaction types with the
 * refusals Ethereum clients recognise, receipts and logs across dialects, filters. One node; state
 * comes from real transactions of both dialects. Raw JSON-RPC here; the client libraries have
 * files of their own (ethers, viem, web3, hardhat).
 */
import { RLP } from '@ethereumjs/rlp'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes } from '@noble/hashes/utils.js'
import { Contract, Interface, Transaction, Wallet } from 'ethers'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import WebSocket from 'ws'
import { type KeelNode, startNode } from '../../src/node.ts'
import { commit, ok } from '../helpers/chain.ts'
import { eth, ethOk, ethReceipt, fixtureArtifacts, tokenArtifact } from '../helpers/eth.ts'
import { Algo, filterRulesProposal, govClient, Proposal, ProviderManager, ServiceManager } from '../helpers/governance.ts'
import { post, startTestNode } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

let node: KeelNode
let url: string
const CHAIN_ID = 1337n
const alice = new Wallet(`0x${'a1'.repeat(32)}`)
const bob = new Wallet(`0x${'b2'.repeat(32)}`)
/** a Hyperchain-dialect account with the same key as carol's Ethereum wallet */
const carolKey = `0x${'c3'.repeat(32)}`
const carol = wallet(carolKey)
const START = 10n ** 18n
const token = tokenArtifact()
const tokenInterface = new Interface(token.abi as never)

let aliceNonce = 0
/** signs a transaction of alice's with the next nonce */
const signed = async (fields: Record<string, unknown>, from = alice, nonce?: number): Promise<string> =>
  from.signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce: nonce ?? (from === alice ? aliceNonce++ : 0),
    gasLimit: 1_000_000n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    ...fields,
  } as never)
const send = async (raw: string): Promise<Record<string, unknown>> =>
  ethReceipt(url, await ethOk<string>(url, 'eth_sendRawTransaction', [raw]))
const balanceOf = async (address: string) => BigInt(await ethOk<string>(url, 'eth_getBalance', [address, 'latest']))

test.before(async () => {
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5 },
      genesis: {
        accounts: [
          { address: alice.address.toLowerCase(), balance: START.toString() },
          { address: carol.address, balance: '1000000' },
        ],
        // carol alone passes proposals (the governance case)
        admins: [carol.address],
        adminThreshold: 1,
      },
    },
    { verifyWorkers: 1 },
  )
  url = node.url
})
test.after(async () => {
  await node?.stop()
})

test('an eth_ request is answered in plain JSON-RPC 2.0; a Hyperchain one keeps its envelope; a batch mixes both', async () => {
  const single = (await post(url, { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] })).body
  assert.equal(single, { jsonrpc: '2.0', id: 7, result: '0x539' })
  const batch = (
    await post(url, [
      { jsonrpc: '2.0', id: 1, method: 'net_version' },
      { jsonrpc: '2.0', id: 2, namespace: 'global', method: 'tx_getTransactionsCount', params: [] },
      { jsonrpc: '2.0', id: 3, method: 'eth_noSuchMethod', params: [] },
      { jsonrpc: '2.0', id: 4, method: 'eth_sendTransaction', params: [{}] },
      { jsonrpc: '2.0', id: 5, method: 'eth_getBalance', params: ['0x12', 'latest'] },
    ])
  ).body as Record<string, unknown>[]
  assert.equal(batch[0], { jsonrpc: '2.0', id: 1, result: '1337' })
  assert.is(batch[1].namespace, 'global')
  assert.is(batch[1].code, 0)
  assert.equal(batch[2], {
    jsonrpc: '2.0',
    id: 3,
    error: { code: -32601, message: 'The method eth_noSuchMethod does not exist/is not available' },
  })
  const missing = batch[3].error as { code: number; message: string }
  assert.is(missing.code, -32601)
  assert.match(missing.message, /eth_sendRawTransaction/)
  assert.is((batch[4].error as { code: number }).code, -32602)
  assert.not.ok('namespace' in batch[4] || 'code' in batch[4])
})

test('the same envelope over WebSocket, on the same port', async () => {
  const socket = new WebSocket(url.replace('http', 'ws'))
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const reply = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))))
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'eth_blockNumber', params: [] }))
  const parsed = JSON.parse(await reply) as Record<string, unknown>
  assert.is(parsed.id, 'x')
  assert.match(parsed.result as string, /^0x[0-9a-f]+$/)
  socket.close()
})

test('constants: chain id, versions, fees, accounts, syncing, fee history', async () => {
  assert.is(await ethOk(url, 'eth_chainId'), '0x539')
  assert.match(await ethOk<string>(url, 'web3_clientVersion'), /^Keel\//)
  assert.equal(await ethOk(url, 'eth_accounts'), [])
  assert.is(await ethOk(url, 'eth_gasPrice'), '0x0')
  assert.is(await ethOk(url, 'eth_maxPriorityFeePerGas'), '0x0')
  assert.is(await ethOk(url, 'eth_syncing'), false)
  const history = await ethOk<{ baseFeePerGas: string[]; reward: string[][] }>(url, 'eth_feeHistory', ['0x1', 'latest', [25, 75]])
  assert.is(history.baseFeePerGas.length, 2)
  assert.equal(history.reward, [['0x0', '0x0']])
})

let hyperchainHash: string
/** alice's first transfer, in an early block (the trace window case) */
let firstTransferHash: string
test('blocks in Ethereum shape, with Keel roots, and every tag', async () => {
  const receipt = await commit(url, 'tx_sendTransaction', carol.transfer(bob.address.toLowerCase(), 10))
  hyperchainHash = receipt.hash
  const height = await ethOk<string>(url, 'eth_blockNumber')
  const block = await ethOk<Record<string, unknown>>(url, 'eth_getBlockByNumber', [height, false])
  const keel = await ok<Record<string, unknown>>(url, 'block_getBlockByNumber', [height, false])
  assert.is(block.hash, keel.hash)
  assert.is(block.stateRoot, keel.merkleRoot)
  assert.ok((block.transactions as string[]).includes(hyperchainHash))
  for (const tag of ['latest', 'pending', 'safe', 'finalized'])
    assert.is((await ethOk<{ number: string }>(url, 'eth_getBlockByNumber', [tag, false])).number, height)
  const earliest = await ethOk<{ number: string; transactions: unknown[] }>(url, 'eth_getBlockByNumber', ['earliest', false])
  assert.is(earliest.number, '0x0')
  assert.is(await ethOk(url, 'eth_getBlockByNumber', ['0xffff', false]), null)
  const byHash = await ethOk<Record<string, unknown>>(url, 'eth_getBlockByHash', [block.hash, true])
  assert.is((byHash.transactions as { hash: string }[])[0].hash, hyperchainHash)
  assert.is(await ethOk(url, 'eth_getBlockTransactionCountByHash', [block.hash]), '0x1')
  assert.is((await ethOk<{ hash: string }>(url, 'eth_getTransactionByBlockNumberAndIndex', [height, '0x0'])).hash, hyperchainHash)
  // a Hyperchain-dialect transaction has an Ethereum receipt too
  const ethereumReceipt = await ethOk<Record<string, unknown>>(url, 'eth_getTransactionReceipt', [hyperchainHash])
  assert.is(ethereumReceipt.status, '0x1')
  assert.is(ethereumReceipt.blockHash, block.hash)
})

test('state queries read the latest block only, and say so for an older one', async () => {
  assert.is(await balanceOf(alice.address), START)
  assert.is(
    await ethOk(url, 'eth_getBalance', [alice.address, 'earliest']).catch((e: Error) => e.message),
    '-32000 missing trie node: Keel keeps the latest state only (block 1); block 0 is older (use latest)'.replace(/^/, 'eth_getBalance: '),
  )
})

test('eth_sendRawTransaction: EIP-1559, EIP-2930 and legacy transfers, seen from both dialects', async () => {
  const r1 = await send(await signed({ to: bob.address, value: 1000n }))
  assert.is(r1.status, '0x1')
  firstTransferHash = r1.transactionHash as string
  assert.is(r1.gasUsed, '0x5208')
  const r2 = await send(
    await signed({
      type: 1,
      gasPrice: 0n,
      maxFeePerGas: undefined,
      maxPriorityFeePerGas: undefined,
      to: bob.address,
      value: 1n,
      accessList: [],
    }),
  )
  assert.is(r2.type, '0x1')
  const r3 = await send(
    await signed({ type: 0, gasPrice: 0n, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined, to: bob.address, value: 2n }),
  )
  assert.is(r3.type, '0x0')
  assert.is(await balanceOf(bob.address), 1013n)
  assert.is(BigInt(await ok<string>(url, 'account_getBalance', [bob.address.toLowerCase()])), 1013n)
  assert.is(await ethOk(url, 'eth_getTransactionCount', [alice.address, 'latest']), '0x3')
  const hyperchain = await ok<Record<string, unknown>>(url, 'tx_getTransactionReceipt', [r1.transactionHash])
  assert.is(hyperchain.txHash, r1.transactionHash)
  const tx = await ethOk<Record<string, unknown>>(url, 'eth_getTransactionByHash', [r1.transactionHash])
  assert.is(tx.from, alice.address.toLowerCase())
  assert.is(tx.value, '0x3e8')
  assert.is(tx.type, '0x2')
  // the hash is Ethereum's: what the client computed from the signed bytes
  assert.is(Transaction.from(await signed({ to: bob.address, value: 1n }, alice, 99)).hash?.length, 66)
})

test('a nonce gap waits for the transaction before it', async () => {
  const later = await signed({ to: bob.address, value: 5n }, alice, aliceNonce + 1)
  const earlier = await signed({ to: bob.address, value: 5n }, alice, aliceNonce)
  const laterHash = await ethOk<string>(url, 'eth_sendRawTransaction', [later])
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.is(await ethOk(url, 'eth_getTransactionReceipt', [laterHash]), null, 'waits')
  assert.is(await ethOk(url, 'eth_getTransactionCount', [alice.address, 'latest']), `0x${aliceNonce.toString(16)}`)
  const earlierReceipt = await send(earlier)
  const laterReceipt = await ethReceipt(url, laterHash)
  assert.is(earlierReceipt.status, '0x1')
  assert.is(laterReceipt.status, '0x1')
  assert.ok(Number(laterReceipt.blockNumber) >= Number(earlierReceipt.blockNumber))
  aliceNonce += 2
})

test('refusals Ethereum clients recognise, and nothing stored', async () => {
  const height = await ethOk<string>(url, 'eth_blockNumber')
  const refused = async (raw: string, code: number, message: RegExp): Promise<void> => {
    const reply = await eth(url, 'eth_sendRawTransaction', [raw])
    assert.ok(reply.error, `refused: ${JSON.stringify(reply)}`)
    assert.is(reply.error?.code, code, reply.error?.message)
    assert.match(reply.error?.message ?? '', message)
    if (/^0x[0-9a-f]+$/.test(raw) && raw.length < 1000) {
      const hash = (() => {
        try {
          return Transaction.from(raw).hash
        } catch {
          return undefined
        }
      })()
      if (hash) assert.is(await ethOk(url, 'eth_getTransactionByHash', [hash]), null, 'nothing stored')
    }
  }
  await refused(
    await alice.signTransaction({ type: 2, chainId: 1n, nonce: aliceNonce, gasLimit: 21000n, maxFeePerGas: 0n, to: bob.address }),
    -32000,
    /^invalid chain id for signer: have 1 want 1337/,
  )
  const good = Transaction.from(await signed({ to: bob.address, value: 1n }, alice, aliceNonce))
  const forged = good.clone()
  forged.signature = { r: good.signature?.r, s: `0x${'7f'.repeat(31)}00`, v: 27 } as never
  await refused(forged.serialized, -32000, /^invalid sender|^nonce too low|^insufficient funds/)
  await refused(await signed({ to: bob.address, value: 1n }, alice, 0), -32000, /^nonce too low: address 0x[0-9a-f]{40}, tx: 0 state: \d+/)
  await refused(await signed({ to: bob.address, value: 1n }, alice, aliceNonce + 65), -32000, /^nonce too high/)
  await refused(await signed({ to: bob.address, value: 1n, gasLimit: 20_000n }, alice, aliceNonce), -32000, /^intrinsic gas too low/)
  await refused(await signed({ to: bob.address, value: 1n, gasLimit: 30_000_000n }, alice, aliceNonce), -32000, /^exceeds block gas limit/)
  await refused(
    await signed({ to: bob.address, value: START * 2n }, alice, aliceNonce),
    -32000,
    /^insufficient funds for gas \* price \+ value/,
  )
  // neither ethers nor @ethereumjs/tx will sign a tip above the fee cap: encoded and signed here
  const fields = [CHAIN_ID, BigInt(aliceNonce), 2n, 1n, 21000n, bob.address, 0n, '0x', []].map((v) =>
    typeof v === 'bigint'
      ? v === 0n
        ? new Uint8Array(0)
        : hexToBytes(v.toString(16).padStart(Math.ceil(v.toString(16).length / 2) * 2, '0'))
      : typeof v === 'string'
        ? hexToBytes(v.slice(2))
        : v,
  )
  const unsigned = concatBytes(new Uint8Array([2]), RLP.encode(fields))
  const signature = secp256k1.sign(keccak_256(unsigned), hexToBytes(alice.privateKey.slice(2)), { prehash: false, format: 'recovered' })
  const [recovery, r, s] = [signature[0], signature.subarray(1, 33), signature.subarray(33)]
  const tipAboveCap = {
    serialize: () =>
      concatBytes(new Uint8Array([2]), RLP.encode([...fields, recovery === 0 ? new Uint8Array(0) : new Uint8Array([recovery]), r, s])),
  }
  await refused(`0x${bytesToHex(tipAboveCap.serialize())}`, -32000, /^max priority fee per gas higher than max fee per gas/)
  await refused(
    await signed({ to: bob.address, data: `0x${'00'.repeat(132_000)}`, gasLimit: 9_000_000n }, alice, aliceNonce),
    -32000,
    /^oversized data/,
  )
  await refused(
    await signed({ data: `0x${'00'.repeat(50_000)}`, gasLimit: 9_000_000n }, alice, aliceNonce),
    -32000,
    /^max initcode size exceeded/,
  )
  await refused('0xc281', -32602, /rlp|not a valid transaction/)
  const unprotected = await alice.signTransaction({ type: 0, nonce: aliceNonce, gasLimit: 21000n, gasPrice: 0n, to: bob.address })
  await refused(unprotected, -32000, /^only replay-protected \(EIP-155\) transactions allowed over RPC/)
  assert.is(await ethOk(url, 'eth_blockNumber'), height, 'no block for refused transactions')
  assert.is(await ethOk(url, 'eth_getTransactionCount', [alice.address, 'latest']), `0x${aliceNonce.toString(16)}`)
})

let tokenAddress: string
test('a contract deployed by a raw transaction: eth_call, eth_estimateGas, reverts with their data, logs and filters', async () => {
  const deployData = token.bytecode + tokenInterface.encodeDeploy(['Keel', 'KEL', 1000n]).slice(2)
  const estimate = BigInt(await ethOk<string>(url, 'eth_estimateGas', [{ from: alice.address, data: deployData }]))
  const filter = await ethOk<string>(url, 'eth_newFilter', [{ topics: [tokenInterface.getEvent('Transfer')?.topicHash] }])
  const blockFilter = await ethOk<string>(url, 'eth_newBlockFilter')
  const deployed = await send(await signed({ data: deployData, gasLimit: estimate }))
  assert.is(deployed.status, '0x1', 'the estimate is a limit that works')
  assert.is((deployed.logs as unknown[]).length, 1, 'the mint')
  tokenAddress = deployed.contractAddress as string
  const expected = (await import('ethers')).getCreateAddress({ from: alice.address, nonce: aliceNonce - 1 })
  assert.is(tokenAddress, expected.toLowerCase(), 'Ethereum creation address')
  assert.ok((await ethOk<string>(url, 'eth_getCode', [tokenAddress, 'latest'])).length > 100)
  const contract = new Contract(tokenAddress, token.abi as never)
  const balanceCall = { to: tokenAddress, data: contract.interface.encodeFunctionData('balanceOf', [alice.address]) }
  assert.is(BigInt(await ethOk<string>(url, 'eth_call', [balanceCall, 'latest'])), 1000n)
  assert.is(BigInt(await ethOk<string>(url, 'eth_getStorageAt', [tokenAddress, '0x2', 'latest'])), 1000n, 'slot 2: totalSupply')
  // a revert: code 3, the reason in the message, the revert data in error.data
  const revert = await eth(url, 'eth_call', [
    { from: bob.address, to: tokenAddress, data: contract.interface.encodeFunctionData('transfer', [alice.address, 5n]) },
    'latest',
  ])
  assert.is(revert.error?.code, 3)
  assert.is(revert.error?.message, 'execution reverted: Token: insufficient balance')
  assert.is(contract.interface.parseError(revert.error?.data as string)?.args[0], 'Token: insufficient balance')
  const custom = await eth(url, 'eth_estimateGas', [
    { from: bob.address, to: tokenAddress, data: contract.interface.encodeFunctionData('transferFrom', [alice.address, bob.address, 5n]) },
  ])
  assert.is(custom.error?.code, 3)
  assert.is(contract.interface.parseError(custom.error?.data as string)?.name, 'Unauthorized')
  // a transfer's log, from eth_getLogs and from the filters
  const moved = await send(await signed({ to: tokenAddress, data: contract.interface.encodeFunctionData('transfer', [bob.address, 7n]) }))
  assert.is((moved.logs as unknown[]).length, 1)
  const logs = await ethOk<{ topics: string[]; data: string; transactionHash: string; logIndex: string }[]>(url, 'eth_getLogs', [
    {
      fromBlock: 'earliest',
      toBlock: 'latest',
      address: tokenAddress,
      topics: [null, null, `0x${'00'.repeat(12)}${bob.address.slice(2).toLowerCase()}`],
    },
  ])
  assert.is(logs.length, 1)
  assert.is(logs[0].transactionHash, moved.transactionHash)
  assert.is(BigInt(logs[0].data), 7n)
  const changes = await ethOk<unknown[]>(url, 'eth_getFilterChanges', [filter])
  assert.is(changes.length, 2, 'the mint and the transfer')
  assert.equal(await ethOk(url, 'eth_getFilterChanges', [filter]), [], 'nothing new since the last poll')
  assert.ok((await ethOk<string[]>(url, 'eth_getFilterChanges', [blockFilter])).includes(moved.blockHash as string))
  // a filter without fromBlock covers the latest block only, as geth reads it
  assert.is((await ethOk<unknown[]>(url, 'eth_getFilterLogs', [filter])).length, 1)
  assert.is(await ethOk(url, 'eth_uninstallFilter', [filter]), true)
  assert.is((await eth(url, 'eth_getFilterChanges', [filter])).error?.message, 'filter not found')
})

test('a failed Ethereum transaction has a receipt with status 0x0 and still uses its nonce', async () => {
  const contract = new Interface(token.abi as never)
  const failed = await send(
    await signed({ to: tokenAddress, data: contract.encodeFunctionData('transfer', [bob.address, 10n ** 9n]), gasLimit: 200_000n }),
  )
  assert.is(failed.status, '0x0')
  assert.is(await ethOk(url, 'eth_getTransactionCount', [alice.address, 'latest']), `0x${aliceNonce.toString(16)}`)
  const next = await send(await signed({ to: bob.address, value: 1n }))
  assert.is(next.status, '0x1')
})

test('a Hyperchain-dialect transaction cannot pass itself off as an Ethereum one', async () => {
  const tx = { ...carol.transfer(bob.address.toLowerCase(), 1), ethereum: await signed({ to: bob.address, value: 1n }, alice, 900) }
  const reply = (await post(url, { jsonrpc: '2.0', namespace: 'global', id: 1, method: 'tx_sendTransaction', params: [tx] })).body as {
    code: number
    message: string
  }
  assert.is(reply.code, -32602)
  assert.match(reply.message, /eth_sendRawTransaction/)
})

type Frame = {
  type: string
  from: string
  to?: string
  value?: string
  gas: string
  gasUsed: string
  input: string
  output?: string
  error?: string
  revertReason?: string
  calls?: Frame[]
  logs?: { address: string; topics: string[]; data: string; position: string }[]
}
const tracing = fixtureArtifacts('Tracing.sol')
const caller = new Interface(tracing.Caller.abi as never)
const callee = new Interface(tracing.Callee.abi as never)
let callerAddress: string
let runHash: string

test('debug_traceTransaction with the call tracer: a CREATE that creates another contract', async () => {
  const deployed = await send(await signed({ data: tracing.Caller.bytecode, gasLimit: 2_000_000n }))
  assert.is(deployed.status, '0x1')
  callerAddress = deployed.contractAddress as string
  const trace = await ethOk<Frame>(url, 'debug_traceTransaction', [deployed.transactionHash, { tracer: 'callTracer' }])
  assert.is(trace.type, 'CREATE')
  assert.is(trace.from, alice.address.toLowerCase())
  assert.is(trace.to, callerAddress, 'the created address')
  assert.is(trace.value, '0x0')
  assert.is(trace.gas, '0x1e8480', "the transaction's gas limit")
  assert.is(trace.gasUsed, deployed.gasUsed, "the receipt's gasUsed")
  assert.is(trace.input, tracing.Caller.bytecode)
  assert.is(trace.output, await ethOk(url, 'eth_getCode', [callerAddress, 'latest']), 'the runtime code')
  assert.is(trace.calls?.length, 1)
  const created = trace.calls?.[0] as Frame
  assert.is(created.type, 'CREATE')
  assert.is(created.from, callerAddress)
  const calleeAddress = `0x${(await ethOk<string>(url, 'eth_call', [{ to: callerAddress, data: caller.encodeFunctionData('callee') }])).slice(26)}`
  assert.is(created.to, calleeAddress)
  assert.is(created.output, await ethOk(url, 'eth_getCode', [calleeAddress, 'latest']))
})

test('debug_traceTransaction: a nested call that logs, a nested call that reverts, logs with their positions; onlyTopCall; the struct logger', async () => {
  const ran = await send(await signed({ to: callerAddress, data: caller.encodeFunctionData('run', [5n]) }))
  assert.is(ran.status, '0x1')
  runHash = ran.transactionHash as string
  const calleeAddress = `0x${(await ethOk<string>(url, 'eth_call', [{ to: callerAddress, data: caller.encodeFunctionData('callee') }])).slice(26)}`
  const trace = await ethOk<Frame>(url, 'debug_traceTransaction', [runHash, { tracer: 'callTracer', tracerConfig: { withLog: true } }])
  assert.is(trace.type, 'CALL')
  assert.is(trace.to, callerAddress)
  assert.is(trace.gas, '0xf4240')
  assert.is(trace.gasUsed, ran.gasUsed)
  assert.is(trace.input, caller.encodeFunctionData('run', [5n]))
  assert.is(BigInt(trace.output as string), 6n)
  assert.is(trace.error, undefined)
  const [touch, fail] = trace.calls as Frame[]
  assert.is(trace.calls?.length, 2)
  assert.is(touch.type, 'CALL')
  assert.is(touch.from, callerAddress)
  assert.is(touch.to, calleeAddress)
  assert.is(touch.value, '0x0')
  assert.is(touch.input, callee.encodeFunctionData('touch', [5n]))
  assert.is(BigInt(touch.output as string), 6n)
  assert.ok(BigInt(touch.gasUsed) > 0n && BigInt(touch.gasUsed) < BigInt(touch.gas))
  assert.equal(touch.logs, [
    {
      address: calleeAddress,
      topics: [callee.getEvent('Touched')?.topicHash, `0x${'00'.repeat(12)}${callerAddress.slice(2)}`],
      data: `0x${5n.toString(16).padStart(64, '0')}`,
      position: '0x0',
    },
  ])
  // fail() is pure: Solidity calls it with STATICCALL, which moves no value
  assert.is(fail.type, 'STATICCALL')
  assert.is(fail.value, undefined)
  assert.is(fail.error, 'execution reverted')
  assert.is(fail.revertReason, 'callee says no')
  assert.is(callee.parseError(fail.output as string)?.args[0], 'callee says no')
  assert.is(fail.logs, undefined)
  assert.equal(trace.logs, [
    {
      address: callerAddress,
      topics: [caller.getEvent('Done')?.topicHash],
      data: `0x${6n.toString(16).padStart(64, '0')}`,
      position: '0x2',
    },
  ])
  // the receipt's logs are the trace's, in order
  assert.equal(
    (ran.logs as { topics: string[] }[]).map((log) => log.topics[0]),
    [callee.getEvent('Touched')?.topicHash, caller.getEvent('Done')?.topicHash],
  )
  const top = await ethOk<Frame>(url, 'debug_traceTransaction', [runHash, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }])
  assert.is(top.calls, undefined)
  assert.is(top.logs, undefined, 'no logs without withLog')
  assert.is(top.gasUsed, ran.gasUsed)
  const structs = await ethOk<{
    gas: number
    failed: boolean
    returnValue: string
    structLogs: { op: string; depth: number; stack: string[] }[]
  }>(url, 'debug_traceTransaction', [runHash])
  assert.is(structs.gas, Number(ran.gasUsed))
  assert.is(structs.failed, false)
  assert.is(BigInt(`0x${structs.returnValue}`), 6n)
  const ops = structs.structLogs.map((log) => log.op)
  assert.is(ops[0], 'PUSH1')
  assert.ok(ops.includes('CALL') && ops.includes('LOG1') && ops.includes('LOG2') && ops.includes('REVERT'), ops.join(' '))
  assert.is(Math.max(...structs.structLogs.map((log) => log.depth)), 2)
  const limited = await ethOk<{ structLogs: unknown[] }>(url, 'debug_traceTransaction', [runHash, { limit: 5, disableStack: true }])
  assert.is(limited.structLogs.length, 5)
  assert.equal(Object.keys(limited.structLogs[0] as object).sort(), ['depth', 'gas', 'gasCost', 'op', 'pc'])
})

test('debug_traceTransaction: a plain transfer of either dialect, a failed transaction, and bad input', async () => {
  const moved = await send(await signed({ to: bob.address, value: 3n }))
  const trace = await ethOk<Frame>(url, 'debug_traceTransaction', [moved.transactionHash, { tracer: 'callTracer' }])
  assert.equal(trace, {
    type: 'CALL',
    from: alice.address.toLowerCase(),
    to: bob.address.toLowerCase(),
    value: '0x3',
    gas: '0xf4240',
    gasUsed: '0x5208',
    input: '0x',
  })
  const hyperchain = await commit(url, 'tx_sendTransaction', carol.transfer(bob.address.toLowerCase(), 2))
  assert.equal(await ethOk<Frame>(url, 'debug_traceTransaction', [hyperchain.hash, { tracer: 'callTracer' }]), {
    type: 'CALL',
    from: carol.address,
    to: bob.address.toLowerCase(),
    value: '0x2',
    gas: '0x989680',
    gasUsed: '0x0',
    input: '0x',
  })
  // a reverted transaction: the top frame carries the error and the reason
  const failed = await send(
    await signed({ to: tokenAddress, data: tokenInterface.encodeFunctionData('transfer', [bob.address, 10n ** 12n]) }),
  )
  assert.is(failed.status, '0x0')
  const reverted = await ethOk<Frame>(url, 'debug_traceTransaction', [failed.transactionHash, { tracer: 'callTracer' }])
  assert.is(reverted.error, 'execution reverted')
  assert.is(reverted.revertReason, 'Token: insufficient balance')
  // the gas its run used (its Ethereum receipt shows a limit instead: a discard record holds no gas, docs/ethereum.md §4)
  assert.ok(BigInt(reverted.gasUsed) > 21_000n && BigInt(reverted.gasUsed) < 1_000_000n, reverted.gasUsed)
  const unknown = await eth(url, 'debug_traceTransaction', [`0x${'ab'.repeat(32)}`, { tracer: 'callTracer' }])
  assert.equal(unknown.error, { code: -32000, message: 'transaction not found' })
  const badTracer = await eth(url, 'debug_traceTransaction', [runHash, { tracer: 'prestateTracer' }])
  assert.is(badTracer.error?.code, -32602)
  assert.match(badTracer.error?.message ?? '', /callTracer/)
  assert.is((await eth(url, 'debug_traceTransaction', ['0x12'])).error?.code, -32602)
})

test("debug_traceTransaction's struct logs with enableMemory: the memory as the frame has grown it, zeros it never wrote included", async () => {
  const wide = new Interface(tracing.WideReturn.abi as never)
  const deployed = await send(await signed({ data: tracing.WideReturn.bytecode, gasLimit: 1_000_000n }))
  assert.is(deployed.status, '0x1')
  // a CALL to an account without code returns no data: its return area (past 8 KiB) is paid for but never written
  const probed = await send(await signed({ to: deployed.contractAddress, data: wide.encodeFunctionData('probe', [alice.address]) }))
  assert.is(probed.status, '0x1')
  const { structLogs } = await ethOk<{ structLogs: { op: string; stack: string[]; memory: string[] }[] }>(url, 'debug_traceTransaction', [
    probed.transactionHash,
    { enableMemory: true },
  ])
  const call = structLogs.findIndex((log) => log.op === 'CALL')
  assert.ok(call > 0 && call + 1 < structLogs.length, 'the probe makes a CALL and goes on')
  const after = structLogs[call + 1].memory
  // geth's struct logger shows the frame's whole memory: 9000 + 32 rounded up to words, 283 of them
  assert.is(after.length, 283, 'the memory after the CALL is as large as the return area made it')
  assert.ok(
    after.slice(256).every((word) => word === '00'.repeat(32)),
    'the words past 8 KiB the call never wrote are zeros',
  )
  assert.ok(structLogs[call].memory.length < 256, 'before the CALL the memory was small')
})

test('debug_traceCall: a call traced on the latest state, a revert as a trace, nothing written', async () => {
  const height = await ethOk<string>(url, 'eth_blockNumber')
  const call = { from: alice.address, to: callerAddress, data: caller.encodeFunctionData('run', [7n]) }
  const trace = await ethOk<Frame>(url, 'debug_traceCall', [call, 'latest', { tracer: 'callTracer', tracerConfig: { withLog: true } }])
  assert.is(trace.calls?.length, 2)
  assert.is(BigInt(trace.output as string), 8n)
  assert.is(trace.calls?.[1].revertReason, 'callee says no')
  assert.is(trace.logs?.[0].position, '0x2')
  // a DELEGATECALL: from the calling contract, to the contract whose code runs, no value; its log is the caller's
  const calleeAddress = `0x${(await ethOk<string>(url, 'eth_call', [{ to: callerAddress, data: caller.encodeFunctionData('callee') }])).slice(26)}`
  const delegated = await ethOk<Frame>(url, 'debug_traceCall', [
    { from: alice.address, to: callerAddress, data: caller.encodeFunctionData('delegated', [9n]) },
    'latest',
    { tracer: 'callTracer', tracerConfig: { withLog: true } },
  ])
  const inner = delegated.calls?.[0] as Frame
  assert.is(inner.type, 'DELEGATECALL')
  assert.is(inner.from, callerAddress)
  assert.is(inner.to, calleeAddress)
  assert.is(inner.value, undefined)
  assert.is(inner.logs?.[0].address, callerAddress)
  const revert = await ethOk<Frame>(url, 'debug_traceCall', [
    { from: bob.address, to: tokenAddress, data: tokenInterface.encodeFunctionData('transfer', [alice.address, 10n ** 12n]) },
    'latest',
    { tracer: 'callTracer' },
  ])
  assert.is(revert.error, 'execution reverted')
  assert.is(revert.revertReason, 'Token: insufficient balance')
  assert.is(await ethOk(url, 'eth_blockNumber'), height, 'nothing ordered')
})

test('the trace window: the last 128 blocks re-execute, an older one answers geth\'s "required historical state unavailable"; the records survive a restart', async () => {
  // 130 blocks of one transfer each
  const hashes: { hash: string; block: number }[] = []
  for (let i = 0; i < 130; i++) {
    const receipt = await commit(url, 'tx_sendTransaction', carol.transfer(bob.address.toLowerCase(), 1))
    const placed = await ethOk<{ blockNumber: string }>(url, 'eth_getTransactionReceipt', [receipt.hash])
    hashes.push({ hash: receipt.hash, block: Number(placed.blockNumber) })
  }
  const tip = Number(await ethOk<string>(url, 'eth_blockNumber'))
  const at = (block: number) => hashes.find((item) => item.block === block)?.hash as string
  assert.ok(at(tip - 127) && at(tip - 128), 'one transfer per block')
  const edge = await ethOk<Frame>(url, 'debug_traceTransaction', [at(tip - 127), { tracer: 'callTracer' }])
  assert.is(edge.value, '0x1', 'the oldest block of the window re-executes')
  const gone = await eth(url, 'debug_traceTransaction', [at(tip - 128), { tracer: 'callTracer' }])
  assert.is(gone.error?.code, -32000)
  assert.match(gone.error?.message ?? '', /^required historical state unavailable: Keel keeps the state before each of the last 128 blocks/)
  const early = await eth(url, 'debug_traceTransaction', [firstTransferHash, { tracer: 'callTracer' }])
  assert.match(early.error?.message ?? '', /^required historical state unavailable/)
  // the node restarts on the same ledger: the records are read from it
  const config = node.config
  await node.stop()
  node = await startNode(config, { verifyWorkers: 1 })
  url = node.url
  const again = await ethOk<Frame>(url, 'debug_traceTransaction', [at(tip - 127), { tracer: 'callTracer' }])
  assert.equal(again, edge)
  assert.is((await eth(url, 'debug_traceTransaction', [at(tip - 128)])).error?.code, -32000)
})

test("an Ethereum transaction a governance rule refuses at execution uses its nonce, so its sender's later ones run", async () => {
  const dave = new Wallet(`0x${'d4'.repeat(32)}`)
  const victim = `0x${'e5'.repeat(20)}`
  const raw = (nonce: number, to: string) => signed({ to, value: 0n, gasLimit: 21_000n }, dave, nonce)
  // nonces 1 and 2 wait for 0; meanwhile a filter rule forbids every transfer to the victim
  const refusedHash = await ethOk<string>(url, 'eth_sendRawTransaction', [await raw(1, victim)])
  const laterHash = await ethOk<string>(url, 'eth_sendRawTransaction', [await raw(2, bob.address)])
  const gov = await govClient(url)
  const admin = ServiceManager.getAccountService(ProviderManager.emptyManager()).fromPrivateKey(carolKey.slice(2), Algo.ECRAW)
  const rule = { id: 1, name: 'no victim', to: [victim], vm: ['transfer'], allow_anyone: false, authorized_roles: [], forbidden_roles: [] }
  const created = await gov.ok(admin, filterRulesProposal([rule]), 'the rule')
  await gov.ok(
    admin,
    Proposal()
      .execute(created.Ret as number)
      .build(),
    'execute',
  )
  // nonce 0 is admitted (its transfer goes elsewhere); nonce 1, pooled before the rule, is refused at execution
  const first = await send(await raw(0, bob.address))
  assert.is(first.status, '0x1')
  const refused = await ethReceipt(url, refusedHash)
  assert.is(refused.status, '0x0', 'refused by the rule')
  const hyperchain = (
    await post(url, { jsonrpc: '2.0', namespace: 'global', id: 1, method: 'tx_getTransactionReceipt', params: [refusedHash] })
  ).body as { code: number; data: string }
  assert.is(hyperchain.code, -32008)
  assert.match(hyperchain.data, /filter rule 1 "no victim"/)
  const later = await ethReceipt(url, laterHash)
  assert.is(later.status, '0x1', 'nonce 2 runs: the refused transaction used nonce 1')
  assert.is(await ethOk(url, 'eth_getTransactionCount', [dave.address, 'latest']), '0x3')
  // a new transaction to the victim is refused at admission, as before
  const admission = await eth(url, 'eth_sendRawTransaction', [await raw(3, victim)])
  assert.is(admission.error?.code, -32008)
  assert.match(admission.error?.message ?? '', /filter rule 1 "no victim"/)
})

test.run()
