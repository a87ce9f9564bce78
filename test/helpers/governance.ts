/**
 * Governance through the official SDK (@hyperchain/jssdk 1.1.0, unmodified): BVM operations built
 * with its own builders, sent with its ContractService, receipts decoded with its DecodeUtil, and
 * its Account/Config/Contract services' queries. Shared by test/rpc/governance.test.ts (one node)
 * and test/network/governance.test.ts (a network of VPs).
 */

import { createRequire } from 'node:module'
import type * as Sdk from '@hyperchain/jssdk'
import * as assert from 'uvu/assert'
import { accountFromPrivateKey } from '../../sdk/src/account.ts'
import { operatorHeaders } from '../../sdk/src/operator.ts'
import { loadSdk } from './jssdk.ts'

export const sdk = loadSdk()
export const { Algo, BvmOperation, DecodeUtil, HttpProvider, ProviderManager, RequestError, ServiceManager, Transaction } = sdk

/** The SDK parses replies into null-prototype objects (and int64s into bigints): a plain copy for deep comparisons. */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? item.toString() : item)))
}

/** A new secp256k1 account, with its address as the node writes it (0x + lower case). */
export function newAccount(): { account: Sdk.Account; address: string } {
  const account = ServiceManager.getAccountService(ProviderManager.emptyManager()).genAccount(Algo.ECRAW)
  return { account, address: `0x${account.getAddress().toLowerCase().replace(/^0x/, '')}` }
}

/** What a BVM receipt's `ret` decodes to, with `Ret` decoded too (DecodeUtil.decodeBvmResultRetRet). */
export interface BvmOutcome {
  Success: boolean
  Ret: unknown
  Err: string
  txHash: string
  receipt: Sdk.Receipt
}

export interface GovClient {
  pm: Sdk.ProviderManager
  contracts: ReturnType<typeof ServiceManager.getContractService>
  accounts: ReturnType<typeof ServiceManager.getAccountService>
  config: ReturnType<typeof ServiceManager.getConfigService>
  tx: ReturnType<typeof ServiceManager.getTxService>
  /** signs `operation` with `account` (BVMBuilder.invoke), sends it and polls for the receipt */
  bvm(account: Sdk.Account, operation: Sdk.BvmOperation.Builtin): Promise<BvmOutcome>
  /** the same through contract_manageContractByVote (the SDK's ContractService.manageContractByVote), polling tx_getTransactionReceipt */
  byVote(account: Sdk.Account, operation: Sdk.BvmOperation.Builtin): Promise<BvmOutcome>
  /** the same, expected to succeed */
  ok(account: Sdk.Account, operation: Sdk.BvmOperation.Builtin, label: string): Promise<BvmOutcome>
  /** the same, expected to be refused with an Err matching `err` */
  refused(account: Sdk.Account, operation: Sdk.BvmOperation.Builtin, err: RegExp, label: string): Promise<BvmOutcome>
  /** config_getProposal through the SDK */
  proposal(): Promise<Sdk.ConfigServiceType.Proposal>
}

function outcomeOf(receipt: Sdk.Receipt): BvmOutcome {
  assert.is(receipt.vmType, 'BVM', 'a BVM receipt')
  const decoded = DecodeUtil.decodeBvmResultRet(receipt.ret) as { Success: boolean; Ret: string | null; Err: string }
  return { ...decoded, Ret: DecodeUtil.decodeBvmResultRetRet(decoded.Ret as string), txHash: receipt.txHash, receipt }
}

