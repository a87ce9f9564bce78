/**
 * A network partition over real processes: 4 VPs, each its own process (test timers), every peer
 * link through a TCP proxy of this test (test/helpers/tcp-proxy.ts: each node's hosts.toml points
 * at one proxy per peer), so one node can be cut off from all the others, both ways, and healed.
 * While a node is cut off the other three (a quorum) go on; once healed it catches up, and what it
 * accepted from clients while alone is re-gossiped and committed (consensus.md §10.8). After each
 * step: identical blocks at every height (I1), one outcome per accepted hash, the same on every
 * node (I3).
 *
 * Then, on the same network healed (one network start fewer than a file of its own), Java contracts,
 * each VP with its own Java executor child: a JVM deployment, calls sent to different VPs and a
 * contract's events give the same receipts and the same blocks on every node; a runaway loop ends
 * at the same step everywhere (the same discard record, the same reason in every node's status
 * events), and the chain goes on; contracts written against Hyperchain's own APIs (2.x and 1.x) give
 * identical receipts on every VP. They run last so the executors' JVMs do not load the machine while
 * the partition cases time their cuts.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { jvmCallPayload, jvmDeployPayload, jvmInvokeArgsPayload, jvmRetText, jvmTarGzDeployPayload } from '../../sdk/src/jvm.ts'
import { type NetworkPlan, nodeUrl } from '../../src/devnet/network.ts'
import { HOSTS_FILE } from '../../src/p2p/config.ts'
import { assertNoFork, assertSameOutcomes, call, height, receipts } from '../helpers/audit.ts'
import { primaryAt, sendTransfers, sleep, waitCommitted } from '../helpers/client-load.ts'
import { compileExample, compileJava } from '../helpers/jvm.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { type Partitioner, partitionable } from '../helpers/tcp-proxy.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

const net = processNetwork('partition')
const { dir, processes } = net
let plan: NetworkPlan
let funder: Wallet
let partition: Partitioner
const accepted: string[] = []

const urlOf = net.urlOf
const allUrls = () => plan.nodes.map((node) => nodeUrl(node))
const urlsOf = (...hostnames: string[]) => hostnames.map(urlOf)
const hostnames = () => plan.nodes.map((node) => node.hostname)

/**
 * Transfers sent to a node that has just been cut off, for as long as it still takes them (it
 * turns them away with -32006 once it notices it is alone): what it accepted must not be lost.
 */
async function sendWhileAlone(hostname: string, upTo: number): Promise<string[]> {
  const hashes: string[] = []
  for (let i = 0; i < upTo; i++) {
    const reply = await call(urlOf(hostname), 'tx_sendTransaction', [funder.transfer(wallet().address, 1)])
    if (reply.code !== 0) {
      assert.is(reply.code, -32006, `an isolated node may only answer "busy": ${reply.message}`)
      break
    }
    hashes.push(reply.result as string)
  }
  accepted.push(...hashes)
  return hashes
}

async function load(count: number, ...hostnames: string[]): Promise<string[]> {
  const hashes = await sendTransfers(funder, urlsOf(...hostnames), count)
  accepted.push(...hashes)
  return hashes
}

test.before(async () => {
  ;({ plan, funder } = await net.create({ vps: 4 }))
  partition = await partitionable(plan.nodes, (hostname, lines) =>
    writeFileSync(
      join(dir, hostname, 'config', HOSTS_FILE),
      `hosts = [\n${lines.map((line) => `  ${JSON.stringify(line)},`).join('\n')}\n]\n`,
    ),
  )
  await Promise.all(plan.nodes.map((node) => net.start(node.hostname)))
})

test.after(async () => {
  await net.killAll()
  await partition?.close()
})

test('every link through the proxies: the four VPs commit one chain', async () => {
  const hashes = await load(40, 'node1', 'node2', 'node3', 'node4')
  const ms = await waitCommitted(hashes, allUrls(), 60_000)
  console.log(`  40 transfers committed on all 4 VPs through the proxies in ${ms} ms`)
  assert.ok((await assertNoFork(allUrls())) >= 1)
  console.log(`  primary: ${await primaryAt(urlOf('node2'))}`)
})

