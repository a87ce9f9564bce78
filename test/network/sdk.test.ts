/**
 * The official Hyperchain JS SDK (@hyperchain/jssdk 1.1.0, unmodified) against a network of 4 VPs
 * and an NVP, every node its own process (the files `npm run network` writes, test timers): the
 * flows of test/helpers/jssdk-flows.ts, once through a VP and once through the NVP (which forwards
 * submissions to a VP and answers from the blocks it replays), each with its own SDK accounts
 * funded from the genesis account. Then every node must hold the same chain (I1) and give every
 * hash the SDK was handed the same outcome (I3). Times are printed, not asserted beyond the SDK's
 * own polling window.
 *
 * Then faults on the same network (one network start fewer than a file of their own): transactions
 * sent to any node have one outcome everywhere; a spoiled copy sent to one VP never cancels the
 * genuine one sent to another (issue 17); kill -9 a backup, then the primary under load (a new
 * view, no fork, nothing accepted lost); f + 1 VPs down halts the chain until one returns; every
 * VP killed at once under load, then all restarted (reliability F3). Each kill is followed by a
 * restart, so each case starts with every node running.
 *
 * Issue 30: VPs 1–3 serve a second namespace, ns2, with a consensus group of their own (f = 0):
 * both namespaces order, each its own chain; node4 and the NVP, which do not serve ns2, answer
 * -32010 for it.
 *
 *   npx tsx test/network/sdk.test.ts
 */
import { readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Wallet as EthWallet, Interface } from 'ethers'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type NetworkPlan, nodeUrl } from '../../src/devnet/network.ts'
import { assertNoFork, assertSameOutcomes, call, height, type Reply, receiptText } from '../helpers/audit.ts'
import { commit } from '../helpers/chain.ts'
import { primaryAt, sleep, waitCommitted } from '../helpers/client-load.ts'
import { ethOk, ethReceipt, tokenArtifact } from '../helpers/eth.ts'
import { GENESIS_BALANCE, type SdkFlows, sdkFlows } from '../helpers/jssdk-flows.ts'
import { post, waitForReceipt } from '../helpers/node.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { flippedS, wallet } from '../helpers/wallet.ts'

const net = processNetwork('netsdk')
const { dir } = net
let plan: NetworkPlan

const urlOf = net.urlOf
const allUrls = (): string[] => plan.nodes.map(nodeUrl)

/** the VP the first flow set talks to: a backup, so its submissions are relayed to the primary */
const VP = 'node2'
const NVP = 'nvp1'
const NODES = { vps: ['node1', 'node2', 'node3', 'node4'], nvps: [NVP] }
/** issue 30: the second namespace, served by VPs 1–3 only */
const SECOND = 'ns2'
const SECOND_VPS = ['node1', 'node2', 'node3']
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
  ;({ plan } = await net.create({ vps: 4, nvps: 1, second: { namespace: SECOND, vps: 3 } }))
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

