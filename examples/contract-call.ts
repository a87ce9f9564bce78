/**
 * README "The client package": a Solidity contract, compiled by the node (contract_compileContract),
 * deployed with a constructor argument, called with keel-client's ABI helpers, its event log and
 * its return value decoded:
 *
 *   npx tsx examples/contract-call.ts [--url http://127.0.0.1:8081] [--key-file data/global/genesis-account.json]
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  accountFromPrivateKey,
  createClient,
  decodeEventLog,
  decodeFunctionResult,
  encodeDeploy,
  encodeFunctionCall,
  signDeploy,
  signInvoke,
  waitForReceipt,
} from 'keel-client'
import { exampleOptions } from './options.ts'

// examples/Counter.sol: a counter with a constructor argument, an event and a view function
const SOURCE = readFileSync(join(import.meta.dirname, 'Counter.sol'), 'utf8')

const options = exampleOptions(
  {},
  'compiles a Solidity contract on the node, deploys it, calls it and reads its event, signing with the key file',
)
const client = createClient({ url: options.url })
const account = accountFromPrivateKey(options.privateKey())

const compiled = await client.contract_compileContract(SOURCE)
const abi = compiled.abi[0] // JSON text; the helpers take it as it is, or parsed
const bin = compiled.bin[0]

// deploy with the constructor's argument
const deployed = await waitForReceipt(client, await client.contract_deployContract(signDeploy(account, encodeDeploy(bin, abi, [40n]))))
const counter = deployed.contractAddress
console.log(`deployed Counter at ${counter}`)

// call add(2, "two more") and decode the event it logged
const payload = encodeFunctionCall(abi, 'add', [2n, 'two more'])
const receipt = await waitForReceipt(client, await client.contract_invokeContract(signInvoke(account, counter, payload)))
for (const log of receipt.log) {
  const event = decodeEventLog(abi, log)
  console.log(`event ${event?.name}: by ${event?.args.by}, amount ${event?.args.amount}, note ${JSON.stringify(event?.args.note)}`)
}

// read get() without a transaction: simulate_invokeContract runs it and answers the receipt at once
const call = signInvoke(account, counter, encodeFunctionCall(abi, 'get'), { simulate: true })
const [total] = decodeFunctionResult(abi, 'get', (await client.simulate_invokeContract(call)).ret)
console.log(`get() → ${total}`)