test('a backup cut off under load: the others go on; healed, it catches up and what it accepted alone is committed', async () => {
  // the primary may have changed already (nodes starting seconds apart on a busy machine)
  const primary = (await primaryAt(urlOf('node1')))!
  const victim = ['node4', 'node3'].find((hostname) => hostname !== primary)!
  const others = hostnames().filter((hostname) => hostname !== victim)
  partition.cut(victim)
  const cutAt = Date.now()
  const alone = await sendWhileAlone(victim, 5)
  const during = await load(60, ...others)
  await waitCommitted(during, urlsOf(...others), 60_000)
  const stuckAt = await height(urlOf(victim))
  // long enough for node4's request timer and several rounds of recovery while alone
  await sleep(Math.max(0, 12_000 - (Date.now() - cutAt)))
  const tip = await height(urlOf(others[0]))
  assert.ok(tip > stuckAt, `the three went on without ${victim} (${tip} > ${stuckAt})`)
  assert.is(await height(urlOf(victim)), stuckAt, `${victim} alone commits nothing`)
  partition.heal(victim)
  const healedAt = Date.now()
  const ms = await waitCommitted([...during, ...alone], allUrls(), 60_000)
  console.log(
    `  backup ${victim} cut off for ${healedAt - cutAt} ms (accepted ${alone.length} transfers alone, the others went from block ${stuckAt} to ${tip}); healed, it caught up and its own transfers committed everywhere in ${ms} ms`,
  )
  assert.ok(alone.length > 0, `${victim} took transfers before it noticed it was alone`)
  await waitCommitted(await load(20, victim, others[0]), allUrls(), 60_000)
  await assertNoFork(allUrls())
})

test('the primary cut off under load: a new view without it; healed, it rejoins, nothing it accepted is lost', async () => {
  const victim = (await primaryAt(urlOf('node1')))!
  const others = hostnames().filter((hostname) => hostname !== victim)
  partition.cut(victim)
  const cutAt = Date.now()
  const alone = await sendWhileAlone(victim, 5)
  const during = await load(40, ...others)
  const viewChangeMs = await waitCommitted(during, urlsOf(...others), 60_000)
  const primary = await primaryAt(urlOf(others[0]))
  assert.ok(primary !== undefined && primary !== victim, `the others chose a new primary, got ${primary}`)
  await sleep(Math.max(0, 15_000 - (Date.now() - cutAt)))
  partition.heal(victim)
  const healedAt = Date.now()
  const ms = await waitCommitted([...during, ...alone], allUrls(), 90_000).catch((error) => {
    for (const [hostname, node] of processes)
      console.log(
        `${hostname}:\n${node
          .output()
          .split('\n')
          .filter((l) => /view|recover|transfer|sync|WARN|ERROR/.test(l))
          .slice(-25)
          .join('\n')}`,
      )
    throw error
  })
  console.log(
    `  primary ${victim} cut off for ${healedAt - cutAt} ms: ${primary} took over (the load committed ${viewChangeMs} ms after the last was sent); healed, ${victim} caught up and its ${alone.length} lone transfers committed everywhere in ${ms} ms`,
  )
  assert.ok(alone.length > 0, `${victim} took transfers before it noticed it was alone`)
  const after = await load(20, 'node1', 'node2', 'node3', 'node4')
  await waitCommitted(after, allUrls(), 60_000)
  await assertNoFork(allUrls())
  await assertSameOutcomes(allUrls(), accepted)
  for (const [hostname, node] of processes) assert.not.ok(node.hasExited(), `${hostname} is still running`)
})

// ---- Java contracts on the healed network

/** Submits on `url`, retrying "busy" (a view change) for a while; the hash. */
async function submit(url: string, method: string, tx: Record<string, unknown>): Promise<string> {
  const started = Date.now()
  for (;;) {
    const reply = await call(url, method, [tx])
    if (reply.code === 0) return reply.result as string
    assert.is(reply.code, -32006, `${method}: ${reply.message}`)
    assert.ok(Date.now() - started < 30_000, `${url} stayed busy`)
    await sleep(200)
  }
}

