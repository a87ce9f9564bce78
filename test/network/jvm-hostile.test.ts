/**
 * Issue 26 part 1 on a network: the hostile Java contract of test/helpers/hostile-jvm.ts on 4 VPs,
 * every node its own process with its own Java executor. Each case is invoked once, every node's
 * executor is then killed, and each case is invoked again (the nodes start new executors, which
 * load the code again): every VP must give each transaction the same receipt — the same success and
 * ret, or the same failure, reason and steps — the second round the same as the first, and no
 * node's wall-clock safety net may have stopped a call. The deploys the executor must refuse are
 * refused alike everywhere. Cross-contract calls (docs/jvm.md §10) likewise: a Java contract calling
 * another gives the same receipts on every VP, before and after every executor was killed (the new
 * executors load the callee's code during the call). One network for all of it: four JVMs and four
 * nodes are costly.
 *
 *   npx tsx test/network/jvm-hostile.test.ts
 */
import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type * as Sdk from '@hyperchain/jssdk'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { jvmCallPayload, jvmDeployPayload, jvmInvokeArgsPayload, jvmRetText, jvmTarGzDeployPayload, writeJar } from '../../sdk/src/jvm.ts'
import { contractAddress } from '../../src/crypto/tx-hash.ts'
import { type NetworkPlan, nodeUrl } from '../../src/devnet/network.ts'
import type { JvmCode } from '../../src/exec/jvm/child.ts'
import { assertNoFork, call, type Reply } from '../helpers/audit.ts'
import { compileHostile, compileRefused, HOSTILE_CASES, REFUSED_SOURCES } from '../helpers/hostile-jvm.ts'
import { loadSdk } from '../helpers/jssdk.ts'
import { compileJava, executorPidOf } from '../helpers/jvm.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

const net = processNetwork('netjvm')
let plan: NetworkPlan
let funder: Wallet
let hostile: JvmCode
let refused: Map<string, JvmCode>
let hostileAt: string
let cross: JvmCode
/** deploys the cross-call pair, so their addresses (compiled into the caller) are known beforehand */
const crossDeployer = wallet()
const CALLEE_AT = contractAddress(crossDeployer.address, 0)

/** A callee with a stored field and an event, and a caller that calls it, catches its failure, and (after it) fails itself. */
const CROSS_SOURCES: Record<string, string> = {
  'x/ITally.java': `package x;
import cn.hyperchain.contract.BaseContractInterface;
public interface ITally extends BaseContractInterface { long add(long n); long refuse(long n); }`,
  'x/Tally.java': `package x;
import cn.hyperchain.annotations.StoreField;
import cn.hyperchain.contract.BaseContract;
public class Tally extends BaseContract implements ITally {
  @StoreField
  public long total;
  public long add(long n) { total += n; event(getSender() + "/" + getOrigin(), "Added"); return total; }
  public long refuse(long n) { total += n; throw new IllegalStateException("refused " + n); }
}`,
  'x/IUser.java': `package x;
import cn.hyperchain.contract.BaseContractInterface;
public interface IUser extends BaseContractInterface { String use(long n); }`,
  'x/User.java': `package x;
import cn.hyperchain.annotations.Contract;
import cn.hyperchain.contract.BaseContract;
public class User extends BaseContract implements IUser {
  @Contract(address = "${CALLEE_AT}")
  private CrossCall tally = new CrossCall();
  public String use(long n) {
    ITally t = tally.getCrossContract();
    long after = t.add(n);
    try { t.refuse(n); } catch (RuntimeException e) { return after + ":" + e.getMessage(); }
    return "not refused";
  }
}`,
}
// Hyperchain 1.x's key-value example rides along in the same javac run (the same Hyperchain API)
CROSS_SOURCES['kv/KeyValue.java'] = readFileSync(new URL('../../examples/jvm/hyperchain-kv/kv/KeyValue.java', import.meta.url), 'utf8')
const JVM = { type: 'JVM' } as const

