/**
 * Contracts written against Hyperchain's own Java APIs, compiled against Keel's hyperchain-api.jar
 * alone (as against Hyperchain's SDK jar) and run on one real node: a 2.x (HVM) bank with
 * @StoreField fields, a HyperMap of beans and events, deployed, invoked and upgraded through the
 * official SDK's own Java contract path (Transaction.HVMBuilder with a jar, InvokeParams
 * .HvmTypeBuilder); a 1.x key-value contract (ContractTemplate, ILedger with typed values, batches,
 * range queries, events, result(false, …)) in the 1.x payloads; and the refusals naming a
 * Hyperchain API class Keel does not provide, a class that is not there, and SDK classes bundled
 * in a contract. docs/jvm.md "Hyperchain's Java APIs" describes what is tested here.
 */

import { execFileSync } from 'node:child_process'
import type * as Sdk from '@hyperchain/jssdk'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { hvmAbi } from '../../sdk/src/hvm-abi.ts'
import {
  type JavaContract,
  type JvmArg,
  jvmCallPayload,
  jvmDeployPayload,
  jvmInvokeArgsPayload,
  jvmInvokeBeanPayload,
  jvmJarDeployPayload,
  jvmRetText,
  jvmTarGzDeployPayload,
  jvmTopic,
  readJar,
  writeJar,
} from '../../sdk/src/jvm.ts'
import { contractAddress } from '../../src/crypto/tx-hash.ts'
import type { KeelNode } from '../../src/node.ts'
import { commit, ok, type Reply, SUBMIT, send, sleep, type WireReceipt } from '../helpers/chain.ts'
import { loadSdk } from '../helpers/jssdk.ts'
import { compileJava, executorPidOf } from '../helpers/jvm.ts'
import { startTestNode } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

const sdk = loadSdk()
const { Algo, HttpProvider, InvokeParams, ProviderManager, ServiceManager, Transaction } = sdk

let node: KeelNode
let url: string
const owner = wallet()
const sdkAccount = ServiceManager.getAccountService(ProviderManager.emptyManager()).genAccount(Algo.ECRAW)
const sdkAddress = `0x${sdkAccount.getAddress().toLowerCase()}`
let pm: Sdk.ProviderManager
let contracts: ReturnType<typeof ServiceManager.getContractService>
let bank: JavaContract
let bankV2: JavaContract
let bankVersions: JavaContract
let kv: JavaContract
let missing: JavaContract
let beans: JavaContract
let statusWatch: string
let bankAt = ''

const JVM = { type: 'JVM' } as const

/** Bank v2: the same classes plus a transfer counter and a version function on a second interface. */
async function compileBankV2(): Promise<JavaContract> {
  const sources: Record<string, string> = {
    'bank/IAudit.java': `package bank;
import cn.hyperchain.contract.BaseContractInterface;
public interface IAudit extends BaseContractInterface {
  long transfers();
  String version();
}`,
  }
  const { readFileSync, readdirSync } = await import('node:fs')
  const dir = new URL('../../examples/jvm/hyperchain-bank/bank/', import.meta.url)
  for (const file of readdirSync(dir)) sources[`bank/${file}`] = readFileSync(new URL(file, dir), 'utf8')
  sources['bank/Bank.java'] = sources['bank/Bank.java']
    .replace(
      'public class Bank extends BaseContract implements IBank {',
      'public class Bank extends BaseContract implements IBank, IAudit {\n  @StoreField\n  public long transfers;\n\n  public long transfers() { return transfers; }\n\n  public String version() { return "2"; }\n',
    )
    .replace('    source.add(-amount);', '    transfers++;\n    source.add(-amount);')
  assert.ok(sources['bank/Bank.java'].includes('transfers++'), 'the v2 edit applied')
  // two versions breaking Hyperchain's upgrade rules, in packages of their own (the rule compares field names and types)
  for (const [pkg, from, to] of [
    ['removed', '  @StoreField\n  public String name = "unnamed";\n', ''],
    ['retyped', '  @StoreField\n  public String owner;\n', '  @StoreField\n  public Object owner;\n'],
  ]) {
    const text = readFileSync(new URL('Bank.java', dir), 'utf8').replace(
      'package bank;',
      `package ${pkg};\nimport bank.Account;\nimport bank.IBank;`,
    )
    assert.ok(text.includes(from), `the ${pkg} edit applies`)
    sources[`${pkg}/Bank.java`] = text
      .replace(from, to)
      .replace('return name;', 'return "";')
      .replace('    name = "Bank of', '    String ignored = "Bank of')
  }
  return compileJava(sources, 'bank.Bank', 'hyperchain')
}

/** One version of the bank from a compilation: its Bank (in package `pkg`) with the bank's other classes. */
const versionOf = (compiled: JavaContract, pkg: string): JavaContract => ({
  main: `${pkg}.Bank`,
  classes: new Map(
    [...compiled.classes].filter(([name]) => name.startsWith(`${pkg}/`) || (name.startsWith('bank/') && !name.startsWith('bank/Bank'))),
  ),
})

/** The beans, compiled with the bank's sources and Keel's API (the Missing bean names a stub of it). */
async function compileBeans(): Promise<JavaContract> {
  const { readFileSync, readdirSync } = await import('node:fs')
  const dir = new URL('../../examples/jvm/hyperchain-bank/bank/', import.meta.url)
  const sources: Record<string, string> = {
    ...BEAN_SOURCES,
    ...CROSS_SOURCES,
    ...TABLE_SOURCES,
    'cn/hyperchain/core/CryptoUtil.java': MISSING_SOURCES['cn/hyperchain/core/CryptoUtil.java'],
  }
  for (const file of readdirSync(dir)) sources[`bank/${file}`] = readFileSync(new URL(file, dir), 'utf8')
  return compileJava(sources, 'bank.Bank', 'hyperchain')
}

/** The classes of one package of a compilation, with `main`. */
const pick = (compiled: JavaContract, pkg: string, main: string): JavaContract => ({
  main,
  classes: new Map([...compiled.classes].filter(([name]) => name.startsWith(`${pkg}/`))),
})

/** The 1.x key-value example, compiled with the classes the refusal test deploys. */
async function compileKvAndMissing(): Promise<JavaContract> {
  const { readFileSync } = await import('node:fs')
  const kvSource = readFileSync(new URL('../../examples/jvm/hyperchain-kv/kv/KeyValue.java', import.meta.url), 'utf8')
  return compileJava({ ...MISSING_SOURCES, 'kv/KeyValue.java': kvSource }, 'kv.KeyValue', 'hyperchain')
}

/** Classes naming what Keel lacks: a Hyperchain API class it does not provide, and a library class not in the contract. */
const MISSING_SOURCES: Record<string, string> = {
  // a stand-in for one of HVM's utility classes, which Keel does not provide
  'cn/hyperchain/core/CryptoUtil.java': 'package cn.hyperchain.core;\npublic class CryptoUtil {}\n',
  'com/google/gson/Gson.java': 'package com.google.gson;\npublic class Gson { public String toJson(Object o) { return ""; } }\n',
  'm/UsesCrypto.java': `package m;
import cn.hyperchain.contract.BaseContract;
import cn.hyperchain.core.CryptoUtil;
public class UsesCrypto extends BaseContract {
  public String util() { return new CryptoUtil().toString(); }
}`,
  // Hyperchain's BaseContract has setSender; Keel's does not: compiled against a stand-in that has it
  'cn/hyperchain/contract/BaseContract.java': `package cn.hyperchain.contract;
public abstract class BaseContract implements BaseContractInterface {
  public void setSender(String sender) {}
}`,
  'm/UsesSetter.java': `package m;
import cn.hyperchain.contract.BaseContract;
public class UsesSetter extends BaseContract {
  public void spoof() { setSender("0x00"); }
}`,
  'm/UsesGson.java': `package m;
import cn.hyperchain.contract.BaseContract;
public class UsesGson extends BaseContract {
  public String json() { return new com.google.gson.Gson().toJson(this); }
}`,
}