test('issue 28: Ethereum transactions sent to a backup VP and to the NVP are relayed and ordered: the same Ethereum receipts on all 5 nodes; the same token from both dialects', async () => {
  const ethWallet = EthWallet.createRandom()
  const funding = await sendFromGenesis('node1', ethWallet.address.toLowerCase(), 10n ** 9n)
  for (const url of allUrls()) assert.is((await waitForReceipt(url, funding, 30_000)).code, 0)
  const token = tokenArtifact()
  const face = new Interface(token.abi as never)
  const sign = (nonce: number, fields: Record<string, unknown>) =>
    ethWallet.signTransaction({
      type: 2,
      chainId: 1337n,
      nonce,
      gasLimit: 2_000_000n,
      maxFeePerGas: 0n,
      maxPriorityFeePerGas: 0n,
      ...fields,
    })
  // a deployment sent to a backup VP, a call sent to the NVP (forwarded to a VP)
  const deployHash = await ethOk<string>(urlOf(VP), 'eth_sendRawTransaction', [
    await sign(0, { data: token.bytecode + face.encodeDeploy(['Net', 'NET', 1000n]).slice(2) }),
  ])
  const deployed = await ethReceipt(urlOf(VP), deployHash, 30_000)
  assert.is(deployed.status, '0x1')
  const tokenAddress = deployed.contractAddress as string
  const other = EthWallet.createRandom().address
  const callHash = await ethOk<string>(urlOf(NVP), 'eth_sendRawTransaction', [
    await sign(1, { to: tokenAddress, data: face.encodeFunctionData('transfer', [other, 40n]) }),
  ])
  // the same key in the Hyperchain dialect, on another VP: contract_invokeContract of the same token
  const invoke = await commit(
    urlOf('node3'),
    'contract_invokeContract',
    wallet(ethWallet.privateKey).invoke(tokenAddress, face.encodeFunctionData('transfer', [other, 2n])),
  )
  for (const url of allUrls()) {
    const receipts = [
      await ethReceipt(url, deployHash, 30_000),
      await ethReceipt(url, callHash, 30_000),
      await ethReceipt(url, invoke.hash, 30_000),
    ]
    assert.equal(
      receipts,
      [deployed, await ethReceipt(urlOf(VP), callHash), await ethReceipt(urlOf(VP), invoke.hash)],
      `the same receipts on ${url}`,
    )
    const balance = await ethOk<string>(url, 'eth_call', [
      { to: tokenAddress, data: face.encodeFunctionData('balanceOf', [other]) },
      'latest',
    ])
    assert.is(BigInt(balance), 42n, `the same token state on ${url}`)
  }
  await assertNoFork(allUrls())
})

// ---- faults, on the same network once the SDK flows and their audit are done: kills, restarts, a
// new primary; every node is running again at the end of each case

const { processes, accepted, send } = net
const VPS = NODES.vps
const live = net.live
/** the primary once the network runs: node1, unless a view change happened while the nodes started */
let firstPrimary = 'node1'

test('all five nodes commit the same chain; transactions sent to any VP or to the NVP have one outcome everywhere', async () => {
  const hashes = await send(60, ['node1', 'node2', 'node3', 'node4', 'nvp1'])
  assert.is(hashes.length, 60)
  const ms = await waitCommitted(hashes, live(), 30_000)
  console.log(`  60 transfers committed on all 5 nodes in ${ms} ms`)
  assert.ok((await assertNoFork(live())) >= 1)
  // node1 unless a view change happened while the nodes started (seconds apart on a busy machine)
  firstPrimary = (await primaryAt(urlOf('node2')))!
  for (const vp of VPS) assert.is(await primaryAt(urlOf(vp)), firstPrimary, `${vp} names the same primary`)
  const { view } = (await call(urlOf('node2'), 'node_getConsensusStatus', [])).result as { view: number }
  const nvp = (await call(urlOf('nvp1'), 'node_getConsensusStatus', [])).result
  assert.equal(nvp, { role: 'nvp', state: 'following', view, height: await height(urlOf('nvp1')) })
})