const JVM = { type: 'JVM' }

test('a JVM deployment and calls sent to every VP: the same receipts and identical blocks on every node', async () => {
  const [counter, kv] = await Promise.all([compileExample('counter', 'demo.Counter'), compileExample('kv', 'demo.KeyValue')])
  const deployHash = await submit(allUrls()[0], 'contract_deployContract', funder.deploy(jvmDeployPayload(counter), JVM))
  const kvHash = await submit(allUrls()[1], 'contract_deployContract', funder.deploy(jvmTarGzDeployPayload(kv), JVM))
  await waitCommitted([deployHash, kvHash], allUrls(), 120_000)
  const [deployed, kvDeployed] = (await receipts(allUrls()[2], [deployHash, kvHash])).map(
    (reply) => reply.result as { contractAddress: string; vmType: string },
  )
  assert.is(deployed.vmType, 'JVM')

  const calls = await Promise.all(
    allUrls().map((url, i) =>
      submit(url, 'contract_invokeContract', funder.invoke(deployed.contractAddress, jvmCallPayload('increment', 'n'), JVM)).then(
        (h) => [h, i] as const,
      ),
    ),
  )
  const set = await submit(
    allUrls()[3],
    'contract_invokeContract',
    funder.invoke(kvDeployed.contractAddress, jvmCallPayload('set', 'k', 'v'), JVM),
  )
  const hashes = [...calls.map(([hash]) => hash), set]
  await waitCommitted(hashes, allUrls(), 120_000)
  const outcomes = await receipts(allUrls()[0], hashes)
  const rets = outcomes.slice(0, 4).map((reply) => {
    assert.is(reply.code, 0, reply.message)
    return jvmRetText((reply.result as { ret: string }).ret)
  })
  assert.equal(rets.sort(), ['1', '2', '3', '4'], 'four increments, in the order consensus gave them')
  const setReceipt = outcomes[4].result as { log: { data: string }[] }
  assert.is(Buffer.from(setReceipt.log[0].data, 'hex').toString(), 'v', 'the event is in the receipt on every node')
  const common = await assertNoFork(allUrls())
  assert.ok(common >= 2, `blocks to compare: ${common}`)
})

test('Hyperchain-style contracts (a 2.x bank with HyperMap and events sent with type HVM, a 1.x key-value store with batches and range queries): identical receipts on every VP', async () => {
  const [bank, kv] = await Promise.all([
    compileExample('hyperchain-bank', 'bank.Bank', 'hyperchain'),
    compileExample('hyperchain-kv', 'kv.KeyValue', 'hyperchain'),
  ])
  const HVM = { type: 'HVM' }
  const bankHash = await submit(allUrls()[0], 'contract_deployContract', funder.deploy(jvmDeployPayload(bank), HVM))
  const kvHash = await submit(allUrls()[1], 'contract_deployContract', funder.deploy(jvmTarGzDeployPayload(kv), JVM))
  await waitCommitted([bankHash, kvHash], allUrls(), 120_000)
  const [bankAt, kvAt] = (await receipts(allUrls()[2], [bankHash, kvHash])).map((reply) => {
    assert.is(reply.code, 0, reply.message)
    return (reply.result as { contractAddress: string }).contractAddress
  })
  const opens = [
    await submit(allUrls()[2], 'contract_invokeContract', funder.invoke(bankAt, jvmCallPayload('open', 'alice', 100), HVM)),
    await submit(allUrls()[3], 'contract_invokeContract', funder.invoke(bankAt, jvmCallPayload('open', 'bob', 0), HVM)),
    await submit(
      allUrls()[0],
      'contract_invokeContract',
      funder.invoke(kvAt, jvmInvokeArgsPayload('putAll', 'b', '2', 'a', '1', 'c', '3'), JVM),
    ),
  ]
  await waitCommitted(opens, allUrls(), 120_000)
  const moves = await Promise.all(
    allUrls().map((url) =>
      submit(url, 'contract_invokeContract', funder.invoke(bankAt, jvmCallPayload('transfer', 'alice', 'bob', 1), HVM)),
    ),
  )
  const reads = [
    await submit(allUrls()[1], 'contract_invokeContract', funder.invoke(kvAt, jvmInvokeArgsPayload('range', 'a', 'c'), JVM)),
    await submit(allUrls()[2], 'contract_invokeContract', funder.invoke(kvAt, jvmInvokeArgsPayload('refuse', 'x'), JVM)),
  ]
  await waitCommitted([...moves, ...reads], allUrls(), 120_000)
  const balance = await submit(allUrls()[3], 'contract_invokeContract', funder.invoke(bankAt, jvmCallPayload('account', 'bob'), HVM))
  await waitCommitted([balance], allUrls(), 60_000)
  const hashes = [bankHash, kvHash, ...opens, ...moves, ...reads, balance]
  await assertSameOutcomes(allUrls(), hashes)
  const replies = await receipts(allUrls()[0], hashes)
  const text = (i: number): string => jvmRetText((replies[i].result as { ret: string }).ret)
  assert.is(replies[2].code, 0, replies[2].message)
  assert.is((replies[2].result as { log: unknown[] }).log.length, 1, 'the Opened event')
  assert.is(text(9), '1,2', 'the range query, the end excluded')
  assert.is(replies[10].code, -32005, 'result(false) fails the call on every node')
  assert.equal(JSON.parse(text(11)), { holder: 'bob', balance: 4, transfers: 4 }, 'four transfers, each from a different VP')
  await assertNoFork(allUrls())
})