const urls = (): string[] => plan.nodes.map(nodeUrl)

/** Submits `tx` to `url` (again while consensus starts up) and waits until every node has its receipt. */
async function everywhere(url: string, method: string, tx: Record<string, unknown>): Promise<{ hash: string; replies: Reply[] }> {
  let hash: string | undefined
  for (let attempt = 0; hash === undefined; attempt++) {
    const reply = await call(url, method, [tx])
    if (reply.code === 0) hash = reply.result as string
    else if (reply.code !== -32006 || attempt > 200) throw new Error(`${method}: ${reply.code} ${reply.message}`)
    else await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { hash, replies: await receiptsEverywhere(hash) }
}

/** The receipt of `hash` from every node, once each has it. */
async function receiptsEverywhere(hash: string): Promise<Reply[]> {
  const replies: Reply[] = []
  for (const at of urls()) {
    const deadline = Date.now() + 120_000
    for (;;) {
      const reply = await call(at, 'tx_getTransactionReceipt', [hash])
      if (reply.code !== -32001) {
        replies.push(reply)
        break
      }
      if (Date.now() > deadline) throw new Error(`no receipt of ${hash} on ${at}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return replies
}

/** What a receipt reply says, for comparing nodes: code, message, reason, and the receipt without its hash and block fields. */
function outcome(reply: Reply): string {
  const r = reply.result as Record<string, unknown> | undefined
  const receipt = r === undefined ? undefined : { ret: r.ret, gasUsed: r.gasUsed, log: r.log, vmType: r.vmType }
  return JSON.stringify({ code: reply.code, message: reply.message, data: reply.data, receipt })
}

test.before(async () => {
  ;[hostile, refused, cross] = await Promise.all([compileHostile(), compileRefused(), compileJava(CROSS_SOURCES, 'x.User', 'hyperchain')])
  const created = await net.create({ vps: 4, nvps: 0 })
  plan = created.plan
  funder = created.funder
  // the safety net far off: a machine shared by other test runs must not be mistaken for a stall
  for (const node of plan.nodes) appendFileSync(join(net.dir, node.hostname, 'keel.toml'), '\n[jvm]\ncallTimeoutMs = 30000\n')
  await Promise.all(plan.nodes.map((node) => net.start(node.hostname)))
  const deployed = await everywhere(urls()[0], 'contract_deployContract', funder.deploy(jvmDeployPayload(hostile), JVM))
  assert.is(deployed.replies[0].code, 0, deployed.replies[0].message)
  hostileAt = (deployed.replies[0].result as { contractAddress: string }).contractAddress
})

test.after(async () => {
  await net.killAll()
})

test('every escape ends the same way on all 4 VPs, and again the same after every executor was killed', async () => {
  const rounds: string[][] = []
  for (let round = 0; round < 2; round++) {
    const outcomes: string[] = []
    for (const [i, c] of HOSTILE_CASES.entries()) {
      const target = urls()[(i + round) % urls().length]
      const { hash, replies } = await everywhere(
        target,
        'contract_invokeContract',
        funder.invoke(hostileAt, jvmCallPayload(c.method, ...c.args), JVM),
      )
      const texts = replies.map(outcome)
      for (const [k, text] of texts.entries())
        assert.is(text, texts[0], `${c.name} (${hash}): ${plan.nodes[k].hostname} agrees with ${plan.nodes[0].hostname}`)
      const reply = replies[0]
      if ('ret' in c.expect) {
        assert.is(reply.code, 0, `${c.name}: ${reply.message} ${reply.data}`)
        assert.is(jvmRetText((reply.result as { ret: string }).ret), c.expect.ret, c.name)
      } else {
        assert.is(reply.code, -32005, `${c.name}: ${reply.message}`)
        assert.match(String(reply.data), c.expect.error, c.name)
      }
      outcomes.push(texts[0])
    }
    rounds.push(outcomes)
    if (round === 0) {
      for (const process of net.processes.values()) {
        const pid = executorPidOf(process.pid)
        assert.ok(pid !== undefined, 'each node runs an executor')
        globalThis.process.kill(pid as number, 'SIGKILL')
      }
    }
  }
  assert.equal(rounds[1], rounds[0], 'the second round (new executors) gives the receipts of the first')
})

test('the deploys that would keep state outside the ledger or work unmetered are refused alike everywhere', async () => {
  for (const [main, { reason }] of Object.entries(REFUSED_SOURCES)) {
    const { replies } = await everywhere(
      urls()[1],
      'contract_deployContract',
      funder.deploy(jvmDeployPayload(refused.get(main) as JvmCode), JVM),
    )
    const texts = replies.map(outcome)
    for (const text of texts) assert.is(text, texts[0], main)
    assert.is(replies[0].code, -32004, main)
    assert.match(String(replies[0].data), reason, main)
  }
})

test('cross-contract calls give the same receipts on every VP, and again after every executor was killed', async () => {
  const only = (main: string): JvmCode => ({ main, classes: new Map([...cross.classes].filter(([name]) => name.startsWith('x/'))) })
  await everywhere(urls()[0], 'tx_sendTransaction', funder.transfer(crossDeployer.address, 1))
  const callee = await everywhere(urls()[1], 'contract_deployContract', crossDeployer.deploy(jvmDeployPayload(only('x.Tally')), JVM))
  assert.is((callee.replies[0].result as { contractAddress: string }).contractAddress, CALLEE_AT)
  const caller = await everywhere(urls()[2], 'contract_deployContract', crossDeployer.deploy(jvmDeployPayload(only('x.User')), JVM))
  const userAt = (caller.replies[0].result as { contractAddress: string }).contractAddress
  const rounds: string[][] = []
  for (let round = 0; round < 2; round++) {
    const { replies } = await everywhere(urls()[round + 2], 'contract_invokeContract', funder.invoke(userAt, jvmCallPayload('use', 3), JVM))
    const texts = replies.map(outcome)
    for (const text of texts) assert.is(text, texts[0])
    assert.is(replies[0].code, 0, `${replies[0].message} ${replies[0].data}`)
    assert.is(
      jvmRetText((replies[0].result as { ret: string }).ret),
      `${3 * (round + 1)}:the cross-contract call refuse of ${CALLEE_AT} failed: IllegalStateException: refused 3`,
    )
    // the receipt's own parts: not its ret (the total grows), nor its logs' block and transaction fields
    const { gasUsed, log } = replies[0].result as { gasUsed: number; log: { address: string; topics: string[]; data: string }[] }
    assert.equal(
      log.map((l) => l.address),
      [CALLEE_AT],
      "the callee's event is its own log; the refused call's is gone",
    )
    rounds.push([String(gasUsed), ...log.map((l) => `${l.address} ${l.topics.join(',')} ${l.data}`)])
    if (round === 0) for (const process of net.processes.values()) globalThis.process.kill(executorPidOf(process.pid) as number, 'SIGKILL')
  }
  assert.equal(rounds[1], rounds[0], 'the same steps and logs with new executors, which loaded the callee during the call')
})

test("a 1.x contract through the official SDK gives the same receipts on every VP: HVMBuilder's deploy, calls and upgrade, and JVM-typed transactions with 1.x payloads", async () => {
  const sdk = loadSdk()
  const { Algo, HttpProvider, InvokeParams, ProviderManager, ServiceManager, Transaction } = sdk
  const account = ServiceManager.getAccountService(ProviderManager.emptyManager()).genAccount(Algo.ECRAW)
  await everywhere(urls()[0], 'tx_sendTransaction', funder.transfer(`0x${account.getAddress().toLowerCase()}`, 1))
  const kv = { main: 'kv.KeyValue', classes: new Map([...cross.classes].filter(([name]) => name.startsWith('kv/'))) }
  const from = account.getAddress()
  /** signed and sent by the SDK to node `i`; the receipts of every node, which must agree */
  const send = async (i: number, kind: 'deploy' | 'invoke' | 'maintain', build: (pm: Sdk.ProviderManager) => Promise<Sdk.Transaction>) => {
    const pm = await ProviderManager.createManager({ httpProviders: [new HttpProvider(1, urls()[i % 4].replace(/^http:\/\//, ''))] })
    const tx = await build(pm)
    tx.sign(account)
    const response = await ServiceManager.getContractService(pm)[kind](tx).send()
    assert.is(response.code, 0, response.message)
    const replies = await receiptsEverywhere(response.result as string)
    const texts = replies.map(outcome)
    for (const [k, text] of texts.entries()) assert.is(text, texts[0], `${kind}: ${plan.nodes[k].hostname} agrees`)
    assert.is(replies[0].code, 0, `${kind}: ${replies[0].message} ${replies[0].data}`)
    return replies[0].result as { contractAddress: string; ret: string; vmType: string }
  }
  const jar = new Uint8Array(writeJar(kv)).buffer
  const hvmAt = (await send(0, 'deploy', async (pm) => (await new Transaction.HVMBuilder(from, pm).deploy(jar)).build())).contractAddress
  const hvmCall =
    (fn: string, ...args: string[]) =>
    async (pm: Sdk.ProviderManager) => {
      const params = new InvokeParams.HvmTypeBuilder(fn)
      for (const a of args) params.addString(a)
      return new Transaction.HVMBuilder(from, pm).invoke(hvmAt, params.build()).build()
    }
  await send(1, 'invoke', hvmCall('put', 'colour', 'blue'))
  assert.is(jvmRetText((await send(2, 'invoke', hvmCall('add', 'n', '40'))).ret), '40')
  await send(3, 'maintain', async (pm) => (await new Transaction.HVMBuilder(from, pm).upgrade(hvmAt, jar)).build())
  assert.is(jvmRetText((await send(0, 'invoke', hvmCall('get', 'colour'))).ret), 'blue', 'the upgrade kept the ledger')

  const JVM_TYPE = 'JVM' as Sdk.VmType
  const deployed = await send(1, 'deploy', async (pm) => {
    const tx = new Transaction.Builder(from, pm).vmType(JVM_TYPE).build()
    tx.setTo('0x0')
    tx.setPayload(jvmTarGzDeployPayload(kv, { name: 'kv' }))
    return tx
  })
  assert.is(deployed.vmType, 'JVM')
  const jvmCall =
    (fn: string, ...args: string[]) =>
    async (pm: Sdk.ProviderManager) => {
      const tx = new Transaction.Builder(from, pm).vmType(JVM_TYPE).invokeContractAddr(deployed.contractAddress, false).build()
      tx.setPayload(jvmInvokeArgsPayload(fn, ...args))
      return tx
    }
  assert.is(jvmRetText((await send(2, 'invoke', jvmCall('add', 'n', '2'))).ret), '2')
  await send(3, 'maintain', async (pm) =>
    (await new Transaction.Builder(from, pm).vmType(JVM_TYPE).upgrade(deployed.contractAddress, jvmTarGzDeployPayload(kv))).build(),
  )
  assert.is(jvmRetText((await send(0, 'invoke', jvmCall('half', 'n'))).ret), '1.0', 'the upgrade kept the ledger')
})

test('one chain on every VP, and no node stopped a call by the wall clock', async () => {
  await assertNoFork(urls())
  for (const url of urls()) {
    const metrics = await (await fetch(`${url}/metrics`)).text()
    assert.match(metrics, /^keel_jvm_wall_clock_stops_total\{[^}]*\} 0$/m, url)
  }
})

test.run()
