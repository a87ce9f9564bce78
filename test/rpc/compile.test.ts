/**
 * contract_compileContract against a real node (ARCHITECTURE.md decision 6, issue 16 part 1 and
 * issue 17 item 5): the compiler comes from the source's `pragma solidity` (no pragma: 0.4.26),
 * each release in a worker thread of its own. For the manual's Accumulator and a source of each
 * line 0.4 to 0.8: compile through the RPC and through the official SDK's
 * ContractService.compileContract (the same answer), deploy, invoke, read, event. Then a flood of
 * compiles: reads stay fast while they run, and past the queue bound the answer is -32006.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startNodeProcess } from '../../src/devnet/node-process.ts'
import type { KeelNode } from '../../src/node.ts'
import { call, calldata, commit, decodeUint, deploy, fails, ok, SUBMIT, type WireReceipt } from '../helpers/chain.ts'
import { loadSdk } from '../helpers/jssdk.ts'
import { startTestNode } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

const { HttpProvider, ProviderManager, ServiceManager } = loadSdk()

interface Compiled {
  abi: string[]
  bin: string[]
  types: string[]
}

/** The Hyperchain manual's example, verbatim: no pragma, functions without visibility. */
const ACCUMULATOR =
  'contract Accumulator{    uint32 sum = 0;   function increment(){         sum = sum + 1;     }      function getSum() returns(uint32){         return sum;     }   function add(uint32 num1,uint32 num2) {         sum = sum+num1+num2;     } }'

/**
 * One ledger per Solidity line, each in that line's own idiom: 0.4 events without `emit` and
 * `constant` getters, `emit` and visibility from 0.5, `receive` from 0.6, `unchecked` from 0.8.
 */
const LEDGERS: { line: string; source: string }[] = [
  {
    line: '0.4 (no pragma)',
    source: `contract Ledger {
    uint total;
    event Deposited(address indexed who, uint amount);
    function deposit(uint amount) { total += amount; Deposited(msg.sender, amount); }
    function get() constant returns (uint) { return total; }
}`,
  },
  {
    line: '^0.5.0',
    source: `pragma solidity ^0.5.0;
contract Ledger {
    uint private total;
    event Deposited(address indexed who, uint amount);
    function deposit(uint amount) public { total += amount; emit Deposited(msg.sender, amount); }
    function get() public view returns (uint) { return total; }
}`,
  },
  {
    line: '^0.6.0',
    source: `// SPDX-License-Identifier: MIT
pragma solidity ^0.6.0;
contract Ledger {
    uint private total;
    event Deposited(address indexed who, uint amount);
    receive() external payable {}
    function deposit(uint amount) public { total += amount; emit Deposited(msg.sender, amount); }
    function get() public view returns (uint) { return total; }
}`,
  },
  {
    line: '^0.7.0',
    source: `// SPDX-License-Identifier: MIT
pragma solidity ^0.7.0;
contract Ledger {
    uint private total;
    event Deposited(address indexed who, uint amount);
    function deposit(uint amount) public { total += amount; emit Deposited(msg.sender, amount); }
    function get() public view returns (uint) { return total; }
}`,
  },
  {
    line: '^0.8.0',
    source: `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract Ledger {
    uint private total;
    event Deposited(address indexed who, uint amount);
    function deposit(uint amount) public { unchecked { total += amount; } emit Deposited(msg.sender, amount); }
    function get() public view returns (uint) { return total; }
}`,
  },
]

/** keccak256("Deposited(address,uint256)") */
const DEPOSITED_TOPIC = '0x2da466a7b24304f47e87fa2e1e5a81b9831ce54fec19055ce277ca2f39ba42c4'

let node: KeelNode
let url: string
const owner = wallet()
let contractService: ReturnType<typeof ServiceManager.getContractService>