/**
 * Cross-contract calls (docs/jvm.md §10). The callees' addresses are fixed at compile time (in
 * @Contract/@Library, as Hyperchain's contracts write them), so they are predicted: accounts of
 * their own deploy them in a known order (a contract's address follows from its deployer and
 * deploy count).
 */
const crossAccount = ServiceManager.getAccountService(ProviderManager.emptyManager()).genAccount(Algo.ECRAW)
const crossSdkAddress = `0x${crossAccount.getAddress().toLowerCase()}`
const crossOwner = wallet()
const COUNTER_AT = contractAddress(crossSdkAddress, 0)
const CALLER_AT = contractAddress(crossSdkAddress, 1)
const EVM_AT = contractAddress(crossOwner.address, 0)
const STORE_AT = contractAddress(crossOwner.address, 1)
const NOBODY = '0x00000000000000000000000000000000000000aa'
const CROSS_SOURCES: Record<string, string> = {
  'cross/ICounter.java': `package cross;
import cn.hyperchain.contract.BaseContractInterface;
public interface ICounter extends BaseContractInterface {
  long add(long n);
  long total();
  String who();
  long failAfter(long n);
  long spin();
  Tally tally();
  long callBack();
}`,
  'cross/Tally.java': `package cross;
public class Tally {
  public long total;
  public String last;
  public Tally() {}
}`,
  'cross/ICaller.java': `package cross;
import cn.hyperchain.contract.BaseContractInterface;
public interface ICaller extends BaseContractInterface {
  long viaCounter(long n);
  String who();
  String catchFailure(long n);
  long failAfterCall(long n);
  long spinThere();
  long spinCalls();
  long spinLookups();
  long callBack();
  String tallyThere();
  long libraryAdd(long n);
  String unreachable();
  long self();
}`,
  'cross/Counter.java': `package cross;
import cn.hyperchain.annotations.Contract;
import cn.hyperchain.annotations.StoreField;
import cn.hyperchain.contract.BaseContract;
public class Counter extends BaseContract implements ICounter {
  @StoreField
  public long total;
  @StoreField
  public String last = "";
  @Contract(address = "${CALLER_AT}")
  private CrossCall back = new CrossCall();
  public long add(long n) { total += n; last = getSender(); event("+" + n, "Added"); return total; }
  public long total() { return total; }
  public String who() { return getSender() + "," + getOrigin() + "," + getContractAddress(); }
  public long failAfter(long n) { total += n; event("lost", "Added"); throw new IllegalStateException("the counter refuses " + n); }
  public long spin() { long i = 0; while (total >= 0) i++; return i; }
  public Tally tally() { Tally t = new Tally(); t.total = total; t.last = last; return t; }
  public long callBack() { ICaller caller = back.getCrossContract(); return caller.viaCounter(1); }
}`,
  'cross/Caller.java': `package cross;
import cn.hyperchain.annotations.Contract;
import cn.hyperchain.annotations.Library;
import cn.hyperchain.contract.BaseContract;
public class Caller extends BaseContract implements ICaller {
  @Contract(address = "${COUNTER_AT}")
  private CrossCall counter = new CrossCall();
  @Library(address = "${COUNTER_AT}")
  private CrossCall library = new CrossCall();
  @Contract(address = "${NOBODY}")
  private CrossCall nobody = new CrossCall();
  @Contract(address = "${EVM_AT}")
  private CrossCall evm = new CrossCall();
  @Contract(address = "${CALLER_AT}")
  private CrossCall itself = new CrossCall();
  private ICounter counter() { return counter.getCrossContract(); }
  public long viaCounter(long n) { return counter().add(n); }
  public String who() { return counter().who() + "|" + getSender(); }
  public String catchFailure(long n) {
    ICounter c = counter();
    c.add(1);
    try { c.failAfter(n); return "not thrown"; } catch (RuntimeException e) { return e.getMessage() + "|" + c.total(); }
  }
  public long failAfterCall(long n) { counter().add(n); throw new IllegalStateException("the caller refuses after the call"); }
  public long spinThere() { return counter().spin(); }
  public long spinCalls() { ICounter c = counter(); long n = 0; while (true) n += c.total(); }
  public long spinLookups() { long n = 0; while (true) { counter.getCrossContract(); n++; } }
  public long callBack() { return counter().callBack(); }
  public String tallyThere() { Tally t = counter().tally(); return t.last + ":" + t.total; }
  public long libraryAdd(long n) { ICounter lib = library.getCrossContract(); return lib.add(n); }
  public String unreachable() {
    StringBuilder out = new StringBuilder();
    for (CrossCall call : new CrossCall[] {nobody, evm}) {
      try { ICounter c = call.getCrossContract(); out.append("reached ").append(c); } catch (RuntimeException e) { out.append(e.getMessage()).append('|'); }
    }
    return out.toString();
  }
  public long self() { ICaller me = itself.getCrossContract(); return me.viaCounter(1); }
}`,
  'xkv/Store.java': `package xkv;
import cn.hyperchain.jcee.client.contract.ContractTemplate;
import cn.hyperchain.jcee.common.ExecuteResult;
import java.util.List;
public class Store extends ContractTemplate {
  protected ExecuteResult openInvoke(String func, List<String> args) {
    switch (func) {
      case "put": ledger.put(args.get(0), args.get(1)); return result(true, "stored " + args.get(0));
      case "refuse": ledger.put(args.get(0), "refused"); return result(false, "the store refuses " + args.get(0));
      case "throw": ledger.put(args.get(0), "thrown"); throw new IllegalStateException("the store throws");
      case "who": return result(true, getInvoker());
      default: return result(false, "no function " + func);
    }
  }
  ExecuteResult get(List<String> args) { return result(true, ledger.get(args.get(0)).isEmpty() ? "-" : ledger.get(args.get(0)).toString()); }
}`,
  'xkv/Client.java': `package xkv;
import cn.hyperchain.jcee.client.contract.ContractTemplate;
import cn.hyperchain.jcee.common.ExecuteResult;
import java.util.ArrayList;
import java.util.List;
public class Client extends ContractTemplate {
  private String call(String ns, String at, String func, String... args) {
    List<String> list = new ArrayList<>();
    for (String a : args) list.add(a);
    ExecuteResult r = invokeContract(ns, at, func, list);
    return r.isSuccess() + ":" + r.getResult();
  }
  ExecuteResult calls(List<String> args) {
    String store = "${STORE_AT}";
    return result(true, String.join("|",
        call("global", store, "put", "a", "1"),
        call("global", store, "refuse", "b"),
        call("global", store, "throw", "c"),
        call("global", store, "who"),
        call("global", "${NOBODY}", "put", "x", "y"),
        call("global", "${CALLER_AT}", "put", "x", "y"),
        call("ns2", store, "put", "x", "y")));
  }
}`,
}