/** The SDK's services against the node at `url` (http://host:port). */
export async function govClient(url: string): Promise<GovClient> {
  const pm = await ProviderManager.createManager({ httpProviders: [new HttpProvider(1, url.replace(/^http:\/\//, ''))] })
  const contracts = ServiceManager.getContractService(pm)
  const client: GovClient = {
    pm,
    contracts,
    accounts: ServiceManager.getAccountService(pm),
    config: ServiceManager.getConfigService(pm),
    tx: ServiceManager.getTxService(pm),
    async bvm(account, operation) {
      // the .d.ts types invoke(a, b, c) loosely; the operation form is (operation)
      const tx = (new Transaction.BVMBuilder(account.getAddress(), pm) as unknown as { invoke(op: unknown): { build(): Sdk.Transaction } })
        .invoke(operation)
        .build()
      tx.sign(account)
      // a VP in a view change or recovering refuses with -32006 (nothing admitted): send again shortly
      const deadline = Date.now() + 60_000
      let sent: Awaited<ReturnType<ReturnType<typeof contracts.invoke>['send']>>
      for (;;) {
        try {
          sent = await contracts.invoke(tx).send()
          break
        } catch (error) {
          if (!(error instanceof RequestError) || error.getCode() !== -32006 || Date.now() > deadline) throw error
          await new Promise((resolve) => setTimeout(resolve, 200))
        }
      }
      assert.is(sent.code, 0, `submission: ${sent.message}`)
      return outcomeOf((await sent.poll()).result)
    },
    async byVote(account, operation) {
      const tx = (new Transaction.BVMBuilder(account.getAddress(), pm) as unknown as { invoke(op: unknown): { build(): Sdk.Transaction } })
        .invoke(operation)
        .build()
      tx.sign(account)
      const sent = await contracts.manageContractByVote(tx).send()
      assert.is(sent.code, 0, `contract_manageContractByVote: ${sent.message}`)
      const deadline = Date.now() + 60_000
      for (;;) {
        try {
          return outcomeOf((await client.tx.getTransactionReceipt(sent.result).send()).result)
        } catch (error) {
          if (!(error instanceof RequestError) || error.getCode() !== -32001 || Date.now() > deadline) throw error
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
    },
    async ok(account, operation, label) {
      const outcome = await client.bvm(account, operation)
      assert.ok(outcome.Success, `${label}: expected success, got ${outcome.Err}`)
      return outcome
    },
    async refused(account, operation, err, label) {
      const outcome = await client.bvm(account, operation)
      assert.not.ok(outcome.Success, `${label}: expected a refusal`)
      assert.match(outcome.Err, err, `${label}: ${outcome.Err}`)
      return outcome
    },
    async proposal() {
      const reply = await client.config.getProposal().send()
      assert.is(reply.code, 0, `config_getProposal: ${reply.message}`)
      return reply.result
    },
  }
  return client
}

export const Proposal = () => new BvmOperation.Proposal.Builder()
export const Permission = () => new BvmOperation.Permission.Builder()
export const Config = () => new BvmOperation.Config.Builder()
export const Cns = () => new BvmOperation.CNS.Builder()
export const ContractOp = () => new BvmOperation.Contract.Builder()
export const NodeOp = () => new BvmOperation.Node.Builder()

/** A CONFIG proposal that sets these namespace filter rules (the SDK's NsFilterRule) and turns filtering on. */
export function filterRulesProposal(rules: object[]): ReturnType<ReturnType<typeof Proposal>['build']> {
  return Proposal()
    .createForConfig(
      Config()
        .setFilterRules(rules as never)
        .build(),
      Config().setFilterEnable(true).build(),
    )
    .build()
}

/** A SYSTEM proposal raising the chain's running versions to `target` (the SDK's SystemUpgrade). */
export function systemUpgradeProposal(target: Record<string, string>): ReturnType<ReturnType<typeof Proposal>['build']> {
  return Proposal()
    .createForSystemUpgrade(new BvmOperation.SystemUpgrade.Builder().systemUpgrade(target as never).build())
    .build()
}

/** A counter contract and its second version (which adds 2), for deployments and upgrades by vote. */
export const COUNTER = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract Counter {
    uint256 public count;
    function add() public { count += 1; }
}
contract CounterV2 {
    uint256 public count;
    function add() public { count += 2; }
}
`

/** COUNTER compiled with solc: Counter's ABI and init code, CounterV2's init code. */
export function counterContract(): { abi: string; bin: string; binV2: string } {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string }
  const input = {
    language: 'Solidity',
    sources: { 'counter.sol': { content: COUNTER } },
    settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>
  }
  const counter = output.contracts['counter.sol'].Counter
  return {
    abi: JSON.stringify(counter.abi),
    bin: counter.evm.bytecode.object,
    binV2: output.contracts['counter.sol'].CounterV2.evm.bytecode.object,
  }
}

/** an SDK account's private key (its field is protected in the SDK's types) */
/** the account's private key as 32 bytes of hex: the SDK's genAccount keeps elliptic's `getPrivate('hex')`, which drops leading zeros (a key in 16 is 63 digits or fewer) */
export const keyOf = (x: { account: unknown }): string =>
  `0x${(x.account as { privateKey: string }).privateKey.replace(/^0x/, '').padStart(64, '0')}`

/**
 * version_setSupportedVersion through the SDK's VersionService (it polls the receipt), signed as an
 * operator by `admin` over the body the SDK's HttpProvider sends (docs/governance.md §13); without
 * `admin`, unsigned. The receipt decoded, or the refusal's code and message.
 */
export async function declareVersions(
  pm: Sdk.ProviderManager,
  admin?: { account: unknown },
): Promise<BvmOutcome | { code: number; message: string }> {
  const request = ServiceManager.getVersionService(pm).setSupportedVersion()
  if (admin !== undefined)
    for (const [name, value] of Object.entries(
      operatorHeaders(accountFromPrivateKey(keyOf(admin)), sdk.JSONBigintUtil.stringify(request.body())),
    ))
      request.addHeader(name, value)
  try {
    const sent = await request.send()
    return outcomeOf((await sent.poll()).result as Sdk.Receipt)
  } catch (error) {
    if (!(error instanceof RequestError)) throw error
    return error.getResponse() as { code: number; message: string }
  }
}