test.before(async () => {
  node = await startTestNode(
    { chain: { batchTimeoutMs: 5 }, genesis: { accounts: [{ address: owner.address, balance: '1000000' }] } },
    { verifyWorkers: 1 },
  )
  url = node.url
  const pm = await ProviderManager.createManager({ httpProviders: [new HttpProvider(1, url.replace(/^http:\/\//, ''))] })
  contractService = ServiceManager.getContractService(pm)
})

test.after(async () => {
  await node?.stop()
})

/** Compiled through the RPC and through the SDK: the same answer, one contract named `name`. */
async function compileBoth(source: string, name: string): Promise<{ abi: { name?: string; type: string }[]; bin: string }> {
  const viaRpc = await ok<Compiled>(url, 'contract_compileContract', [source])
  const viaSdk = (await contractService.compileContract(source).send()).result
  // json-bigint gives the SDK objects without a prototype: compared as JSON
  assert.is(JSON.stringify(viaSdk), JSON.stringify(viaRpc), 'the SDK gets what the RPC answers')
  assert.equal(viaRpc.types, [name])
  assert.match(viaRpc.bin[0], /^0x([0-9a-f]{2})+$/)
  return { abi: JSON.parse(viaRpc.abi[0]) as { name?: string; type: string }[], bin: viaRpc.bin[0] }
}

test("the manual's Accumulator (no pragma, no visibility) compiles with 0.4.26, deploys and runs", async () => {
  const { abi, bin } = await compileBoth(ACCUMULATOR, 'Accumulator')
  // 0.4's ABI: `constant` and `payable` flags, no `internalType`
  assert.ok(
    abi.every((entry) => 'constant' in entry && !JSON.stringify(entry).includes('internalType')),
    JSON.stringify(abi),
  )
  const { address } = await deploy(url, owner, bin)
  await commit(url, SUBMIT.invoke, owner.invoke(address, calldata('increment()')))
  await commit(url, SUBMIT.invoke, owner.invoke(address, calldata('add(uint32,uint32)', 2n, 3n)))
  const read = await commit(url, SUBMIT.invoke, owner.invoke(address, calldata('getSum()')))
  assert.is(decodeUint(read.ret), 6n)
})

for (const { line, source } of LEDGERS) {
  test(`a ${line} source compiles with its line's release, deploys, and its write, read and event work`, async () => {
    const { abi, bin } = await compileBoth(source, 'Ledger')
    const flags = abi.find((entry) => entry.name === 'get') as Record<string, unknown>
    // the ABI shows which release compiled it: `constant` up to 0.5, `internalType` from 0.5
    const expected = line.startsWith('0.4')
      ? { constant: true, internalType: false }
      : line === '^0.5.0'
        ? { constant: true, internalType: true }
        : { constant: false, internalType: true }
    assert.equal(
      { constant: 'constant' in flags, internalType: JSON.stringify(flags).includes('internalType') },
      expected,
      JSON.stringify(flags),
    )
    const { address } = await deploy(url, owner, bin)
    const written: WireReceipt = await commit(url, SUBMIT.invoke, owner.invoke(address, calldata('deposit(uint256)', 41n)))
    assert.is(written.log.length, 1, 'one event')
    assert.is(written.log[0].topics[0], DEPOSITED_TOPIC)
    assert.is(written.log[0].topics[1], `0x${owner.address.slice(2).padStart(64, '0')}`, 'the indexed depositor')
    assert.is(BigInt(`0x${written.log[0].data}`), 41n)
    await commit(url, SUBMIT.invoke, owner.invoke(address, calldata('deposit(uint256)', 1n)))
    assert.is(decodeUint((await commit(url, SUBMIT.invoke, owner.invoke(address, calldata('get()')))).ret), 42n)
  })
}

test('a pragma no release accepts is -32000 naming it and the releases; compile errors keep the compiler text', async () => {
  const releases = '0.8.37, 0.7.6, 0.6.12, 0.5.17 and 0.4.26'
  await fails(
    url,
    'contract_compileContract',
    ['pragma solidity ^0.9.0;\ncontract A {}'],
    -32000,
    `no Solidity compiler of this node accepts \`pragma solidity ^0.9.0;\`: it has solc ${releases} (the newest release of each of 0.4 to 0.8); change the pragma to accept one of them`,
  )
  await fails(url, 'contract_compileContract', ['pragma solidity 0.4.24;\ncontract A {}'], -32000, /accepts `pragma solidity 0.4.24;`/)
  await fails(url, 'contract_compileContract', ['pragma solidity banana;\ncontract A {}'], -32000, /is not a version expression/)
  // an 0.4 source error comes from solc 0.4.26 itself
  const old = await fails(url, 'contract_compileContract', ['contract A { function f() { undefinedName(); } }'], -32000)
  assert.match(old.message, /^compile failed: .*DeclarationError: Undeclared identifier/)
  // a commented-out pragma does not count: this is 0.4 code, which 0.8 would refuse
  const commented = await ok<Compiled>(url, 'contract_compileContract', ['// pragma solidity ^0.8.0;\ncontract B { function f() {} }'])
  assert.equal(commented.types, ['B'])
})

/** p99 of a list of times */
const p99 = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))]
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** user + system CPU time of a process so far, ms (/proc/<pid>/stat, clock ticks of 10 ms) */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * Sends a batch of 100 compiles and 100 concurrent single compiles to `url` from a process of its
 * own (so this test's reads share no event loop with the load); prints every reply's code and the
 * first -32006 message as JSON.
 */
const FLOOD_SCRIPT = `
const [url, source] = process.argv.slice(1)
const post = (body) => fetch(url, { method: 'POST', body: JSON.stringify(body) }).then((reply) => reply.json())
const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'contract_compileContract', params: [source + '\\n// ' + i] }))
const singles = Array.from({ length: 100 }, (_, i) => post({ jsonrpc: '2.0', id: i, method: 'contract_compileContract', params: [source + '\\n// single ' + i] }))
const replies = [...(await post(batch)), ...(await Promise.all(singles))]
console.log(JSON.stringify({ codes: replies.map((reply) => reply.code), busy: replies.find((reply) => reply.code === -32006)?.message }))
`

async function readsUntil(target: string, done: () => boolean, minMs = 0): Promise<number[]> {
  const times: number[] = []
  for (const until = performance.now() + minMs; !done() || performance.now() < until; ) {
    const begin = performance.now()
    const reply = await call(target, 'tx_getTransactionsCount')
    times.push(performance.now() - begin)
    assert.is(reply.code, 0)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return times
}

test('200 compiles in flight (a batch of 100, 100 concurrent calls) on a node process: reads stay fast; past the queue bound -32006', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-compile-'))
  const child = await startNodeProcess({ dataDir })
  try {
    const source = 'pragma solidity ^0.8.0;\ncontract Flood { uint x; function set(uint v) public { x = v; } }'
    await ok(child.url, 'contract_compileContract', [source]) // loaded, so the figures are about compiling
    // the same reads for a second with no compile, for comparison on this shared, noisy machine
    const idle = await readsUntil(child.url, () => true, 1000)
    const cpuBefore = cpuMsOf(child.pid)
    const started = performance.now()
    let finished = false
    const flood = new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--input-type=module', '-e', FLOOD_SCRIPT, child.url, source], (error, stdout) =>
        error === null ? resolve(stdout) : reject(error),
      )
    }).finally(() => {
      finished = true
    })
    const reads = await readsUntil(child.url, () => finished)
    const wallMs = performance.now() - started
    const nodeCpuMs = cpuMsOf(child.pid) - cpuBefore
    const { codes, busy } = JSON.parse(await flood) as { codes: number[]; busy?: string }
    const compiled = codes.filter((code) => code === 0).length
    assert.is(codes.length, 200)
    assert.ok(
      codes.every((code) => code === 0 || code === -32006),
      `every compile answered 0 or -32006: ${[...new Set(codes)].join(', ')}`,
    )
    assert.ok(busy !== undefined, 'concurrent calls past the queue bound answer -32006')
    assert.match(busy ?? '', /compilations running and \d+ waiting, the most this node queues; send contract_compileContract again/)
    assert.ok(compiled >= 33, `at least the queue's worth compiled: ${compiled}`)
    const worst = p99(reads)
    console.log(
      `  load ${loadavg()[0].toFixed(1)}; reads without compiles: ${idle.length}, p50 ${median(idle).toFixed(1)} ms, p99 ${p99(idle).toFixed(1)} ms`,
    )
    console.log(
      `  ${reads.length} reads while 200 compiles were sent (${compiled} compiled, ${codes.length - compiled} answered -32006) over ${(wallMs / 1000).toFixed(1)} s: p50 ${median(reads).toFixed(1)} ms, p99 ${worst.toFixed(1)} ms, max ${Math.max(...reads).toFixed(1)} ms; node process CPU ${nodeCpuMs} ms (${(nodeCpuMs / compiled).toFixed(0)} ms per compile, compiler thread included)`,
    )
    // the goal is 50 ms (it was 21 s with solc on the request thread); a generous bound on a shared 2-core machine
    assert.ok(worst < 250, `read p99 ${worst.toFixed(1)} ms while compiles run`)
  } finally {
    await child.kill('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test.run()
