/** web3.js v4, unchanged, against one Keel node (issue 28): a signed transfer and a contract call. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { Web3 } from 'web3'
import type { KeelNode } from '../../src/node.ts'
import { tokenArtifact } from '../helpers/eth.ts'
import { startTestNode } from '../helpers/node.ts'

const key = `0x${'f6'.repeat(32)}`
let node: KeelNode
let web3: Web3
const token = tokenArtifact()

test.before(async () => {
  const address = new Web3().eth.accounts.privateKeyToAccount(key).address
  node = await startTestNode(
    { chain: { batchTimeoutMs: 5 }, genesis: { accounts: [{ address: address.toLowerCase(), balance: (10n ** 18n).toString() }] } },
    { verifyWorkers: 1 },
  )
  web3 = new Web3(node.url)
  web3.eth.transactionPollingInterval = 100
  web3.eth.transactionConfirmationPollingInterval = 1000
  web3.eth.accounts.wallet.add(key)
})
test.after(async () => {
  await node?.stop()
  // web3.js goes on polling for confirmation blocks after a receipt, which an idle Keel chain (no
  // empty blocks) never writes; its timers would keep this process alive for minutes after the
  // summary. Ended once uvu has printed it, with uvu's exit code.
  setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref()
})

test('a transfer signed by web3.js', async () => {
  const from = web3.eth.accounts.wallet[0].address
  const to = web3.eth.accounts.create().address
  assert.is(await web3.eth.getChainId(), 1337n)
  const receipt = await web3.eth.sendTransaction({ from, to, value: 12345n, gas: 21000n })
  assert.is(receipt.status, 1n)
  assert.is(await web3.eth.getBalance(to), 12345n)
})

test('a contract deployed and called', async () => {
  const from = web3.eth.accounts.wallet[0].address
  const contract = new web3.eth.Contract(token.abi as never)
  const deployed = await contract.deploy({ data: token.bytecode, arguments: ['Web3', 'W3', 77n] } as never).send({ from })
  const other = web3.eth.accounts.create().address
  await (deployed.methods.transfer as (to: string, value: bigint) => { send(o: object): Promise<unknown> })(other, 7n).send({ from })
  const balance = await (deployed.methods.balanceOf as (who: string) => { call(): Promise<bigint> })(other).call()
  assert.is(balance, 7n)
  assert.is(await (deployed.methods.symbol as () => { call(): Promise<string> })().call(), 'W3')
})

test.run()