test('issue 30: namespace ns2 (VPs 1–3) and global (VPs 1–4) both order, each its own chain; node4 and the NVP answer -32010 for ns2', async () => {
  const { privateKey } = JSON.parse(readFileSync(join(net.dir, 'genesis-account.json'), 'utf8')) as { privateKey: string }
  const inSecond = (hostname: string, method: string, params: unknown[]) =>
    post(urlOf(hostname), { jsonrpc: '2.0', namespace: SECOND, id: 1, method, params }).then((reply) => reply.body as Reply)
  const receiver = wallet().address
  const hashes: string[] = []
  for (const [i, vp] of SECOND_VPS.entries()) {
    const sent = await inSecond(vp, 'tx_sendTransaction', [wallet(privateKey).transfer(receiver, 10 + i)])
    assert.is(sent.code, 0, `${vp}: ${sent.message}`)
    hashes.push(sent.result as string)
  }
  for (const vp of SECOND_VPS) {
    for (const hash of hashes) {
      const deadline = Date.now() + 30_000
      let reply = await inSecond(vp, 'tx_getTransactionReceipt', [hash])
      while (reply.code === -32001 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        reply = await inSecond(vp, 'tx_getTransactionReceipt', [hash])
      }
      assert.is(reply.code, 0, `${hash} in ${SECOND} on ${vp}: ${reply.message}`)
    }
    assert.is(BigInt((await inSecond(vp, 'account_getBalance', [receiver])).result as string), 33n, `${vp}: the balance in ${SECOND}`)
    // global never saw them
    assert.is((await call(urlOf(vp), 'account_getBalance', [receiver])).code, -32009, `${vp}: no such account in global`)
    const status = (await inSecond(vp, 'node_getConsensusStatus', [])).result as { role: string; state: string }
    assert.equal([status.role, status.state], ['vp', 'normal'], `${vp}: consensus of ${SECOND}`)
  }
  const listed = ((await inSecond('node1', 'node_getNodes', [])).result as { hostname: string }[]).map((node) => node.hostname).sort()
  assert.equal(listed, SECOND_VPS, `the nodes of ${SECOND}`)
  for (const hostname of ['node4', NVP]) {
    const refused = await inSecond(hostname, 'block_latestBlock', [])
    assert.is(refused.code, -32010, `${hostname} does not serve ${SECOND}`)
    assert.match(refused.message, /this node serves 'global'$/)
  }
  // global orders on all four VPs as before (the test above); its chain is not ns2's
  const globalHead = (await call(urlOf('node1'), 'block_getBlockByNumber', [1, false])).result as { hash: string }
  const secondHead = (await inSecond('node1', 'block_getBlockByNumber', [1, false])).result as { hash: string }
  assert.is.not(globalHead.hash, secondHead.hash)
})

test('issue 17: a spoiled copy sent to one VP never cancels the genuine transaction sent to another, in either order; two valid copies never both commit', async () => {
  const { privateKey } = JSON.parse(readFileSync(join(net.dir, 'genesis-account.json'), 'utf8')) as { privateKey: string }
  const funder = wallet(privateKey)
  const to = wallet().address
  const garbage = `0x00${'5a'.repeat(32)}${'3c'.repeat(32)}00`
  // a VP answers -32006 while consensus changes view (a loaded machine may time a replica out): retry
  const submit = async (hostname: string, tx: Record<string, unknown>) => {
    for (let attempt = 0; ; attempt++) {
      const reply = await call(urlOf(hostname), 'tx_sendTransaction', [tx])
      if (reply.code !== -32006 || attempt === 60) return reply
      await sleep(500)
    }
  }
  const genuine: string[] = []
  const genuineTxs: Record<string, unknown>[] = []
  const copies: string[] = []
  for (const [first, second] of [
    ['copy', 'genuine'],
    ['genuine', 'copy'],
  ] as const) {
    for (const spoil of [
      (tx: Record<string, unknown>) => ({ ...tx, signature: garbage }),
      (tx: Record<string, unknown>) => ({ ...tx, extra: 'invoice 18' }),
    ]) {
      // format A covers extra (a 2017-signed transaction with extra changed is refused outright)
      const tx = funder.transfer(to, 1, { extra: 'invoice 17' })
      const sent = { copy: spoil(tx), genuine: tx }
      const replies = { [first]: await submit('node2', sent[first]), [second]: await submit('node3', sent[second]) }
      assert.is(replies.genuine.code, 0, `${first} first: the genuine one is admitted: ${replies.genuine.message}`)
      genuine.push(replies.genuine.result as string)
      genuineTxs.push(tx)
      if (replies.copy.code === 0) copies.push(replies.copy.result as string)
      else assert.is(replies.copy.code, -32007, `${first} first: the copy: ${replies.copy.message}`)
    }
  }
  // two valid copies, each to its own VP at once
  const twins: string[] = []
  const tx = funder.transfer(to, 1)
  const replies = await Promise.all([submit('node2', tx), submit('node3', { ...tx, signature: flippedS(tx.signature as string) })])
  for (const reply of replies) {
    if (reply.code === 0) twins.push(reply.result as string)
    else assert.is(reply.code, -32007, reply.message)
  }
  assert.ok(twins.length >= 1)

  await waitCommitted([...genuine, ...copies, ...twins], live(), 30_000)
  const outcomes = await assertSameOutcomes(live(), [...genuine, ...copies, ...twins])
  for (const hash of genuine) assert.is(JSON.parse(outcomes.get(hash) as string).code, 0, `the genuine ${hash} commits`)
  for (const hash of copies) assert.is(JSON.parse(outcomes.get(hash) as string).code, -32003, `the copy ${hash} is SIGFAILED`)
  const validTwins = twins.filter((hash) => JSON.parse(outcomes.get(hash) as string).code === 0)
  console.log(
    `  two valid copies to two VPs: ${twins.length} admitted; outcomes ${twins.map((hash) => JSON.parse(outcomes.get(hash) as string).code).join(', ')}`,
  )
  assert.is(validTwins.length, 1, `exactly one of the two valid copies commits: ${twins.map((hash) => outcomes.get(hash)).join(' | ')}`)
  // A22: the same signed transaction again, to the other VPs, after its commit: -32007 everywhere
  for (const hostname of ['node1', 'node4']) {
    const again = await submit(hostname, genuineTxs[0])
    assert.is(again.code, -32007, `${hostname}: ${again.message}`)
  }
  assert.ok((await assertNoFork(live())) >= 1)
})

