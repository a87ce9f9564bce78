/**
 * viem, unchanged, against one Keel node (issue 28): public and wallet clients over HTTP,
 * deployContract, simulateContract then writeContract, waitForTransactionReceipt, readContract, a
 * revert decoded by viem, and watchContractEvent over WebSocket (eth_subscribe logs).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  type Abi,
  type Address,
  type BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  webSocket,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { KeelNode } from '../../src/node.ts'
import { tokenArtifact } from '../helpers/eth.ts'
import { startTestNode } from '../helpers/node.ts'

const account = privateKeyToAccount(`0x${'d4'.repeat(32)}`)
const other = privateKeyToAccount(`0x${'e5'.repeat(32)}`)
const token = tokenArtifact()
const abi = token.abi as Abi
let node: KeelNode
let tokenAddress: Address

function connect(url: string) {
  const chain = defineChain({
    id: 1337,
    name: 'Keel',
    nativeCurrency: { name: 'Keel', symbol: 'KEEL', decimals: 18 },
    rpcUrls: { default: { http: [url], webSocket: [url.replace('http', 'ws')] } },
  })
  return {
    chain,
    publicClient: createPublicClient({ chain, transport: http(url), pollingInterval: 50 }),
    walletClient: createWalletClient({ account, chain, transport: http(url) }),
  }
}
let { chain, publicClient, walletClient } = connect('http://127.0.0.1:1')

test.before(async () => {
  node = await startTestNode(
    { chain: { batchTimeoutMs: 5 }, genesis: { accounts: [{ address: account.address.toLowerCase(), balance: (10n ** 18n).toString() }] } },
    { verifyWorkers: 1 },
  )
  ;({ chain, publicClient, walletClient } = connect(node.url))
})
test.after(async () => {
  await node?.stop()
})

test('public client: chain id, block, balance', async () => {
  assert.is(await publicClient.getChainId(), 1337)
  const block = await publicClient.getBlock({ blockTag: 'latest' })
  assert.is(block.baseFeePerGas, 0n)
  assert.is(await publicClient.getBalance({ address: account.address }), 10n ** 18n)
})

test('deployContract (EIP-1559 by default) and waitForTransactionReceipt', async () => {
  const hash = await walletClient.deployContract({ abi, bytecode: token.bytecode as Hex, args: ['Viem', 'VIE', 1000n], account, chain })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  assert.is(receipt.status, 'success')
  assert.is(receipt.type, 'eip1559')
  tokenAddress = receipt.contractAddress as Address
  assert.is(await publicClient.readContract({ address: tokenAddress, abi, functionName: 'symbol' }), 'VIE')
})

test('simulateContract, then writeContract with its request', async () => {
  const { request, result } = await publicClient.simulateContract({
    address: tokenAddress,
    abi,
    functionName: 'transfer',
    args: [other.address, 25n],
    account,
  })
  assert.is(result, true)
  const hash = await walletClient.writeContract(request)
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  assert.is(receipt.status, 'success')
  assert.is(await publicClient.readContract({ address: tokenAddress, abi, functionName: 'balanceOf', args: [other.address] }), 25n)
})

test('a revert is decoded: ContractFunctionRevertedError with the reason', async () => {
  try {
    await publicClient.simulateContract({
      address: tokenAddress,
      abi,
      functionName: 'transfer',
      args: [account.address, 10n ** 6n],
      account: other,
    })
    assert.unreachable('reverts')
  } catch (error) {
    const reverted = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError)
    assert.ok(reverted instanceof ContractFunctionRevertedError)
    assert.is((reverted as ContractFunctionRevertedError).reason, 'Token: insufficient balance')
  }
})

test('watchContractEvent over WebSocket: eth_subscribe logs', async () => {
  const wsClient = createPublicClient({ chain, transport: webSocket(node.url.replace('http', 'ws')) })
  const seen = new Promise<{ args: { to: string; value: bigint } }>((resolve, reject) => {
    const unwatch = wsClient.watchContractEvent({
      address: tokenAddress,
      abi,
      eventName: 'Transfer',
      onLogs: (logs) => {
        unwatch()
        resolve(logs[0] as never)
      },
      onError: reject,
    })
  })
  await new Promise((resolve) => setTimeout(resolve, 300))
  const hash = await walletClient.writeContract({
    address: tokenAddress,
    abi,
    functionName: 'transfer',
    args: [other.address, 3n],
    account,
    chain,
  })
  await publicClient.waitForTransactionReceipt({ hash })
  const log = await seen
  assert.is(log.args.to, other.address)
  assert.is(log.args.value, 3n)
  const heads = await new Promise<bigint>((resolve) => {
    const unwatch = wsClient.watchBlockNumber({
      onBlockNumber: (number) => {
        unwatch()
        resolve(number)
      },
    })
    setTimeout(() => void walletClient.sendTransaction({ to: other.address, value: 1n, account, chain }), 300)
  })
  assert.ok(heads > 0n)
  await wsClient.transport.getRpcClient().then((client) => client.close())
})

test.run()
