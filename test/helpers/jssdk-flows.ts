/**
 * The official Hyperchain JS SDK's flows (@hyperchain/jssdk 1.1.0, unmodified) against one Keel
 * node over HTTP (sdk-wire.md §9), as numbered steps a test file registers in order: start-up
 * handshake, ECDSA and SM2 transfers, an EVM contract compiled here with solc and taken through
 * deploy, write, read, freeze, unfreeze and upgrade, block and transaction queries, and the SDK's
 * own receipt polling. Used by test/sdk/jssdk.test.ts (one node) and test/network/sdk.test.ts (a VP
 * and an NVP of a network): the same assertions wherever the node runs.
 *
 * Each flow set has its own SDK accounts, which must hold GENESIS_BALANCE before step 1 (funded at
 * genesis, or by transfers from the genesis account). The node is named by a function because it
 * is started after the steps are registered.
 */
import { createPublicKey, verify, X509Certificate } from 'node:crypto'
import { createRequire } from 'node:module'
import type * as Sdk from '@hyperchain/jssdk'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import * as assert from 'uvu/assert'
import { loadSdk } from './jssdk.ts'

type PollingRequest = Sdk.Request<string | Sdk.Receipt, Sdk.PollingResponse>

const require = createRequire(import.meta.url)
const sdk = loadSdk()
const { Algo, DecodeUtil, HttpProvider, ProviderManager, RequestError, ServiceManager, Transaction } = sdk

// ---------------------------------------------------------------------------------------------
// The contract, compiled here

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

contract KeyValue {
    mapping(string => string) private values;
    uint256 public count;
    event Inserted(address indexed writer, string key, string value);

    function insert(string memory key, string memory value) public {
        values[key] = value;
        count += 1;
        emit Inserted(msg.sender, key, value);
    }

    function get(string memory key) public view returns (string memory) {
        return values[key];
    }
}