test('kill -9 a backup: the chain goes on; restarted, it catches up', async () => {
  const [backup, ...others] = [...VPS.filter((vp) => vp !== firstPrimary), firstPrimary]
  await processes.get(backup)!.kill('SIGKILL')
  const hashes = await send(40, others)
  await waitCommitted(hashes, live(), 30_000)
  await net.start(backup)
  const more = await send(20, [others[0], backup])
  const ms = await waitCommitted([...hashes, ...more], live(), 60_000)
  console.log(`  restarted ${backup} caught up in ${ms} ms`)
  assert.ok((await assertNoFork(live())) >= (await height(urlOf(others[0]))) - 1)
})

test('kill -9 the primary under load: a new view, no fork, nothing accepted is lost', async () => {
  const killed = (await primaryAt(urlOf('node2')))!
  const backups = VPS.filter((vp) => vp !== killed)
  const before = await send(20, backups)
  const { view: viewBefore } = (await call(urlOf(backups[0]), 'node_getConsensusStatus', [])).result as { view: number }
  // what an operator's client sees: the finished view change as a system status (the sub_ example's shape)
  const subscription = (
    await call(urlOf(backups[0]), 'sub_newSystemStatusSubscription', [
      { modules: ['consensus'], subtypes: ['viewchange'], error_codes: [0] },
    ])
  ).result as string
  const killedAt = Date.now()
  await processes.get(killed)!.kill('SIGKILL')
  const after = await send(30, backups)
  const ms = await waitCommitted([...before, ...after], live(), 60_000)
  const primary = await primaryAt(urlOf(backups[0]))
  console.log(
    `  after killing primary ${killed}: view changed to primary ${primary}; everything committed ${Date.now() - killedAt} ms after the kill (${ms} ms of waiting)`,
  )
  assert.ok(primary !== undefined && primary !== killed, `a new primary, got ${primary}`)
  const status = (await call(urlOf(backups[0]), 'node_getConsensusStatus', [])).result as { view: number; stableCheckpoint: number }
  assert.equal(
    { ...status, view: status.view > viewBefore },
    {
      role: 'vp',
      state: 'normal',
      view: true,
      primary,
      height: await height(urlOf(backups[0])),
      stableCheckpoint: status.stableCheckpoint,
    },
  )
  assert.is(status.stableCheckpoint % 10, 0)
  const changes = (await call(urlOf(backups[0]), 'sub_getSubscriptionChanges', [subscription])).result as Record<string, unknown>[]
  assert.ok(changes.length >= 1, 'the finished view change reached the status subscription')
  const last = changes[changes.length - 1]
  assert.equal(
    { ...last, message: undefined, date: undefined },
    {
      module: 'consensus',
      status: true,
      subType: 'viewchange',
      errorCode: 0,
      message: undefined,
      date: undefined,
    },
  )
  assert.match(last.message as string, new RegExp(`finished viewChange, primary=\\d+, view=${status.view}/height=\\d+`))
  await net.start(killed)
  await waitCommitted(await send(10, [killed]), live(), 60_000)
  await assertNoFork(live())
})