test('a runaway loop: the same discard and reason on every VP, at the same step; the chain goes on', async () => {
  const spinner = await compileJava(
    {
      't/Spinner.java': `package t;
public class Spinner {
  public long spin() { long i = 0; while (true) { i += 3; } }
  public String ok() { return "ok"; }
}`,
    },
    't.Spinner',
  )
  const deployHash = await submit(allUrls()[0], 'contract_deployContract', funder.deploy(jvmDeployPayload(spinner), JVM))
  await waitCommitted([deployHash], allUrls(), 60_000)
  const at = ((await receipts(allUrls()[0], [deployHash]))[0].result as { contractAddress: string }).contractAddress
  const watches = await Promise.all(
    allUrls().map(async (url) => (await call(url, 'sub_newSystemStatusSubscription', [{ modules: ['executor'] }])).result as string),
  )
  const spin = await submit(allUrls()[2], 'contract_invokeContract', funder.invoke(at, jvmCallPayload('spin'), JVM))
  const after = await submit(allUrls()[1], 'contract_invokeContract', funder.invoke(at, jvmCallPayload('ok'), JVM))
  await waitCommitted([spin, after], allUrls(), 120_000)
  const replies = await receipts(allUrls()[3], [spin, after])
  assert.is(replies[0].code, -32005, 'the runaway call is discarded with INVOKE_CONTRACT_FAILED')
  assert.is(replies[1].code, 0, 'the next call runs')
  const reasons: string[] = []
  for (const [i, url] of allUrls().entries()) {
    let messages: { message: string }[] = []
    for (let attempt = 0; attempt < 100 && messages.length === 0; attempt++) {
      messages = (await call(url, 'sub_getSubscriptionChanges', [watches[i]])).result as { message: string }[]
      if (messages.length === 0) await sleep(50)
    }
    const reason = messages.find((m) => m.message.includes(spin))?.message
    assert.ok(reason !== undefined, `${url} reported the discard`)
    reasons.push(reason as string)
  }
  assert.match(reasons[0], /INVOKE_CONTRACT_FAILED \(execution budget exhausted \(time-out\): step budget of 10000000 exhausted\)/)
  assert.ok(
    reasons.every((reason) => reason === reasons[0]),
    `the same block and reason everywhere:\n${reasons.join('\n')}`,
  )
  await assertNoFork(allUrls())
})

test.run()