contract KeyValueV2 {
    mapping(string => string) private values;
    uint256 public count;
    event Inserted(address indexed writer, string key, string value);

    function insert(string memory key, string memory value) public {
        values[key] = value;
        count += 1;
        emit Inserted(msg.sender, key, value);
    }

    function get(string memory key) public view returns (string memory) {
        return string.concat("v2:", values[key]);
    }
}
`

interface Compiled {
  abi: string
  bin: string
}

let compiled: Record<'KeyValue' | 'KeyValueV2', Compiled> | undefined

/** solc runs once per process, however many flow sets use the contract */
function compile(): Record<'KeyValue' | 'KeyValueV2', Compiled> {
  if (compiled !== undefined) return compiled
  const solc = require('solc') as { compile(input: string): string }
  const input = {
    language: 'Solidity',
    sources: { 'kv.sol': { content: SOURCE } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error')
  if (errors.length > 0) throw new Error(`solc: ${errors.map((error) => error.formattedMessage).join('\n')}`)
  const pick = (name: string): Compiled => {
    const contract = output.contracts['kv.sol'][name]
    return { abi: JSON.stringify(contract.abi), bin: contract.evm.bytecode.object }
  }
  compiled = { KeyValue: pick('KeyValue'), KeyValueV2: pick('KeyValueV2') }
  return compiled
}

const INSERTED_TOPIC = `0x${bytesToHex(keccak_256(utf8ToBytes('Inserted(address,string,string)')))}`

/** ABI-decodes a tuple of `count` dynamic strings (the event data, and `get`'s ret), independently of the SDK. */
function decodeStrings(hex: string, count: number): string[] {
  const bytes = Buffer.from(hex.replace(/^0x/, ''), 'hex')
  const word = (offset: number): number => Number(BigInt(`0x${bytes.subarray(offset, offset + 32).toString('hex')}`))
  const strings: string[] = []
  for (let i = 0; i < count; i++) {
    const at = word(i * 32)
    const length = word(at)
    strings.push(bytes.subarray(at + 32, at + 32 + length).toString('utf8'))
  }
  return strings
}

const bigintJson = (_key: string, value: unknown): unknown => (typeof value === 'bigint' ? value.toString() : value)

export const GENESIS_BALANCE = 1_000_000_000_000n

/** The SDK's poll() gives up after its 10th try: 50 + 100 + … + 500 ms of sleep. */
export const SDK_POLLING_WINDOW_MS = 2_750

export interface SdkFlowStep {
  name: string
  run(): Promise<void> | void
}

export interface SdkFlows {
  /** the accounts that must hold GENESIS_BALANCE before step 1 (0x + lower case) */
  fundedAddresses: string[]
  /** the steps, in the order they must run */
  steps: SdkFlowStep[]
  /** every transaction that ended in a receipt, in order */
  committed: { label: string; hash: string }[]
  /** every transaction hash the node accepted, receipts and refusals alike */
  submitted: string[]
  latencies: { label: string; ms: number }[]
  /** prints submit→receipt times (figures, not assertions) */
  printLatencies(title: string): void
}

export interface SdkFlowOptions {
  url: () => string
  /** host name of the node the flows talk to */
  hostname: string
  /** PEM of the certificate whose key signs that node's receipts (tx_getTransactionReceiptWithSignature) */
  receiptCert: () => string
  /** the namespace's nodes that node lists (node_getNodeStates), the VPs first */
  nodes: { vps: string[]; nvps: string[] }
}

/** A flow set against the node at `url()`: its own accounts, contract and counters. */
export function sdkFlows(options: SdkFlowOptions): SdkFlows {
  const accounts = ServiceManager.getAccountService(ProviderManager.emptyManager())
  const ecdsa = accounts.genAccount(Algo.ECRAW)
  const sm2 = accounts.genAccount(Algo.SMRAW)
  /** a funded ECDSA account that never deploys: maintenance by it must be refused */
  const stranger = accounts.genAccount(Algo.ECRAW)

  let pm: Sdk.ProviderManager
  let txService: ReturnType<typeof ServiceManager.getTxService>
  let contractService: ReturnType<typeof ServiceManager.getContractService>
  let blockService: ReturnType<typeof ServiceManager.getBlockService>
  let accountService: ReturnType<typeof ServiceManager.getAccountService>
  let nodeService: ReturnType<typeof ServiceManager.getNodeService>
  let versionService: ReturnType<typeof ServiceManager.getVersionService>
  let configService: ReturnType<typeof ServiceManager.getConfigService>
  let didService: ReturnType<typeof ServiceManager.getDidService>
  // compiled now, before any node runs: solc holds the event loop for seconds, and a pooled
  // keep-alive socket that goes stale meanwhile makes the SDK's next request fail ("socket hang up")
  const contracts = compile()
  let contractAddress = ''
  /** transactions the chain held before step 1 (other flow sets on the same chain) */
  let countBefore: bigint | undefined
  const committed: { label: string; hash: string }[] = []
  const submitted: string[] = []
  /** this flow set's transactions that ended invalid (steps 8a, 8d, 10) */
  const refused: string[] = []
  /** block of this flow set's first transaction (step 7) */
  let firstBlock = 0n
  const latencies: { label: string; ms: number }[] = []

  const addr0x = (account: Sdk.Account): string => `0x${account.getAddress().toLowerCase()}`

  /** send() then the SDK's own poll() with its default schedule; times the whole round trip. */
  async function submit(label: string, request: PollingRequest): Promise<{ hash: string; receipt: Sdk.Receipt }> {
    const started = performance.now()
    const response = await request.send()
    assert.is(response.code, 0, `${label}: submission code`)
    assert.type(response.result, 'string', `${label}: submission returns the tx hash`)
    const hash = response.result as string
    assert.match(hash, /^0x[0-9a-f]{64}$/, `${label}: tx hash`)
    submitted.push(hash)
    const polled = await response.poll()
    const ms = performance.now() - started
    latencies.push({ label, ms })
    assert.is(polled.code, 0, `${label}: receipt code`)
    assert.is(polled.result.txHash, hash, `${label}: receipt.txHash equals the returned hash`)
    committed.push({ label, hash })
    return { hash, receipt: polled.result }
  }

  /** send() succeeds, and the SDK's poll() rejects with a RequestError carrying `code`. */
  async function submitRejected(label: string, request: PollingRequest, code: number): Promise<Sdk.RequestError> {
    const started = performance.now()
    const response = await request.send()
    assert.is(response.code, 0, `${label}: submission code`)
    assert.type(response.result, 'string', `${label}: submission returns the tx hash`)
    submitted.push(response.result as string)
    let error: unknown
    try {
      const polled = await response.poll()
      assert.unreachable(`${label}: expected the SDK to report ${code}, got receipt ${JSON.stringify(polled.result, bigintJson)}`)
    } catch (caught) {
      error = caught
    }
    latencies.push({ label, ms: performance.now() - started })
    if (!(error instanceof RequestError)) throw error
    assert.is(error.getCode(), code, `${label}: SDK reports code ${code} (got ${error.getCode()}: ${error.message})`)
    refused.push(response.result as string)
    return error
  }

  async function balanceOf(address: string): Promise<bigint> {
    needs(accountService, 'step 1 (createManager)')
    const reply = await accountService.getBalance(address).send()
    assert.is(reply.code, 0, `account_getBalance ${address}`)
    return BigInt(reply.result)
  }

  function signed<T extends { build(): Sdk.Transaction }>(builder: T, account: Sdk.Account): Sdk.Transaction {
    const tx = builder.build()
    tx.sign(account)
    return tx
  }
  const signed_ = signed

  /** Later steps build on earlier ones; say so plainly instead of failing on an undefined. */
  function needs(ready: unknown, step: string): void {
    if (ready === undefined || ready === '') throw new Error(`cannot run: ${step} did not complete`)
  }

  function evm(account: Sdk.Account): InstanceType<typeof Transaction.EVMBuilder> {
    needs(pm, 'step 1 (createManager)')
    return new Transaction.EVMBuilder(account.getAddress(), pm)
  }

  function invoke(account: Sdk.Account, method: string, params: unknown[], abi = contracts.KeyValue.abi): PollingRequest {
    needs(contractAddress, 'step 4 (deploy)')
    return contractService.invoke(signed(evm(account).invoke(contractAddress, method, abi, params), account))
  }

  async function status(): Promise<string> {
    needs(contractAddress, 'step 4 (deploy)')
    const reply = await contractService.getStatus(contractAddress).send()
    assert.is(reply.code, 0, 'contract_getStatus')
    return reply.result
  }

  async function read(key: string, abi = contracts.KeyValue.abi): Promise<string> {
    const { receipt } = await submit(`invoke get("${key}")`, invoke(ecdsa, 'get(string)', [key], abi))
    const decoded = DecodeUtil.decodeEvmResult(
      { jsonrpc: '2.0', id: '1', code: 0, message: 'SUCCESS', namespace: 'global', result: receipt },
      abi,
      'get(string)',
    )
    assert.equal(decodeStrings(receipt.ret, 1), decoded, 'independent ABI decoding agrees with DecodeUtil')
    return decoded[0] as string
  }

  async function transferFrom(sender: Sdk.Account, amount: number, label: string): Promise<void> {
    const receiver = addr0x(accounts.genAccount(Algo.ECRAW))
    const before = await balanceOf(addr0x(sender))
    const tx = signed(new Transaction.Builder(sender.getAddress(), pm).transfer(receiver, amount), sender)
    const { receipt } = await submit(label, txService.sendTx(tx))
    assert.is(receipt.txHash.length, 66)
    assert.is(await balanceOf(receiver), BigInt(amount), 'receiver holds exactly the amount')
    assert.is(await balanceOf(addr0x(sender)), before - BigInt(amount), 'sender lost exactly the amount (gas price 0)')
  }

  /** The SDK's RequestError of a call, which must fail with `code` and a message matching `message`. */
  async function refusedCall(request: { send(): Promise<unknown> }, code: number, message: RegExp): Promise<void> {
    const error = await request.send().then(
      (reply) => assert.unreachable(`expected ${code}, got ${JSON.stringify(reply, bigintJson)}`),
      (caught: unknown) => caught,
    )
    if (!(error instanceof RequestError)) throw error
    assert.is(error.getCode(), code, error.message)
    assert.match(error.message, message)
  }

  const latestNumber = async (): Promise<bigint> => BigInt((await blockService.getLatestBlock().send()).result.number)

  const steps: SdkFlowStep[] = [
    // -------------------------------------------------------------------------------------------
    // 1. start-up
    {
      name: '1. createManager: tx_getGasPrice, tx_getTransactionsVersion, did_getChainID (-32601 tolerated)',
      async run() {
        const url = options.url()
        const host = url.replace(/^http:\/\//, '')
        pm = await ProviderManager.createManager({ httpProviders: [new HttpProvider(1, host)] })
        txService = ServiceManager.getTxService(pm)
        contractService = ServiceManager.getContractService(pm)
        blockService = ServiceManager.getBlockService(pm)
        accountService = ServiceManager.getAccountService(pm)
        nodeService = ServiceManager.getNodeService(pm)
        versionService = ServiceManager.getVersionService(pm)
        configService = ServiceManager.getConfigService(pm)
        didService = ServiceManager.getDidService(pm)
        // typed bigint, but the SDK keeps the JSON value json-bigint gave it: the number 0
        assert.is(BigInt(pm.getGasPrice()), 0n, 'gas price from tx_getGasPrice')
        assert.is(pm.getTxVersion().getVersion(), '4.1', 'tx version from tx_getTransactionsVersion')
        assert.is(pm.getChainId(), 'global', 'did_getChainID: the namespace')
        assert.is((await didService.getChainID().send()).result, 'global')
        // the accounts really are the SDK's: addresses as the SDK derives them, funded at genesis
        assert.match(ecdsa.getAddress(), /^[0-9a-f]{40}$/)
        assert.match(sm2.getAddress(), /^[0-9a-f]{40}$/)
        assert.is(await balanceOf(addr0x(ecdsa)), GENESIS_BALANCE)
        assert.is(await balanceOf(addr0x(sm2)), GENESIS_BALANCE)
        countBefore = BigInt((await txService.getTransactionsCount().send()).result.count)
      },
    },

    // -------------------------------------------------------------------------------------------
    // 2–3. transfers
    {
      name: '2. ECDSA transfer: TxService.sendTx → poll; balances move by the amount',
      run: () => transferFrom(ecdsa, 12_345, 'ECDSA transfer'),
    },
    {
      name: '3. SM2 transfer: TxService.sendTx → poll; balances move by the amount',
      run: () => transferFrom(sm2, 6_789, 'SM2 transfer'),
    },

    // -------------------------------------------------------------------------------------------
    // 4–5. the contract
    {
      name: '4. deploy through ContractService.deploy: address, creator, deployed list, status',
      async run() {
        const tx = signed(evm(ecdsa).deploy(contracts.KeyValue.bin), ecdsa)
        const { receipt } = await submit('deploy KeyValue (ECDSA)', contractService.deploy(tx))
        assert.match(receipt.contractAddress, /^(0x)?[0-9a-fA-F]{40}$/, 'contractAddress is 20 bytes')
        assert.is.not(receipt.contractAddress.replace(/^0x/, ''), '0'.repeat(40), 'contractAddress is not the zero address')
        contractAddress = `0x${receipt.contractAddress.replace(/^0x/, '').toLowerCase()}`

        const creator = await contractService.getCreator(contractAddress).send()
        assert.is(creator.result, addr0x(ecdsa), 'contract_getCreator is the deployer, 0x + lower case')
        const list = await contractService.getDeployedList(ecdsa.getAddress()).send()
        assert.ok(
          list.result.map((entry) => entry.toLowerCase()).includes(contractAddress),
          `contract_getDeployedList ${JSON.stringify(list.result)} contains ${contractAddress}`,
        )
        assert.is(await status(), 'normal')
        const code = await contractService.getCode(contractAddress).send()
        assert.match(code.result, /^0x[0-9a-f]{10,}$/, 'contract_getCode returns the runtime code')
      },
    },
    {
      name: '5. invoke insert, then read get through contract_invokeContract: ret decodes to the value; the event is logged',
      async run() {
        const { receipt } = await submit(
          'invoke insert("greeting","hello keel")',
          invoke(ecdsa, 'insert(string,string)', ['greeting', 'hello keel']),
        )
        assert.is(receipt.log.length, 1, 'one event')
        const [log] = receipt.log
        assert.is(log.address.replace(/^0x/, '').toLowerCase(), contractAddress.slice(2), 'log address is the contract')
        assert.is(log.topics[0].replace(/^0x/, '').toLowerCase(), INSERTED_TOPIC.slice(2), 'topic 0 is Inserted(address,string,string)')
        assert.is(log.topics[1].replace(/^0x/, '').toLowerCase(), ecdsa.getAddress().padStart(64, '0'), 'topic 1 is the indexed writer')
        assert.equal(decodeStrings(log.data, 2), ['greeting', 'hello keel'], 'event data is (key, value)')

        assert.is(await read('greeting'), 'hello keel')
        assert.is(await read('missing'), '', 'an unset key reads as the empty string')
      },
    },

    // -------------------------------------------------------------------------------------------
    // 6. latency of the SDK's polling
    {
      name: '6. every receipt arrived within the SDK default polling window (10 tries, ≈2.75 s)',
      run() {
        assert.ok(latencies.length >= 6, `latencies recorded: ${latencies.length}`)
        const max = Math.max(...latencies.map((entry) => entry.ms))
        // poll() throws after its 10th try; reaching here proves each came in time
        assert.ok(max < SDK_POLLING_WINDOW_MS, `max submit→receipt ${max.toFixed(1)} ms`)
        console.log(`  max submit→receipt so far: ${max.toFixed(1)} ms over ${latencies.length} txs`)
      },
    },

    // -------------------------------------------------------------------------------------------
    // 7. blocks and transactions
    {
      name: '7. getTxByHash → block queries by hash and number, latest block, height, ranges and tx counts',
      async run() {
        needs(committed[0], 'steps 2–5 (no transaction committed)')
        const { hash } = committed[committed.length - 1]
        const tx = (await txService.getTxByHash(hash).send()).result
        assert.is(tx.hash, hash, 'tx_getTransactionByHash returns the tx')
        assert.match(tx.blockHash, /^0x[0-9a-f]{64}$/, 'blockHash')
        const blockNumber = BigInt(tx.blockNumber)
        assert.ok(blockNumber >= 1n, `block number ${tx.blockNumber}`)

        const byHash = (await blockService.getBlockByHash(tx.blockHash, false).send()).result
        assert.is(byHash.hash, tx.blockHash, 'block_getBlockByHash')
        assert.is(BigInt(byHash.number), blockNumber)
        assert.ok(
          (byHash.transactions ?? []).some((entry) => entry.hash === hash),
          'the block lists the transaction',
        )
        const byNumber = (await blockService.getBlockByNum(blockNumber, true).send()).result
        assert.is(byNumber.hash, tx.blockHash, 'block_getBlockByNumber gives the same block')

        const latest = (await blockService.getLatestBlock().send()).result
        const height = (await blockService.getChainHeight().send()).result
        assert.is(BigInt(height), BigInt(latest.number), 'block_getChainHeight equals the latest block number')
        assert.ok(BigInt(latest.number) >= blockNumber)

        // a range starting at the block: its first page (10 blocks) opens with it, however long the chain
        const range = (await blockService.getBlocksWithLimit(blockNumber.toString(), BigInt(latest.number).toString(), true).send()).result
        assert.is(range.data[0]?.hash, tx.blockHash, 'block_getBlocksWithLimit opens with the block')

        const inBlock = BigInt((await txService.getBlockTxCountByHash(tx.blockHash).send()).result)
        assert.is(BigInt((await txService.getBlockTxCountByNumber(blockNumber.toString()).send()).result), inBlock)
        assert.ok(inBlock >= 1n)
        const index = Number(BigInt(tx.txIndex))
        assert.is((await txService.getTxByBlockHashAndIndex(tx.blockHash, index).send()).result.hash, hash)
        assert.is((await txService.getTxByBlockNumAndIndex(blockNumber.toString(), index).send()).result.hash, hash)

        needs(countBefore, 'step 1 (createManager)')
        const count = (await txService.getTransactionsCount().send()).result
        assert.is(
          BigInt(count.count),
          (countBefore ?? 0n) + BigInt(committed.length),
          `tx_getTransactionsCount = ${countBefore} before step 1 + transactions committed since (${committed.length})`,
        )

        // from this flow set's first block on, page by page (10 a page) as an SDK user does
        firstBlock = BigInt((await txService.getTxByHash(committed[0].hash).send()).result.blockNumber)
        const listedHashes: string[] = []
        let bookmark: { blkNum: number; txIndex: number } | undefined
        for (let page = 1; ; page++) {
          assert.ok(page <= 100, 'tx_getTransactionsWithLimit ends its paging (hasmore false)')
          const metaData = bookmark === undefined ? undefined : ({ pageSize: 10, bookmark, backward: false } as Sdk.TxServiceType.MetaData)
          const listed = (await txService.getTxsWithLimit(firstBlock.toString(), BigInt(latest.number).toString(), metaData).send()).result
          listedHashes.push(...listed.data.map((entry) => entry.hash))
          if (!listed.hasmore) break
          const last = listed.data[listed.data.length - 1]
          bookmark = { blkNum: Number(BigInt(last.blockNumber)), txIndex: Number(BigInt(last.txIndex)) }
        }
        assert.is(new Set(listedHashes).size, listedHashes.length, 'tx_getTransactionsWithLimit pages do not overlap')
        for (const entry of committed) assert.ok(listedHashes.includes(entry.hash), `tx_getTransactionsWithLimit lists ${entry.label}`)
      },
    },

    // -------------------------------------------------------------------------------------------
    // 8. maintenance
    {
      name: '8a. freeze: status frozen; an invoke is then refused with -32005',
      async run() {
        await submit('freeze', contractService.maintain(signed(evm(ecdsa).freeze(contractAddress), ecdsa)))
        assert.is(await status(), 'frozen')
        await submitRejected('invoke while frozen', invoke(ecdsa, 'insert(string,string)', ['greeting', 'ignored']), -32005)
      },
    },
    {
      name: '8b. unfreeze: status normal; invoke works again',
      async run() {
        await submit('unfreeze', contractService.maintain(signed(evm(ecdsa).unfreeze(contractAddress), ecdsa)))
        assert.is(await status(), 'normal')
        assert.is(await read('greeting'), 'hello keel', 'the write refused while frozen left no trace')
        await submit('invoke insert after unfreeze', invoke(ecdsa, 'insert(string,string)', ['second', 'after thaw']))
        assert.is(await read('second'), 'after thaw')
      },
    },
    {
      name: '8c. upgrade: new behaviour, storage kept',
      async run() {
        const builder = await evm(ecdsa).upgrade(contractAddress, contracts.KeyValueV2.bin)
        await submit('upgrade to KeyValueV2', contractService.maintain(signed(builder, ecdsa)))
        assert.is(await status(), 'normal')
        const v2 = contracts.KeyValueV2.abi
        assert.is(await read('greeting', v2), 'v2:hello keel', 'upgraded get() over the old storage')
        assert.is(await read('second', v2), 'v2:after thaw')
      },
    },
    {
      name: '8d. maintenance by a non-deployer: -32008 through polling; status unchanged',
      async run() {
        await submitRejected(
          'freeze by a stranger',
          contractService.maintain(signed(evm(stranger).freeze(contractAddress), stranger)),
          -32008,
        )
        assert.is(await status(), 'normal')
      },
    },

    // -------------------------------------------------------------------------------------------
    // 9. SM2 contract transactions
    {
      name: '9. SM2 account: deploy and invoke a contract',
      async run() {
        const { receipt } = await submit(
          'deploy KeyValue (SM2)',
          contractService.deploy(signed(evm(sm2).deploy(contracts.KeyValue.bin), sm2)),
        )
        assert.match(receipt.contractAddress, /^(0x)?[0-9a-fA-F]{40}$/)
        const address = `0x${receipt.contractAddress.replace(/^0x/, '').toLowerCase()}`
        assert.is.not(address, contractAddress, 'a new contract')
        assert.is((await contractService.getCreator(address).send()).result, addr0x(sm2), 'creator is the SM2 account')

        const abi = contracts.KeyValue.abi
        const write = signed(evm(sm2).invoke(address, 'insert(string,string)', abi, ['sm', '国密 SM2']), sm2)
        const written = await submit('SM2 invoke insert', contractService.invoke(write))
        assert.is(
          written.receipt.log[0].topics[1].replace(/^0x/, '').toLowerCase(),
          sm2.getAddress().padStart(64, '0'),
          'msg.sender is the SM2 account',
        )
        const readTx = signed(evm(sm2).invoke(address, 'get(string)', abi, ['sm']), sm2)
        const { receipt: readReceipt } = await submit('SM2 invoke get', contractService.invoke(readTx))
        const response = { jsonrpc: '2.0', id: '1', code: 0, message: 'SUCCESS', namespace: 'global', result: readReceipt }
        assert.equal(DecodeUtil.decodeEvmResult(response, abi, 'get(string)'), ['国密 SM2'])
      },
    },

    // -------------------------------------------------------------------------------------------
    // 10. a bad signature
    {
      name: '10. a transfer signed by another account than its sender: -32003 (SIGFAILED) through polling; no balance moves',
      async run() {
        needs(pm, 'step 1 (createManager)')
        const receiver = addr0x(accounts.genAccount(Algo.ECRAW))
        const senderBefore = await balanceOf(addr0x(ecdsa))
        const signerBefore = await balanceOf(addr0x(stranger))
        // the SDK signs whatever it is given: the signature recovers the stranger, not `from`
        const forged = signed(new Transaction.Builder(ecdsa.getAddress(), pm).transfer(receiver, 1_000), stranger)
        await submitRejected('transfer signed by another account', txService.sendTx(forged), -32003)
        assert.is(await balanceOf(addr0x(ecdsa)), senderBefore, 'the named sender kept its balance')
        assert.is(await balanceOf(addr0x(stranger)), signerBefore, 'the signer kept its balance')
        const credited = await accountService
          .getBalance(receiver)
          .send()
          .then(
            (reply) => `balance ${reply.result}`,
            (error: unknown) => (error instanceof RequestError ? `${error.getCode()}` : Promise.reject(error)),
          )
        assert.is(credited, '-32009', 'the receiver was never credited: account_getBalance says it does not exist')
      },
    },

    // -------------------------------------------------------------------------------------------
    // 11–15. the SDK's wider API (the calls beyond the manual's list)
    {
      name: '11. receipts with gas, confirmed and signed (the signature checks with the node key); grpcSendTxReturnReceipt; a simulated call',
      async run() {
        needs(contractAddress, 'step 4 (deploy)')
        const { hash } = committed[committed.length - 1]
        const plain = (await txService.getTransactionReceipt(hash).send()).result
        const json = (value: unknown): string => JSON.stringify(value, bigintJson)
        assert.is(json((await txService.getTransactionReceiptWithGas(hash).send()).result), json(plain), 'tx_getTransactionReceiptWithGas')
        assert.is(
          json((await txService.getConfirmedTransactionReceipt(hash).send()).result),
          json(plain),
          'tx_getConfirmedTransactionReceipt',
        )
        const signed = (await txService.getTransactionReceiptWithSignature(hash).send()).result
        assert.is(signed.hostname, options.hostname)
        assert.is(json(signed.result), json(plain))
        const key = createPublicKey(new X509Certificate(options.receiptCert()).publicKey.export({ type: 'spki', format: 'pem' }))
        // the bytes signed: the receipt as compact JSON, which JSON.stringify of the parsed result gives back
        const text = JSON.stringify(signed.result, (_key, value) => (typeof value === 'bigint' ? Number(value) : value))
        const signature = Buffer.from(signed.signature.slice(2), 'hex')
        assert.ok(verify('sha256', Buffer.from(text), { key, dsaEncoding: 'ieee-p1363' }, signature), 'the receipt signature verifies')

        const receiver = addr0x(accounts.genAccount(Algo.ECRAW))
        const tx = signed_(new Transaction.Builder(ecdsa.getAddress(), pm).transfer(receiver, 321), ecdsa)
        const started = performance.now()
        const reply = await txService.grpcSendTxReturnReceipt(tx).send()
        const receipt = reply.result as unknown as Sdk.Receipt
        latencies.push({ label: 'grpcSendTxReturnReceipt', ms: performance.now() - started })
        assert.type(receipt, 'object', 'tx_sendTransactionReturnReceipt answers with the receipt')
        assert.match(receipt.txHash, /^0x[0-9a-f]{64}$/)
        submitted.push(receipt.txHash)
        committed.push({ label: 'grpcSendTxReturnReceipt', hash: receipt.txHash })
        assert.is(await balanceOf(receiver), 321n, 'committed when the call answered')

        // .simulate(): the SDK sends simulate_invokeContract and takes the receipt from the reply
        const v2 = contracts.KeyValueV2.abi
        const ghost = signed_(evm(ecdsa).invoke(contractAddress, 'insert(string,string)', v2, ['greeting', 'ghost']).simulate(), ecdsa)
        const simulated = await contractService.invoke(ghost).send()
        assert.type(simulated.result, 'object', 'simulate_invokeContract answers with a receipt')
        assert.is((simulated.result as Sdk.Receipt).log.length, 1, 'the simulated call emitted its event')
        const polled = await simulated.poll()
        assert.is(polled.result, simulated.result, "poll() returns the simulation's receipt without a request")
        const peek = signed_(evm(ecdsa).invoke(contractAddress, 'get(string)', v2, ['greeting']).simulate(), ecdsa)
        const response = {
          jsonrpc: '2.0',
          id: '1',
          code: 0,
          message: 'SUCCESS',
          namespace: 'global',
          result: (await contractService.invoke(peek).send()).result as Sdk.Receipt,
        }
        assert.equal(DecodeUtil.decodeEvmResult(response, v2, 'get(string)'), ['v2:hello keel'], 'a simulated write changes nothing')
      },
    },
    {
      name: '12. invalid transactions: count, pages with positions, by block number and hash, by time, next page',
      async run() {
        needs(firstBlock, 'step 7')
        assert.is(refused.length, 3, 'steps 8a, 8d and 10 refused one transaction each')
        const count = BigInt((await txService.getInvalidTransactionsCount().send()).result.count)
        assert.ok(count >= 3n, `tx_getInvalidTransactionsCount ${count}`)
        const latest = await latestNumber()
        const found = new Map<string, { blockNumber: string; txIndex: string }>()
        let bookmark: { blkNum: number; txIndex: number } | undefined
        for (let page = 1; ; page++) {
          assert.ok(page <= 100, 'tx_getInvalidTransactionsWithLimit ends its paging')
          const metaData = { pageSize: 10, ...(bookmark === undefined ? {} : { bookmark }) } as unknown as Sdk.TxServiceType.MetaData
          const listed = (await txService.getInvalidTxsWithLimit(firstBlock, latest, metaData).send()).result
          for (const item of listed.data as unknown as { hash: string; blockNumber: string; txIndex: string }[]) found.set(item.hash, item)
          if (!listed.hasmore) break
          const last = listed.data[listed.data.length - 1]
          bookmark = { blkNum: Number(BigInt(last.blockNumber)), txIndex: Number(BigInt(last.txIndex)) }
        }
        for (const hash of refused) assert.ok(found.has(hash), `tx_getInvalidTransactionsWithLimit lists ${hash}`)
        const forged = found.get(refused[2]) as { blockNumber: string; txIndex: string }
        const block = BigInt(forged.blockNumber)
        const inBlock = (await txService.getInvalidTxsByBlockNumber(block).send()).result
        assert.is(inBlock[Number(BigInt(forged.txIndex))].hash, refused[2], 'tx_getInvalidTransactionsByBlockNumber, at its txIndex')
        const header = (await blockService.getBlockByNum(block, true).send()).result
        assert.ok(
          (await txService.getInvalidTxsByBlockHash(header.hash).send()).result.some((tx) => tx.hash === refused[2]),
          'by block hash',
        )
        const first = (await blockService.getBlockByNum(firstBlock, true).send()).result
        const byTime = await txService.getInvalidTxsCountByTime(BigInt(first.writeTime), BigInt(header.writeTime)).send()
        assert.ok(BigInt(byTime.result) >= 3n, `tx_getInvalidTransactionsCountByTime ${byTime.result}`)
        const next = (await txService.getNextPageInvalidTransactions(firstBlock, 0n, firstBlock, latest, 0n, 100n, true).send()).result
        for (const hash of refused)
          assert.ok(
            next.some((tx) => tx.hash === hash),
            `tx_getNextPageInvalidTransactions lists ${hash}`,
          )
      },
    },
    {
      name: "13. the contract's transactions: counted, next and previous pages by address",
      async run() {
        needs(firstBlock, 'step 7')
        const latest = await latestNumber()
        const forward = (
          await txService.getNextPageTransactions(firstBlock, 0n, firstBlock, latest, 0n, 100n, true, contractAddress).send()
        ).result
        assert.ok(forward.length >= 8, `the deployment and the calls of steps 4-8: ${forward.length}`)
        assert.is(forward[0].to, `0x${'00'.repeat(20)}`, 'the first is the deployment, counted for the contract it created')
        for (const tx of forward.slice(1)) assert.is(tx.to, contractAddress)
        const counted = (await txService.getTransactionsCountByContractAddr(firstBlock, latest, contractAddress, false).send()).result
        assert.is(BigInt(counted.count), BigInt(forward.length), 'tx_getTransactionsCountByContractAddr')
        const last = forward[forward.length - 1]
        assert.equal([BigInt(counted.lastBlockNum), BigInt(counted.lastIndex)], [BigInt(last.blockNumber), BigInt(last.txIndex)])
        const backward = (
          await txService
            .getPrevPageTransactions(
              BigInt(last.blockNumber).toString(),
              BigInt(last.txIndex).toString(),
              firstBlock.toString(),
              latest.toString(),
              '0',
              '100',
              true,
              contractAddress,
            )
            .send()
        ).result
        assert.equal(
          backward.map((tx) => tx.hash),
          forward.map((tx) => tx.hash).reverse(),
          'tx_getPrevPageTransactions walks the same transactions back',
        )
        const skipped = (await txService.getNextPageTransactions(firstBlock, 0n, firstBlock, latest, 2n, 3n, true, contractAddress).send())
          .result
        assert.equal(
          skipped.map((tx) => tx.hash),
          forward.slice(2, 5).map((tx) => tx.hash),
          'separated 2, pageSize 3',
        )
      },
    },
    {
      name: '14. extra ids: a transfer tagged through the SDK builder, found by extra id and by filter',
      async run() {
        const tagLong = BigInt(Math.floor(Math.random() * 1e15))
        const tagString = `lot-${tagLong.toString(36)}`
        const receiver = addr0x(accounts.genAccount(Algo.ECRAW))
        const builder = new Transaction.Builder(ecdsa.getAddress(), pm).transfer(receiver, 5).extraIdLong(tagLong).extraIdString(tagString)
        const { hash } = await submit('tagged transfer', txService.sendTx(signed_(builder, ecdsa)))
        const metaData = { pageSize: 10, backward: false } as unknown as Sdk.TxServiceType.MetaData
        const filter = (fields: Record<string, unknown>) => fields as unknown as Sdk.TxServiceType.Filter
        const exact = (await txService.getTxsByExtraID(0, false, metaData, filter({ extraId: [tagLong, tagString] })).send()).result
        assert.equal(
          exact.data.map((item) => (item as unknown as { txHash: string }).txHash),
          [hash],
          'tx_getTransactionsByExtraID: exactly [long, string]',
        )
        const any = (await txService.getTxsByExtraID(2, true, metaData, filter({ extraId: [tagString, 'no-such-id'] })).send()).result
        assert.is(any.data[0]?.hash, hash, 'any of the ids, with details')
        const byFilter = (await txService.getTxsByFilter(0, true, metaData, filter({ txFrom: addr0x(ecdsa), txTo: receiver })).send())
          .result
        assert.equal(
          byFilter.data.map((tx) => tx.hash),
          [hash],
          'tx_getTransactionsByFilter: sender and receiver',
        )
        assert.equal(
          JSON.parse(JSON.stringify(byFilter.data[0].extraId, bigintJson)),
          [Number(tagLong), tagString],
          'the transaction shows its extra ids',
        )
      },
    },
    {
      name: '15. node states, versions, configuration and DID chain id; the features Keel lacks answer -32601 naming them',
      async run() {
        const states = (await nodeService.getNodeStates().send()).result
        const hostnames = states.map((state) => (state as unknown as { hostname: string }).hostname)
        assert.equal([...hostnames].sort(), [...options.nodes.vps, ...options.nodes.nvps].sort(), 'node_getNodeStates lists every node')
        assert.is(hostnames[0], options.hostname, 'the node asked comes first')
        for (const state of states) {
          assert.ok(['NORMAL', 'FOLLOWING'].includes(state.status), `${JSON.stringify(state)}`)
          assert.ok(BigInt(state.blockHeight) >= firstBlock, 'each node reports its height')
        }
        const versions = (await versionService.getVersions().send()).result
        const [release] = Object.keys(versions.runningHyperchainVersions)
        assert.match(release, /^keel-\d+\.\d+\.\d+/)
        assert.is(versions.runningHyperchainVersions[release].tx_version, '4.1')
        assert.equal((await versionService.getHyperchainVersionFromBin(release).send()).result, versions.runningHyperchainVersions[release])
        for (const hostname of [options.hostname, options.nodes.vps.find((vp) => vp !== options.hostname) ?? options.hostname])
          assert.equal((await versionService.getSupportedVersionByHostname(hostname).send()).result.tx_version, ['4.1'], hostname)
        const genesis = JSON.parse((await configService.getGenesisInfo().send()).result) as { namespace: string; accounts: unknown[] }
        assert.is(genesis.namespace, 'global')
        assert.ok(genesis.accounts.length >= 1)
        assert.equal(Object.keys((await configService.getHosts('vp').send()).result).sort(), [...options.nodes.vps].sort())
        assert.equal(Object.keys((await configService.getHosts('nvp').send()).result).sort(), [...options.nodes.nvps].sort())
        assert.equal((JSON.parse((await configService.getVSet().send()).result) as string[]).sort(), [...options.nodes.vps].sort())
        assert.match((await configService.getConfig().send()).result, /\[node\]\nhostname = "/)

        await refusedCall(didService.getDIDDocument('did:hpc:global:someone'), -32601, /Keel has no DID documents and credentials/)
        // governance (docs/governance.md): an account outside the genesis holds no role; no name and no proposal exist yet
        assert.equal([...(await accountService.getRoles(`0x${'56'.repeat(20)}`).send()).result], [])
        assert.is((await accountService.getStatus(addr0x(ecdsa)).send()).result, 'normal')
        assert.is((await configService.isRoleExist('admin').send()).result, true)
        await refusedCall(contractService.getStatusByCName('store'), -32001, /no contract is named "store"/)
        await refusedCall(configService.getProposal(), -32001, /no proposal has been created/)
      },
    },
  ]

  return {
    fundedAddresses: [ecdsa, sm2, stranger].map(addr0x),
    steps,
    committed,
    submitted,
    latencies,
    printLatencies(title) {
      if (latencies.length === 0) return
      const max = latencies.reduce((worst, entry) => (entry.ms > worst.ms ? entry : worst))
      const mean = latencies.reduce((sum, entry) => sum + entry.ms, 0) / latencies.length
      console.log(
        `\n  ${title}: submit→receipt through the SDK's polling: ${latencies.length} txs, mean ${mean.toFixed(1)} ms, max ${max.ms.toFixed(1)} ms (${max.label})`,
      )
      for (const entry of latencies) console.log(`    ${entry.ms.toFixed(1).padStart(7)} ms  ${entry.label}`)
    },
  }
}
