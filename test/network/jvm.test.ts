/**
 * Java contracts in a network of 4 VP processes, each with its own Java executor child: a JVM
 * deployment, calls sent to different VPs and a contract's events give the same receipts and the
 * same blocks on every node; a runaway loop ends at the same step everywhere (the same discard
 * record, the same reason in every node's status events), and the chain goes on.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { jvmCallPayload, jvmDeployPayload, jvmRetText, jvmTarGzDeployPayload } from '../../sdk/src/jvm.ts'
import { assertNoFork, call, receipts } from '../helpers/audit.ts'
import { sleep, waitCommitted } from '../helpers/client-load.ts'
import { compileExample, compileJava } from '../helpers/jvm.ts'
import { processNetwork } from '../helpers/process-network.ts'
import type { Wallet } from '../helpers/wallet.ts'

const net = processNetwork('jvm', { logs: true })
const VPS = ['node1', 'node2', 'node3', 'node4']
let funder: Wallet
let urls: string[]

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

test.before(async () => {
  const created = await net.create({ vps: 4 })
  funder = created.funder
  await Promise.all(VPS.map((hostname) => net.start(hostname)))
  urls = VPS.map(net.urlOf)
})

test.after(async () => {
  await net.killAll()
})

test('a JVM deployment and calls sent to every VP: the same receipts and identical blocks on every node', async () => {
  const [counter, kv] = await Promise.all([compileExample('counter', 'demo.Counter'), compileExample('kv', 'demo.KeyValue')])
  const deployHash = await submit(urls[0], 'contract_deployContract', funder.deploy(jvmDeployPayload(counter), JVM))
  const kvHash = await submit(urls[1], 'contract_deployContract', funder.deploy(jvmTarGzDeployPayload(kv), JVM))
  await waitCommitted([deployHash, kvHash], urls, 120_000)
  const [deployed, kvDeployed] = (await receipts(urls[2], [deployHash, kvHash])).map(
    (reply) => reply.result as { contractAddress: string; vmType: string },
  )
  assert.is(deployed.vmType, 'JVM')

  const calls = await Promise.all(
    urls.map((url, i) =>
      submit(url, 'contract_invokeContract', funder.invoke(deployed.contractAddress, jvmCallPayload('increment', 'n'), JVM)).then(
        (h) => [h, i] as const,
      ),
    ),
  )
  const set = await submit(
    urls[3],
    'contract_invokeContract',
    funder.invoke(kvDeployed.contractAddress, jvmCallPayload('set', 'k', 'v'), JVM),
  )
  const hashes = [...calls.map(([hash]) => hash), set]
  await waitCommitted(hashes, urls, 120_000)
  const outcomes = await receipts(urls[0], hashes)
  const rets = outcomes.slice(0, 4).map((reply) => {
    assert.is(reply.code, 0, reply.message)
    return jvmRetText((reply.result as { ret: string }).ret)
  })
  assert.equal(rets.sort(), ['1', '2', '3', '4'], 'four increments, in the order consensus gave them')
  const setReceipt = outcomes[4].result as { log: { data: string }[] }
  assert.is(Buffer.from(setReceipt.log[0].data, 'hex').toString(), 'v', 'the event is in the receipt on every node')
  const common = await assertNoFork(urls)
  assert.ok(common >= 2, `blocks to compare: ${common}`)
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
  const deployHash = await submit(urls[0], 'contract_deployContract', funder.deploy(jvmDeployPayload(spinner), JVM))
  await waitCommitted([deployHash], urls, 60_000)
  const at = ((await receipts(urls[0], [deployHash]))[0].result as { contractAddress: string }).contractAddress
  const watches = await Promise.all(
    urls.map(async (url) => (await call(url, 'sub_newSystemStatusSubscription', [{ modules: ['executor'] }])).result as string),
  )
  const spin = await submit(urls[2], 'contract_invokeContract', funder.invoke(at, jvmCallPayload('spin'), JVM))
  const after = await submit(urls[1], 'contract_invokeContract', funder.invoke(at, jvmCallPayload('ok'), JVM))
  await waitCommitted([spin, after], urls, 120_000)
  const replies = await receipts(urls[3], [spin, after])
  assert.is(replies[0].code, -32005, 'the runaway call is discarded with INVOKE_CONTRACT_FAILED')
  assert.is(replies[1].code, 0, 'the next call runs')
  const reasons: string[] = []
  for (const [i, url] of urls.entries()) {
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
  await assertNoFork(urls)
})

test.run()
