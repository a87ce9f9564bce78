/**
 * The official Hyperchain JS SDK (@hyperchain/jssdk 1.1.0, unmodified) against a network of 4 VPs
 * and an NVP, every node its own process (the files `npm run network` writes, test timers): the
 * flows of test/helpers/jssdk-flows.ts, once through a VP and once through the NVP (which forwards
 * submissions to a VP and answers from the blocks it replays), each with its own SDK accounts
 * funded from the genesis account. Then every node must hold the same chain (I1) and give every
 * hash the SDK was handed the same outcome (I3). Times are printed, not asserted beyond the SDK's
 * own polling window.
 *
 *   npx tsx test/network/sdk.test.ts
 */
import { readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type NetworkPlan, nodeUrl } from '../../src/devnet/network.ts'
import { assertNoFork, assertSameOutcomes, call } from '../helpers/audit.ts'
import { GENESIS_BALANCE, type SdkFlows, sdkFlows } from '../helpers/jssdk-flows.ts'
import { waitForReceipt } from '../helpers/node.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { wallet } from '../helpers/wallet.ts'

const net = processNetwork('netsdk')
const { dir } = net
let plan: NetworkPlan

const urlOf = net.urlOf
const allUrls = (): string[] => plan.nodes.map(nodeUrl)

/** the VP the first flow set talks to: a backup, so its submissions are relayed to the primary */
const VP = 'node2'
const NVP = 'nvp1'
const NODES = { vps: ['node1', 'node2', 'node3', 'node4'], nvps: [NVP] }
/** a node of a network signs receipts with its ECert key */
const ecertOf = (hostname: string) => () => readFileSync(join(dir, hostname, 'config', 'certs', 'ecert.cert'), 'utf8')
const throughVp = sdkFlows({ url: () => urlOf(VP), hostname: VP, receiptCert: ecertOf(VP), nodes: NODES })
const throughNvp = sdkFlows({ url: () => urlOf(NVP), hostname: NVP, receiptCert: ecertOf(NVP), nodes: NODES })

/** transfers from the genesis account outside the SDK flows (funding, the latency figure), for the final audit */
const genesisTransfers: string[] = []

/** A transfer from the genesis account sent to `hostname`; resolves with its hash. */
async function sendFromGenesis(hostname: string, to: string, value: bigint): Promise<string> {
  const { privateKey } = JSON.parse(readFileSync(join(dir, 'genesis-account.json'), 'utf8')) as { privateKey: string }
  const tx = wallet(privateKey).transfer(to, value)
  for (let attempt = 0; ; attempt++) {
    const reply = await call(urlOf(hostname), 'tx_sendTransaction', [tx])
    if (reply.code === 0) {
      genesisTransfers.push(reply.result as string)
      return reply.result as string
    }
    // -32006: consensus is busy (still starting); the same signed transaction is sent again
    assert.ok(reply.code === -32006 && attempt < 150, `transfer to ${to}: ${reply.code} ${reply.message}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/**
 * Funds every SDK account with GENESIS_BALANCE from the genesis account, sent to node1 and waited
 * for on every node (the flows read balances on the node they talk to).
 */
async function fund(flows: SdkFlows[]): Promise<void> {
  const hashes: string[] = []
  for (const address of flows.flatMap((set) => set.fundedAddresses)) hashes.push(await sendFromGenesis('node1', address, GENESIS_BALANCE))
  for (const url of allUrls())
    for (const hash of hashes) {
      const reply = await waitForReceipt(url, hash, 30_000)
      assert.is(reply.code, 0, `funding transfer ${hash} on ${url}: ${reply.code} ${reply.message}`)
    }
}

test.before(async () => {
  // uvu reports a failed hook as nothing but failed tests: say why
  await startNetwork().catch((error: unknown) => {
    console.error('  the network could not be started:', error)
    throw error
  })
})

async function startNetwork(): Promise<void> {
  ;({ plan } = await net.create({ vps: 4, nvps: 1 }))
  const started = Date.now()
  await Promise.all(plan.nodes.map((node) => net.start(node.hostname)))
  await fund([throughVp, throughNvp])
  console.log(`  5 nodes started and 6 SDK accounts funded in ${Date.now() - started} ms`)
}

test.after(async () => {
  await net.killAll()
  rmSync(dirname(dir), { recursive: true, force: true })
  throughVp.printLatencies(`through VP ${VP}`)
  throughNvp.printLatencies(`through NVP ${NVP}`)
})

for (const step of throughVp.steps) test(`VP ${VP} / ${step.name}`, step.run)
for (const step of throughNvp.steps) test(`NVP ${NVP} / ${step.name}`, step.run)

test('commit latency, polled every 10 ms (printed): a transfer sent to a backup VP, until its receipt is on that VP, then on all 5 nodes', async () => {
  const toSender: number[] = []
  const toAll: number[] = []
  for (let i = 0; i < 5; i++) {
    const started = performance.now()
    const hash = await sendFromGenesis(VP, wallet().address, 1n)
    const seen = new Map<string, number>()
    while (seen.size < plan.nodes.length) {
      assert.ok(performance.now() - started < 30_000, `${hash} reached every node within 30 s`)
      for (const url of allUrls().filter((candidate) => !seen.has(candidate))) {
        const reply = await call(url, 'tx_getTransactionReceipt', [hash])
        if (reply.code === -32001) continue
        assert.is(reply.code, 0, `${hash} on ${url}: ${reply.code} ${reply.message}`)
        seen.set(url, performance.now() - started)
      }
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    toSender.push(seen.get(urlOf(VP))!)
    toAll.push(Math.max(...seen.values()))
  }
  const list = (values: number[]): string => values.map((ms) => ms.toFixed(0)).join(', ')
  console.log(`  submit→receipt on ${VP}: ${list(toSender)} ms; on all 5 nodes: ${list(toAll)} ms (the SDK's poll() waits ≈2750 ms)`)
})

test('every node holds the same chain and gives every hash the SDK was handed the same outcome', async () => {
  const submitted = [...throughVp.submitted, ...throughNvp.submitted]
  assert.is(submitted.length, 2 * 22, 'both flow sets ran every submission (19 receipts and 3 refusals each)')
  // the nodes the flows did not talk to may still be replaying the last block
  for (const deadline = Date.now() + 30_000; ; ) {
    const pending = await Promise.all(
      allUrls().map(async (url) => (await call(url, 'tx_getTransactionReceipt', [submitted[submitted.length - 1]])).code === -32001),
    )
    if (!pending.includes(true)) break
    assert.ok(Date.now() < deadline, 'the last transaction reached every node within 30 s')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const height = await assertNoFork(allUrls())
  await assertSameOutcomes(allUrls(), genesisTransfers)
  const outcomes = await assertSameOutcomes(allUrls(), submitted)
  const refused = [...outcomes.values()].filter((text) => !text.startsWith('{"code":0'))
  // the forged signature was relayed by the VP (or forwarded by the NVP) and checked by every node
  // itself: the same SIGFAILED record everywhere (consensus.md §10.15)
  assert.equal(
    refused.map((text) => (JSON.parse(text) as { code: number }).code),
    [-32005, -32008, -32003, -32005, -32008, -32003],
    'the frozen invoke, the stranger freeze and the forged transfer of each flow set',
  )
  console.log(`  ${submitted.length} SDK transactions, the same outcome on all 5 nodes; no fork up to block ${height}`)
})

test.run()
