/**
 * The official Hyperchain JS SDK (@hyperchain/jssdk 1.1.0, unmodified) against a real Keel node
 * over HTTP (sdk-wire.md §9): the flows of test/helpers/jssdk-flows.ts (start-up handshake, ECDSA
 * and SM2 transfers, an EVM contract taken through deploy, write, read, freeze, unfreeze and
 * upgrade, block and transaction queries, the SDK's own receipt polling). No mocks: every SDK call
 * reaches the node this file starts. test/network/sdk.test.ts runs the same flows on a network.
 *
 *   npx tsx test/sdk/jssdk.test.ts
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import type { KeelNode } from '../../src/node.ts'
import { GENESIS_BALANCE, sdkFlows } from '../helpers/jssdk-flows.ts'
import { startTestNode } from '../helpers/node.ts'

let node: KeelNode
const flows = sdkFlows({
  url: () => node.url,
  hostname: 'node1',
  // a node running alone signs receipts with its TCert CA key
  receiptCert: () => readFileSync(join(node.config.node.dataDir, node.config.node.namespace, 'tcert-ca.crt'), 'utf8'),
  nodes: { vps: ['node1'], nvps: [] },
})

test.before(async () => {
  node = await startTestNode({
    genesis: { accounts: flows.fundedAddresses.map((address) => ({ address, balance: GENESIS_BALANCE.toString() })) },
  })
})

test.after(async () => {
  await node?.stop()
  flows.printLatencies('one node')
})

for (const step of flows.steps) test(step.name, step.run)

test.run()