/** A HyperTable the way HVM's manual uses one (rows, column families, columns; iteration; Row and ColumnFamily). */
const TABLE_SOURCES: Record<string, string> = {
  'extra/IExtra.java': `package extra;
import cn.hyperchain.contract.BaseContractInterface;
public interface IExtra extends BaseContractInterface {
  String all(String paths);
  long age();
  String other(String txHash);
}`,
  'extra/Extra.java': `package extra;
import cn.hyperchain.contract.BaseContract;
public class Extra extends BaseContract implements IExtra {
  public String all(String paths) {
    StringBuilder out = new StringBuilder();
    for (String path : paths.split("\\n")) out.append(out.length() == 0 ? "" : "\\n").append(getValueFromExtra(path));
    return out.toString();
  }
  public long age() { return getValueFromExtraInTx(Long.class, "current", "age") + getValueFromExtraInTx(Long.class, getTxHash(), "age"); }
  public String other(String txHash) { return getValueFromExtra(txHash, "age"); }
}`,
  'table/IStudents.java': `package table;
import cn.hyperchain.contract.BaseContractInterface;
public interface IStudents extends BaseContractInterface {
  void put(String row, String fam, String col, String value);
  String get(String row, String fam, String col);
  void remove(String row, String fam, String col);
  void removeRow(String row);
  String rows();
  String seek(String row);
  String fams(String row);
  String cols(String row, String fam);
  String viaRow(String row);
  void failAfterPut(String row);
  void changeWhileIterating();
  void badName();
}`,
  'table/Students.java': `package table;
import cn.hyperchain.annotations.StoreField;
import cn.hyperchain.contract.BaseContract;
import cn.hyperchain.core.HyperTable;
public class Students extends BaseContract implements IStudents {
  @StoreField
  public HyperTable students = new HyperTable();
  private static String join(Iterable<String> names) {
    StringBuilder out = new StringBuilder();
    for (String n : names) out.append(out.length() == 0 ? "" : ",").append(n);
    return out.toString();
  }
  public void put(String row, String fam, String col, String value) { students.put(row, fam, col, value); }
  public String get(String row, String fam, String col) { return students.get(row, fam, col); }
  public void remove(String row, String fam, String col) { students.remove(row, fam, col); }
  public void removeRow(String row) { students.removeRow(row); }
  public String rows() { return join(students.rows()); }
  public String seek(String row) { return join(students.seekRows(row)); }
  public String fams(String row) { return join(students.colFams(row)); }
  public String cols(String row, String fam) { return join(students.cols(row, fam)); }
  public String viaRow(String name) {
    HyperTable.Row row = students.getRow(name);
    row.put("f", "c1", "v1");
    HyperTable.ColumnFamily fam = row.getColFam("g");
    fam.put("c2", "v2");
    return row.get("f", "c1") + "," + fam.get("c2") + "," + row.containsColFam("g") + "," + fam.containsKey("c2") + ","
        + students.containsRow(name) + "," + students.getName() + "," + fam.getRow().getName();
  }
  public void failAfterPut(String row) { students.put(row, "f", "c", "v"); throw new IllegalStateException("refused after the put"); }
  public void changeWhileIterating() { for (String row : students.rows()) students.put(row + "x", "f", "c", "v"); }
  public void badName() { students.put("a@b", "f", "c", "v"); }
}`,
}

/** What the SDK's HVMBuilder takes a jar as. */
const arrayBufferOf = (bytes: Uint8Array): ArrayBuffer => new Uint8Array(bytes).buffer

/** InvokeBeans against the bank: one that moves money twice in one transaction, and one per refused API. */
const BEAN_SOURCES: Record<string, string> = {
  'beans/MoveTwice.java': `package beans;
import bank.IBank;
import cn.hyperchain.contract.BaseInvoke;
public class MoveTwice implements BaseInvoke<String, IBank> {
  private String from;
  private String via;
  private String to;
  private long first;
  private long second;
  public MoveTwice() {}
  public String invoke(IBank bank) {
    bank.transfer(from, via, first);
    bank.transfer(via, to, second);
    return bank.balance(from) + "," + bank.balance(via) + "," + bank.balance(to);
  }
}`,
  'beans/Spins.java': `package beans;
import bank.IBank;
import cn.hyperchain.contract.BaseInvoke;
public class Spins implements BaseInvoke<Long, IBank> {
  public Long invoke(IBank bank) { long i = 0; while (bank != null) i++; return i; }
}`,
}
const REFUSED_BEANS: { name: string; body: string; reason: RegExp }[] = [
  { name: 'Threads', body: 'new Thread(() -> {}).start(); return null;', reason: /class java\.lang\.Thread is not allowed \(threads/ },
  {
    name: 'Time',
    body: 'return "" + System.currentTimeMillis();',
    reason: /java\.lang\.System\.currentTimeMillis is not allowed \(time\)/,
  },
  { name: 'Reflection', body: 'return bank.getClass().getName();', reason: /getClass is not allowed \(reflection\)/ },
  { name: 'Files', body: 'return "" + new java.io.File("/").exists();', reason: /class java\.io\.File is not allowed \(I\/O\)/ },
  { name: 'Random', body: 'return "" + Math.random();', reason: /java\.lang\.Math\.random is not allowed \(randomness\)/ },
  {
    name: 'MainClass',
    body: '((bank.Bank) bank).drain("alice"); return "drained";',
    reason: /names bank\.Bank: a bean reaches the contract only through its interfaces/,
  },
  {
    name: 'Forger',
    body: '((cn.hyperchain.contract.BaseContract) bank).event("x", "Forged"); return "forged";',
    reason: /names cn\.hyperchain\.contract\.BaseContract/,
  },
  {
    name: 'Missing',
    body: 'return new cn.hyperchain.core.CryptoUtil().toString();',
    reason: /cn\.hyperchain\.core\.CryptoUtil is not allowed \(a Hyperchain API class Keel does not provide/,
  },
]
for (const { name, body } of REFUSED_BEANS)
  BEAN_SOURCES[`beans/${name}.java`] = `package beans;
import bank.IBank;
import cn.hyperchain.contract.BaseInvoke;
public class ${name} implements BaseInvoke<String, IBank> {
  public String invoke(IBank bank) { ${body} }
}`
BEAN_SOURCES['beans/StaticState.java'] = `package beans;
import bank.IBank;
import cn.hyperchain.contract.BaseInvoke;
public class StaticState implements BaseInvoke<Integer, IBank> {
  static int calls;
  public Integer invoke(IBank bank) { return ++calls; }
}`
REFUSED_BEANS.push({ name: 'StaticState', body: '', reason: /field calls: static fields must be final/ })

/** The reason of the last discarded transaction, from the executor's system-status events. */
async function lastReason(): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const events = await ok<{ message: string }[]>(url, 'sub_getSubscriptionChanges', [statusWatch])
    if (events.length > 0) return events[events.length - 1].message
    await sleep(20)
  }
  return '(no status event)'
}

async function failure(reply: Reply<WireReceipt>): Promise<{ code: number; reason: string }> {
  assert.is.not(reply.code, 0, 'the transaction fails')
  return { code: reply.code, reason: await lastReason() }
}

async function callText(to: string, payload: string): Promise<string> {
  const { reply } = await send(url, SUBMIT.invoke, owner.invoke(to, payload, JVM))
  if (reply.code !== 0) throw new Error(`the call failed: ${reply.code} ${reply.message} ${await lastReason()}`)
  return jvmRetText((reply.result as WireReceipt).ret)
}

const hvm = (to: string, method: string, ...args: JvmArg[]): Promise<string> => callText(to, jvmCallPayload(method, ...args))

/** Through the official SDK: HVMBuilder.invoke with HvmTypeBuilder parameters, signed, sent, polled. */
async function sdkInvoke(to: string, params: Sdk.InvokeParams, account = sdkAccount): Promise<Sdk.Receipt> {
  const tx = new Transaction.HVMBuilder(account.getAddress(), pm).invoke(to, params).build()
  tx.sign(account)
  const response = await contracts.invoke(tx).send()
  assert.is(response.code, 0, `submission: ${response.message}`)
  const polled = await response.poll().catch(async (error: Error) => {
    throw new Error(`${error.message}: ${await lastReason()}`)
  })
  assert.is(polled.code, 0, `receipt: ${polled.message}`)
  return polled.result
}

