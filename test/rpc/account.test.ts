/**
 * account_getBalance against a real node: balances come from the configured genesis and from real
 * signed transfers, never from writes into the store.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import { artifact, call, commit, deploy, fails, ok, STORE_SOURCE, SUBMIT, send, transfers } from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

let node: KeelNode
let url: string
const alice = wallet()
const bob = wallet()
/** past 2^53 and near int64's top, to check the hex is exact */
const BIG = 2n ** 62n + 12345n
const ALICE_START = 1_000_000n

const balance = async (address: string): Promise<bigint> => BigInt(await ok<string>(url, 'account_getBalance', [address]))

test.before(async () => {
  // solc-js compiles in this thread, synchronously: done before the node starts, it cannot stall the
  // client for seconds between two requests, while the node closes the kept-alive connection the
  // next request then goes out on ("socket hang up", seen once in CI at load 16)
  artifact(STORE_SOURCE, 'Store')
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5 },
      genesis: {
        accounts: [
          { address: alice.address, balance: ALICE_START.toString() },
          { address: bob.address.slice(2).toUpperCase(), balance: BIG.toString() },
        ],
      },
    },
    { verifyWorkers: 1 },
  )
  url = node.url
})

test.after(async () => {
  await node?.stop()
})

test('genesis balances, as 0x hex without padding, exact past 2^53', async () => {
  assert.is(await ok(url, 'account_getBalance', [alice.address]), `0x${ALICE_START.toString(16)}`)
  assert.is(await ok(url, 'account_getBalance', [bob.address]), `0x${BIG.toString(16)}`)
  assert.is(node.devAccount, undefined, 'configured genesis accounts replace the generated one')
})

test('the address is accepted without 0x and in any case', async () => {
  const expected = `0x${ALICE_START.toString(16)}`
  const bare = alice.address.slice(2)
  for (const form of [bare, bare.toUpperCase(), `0x${bare.toUpperCase()}`]) {
    assert.is(await ok(url, 'account_getBalance', [form]), expected, form)
  }
})

test('an address no account holds: -32009 with the lower-case 0x address', async () => {
  const stranger = wallet().address
  await fails(url, 'account_getBalance', [stranger], -32009, `The account does not exist '${stranger}'`)
  const bare = stranger.slice(2).toUpperCase()
  await fails(url, 'account_getBalance', [bare], -32009, `The account does not exist '${stranger}'`)
  await fails(url, 'account_getBalance', [`0x${'00'.repeat(20)}`], -32009, `The account does not exist '0x${'00'.repeat(20)}'`)
})

test('malformed addresses and params are -32602', async () => {
  await fails(url, 'account_getBalance', [`0x${'ab'.repeat(19)}`], -32602)
  await fails(url, 'account_getBalance', ['0xzz'], -32602)
  await fails(url, 'account_getBalance', [], -32602)
  await fails(url, 'account_getBalance', [42], -32602)
})

test('transfers move exact amounts; a new receiver starts to exist', async () => {
  const carol = wallet()
  const before = { alice: await balance(alice.address), bob: await balance(bob.address) }
  await commit(url, SUBMIT.transfer, alice.transfer(bob.address, 300))
  await commit(url, SUBMIT.transfer, alice.transfer(carol.address, 25))
  assert.is(await balance(alice.address), before.alice - 325n)
  assert.is(await balance(bob.address), before.bob + 300n)
  assert.is(await ok(url, 'account_getBalance', [carol.address]), '0x19')

  // several in one burst: the sum arrives
  await transfers(url, alice, carol.address, 5, 2)
  assert.is(await balance(carol.address), 35n)
  assert.is(await balance(alice.address), before.alice - 335n)

  // carol spends what she received
  await commit(url, SUBMIT.transfer, carol.transfer(bob.address, 35))
  assert.is(await ok(url, 'account_getBalance', [carol.address]), '0x0', 'an emptied account still exists')
})

test('a transfer to oneself and a zero transfer to a stranger', async () => {
  const before = await balance(alice.address)
  await commit(url, SUBMIT.transfer, alice.transfer(alice.address, 500))
  assert.is(await balance(alice.address), before)
  const dan = wallet()
  await commit(url, SUBMIT.transfer, alice.transfer(dan.address, 0))
  assert.is(await ok(url, 'account_getBalance', [dan.address]), '0x0', 'a zero transfer creates the receiver')
  assert.is(await balance(alice.address), before)
})

test('failed transfers change no balance: OUTOFBALANCE and SIGFAILED', async () => {
  const erin: Wallet = wallet()
  await commit(url, SUBMIT.transfer, alice.transfer(erin.address, 10))
  const before = { alice: await balance(alice.address), erin: await balance(erin.address) }

  const short = await send(url, SUBMIT.transfer, erin.transfer(alice.address, 11))
  assert.is(short.reply.code, -32002)
  assert.is(short.reply.message, 'OUTOFBALANCE')

  // signed by someone else's key: the signature does not recover `from`
  const forged = wallet().transfer(alice.address, 5)
  forged.from = erin.address
  const bad = await send(url, SUBMIT.transfer, forged)
  assert.is(bad.reply.code, -32003)
  assert.is(bad.reply.message, 'SIGFAILED')

  assert.is(await balance(alice.address), before.alice)
  assert.is(await balance(erin.address), before.erin)
})

test('an unfunded account that never received anything does not exist, even after a failed send', async () => {
  const ghost = wallet()
  const { reply } = await send(url, SUBMIT.transfer, ghost.transfer(alice.address, 1))
  assert.is(reply.code, -32002)
  await fails(url, 'account_getBalance', [ghost.address], -32009, `The account does not exist '${ghost.address}'`)
})

test('a contract account: its balance is 0x0 and deploying costs the deployer nothing', async () => {
  const before = await balance(alice.address)
  const { address } = await deploy(url, alice, artifact(STORE_SOURCE, 'Store').bin)
  const reply = await call(url, 'account_getBalance', [address])
  assert.is(reply.code, 0, `balance of contract ${address}: ${reply.message}`)
  assert.is(reply.result, '0x0')
  assert.is(await balance(alice.address), before, 'no gas fee')
})

test.run()