test('f+1 VPs down: the chain halts, and resumes when one returns; the NVP follows throughout', async () => {
  await processes.get('node3')!.kill('SIGKILL')
  await processes.get('node4')!.kill('SIGKILL')
  const stuckAt = await height(urlOf('node1'))
  const waiting = await send(10, ['node1', 'node2'])
  await sleep(4000)
  assert.is(await height(urlOf('node1')), stuckAt, 'two of four VPs commit nothing')
  await net.start('node4')
  const ms = await waitCommitted(waiting, live(), 90_000)
  console.log(`  with node4 back, the waiting transfers committed in ${ms} ms`)
  await net.start('node3')
  await waitCommitted(await send(10, ['node3', 'nvp1']), live(), 90_000)
  await assertNoFork(live())
  await assertSameOutcomes(live(), accepted)
})

test('F3: every VP killed at once under load, then all restarted: they resume, no fork, every answered hash has one outcome, receipts served before are unchanged', async () => {
  const { privateKey } = JSON.parse(readFileSync(join(dir, 'genesis-account.json'), 'utf8')) as { privateKey: string }
  const funder = wallet(privateKey)
  const servedBefore = accepted.slice(-20)
  const receiptsBefore = await Promise.all(servedBefore.map((hash) => call(urlOf('node1'), 'tx_getTransactionReceipt', [hash])))
  // four clients, one per VP, each with a submission in flight when the VPs die; what they were answered is all that counts
  const answered: string[] = []
  let killing = false
  const clients = VPS.map(async (vp) => {
    while (!killing) {
      try {
        const reply = await call(urlOf(vp), 'tx_sendTransaction', [funder.transfer(wallet().address, 1)])
        if (reply.code === 0) answered.push(reply.result as string)
        else await sleep(100)
      } catch {
        return // the node died under the request: its answer never came
      }
    }
  })
  while (answered.length < 40) await sleep(50)
  killing = true
  await Promise.all(VPS.map((vp) => processes.get(vp)!.kill('SIGKILL')))
  await Promise.all(clients)
  const restartedAt = Date.now()
  await Promise.all(VPS.map((vp) => net.start(vp)))
  await waitCommitted(answered, live(), 90_000)
  console.log(
    `  ${answered.length} transfers answered before all four VPs died; all committed ${Date.now() - restartedAt} ms after the restart began`,
  )
  await waitCommitted(await send(10, VPS), live(), 60_000)
  await assertNoFork(live())
  await assertSameOutcomes(live(), [...accepted, ...answered])
  const receiptsAfter = await Promise.all(servedBefore.map((hash) => call(urlOf('node1'), 'tx_getTransactionReceipt', [hash])))
  assert.equal(receiptsAfter.map(receiptText), receiptsBefore.map(receiptText), 'receipts served before the kill are unchanged (I7)')
})

test.run()