test.before(async () => {
  // three javac runs: the bank with the beans, the bank's later versions, the 1.x store with the refused classes
  ;[beans, bankVersions, missing] = await Promise.all([compileBeans(), compileBankV2(), compileKvAndMissing()])
  bank = pick(beans, 'bank', 'bank.Bank')
  kv = pick(missing, 'kv', 'kv.KeyValue')
  bankV2 = versionOf(bankVersions, 'bank')
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5 },
      jvm: { callTimeoutMs: 20_000 },
      genesis: {
        accounts: [
          { address: owner.address, balance: '1000000' },
          { address: sdkAddress, balance: '1000000' },
          { address: crossSdkAddress, balance: '1000000' },
          { address: crossOwner.address, balance: '1000000' },
        ],
      },
    },
    { verifyWorkers: 1 },
  )
  url = node.url
  statusWatch = await ok<string>(url, 'sub_newSystemStatusSubscription', [{ modules: ['executor'] }])
  pm = await ProviderManager.createManager({ httpProviders: [new HttpProvider(1, url.replace(/^http:\/\//, ''))] })
  contracts = ServiceManager.getContractService(pm)
})

test.after(async () => {
  await node?.stop()
})

test('2.x bank through the official SDK: HVMBuilder deploys the jar (type HVM), onInit sets @StoreField fields, HvmTypeBuilder calls', async () => {
  const jar = writeJar(bank)
  assert.equal(readJar(jar).main, 'bank.Bank')
  const builder = await new Transaction.HVMBuilder(sdkAccount.getAddress(), pm).deploy(arrayBufferOf(jar))
  const tx = builder.build()
  tx.sign(sdkAccount)
  const response = await contracts.deploy(tx).send()
  assert.is(response.code, 0, response.message)
  const polled = await response.poll()
  assert.is(polled.code, 0, polled.message)
  const receipt = polled.result as Sdk.Receipt & { vmType: string; contractAddress: string }
  assert.is(receipt.vmType, 'JVM')
  bankAt = `0x${receipt.contractAddress.replace(/^0x/, '').toLowerCase()}`
  assert.is(
    await ok(url, 'contract_getCode', [bankAt]),
    jvmJarDeployPayload(jar),
    "the node keeps what the SDK sent: the jar's classes and its Main-Class",
  )
  assert.is(await ok(url, 'contract_getCreator', [bankAt]), sdkAddress)

  const name = await sdkInvoke(bankAt, new InvokeParams.HvmTypeBuilder('name').build())
  assert.is(jvmRetText(name.ret), `Bank of ${sdkAddress.slice(0, 8)}`, 'onInit ran once and its @StoreField survived')
  const opened = await sdkInvoke(bankAt, new InvokeParams.HvmTypeBuilder('open').addString('alice').addLongPrimitive(100).build())
  assert.is(jvmRetText(opened.ret), 'true')
  const log = (opened as unknown as { log: { topics: string[]; data: string }[] }).log
  assert.equal(log[0].topics, [jvmTopic('Opened'), jvmTopic('alice')])
  assert.equal(
    JSON.parse(Buffer.from(log[0].data, 'hex').toString()),
    { holder: 'alice', balance: 100, transfers: 0 },
    'event data is the bean as JSON',
  )
})

test('2.x bank: HyperMap of beans, a bean changed in place is stored, a failed call changes nothing, only interface methods are callable', async () => {
  assert.ok(bankAt !== '', 'deployed by the first test')
  const sdkOpen = async (holder: string, amount: number): Promise<void> => {
    await sdkInvoke(bankAt, new InvokeParams.HvmTypeBuilder('open').addString(holder).addLongPrimitive(amount).build())
  }
  await sdkOpen('bob', 5)
  // the Keel client's typed call is the same FEFFFBCE form, sent with type JVM
  assert.is(await hvm(bankAt, 'transfer', 'alice', 'bob', 30), 'true')
  assert.is(await hvm(bankAt, 'balance', 'alice'), '70')
  assert.is(await hvm(bankAt, 'balance', 'bob'), '35')
  assert.equal(JSON.parse(await hvm(bankAt, 'account', 'alice')), { holder: 'alice', balance: 70, transfers: 1 })
  assert.equal(JSON.parse(await hvm(bankAt, 'holders')), ['alice', 'bob'], 'a HyperMap iterates its keys')
  assert.is(await hvm(bankAt, 'transfer', 'bob', 'alice', 2), 'true')
  assert.is(await hvm(bankAt, 'transfer', 'alice', 'bob', 2), 'true')
  assert.equal(
    JSON.parse(await hvm(bankAt, 'history', { type: 'int', value: '2' })),
    ['bob->alice:2', 'alice->bob:2'],
    'a HyperList keeps its elements in order',
  )
  assert.equal(JSON.parse(await hvm(bankAt, 'history', { type: 'int', value: '10' })), ['alice->bob:30', 'bob->alice:2', 'alice->bob:2'])
  assert.equal(JSON.parse(await hvm(bankAt, 'sentBy', 'alice')), { bob: 32 }, 'a NestedMap inside a NestedMap')
  assert.equal(JSON.parse(await hvm(bankAt, 'sentBy', 'bob')), { alice: 2 })
  assert.equal(JSON.parse(await hvm(bankAt, 'sentBy', 'carol')), {})
  await sdkInvoke(bankAt, new InvokeParams.HvmTypeBuilder('forget').addString('alice').build())
  assert.equal(JSON.parse(await hvm(bankAt, 'sentBy', 'alice')), {}, 'removing a nested map removes its entries')
  assert.is(await hvm(bankAt, 'transfer', 'alice', 'bob', 1), 'true')
  assert.is(await hvm(bankAt, 'transfer', 'bob', 'alice', 1), 'true')
  assert.equal(JSON.parse(await hvm(bankAt, 'sentBy', 'alice')), { bob: 1 }, 'a new nested map in its place')

  const overdraw = await send(url, SUBMIT.invoke, owner.invoke(bankAt, jvmCallPayload('transfer', 'bob', 'alice', 1000), JVM))
  const refused = await failure(overdraw.reply)
  assert.is(refused.code, -32005)
  assert.match(refused.reason, /insufficient balance \(at bank\.Bank\.transfer/)
  assert.is(await hvm(bankAt, 'balance', 'bob'), '35', 'the failed transfer left the balance')
  const stranger = await send(url, SUBMIT.invoke, owner.invoke(bankAt, jvmCallPayload('open', 'carol', 1), JVM))
  assert.match((await failure(stranger.reply)).reason, /only the owner opens accounts/)

  for (const method of ['drain', 'onInit', 'getSender']) {
    const { reply } = await send(url, SUBMIT.invoke, owner.invoke(bankAt, jvmCallPayload(method, 'alice'), JVM))
    assert.match((await failure(reply)).reason, new RegExp(`the contract has no public function ${method}`), method)
  }
  assert.is(await hvm(bankAt, 'balance', 'alice'), '70')
})

test('2.x bank upgraded through the SDK: an added @StoreField starts from its initial value, the HyperMap and fields are kept; removing or retyping a field is refused', async () => {
  assert.ok(bankAt !== '', 'deployed by the first test')
  for (const [pkg, reason] of [
    [
      'removed',
      /upgrade failed: the new code removes @StoreField name \(java\.lang\.String\): Hyperchain's rule is that fields may be added, not removed or retyped/,
    ],
    ['retyped', /upgrade failed: the new code changes @StoreField owner from java\.lang\.String to java\.lang\.Object/],
  ] as const) {
    const builder = await new Transaction.HVMBuilder(sdkAccount.getAddress(), pm).upgrade(
      bankAt,
      arrayBufferOf(writeJar(versionOf(bankVersions, pkg))),
    )
    const tx = builder.build()
    tx.sign(sdkAccount)
    const response = await contracts.maintain(tx).send()
    assert.is(response.code, 0, response.message)
    const error = await response.poll().then(
      () => undefined,
      (e: { code?: number }) => e,
    )
    assert.is(error?.code, -32005, `${pkg}: the upgrade fails`)
    const reasonText = await lastReason()
    assert.match(reasonText, reason, reasonText)
  }
  assert.is(await hvm(bankAt, 'balance', 'alice'), '70', 'the refused upgrades left the old code')
  const builder = await new Transaction.HVMBuilder(sdkAccount.getAddress(), pm).upgrade(bankAt, arrayBufferOf(writeJar(bankV2)))
  const tx = builder.build()
  tx.sign(sdkAccount)
  const polled = await (await contracts.maintain(tx).send()).poll()
  assert.is(polled.code, 0, polled.message)
  assert.is(await hvm(bankAt, 'version'), '2')
  assert.is(await hvm(bankAt, 'transfers'), '0', 'the new field starts from its initial value')
  assert.is(await hvm(bankAt, 'name'), `Bank of ${sdkAddress.slice(0, 8)}`, 'old fields kept')
  assert.is(await hvm(bankAt, 'transfer', 'bob', 'alice', 5), 'true')
  assert.is(await hvm(bankAt, 'transfers'), '1')
  assert.is(await hvm(bankAt, 'balance', 'alice'), '75', 'the HyperMap kept its entries')
})

test("InvokeBean and hvm.abi (the SDK's HvmAbiBuilder with the ABI hvmAbi makes): a bean calls two methods in one transaction; when the second fails, the first is undone", async () => {
  assert.ok(bankAt !== '', 'deployed by the first test')
  const bean = beans.classes.get('beans/MoveTwice') as Uint8Array
  // the hvm.abi Hyperchain's Maven plugin would write, made by the Keel client from the classes
  const abiBeans = hvmAbi(bank, { invokeBeans: ['beans.MoveTwice'], beanClasses: beans.classes })
  const moveAbi = abiBeans.find((b) => b.beanType === 'InvokeBean')
  assert.equal(
    moveAbi?.inputs.map((i) => `${i.name}:${i.type}:${i.structName}`),
    ['from:String:java.lang.String', 'via:String:java.lang.String', 'to:String:java.lang.String', 'first:Long:long', 'second:Long:long'],
  )
  assert.equal(moveAbi?.output, { name: 'java.lang.String', type: 'String', structName: 'java.lang.String' })
  assert.equal(
    abiBeans.find((b) => b.beanName === 'transfer')?.inputs.map((i) => i.structName),
    ['java.lang.String', 'java.lang.String', 'long'],
  )
  const accountAbi = abiBeans.find((b) => b.beanName === 'account')
  assert.equal(
    accountAbi?.structs[0]?.properties?.map((p) => `${p.name}:${p.type}`),
    ['holder:String', 'balance:Long', 'transfers:Int'],
  )
  assert.equal(
    abiBeans
      .filter((b) => b.beanType === 'MethodBean')
      .map((b) => b.beanName)
      .sort(),
    ['account', 'balance', 'forget', 'history', 'holders', 'name', 'open', 'sentBy', 'transfer'],
    'the interface methods only',
  )
  const abi = JSON.stringify(abiBeans)
  const viaAbi = await sdkInvoke(bankAt, new InvokeParams.HvmAbiBuilder(abi, 'MethodBean' as never, 'balance').addParam('bob').build())
  assert.is(jvmRetText(viaAbi.ret), await hvm(bankAt, 'balance', 'bob'), "a MethodBean call through the SDK's HvmAbiBuilder")
  const before = [await hvm(bankAt, 'balance', 'alice'), await hvm(bankAt, 'balance', 'bob')]
  const params = new InvokeParams.HvmAbiBuilder(abi, 'InvokeBean' as never, 'beans.MoveTwice')
    .addParam('alice')
    .addParam('bob')
    .addParam('alice')
    .addParam(10)
    .addParam(4)
    .build()
  const receipt = await sdkInvoke(bankAt, params)
  const expected = [Number(before[0]) - 6, Number(before[1]) + 6]
  assert.is(jvmRetText(receipt.ret), `${expected[0]},${expected[1]},${expected[0]}`, 'both transfers in one call')
  assert.equal(JSON.parse(await hvm(bankAt, 'account', 'bob')).balance, expected[1])

  const overdrawn = jvmInvokeBeanPayload('beans.MoveTwice', bean, { from: 'alice', via: 'bob', to: 'alice', first: 10, second: 1_000_000 })
  const { reply } = await send(url, SUBMIT.invoke, owner.invoke(bankAt, overdrawn, JVM))
  const f = await failure(reply)
  assert.is(f.code, -32005)
  assert.match(f.reason, /insufficient balance/)
  assert.is(await hvm(bankAt, 'balance', 'alice'), String(expected[0]), 'the first transfer was undone with the second')
  assert.is(await hvm(bankAt, 'balance', 'bob'), String(expected[1]))

  const spin = await send(
    url,
    SUBMIT.invoke,
    owner.invoke(bankAt, jvmInvokeBeanPayload('beans.Spins', beans.classes.get('beans/Spins') as Uint8Array), JVM),
  )
  assert.match((await failure(spin.reply)).reason, /execution budget exhausted \(time-out\)/, "the bean's own loop is metered")
})

test('InvokeBean: a bean that tries each refused API is refused with the reason; a bean for a contract that is not HVM is refused', async () => {
  assert.ok(bankAt !== '', 'deployed by the first test')
  for (const { name, reason } of REFUSED_BEANS) {
    const payload = jvmInvokeBeanPayload(`beans.${name}`, beans.classes.get(`beans/${name}`) as Uint8Array)
    const { reply } = await send(url, SUBMIT.invoke, owner.invoke(bankAt, payload, JVM))
    const f = await failure(reply)
    assert.is(f.code, -32005, name)
    assert.match(f.reason, reason, name)
  }
  assert.is((await hvm(bankAt, 'balance', 'alice')) !== '0', true, 'MainClass did not drain alice')
  const kvAt = (await commit(url, SUBMIT.deploy, owner.deploy(jvmTarGzDeployPayload(kv), JVM))).contractAddress
  const payload = jvmInvokeBeanPayload('beans.MoveTwice', beans.classes.get('beans/MoveTwice') as Uint8Array)
  const { reply } = await send(url, SUBMIT.invoke, owner.invoke(kvAt, payload, JVM))
  assert.match((await failure(reply)).reason, /an InvokeBean calls an HVM contract/)
})

/** Through the official SDK: HVMBuilder.deploy of the jar; the contract's address. */
async function sdkDeploy(contract: JavaContract, account = sdkAccount): Promise<string> {
  const builder = await new Transaction.HVMBuilder(account.getAddress(), pm).deploy(arrayBufferOf(writeJar(contract)))
  const tx = builder.build()
  tx.sign(account)
  const response = await contracts.deploy(tx).send()
  assert.is(response.code, 0, response.message)
  const polled = await response.poll()
  assert.is(polled.code, 0, polled.message)
  return `0x${(polled.result as Sdk.Receipt & { contractAddress: string }).contractAddress.replace(/^0x/, '').toLowerCase()}`
}

test('cross-contract calls, 2.x through the SDK: a CrossCall reaches another contract in the same transaction and budget; sender is the caller, origin the signer; a failing callee leaves nothing; library calls keep nothing; one level deep; missing and EVM callees are named', async () => {
  const counterAt = await sdkDeploy(pick(beans, 'cross', 'cross.Counter'), crossAccount)
  const callerAt = await sdkDeploy(pick(beans, 'cross', 'cross.Caller'), crossAccount)
  assert.equal([counterAt, callerAt], [COUNTER_AT, CALLER_AT], 'the addresses compiled into the contracts')
  const evm = await commit(url, SUBMIT.deploy, crossOwner.deploy('0x600a600c600039600a6000f3602a60005260206000f3'))
  assert.is(evm.contractAddress, EVM_AT)
  const call = (method: string, ...args: number[]): Sdk.InvokeParams => {
    const b = new InvokeParams.HvmTypeBuilder(method)
    for (const a of args) b.addLongPrimitive(a)
    return b.build()
  }
  const via = await sdkInvoke(callerAt, call('viaCounter', 5), crossAccount)
  assert.is(jvmRetText(via.ret), '5')
  const viaLog = (via as unknown as { log: { address: string; topics: string[]; data: string }[] }).log
  assert.equal(
    viaLog.map((l) => [l.address.toLowerCase(), l.topics[0], Buffer.from(l.data, 'hex').toString()]),
    [[counterAt, jvmTopic('Added'), '+5']],
    "the callee's event is a log of the callee",
  )
  assert.is(await hvm(counterAt, 'total'), '5', "the callee's write is kept")
  assert.is(await hvm(callerAt, 'tallyThere'), `${callerAt}:5`, "a bean result crosses as JSON; the callee's sender was the caller")
  assert.is(
    jvmRetText((await sdkInvoke(callerAt, call('who'), crossAccount)).ret),
    `${callerAt},${crossSdkAddress},${counterAt}|${crossSdkAddress}`,
    'getSender is the calling contract, getOrigin the signer',
  )
  // the callee's steps are the caller's: a call through the caller costs what the callee's does and more
  const direct = await send(url, SUBMIT.invoke, owner.invoke(counterAt, jvmCallPayload('add', { type: 'long', value: '1' }), JVM))
  const through = await send(url, SUBMIT.invoke, owner.invoke(callerAt, jvmCallPayload('viaCounter', { type: 'long', value: '1' }), JVM))
  const [directGas, throughGas] = [direct, through].map(({ reply }) => Number((reply.result as WireReceipt).gasUsed))
  assert.ok(throughGas > directGas + 700, `${throughGas} > ${directGas} + 700`)

  assert.is(
    await hvm(callerAt, 'catchFailure', { type: 'long', value: '7' }),
    `the cross-contract call failAfter of ${counterAt} failed: IllegalStateException: the counter refuses 7|8`,
    "the caller catches the callee's failure; the callee's writes are undone, the earlier call's kept",
  )
  const failed = await send(url, SUBMIT.invoke, owner.invoke(callerAt, jvmCallPayload('failAfterCall', { type: 'long', value: '3' }), JVM))
  assert.match((await failure(failed.reply)).reason, /the caller refuses after the call/)
  assert.is(await hvm(counterAt, 'total'), '8', "the caller's failure undid the callee's writes")
  assert.is(await hvm(callerAt, 'libraryAdd', { type: 'long', value: '10' }), '18', 'a library instance runs')
  assert.is(await hvm(counterAt, 'total'), '8', 'and keeps nothing')

  for (const [method, reason] of [
    [
      'callBack',
      new RegExp(
        `the cross-contract call callBack of ${COUNTER_AT} failed: IllegalStateException: cross-contract calls go one level deep \\(Hyperchain's rule\\): the contract ${COUNTER_AT}, itself called across, cannot call ${CALLER_AT} \\(at cross\\.Caller\\.callBack line \\d+\\)`,
      ),
    ],
    [
      'self',
      new RegExp(`a contract cannot call itself across \\(${CALLER_AT}\\): reentrancy is refused \\(at cross\\.Caller\\.self line \\d+\\)`),
    ],
    ['spinThere', /execution budget exhausted \(time-out\)/],
    ['spinCalls', /execution budget exhausted \(time-out\)/],
    ['spinLookups', /execution budget exhausted \(time-out\)/],
  ] as const) {
    const { reply } = await send(url, SUBMIT.invoke, owner.invoke(callerAt, jvmCallPayload(method), JVM))
    const f = await failure(reply)
    assert.is(f.code, -32005, method)
    assert.match(f.reason, reason, method)
  }
  assert.is(
    await hvm(callerAt, 'unreachable'),
    `there is no contract at ${NOBODY}|the contract at ${EVM_AT} is an EVM contract: a Java contract calls Java contracts only|`,
  )
  assert.is(await hvm(counterAt, 'total'), '8')

  // a new executor holds neither contract: it loads the caller, then asks the node for the callee's code during the call
  const who = async (): Promise<WireReceipt> => {
    const { reply } = await send(url, SUBMIT.invoke, owner.invoke(callerAt, jvmCallPayload('who'), JVM))
    assert.is(reply.code, 0, reply.message)
    return reply.result as WireReceipt
  }
  const warm = await who()
  const first = executorPidOf(process.pid)
  assert.ok(first !== undefined, 'the executor runs')
  execFileSync('kill', ['-KILL', String(first)])
  const cold = await who()
  assert.ok(executorPidOf(process.pid) !== first, 'a new executor ran the call')
  assert.is(jvmRetText(cold.ret), `${callerAt},${owner.address},${counterAt}|${owner.address}`)
  assert.equal([cold.ret, cold.gasUsed], [warm.ret, warm.gasUsed], "loading the callee is not the call's work: the same steps")
  const metrics = await (await fetch(`${url}/metrics`)).text()
  assert.match(metrics, /^keel_jvm_wall_clock_stops_total\{[^}]*\} 0$/m, 'the steps, not the wall clock, ended every call')
})

test("cross-contract calls, 1.x: invokeContract runs the callee's openInvoke; result(false) and exceptions come back as result(false) and leave nothing; the invoker is the calling contract; a frozen callee ends the transaction", async () => {
  const storeAt = (await commit(url, SUBMIT.deploy, crossOwner.deploy(jvmTarGzDeployPayload(pick(beans, 'xkv', 'xkv.Store')), JVM)))
    .contractAddress
  assert.is(storeAt, STORE_AT)
  const clientAt = (await commit(url, SUBMIT.deploy, crossOwner.deploy(jvmTarGzDeployPayload(pick(beans, 'xkv', 'xkv.Client')), JVM)))
    .contractAddress
  assert.equal((await callText(clientAt, jvmInvokeArgsPayload('calls'))).split('|'), [
    'true:stored a',
    `false:the store refuses b`,
    `false:the cross-contract call throw of ${storeAt} failed: IllegalStateException: the store throws`,
    `true:${clientAt}`,
    `false:there is no contract at ${NOBODY}`,
    `false:the contract at ${CALLER_AT} is not a 1.x contract (extending cn.hyperchain.jcee.client.contract.ContractTemplate): invokeContract calls 1.x contracts`,
    'false:no namespace named ns2 (Keel runs one namespace: global)',
  ])
  const get = (key: string): Promise<string> => callText(storeAt, jvmInvokeArgsPayload('get', key))
  assert.equal([await get('a'), await get('b'), await get('c')], ['1', '-', '-'], 'only the successful call wrote')
  // a frozen callee ends the whole transaction, as an EVM contract reaching a frozen one does
  assert.is((await send(url, SUBMIT.maintain, crossOwner.maintain(storeAt, 2, undefined, JVM))).reply.code, 0)
  const frozen = await send(url, SUBMIT.invoke, owner.invoke(clientAt, jvmInvokeArgsPayload('calls'), JVM))
  const f = await failure(frozen.reply)
  assert.is(f.code, -32005)
  assert.match(f.reason, new RegExp(`Try to invoke a frozen contract \\(${storeAt}, called by a contract\\)`))
})

test("HyperTable: rows, column families and columns in the ledger, iterated in HVM's order; Row and ColumnFamily; a failed call leaves nothing; fail-fast iteration; names with @ refused", async () => {
  const at = await sdkDeploy(pick(beans, 'table', 'table.Students'))
  const put = (row: string, fam: string, col: string, value: string): Promise<string> => hvm(at, 'put', row, fam, col, value)
  for (const [row, fam, col, value] of [
    ['t', 'f', 'c', '1'],
    ['t1', 'f', 'c', '2'],
    ['t2', 'f', 'c', '3'],
    ['ta', 'f', 'c', '4'],
    ['t', 'g', 'b', '5'],
    ['t', 'f', 'a', '6'],
  ])
    await put(row, fam, col, value)
  assert.is(await hvm(at, 'rows'), 't1,t2,t,ta', "rows in the order of name + '@' (HVM's example)")
  assert.is(await hvm(at, 'fams', 't'), 'f,g')
  assert.is(await hvm(at, 'cols', 't', 'f'), 'a,c', 'columns in the order of their names')
  assert.is(await hvm(at, 'seek', 't2'), 't2,t,ta')
  assert.is(await hvm(at, 'seek', 't0'), 't1,t2,t,ta', 'from the first row after a missing one')
  assert.is(await hvm(at, 'get', 't', 'f', 'a'), '6')
  assert.is(await hvm(at, 'get', 't', 'f', 'zz'), '', 'a missing value is null')
  await hvm(at, 'remove', 't', 'g', 'b')
  assert.is(await hvm(at, 'fams', 't'), 'f', 'a family without columns is gone')
  await hvm(at, 'remove', 't', 'f', 'a')
  await hvm(at, 'remove', 't', 'f', 'c')
  assert.is(await hvm(at, 'rows'), 't1,t2,ta', 'a row without families is gone')
  await hvm(at, 'removeRow', 't1')
  assert.is(await hvm(at, 'rows'), 't2,ta')
  assert.is(await hvm(at, 'get', 't1', 'f', 'c'), '')
  assert.is(await hvm(at, 'viaRow', 'r'), 'v1,v2,true,true,true,students,r')
  assert.is(await hvm(at, 'rows'), 'r,t2,ta')
  for (const [method, args, reason] of [
    ['failAfterPut', ['z'], /refused after the put/],
    ['changeWhileIterating', [], /the HyperTable students changed during the iteration/],
    ['badName', [], /a HyperTable row name may not contain '@': a@b/],
    ['seek', ['tb'], /no row of the HyperTable students is at or after tb/],
  ] as const) {
    const { reply } = await send(url, SUBMIT.invoke, owner.invoke(at, jvmCallPayload(method, ...args), JVM))
    const f = await failure(reply)
    assert.is(f.code, -32005, method)
    assert.match(f.reason, reason, method)
  }
  assert.is(await hvm(at, 'rows'), 'r,t2,ta', 'the failed calls wrote nothing')
})

test("getValueFromExtra: the transaction's extra read by HVM's path syntax (the manual's examples), typed with getValueFromExtraInTx; another transaction's extra is refused", async () => {
  const at = (await commit(url, SUBMIT.deploy, owner.deploy(jvmDeployPayload(pick(beans, 'extra', 'extra.Extra')), JVM))).contractAddress
  const extra = JSON.stringify({
    name: { first: 'Tom', last: 'Anderson' },
    age: 37,
    children: ['Sara', 'Alex', 'Jack'],
    'fav.movie': 'Deer Hunter',
    friends: [
      { first: 'Dale', last: 'Murphy', age: 44 },
      { first: 'Roger', last: 'Craig', age: 68 },
      { first: 'Jane', last: 'Murphy', age: 47 },
    ],
  })
  const examples: [string, string][] = [
    ['name.last', 'Anderson'],
    ['age', '37'],
    ['children', '["Sara","Alex","Jack"]'],
    ['children.#', '3'],
    ['children.1', 'Alex'],
    ['child*.2', 'Jack'],
    ['c?ildren.0', 'Sara'],
    ['fav\\.movie', 'Deer Hunter'],
    ['friends.#.first', '["Dale","Roger","Jane"]'],
    ['friends.1.last', 'Craig'],
    ['friends.#[last=="Murphy"].first', 'Dale'],
    ['friends.#[last=="Murphy"]#.first', '["Dale","Jane"]'],
    ['friends.#[age>45]#.last', '["Craig","Murphy"]'],
    ['friends.#[first%"D*"].last', 'Murphy'],
    ['friends.#[first!%"D*"].last', 'Craig'],
    ['nothing.here', 'null'],
  ]
  const { reply } = await send(
    url,
    SUBMIT.invoke,
    owner.invoke(at, jvmCallPayload('all', examples.map(([path]) => path).join('\n')), { ...JVM, extra }),
  )
  assert.is(reply.code, 0, reply.message)
  assert.equal(
    jvmRetText((reply.result as WireReceipt).ret).split('\n'),
    examples.map(([, value]) => value),
  )
  const typed = await send(url, SUBMIT.invoke, owner.invoke(at, jvmCallPayload('age'), { ...JVM, extra }))
  assert.is(jvmRetText((typed.reply.result as WireReceipt).ret), '74', 'a Long, by "current" and by the running hash')
  const other = await send(url, SUBMIT.invoke, owner.invoke(at, jvmCallPayload('other', `0x${'ab'.repeat(32)}`), { ...JVM, extra }))
  assert.match((await failure(other.reply)).reason, /Keel reads the extra of the running transaction only/)
})

test('1.x key-value contract: tar.gz deploy, InvokeArgs calls, typed values and their ret text, batches, range queries, events, result(false)', async () => {
  const at = (await commit(url, SUBMIT.deploy, owner.deploy(jvmTarGzDeployPayload(kv, { name: 'kv' }), JVM))).contractAddress
  const call = (fn: string, ...args: string[]): Promise<string> => callText(at, jvmInvokeArgsPayload(fn, ...args))

  const put = await send(url, SUBMIT.invoke, owner.invoke(at, jvmInvokeArgsPayload('put', 'colour', 'blue'), JVM))
  assert.is(put.reply.code, 0, put.reply.message)
  const [log] = (put.reply.result as WireReceipt).log
  assert.equal(log.topics, [jvmTopic('Put'), jvmTopic('colour')])
  assert.equal(JSON.parse(Buffer.from(log.data, 'hex').toString()), { value: 'blue' }, 'event data: the attributes as JSON')
  assert.is(await call('get', 'colour'), 'blue')
  assert.is(await call('add', 'n', '40'), '40', 'an int result is its decimal text')
  assert.is(await call('add', 'n', '2'), '42')
  assert.is(await call('half', 'n'), '21.0', "a double result is Java's text of it")
  assert.is(await hvm(at, 'get', 'n'), '42', 'the HVM call form reaches a 1.x function too')

  assert.is(
    await call('putAll', 'b-1', 'one', 'b-3', 'three', 'a-9', 'nine', 'b-2', 'two'),
    '',
    'a private function, as 1.x allowed; result(ok) alone returns nothing',
  )
  assert.is(await call('getAll', 'b-1', 'b-2', 'nothing'), 'one,two,-')
  assert.is(await call('range', 'b-', 'b-9'), 'one,two,three', 'keys in order, the end excluded')
  assert.is(await call('range', 'a', 'z'), 'nine,one,two,three,blue,42')
  assert.is(await call('delete', 'b-2', 'colour'), '')
  assert.is(await call('range', 'a', 'z'), 'nine,one,three,42')

  const refused = await send(url, SUBMIT.invoke, owner.invoke(at, jvmInvokeArgsPayload('refuse', 'by rule'), JVM))
  const f = await failure(refused.reply)
  assert.is(f.code, -32005)
  assert.match(f.reason, /INVOKE_CONTRACT_FAILED \(refused: by rule\)/)
  const missingValue = await send(url, SUBMIT.invoke, owner.invoke(at, jvmInvokeArgsPayload('get', 'refused'), JVM))
  assert.match((await failure(missingValue.reply)).reason, /no value for refused/, 'result(false) dropped the write')

  // many keys: the index pages split; the range still comes back whole and in order
  const many: string[] = []
  for (let i = 0; i < 150; i++) many.push(`k-${String(i).padStart(3, '0')}`, String(i))
  assert.is(await call('putAll', ...many), '')
  const values = (await call('range', 'k-', 'k-~')).split(',')
  assert.equal(
    values,
    Array.from({ length: 150 }, (_, i) => String(i)),
  )
  assert.is(await call('range', 'k-100', 'k-103'), '100,101,102')

  // upgrade in the 1.x form keeps the ledger
  const upgraded = await send(url, SUBMIT.maintain, owner.maintain(at, 1, jvmTarGzDeployPayload(kv, { name: 'kv' }), JVM))
  assert.is(upgraded.reply.code, 0, upgraded.reply.message)
  assert.is(await call('get', 'n'), '42')
})

/**
 * The official SDK and a 1.x contract. jssdk 1.1.0 has no 1.x builder (its VmType: EVM, HVM, BVM,
 * TRANSFER, KVSQL, FVM), but nothing in it refuses one: `Builder.vmType` and
 * `Transaction.setVmType` store any value, `sign` signs it as the `vmtype` of the hashed text, and
 * `ContractService` sends it as the transaction's `type` (docs/jvm.md §2).
 */
async function sdkSend(kind: 'deploy' | 'invoke' | 'maintain', tx: Sdk.Transaction): Promise<Sdk.Receipt & { vmType: string }> {
  tx.sign(sdkAccount)
  const response = await contracts[kind](tx).send()
  assert.is(response.code, 0, `submission: ${response.message}`)
  const polled = await response.poll().catch(async (error: Error) => {
    throw new Error(`${error.message}: ${await lastReason()}`)
  })
  assert.is(polled.code, 0, polled.message)
  return polled.result as Sdk.Receipt & { vmType: string }
}

/** A failed receipt as the SDK reports it: its RequestError's code and `response.data` (the reason). */
async function sdkRefusal(kind: 'invoke' | 'maintain', tx: Sdk.Transaction): Promise<{ code: number; data: string }> {
  tx.sign(sdkAccount)
  const response = await contracts[kind](tx).send()
  assert.is(response.code, 0, `submission: ${response.message}`)
  const error = await response.poll().then(
    () => undefined,
    (e: unknown) => e,
  )
  assert.ok(error instanceof sdk.RequestError, 'the SDK reports the failed receipt as a RequestError')
  return { code: error.getCode(), data: String((error as unknown as { response: { data?: string } }).response.data) }
}

/** A receipt's ret as text, read with the SDK's own ByteUtil (it has no HVM/JVM result decoder; a 1.x String result is its UTF-8). */
const sdkRetText = (receipt: Sdk.Receipt): string => sdk.ByteUtil.toString(sdk.ByteUtil.fromHex(receipt.ret))

test('1.x key-value contract through the official SDK: HVMBuilder deploys and upgrades its jar and HvmTypeBuilder calls its functions; a JVM-typed Transaction (Builder.vmType) carries the 1.x tar.gz and InvokeArgs payloads', async () => {
  const from = sdkAccount.getAddress()
  const kvJar = arrayBufferOf(writeJar(kv))
  // (1) the SDK's own Java contract path (type HVM), nothing but its typed API
  const deployed = await sdkSend('deploy', (await new Transaction.HVMBuilder(from, pm).deploy(kvJar)).build())
  assert.is(deployed.vmType, 'JVM')
  const viaHvm = `0x${deployed.contractAddress.replace(/^0x/, '').toLowerCase()}`
  assert.is(await ok(url, 'contract_getCode', [viaHvm]), jvmJarDeployPayload(writeJar(kv)))
  const hvmCall = (fn: string, ...args: string[]) => {
    const params = new InvokeParams.HvmTypeBuilder(fn)
    for (const a of args) params.addString(a)
    return new Transaction.HVMBuilder(from, pm).invoke(viaHvm, params.build()).build()
  }
  const put = await sdkSend('invoke', hvmCall('put', 'colour', 'blue'))
  const putLog = (put as unknown as { log: { topics: string[]; data: string }[] }).log
  assert.equal(putLog[0].topics, [jvmTopic('Put'), jvmTopic('colour')], "ledger.post's event, as the SDK's receipt shows it")
  assert.is(sdkRetText(await sdkSend('invoke', hvmCall('get', 'colour'))), 'blue')
  assert.is(sdkRetText(await sdkSend('invoke', hvmCall('add', 'n', '40'))), '40')
  assert.is((await sdkSend('invoke', hvmCall('putAll', 'r-2', 'two', 'r-1', 'one'))).ret, '0x0', 'result(true) alone: an empty ret')
  assert.is(sdkRetText(await sdkSend('invoke', hvmCall('range', 'r-', 'r-~'))), 'one,two', 'a range query, in key order')
  const refused = await sdkRefusal('invoke', hvmCall('refuse', 'by rule'))
  assert.is(refused.code, -32005)
  assert.match(refused.data, /refused: by rule/, "result(false, …)'s value is the reason the SDK reports")
  assert.is((await sdkSend('maintain', (await new Transaction.HVMBuilder(from, pm).upgrade(viaHvm, kvJar)).build())).vmType, 'JVM')
  assert.is(sdkRetText(await sdkSend('invoke', hvmCall('get', 'n'))), '40', 'the upgrade kept the ledger')

  // (2) a transaction of type JVM, Hyperchain 1.x's own, with 1.x's payloads: the SDK builds, signs and sends it
  const JVM_TYPE = 'JVM' as Sdk.VmType
  const deployTx = new Transaction.Builder(from, pm).vmType(JVM_TYPE).build()
  deployTx.setTo('0x0') // what HVMBuilder.deploy sets: a deploy has no callee (ContractService.deploy drops it)
  deployTx.setPayload(jvmTarGzDeployPayload(kv, { name: 'kv' }))
  const jvmDeployed = await sdkSend('deploy', deployTx)
  assert.is(jvmDeployed.vmType, 'JVM')
  const viaJvm = `0x${jvmDeployed.contractAddress.replace(/^0x/, '').toLowerCase()}`
  const jvmCall = (fn: string, ...args: string[]) => {
    const tx = new Transaction.Builder(from, pm).vmType(JVM_TYPE).invokeContractAddr(viaJvm, false).build()
    tx.setPayload(jvmInvokeArgsPayload(fn, ...args))
    return tx
  }
  assert.is(sdkRetText(await sdkSend('invoke', jvmCall('add', 'n', '2'))), '2')
  assert.is(sdkRetText(await sdkSend('invoke', jvmCall('half', 'n'))), '1.0')
  assert.match((await sdkRefusal('invoke', jvmCall('get', 'missing'))).data, /no value for missing/)
  // Builder.upgrade takes a payload as it is: the 1.x tar.gz again, typed JVM
  const upgrade = await new Transaction.Builder(from, pm).vmType(JVM_TYPE).upgrade(viaJvm, jvmTarGzDeployPayload(kv, { name: 'kv' }))
  assert.is((await sdkSend('maintain', upgrade.build())).vmType, 'JVM')
  assert.is(sdkRetText(await sdkSend('invoke', jvmCall('get', 'n'))), '2', 'the upgrade kept the ledger')
})

test('refusals name the class for what it is: a Hyperchain API class Keel does not provide, a class not in the contract, bundled SDK classes', async () => {
  const only = (prefixes: string[]): Map<string, Uint8Array> =>
    new Map([...missing.classes].filter(([name]) => prefixes.some((p) => name.startsWith(p))))
  const cases: { main: string; classes: Map<string, Uint8Array>; reason: RegExp }[] = [
    {
      main: 'm.UsesCrypto',
      classes: only(['m/UsesCrypto']),
      reason: /cn\.hyperchain\.core\.CryptoUtil is not allowed \(a Hyperchain API class Keel does not provide/,
    },
    {
      main: 'm.UsesSetter',
      classes: only(['m/UsesSetter']),
      reason: /call of m\.UsesSetter\.setSender is not allowed \(a part of Hyperchain's API Keel does not provide/,
    },
    {
      main: 'm.UsesGson',
      classes: only(['m/UsesGson']),
      reason: /com\.google\.gson\.Gson is not allowed \(neither one of the contract's classes nor a class the engine provides/,
    },
    {
      main: 'm.UsesCrypto',
      classes: only(['m/UsesCrypto', 'cn/hyperchain/core/CryptoUtil']),
      reason:
        /class cn\.hyperchain\.core\.CryptoUtil: the package of cn\.hyperchain\.core\.CryptoUtil is Hyperchain's API, which the engine provides/,
    },
  ]
  for (const { main, classes, reason } of cases) {
    const { reply } = await send(url, SUBMIT.deploy, owner.deploy(jvmDeployPayload({ main, classes }), JVM))
    const refused = await failure(reply)
    assert.is(refused.code, -32004, main)
    assert.match(refused.reason, reason)
    assert.not.match(refused.reason, /JDK class/)
  }
})

test.run()
