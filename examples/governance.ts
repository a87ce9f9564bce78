/**
 * Governance with the official Hyperchain JS SDK, unchanged (README "Governance", docs/governance.md):
 *
 *   npx tsx examples/governance.ts <command> [arguments] [--url <node>] [--key-file <file>]
 *
 * Commands (each signs with the key file's key):
 *   new-account --out <file>        write a new account's key file
 *   grant <role> <address>          propose: create the role if it does not exist, grant it
 *   revoke <role> <address>         propose: revoke a role
 *   name <address> <name>           propose: name a contract (an empty name removes it)
 *   vote <id> [--against]           vote on the open proposal
 *   execute <id>                    execute a proposal that reached its threshold (its creator)
 *   cancel <id>                     cancel an open proposal (its creator)
 *   proposal                        show the latest proposal
 *   deploy                          compile and deploy examples/Counter.sol, print its address
 *   abandon <address>               abandon an account (itself, or an admin)
 *   roles <address> | status <address> | names
 *
 * A proposal its creator's vote already passes (a chain with one admin) is executed at once.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { exampleOptions, explainConnectionFailure, fail } from './options.ts'

const HELP = `usage: npx tsx examples/governance.ts <command> [arguments] [--url <node>] [--key-file <file>]
  new-account --out <file>   write a new account's key file ({"address", "privateKey"})
  grant <role> <address>     propose: create the role if it does not exist, then grant it
  revoke <role> <address>    propose: revoke a role
  name <address> <name>      propose: name a contract ("" removes its name)
  vote <id> [--against]      vote on the open proposal
  execute <id>               execute a proposal that reached its threshold (its creator only)
  cancel <id>                cancel an open proposal (its creator only)
  proposal                   show the latest proposal
  deploy                     compile and deploy examples/Counter.sol (starting at 0); prints the address
  abandon <address>          abandon an account (the account itself, or an admin)
  roles <address>            the account's roles
  status <address>           the account's status (normal, frozen, abandoned)
  names                      every contract name
--url defaults to KEEL_URL or http://127.0.0.1:8081; --key-file to data/global/genesis-account.json.`

if (process.argv.includes('--help') || process.argv.includes('-h') || process.argv.length <= 2) {
  console.log(HELP)
  process.exit(0)
}
const options = exampleOptions(
  {
    out: { type: 'string', description: 'new-account: the key file to write' },
    against: { type: 'boolean', description: 'vote: against the proposal' },
  },
  'governance with the official Hyperchain SDK: roles, proposals, votes, contract names, account status (run without arguments for the commands)',
  true,
)
const [command, ...args] = options.positionals
const sdk = createRequire(import.meta.url)('@hyperchain/jssdk')
sdk.resetLogger({ silent: true })

if (command === 'new-account') {
  const out = options.values.out as string | undefined
  if (out === undefined) fail('new-account needs --out <file>')
  const privateKey = randomBytes(32).toString('hex')
  const account = sdk.ServiceManager.getAccountService(sdk.ProviderManager.emptyManager()).fromPrivateKey(privateKey, sdk.Algo.ECRAW)
  const address = `0x${account.getAddress().toLowerCase().replace(/^0x/, '')}`
  writeFileSync(out, `${JSON.stringify({ address, privateKey: `0x${privateKey}` }, null, 2)}\n`, { mode: 0o600 })
  console.log(`account ${address} written to ${out}`)
  process.exit(0)
}

await fetch(options.url, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"tx_getTransactionsVersion","params":[]}' }).catch(
  (error) => explainConnectionFailure(options.url, error),
)
const pm = await sdk.ProviderManager.createManager({ httpProviders: [new sdk.HttpProvider(1, new URL(options.url).host)] })
const contracts = sdk.ServiceManager.getContractService(pm)
const accounts = sdk.ServiceManager.getAccountService(pm)
const config = sdk.ServiceManager.getConfigService(pm)
const { BvmOperation, DecodeUtil, Transaction } = sdk

const need = (count: number, usage: string): string[] => {
  if (args.length < count) fail(`usage: ${command} ${usage} (--help lists the commands)`)
  return args
}
const signer = () => accounts.fromPrivateKey(options.privateKey().replace(/^0x/, ''), sdk.Algo.ECRAW)

/** Sends one BVM operation; prints and returns its decoded result, ending the example when it was refused. */
async function bvm(operation: unknown): Promise<unknown> {
  const account = signer()
  const tx = new Transaction.BVMBuilder(account.getAddress(), pm).invoke(operation).build()
  tx.sign(account)
  const receipt = (await (await contracts.invoke(tx).send()).poll()).result
  const result = DecodeUtil.decodeBvmResultRet(receipt.ret)
  if (!result.Success) fail(`refused: ${result.Err}`)
  return DecodeUtil.decodeBvmResultRetRet(result.Ret)
}

const show = (value: unknown) => console.log(JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? item.toString() : item), 2))

/** Creates a proposal; executes it at once when the creator's own vote passes it. */
async function propose(create: unknown): Promise<void> {
  const id = (await bvm(create)) as number
  const proposal = (await config.getProposal().send()).result
  console.log(`proposal ${id} (${proposal.type}): ${proposal.status}, ${proposal.score} of ${proposal.threshold} votes`)
  if (proposal.status === 'WAITING_EXE') {
    show(await bvm(new BvmOperation.Proposal.Builder().execute(id).build()))
    console.log(`proposal ${id} executed`)
  } else console.log(`the other admins vote with: npx tsx examples/governance.ts vote ${id} --key-file <their key file>`)
}

const Proposal = () => new BvmOperation.Proposal.Builder()
const Permission = () => new BvmOperation.Permission.Builder()
switch (command) {
  case 'grant': {
    const [role, address] = need(2, '<role> <address>')
    const exists = (await config.isRoleExist(role).send()).result
    const ops = [...(exists ? [] : [Permission().createRole(role).build()]), Permission().grant(role, address).build()]
    await propose(
      Proposal()
        .createForPermission(...ops)
        .build(),
    )
    break
  }
  case 'revoke': {
    const [role, address] = need(2, '<role> <address>')
    await propose(Proposal().createForPermission(Permission().revoke(role, address).build()).build())
    break
  }
  case 'name': {
    const [address, name] = need(2, '<address> <name>')
    await propose(Proposal().createForCNS(new BvmOperation.CNS.Builder().setCName(address, name).build()).build())
    break
  }
  case 'vote': {
    const [id] = need(1, '<id> [--against]')
    await bvm(
      Proposal()
        .vote(Number(id), options.values.against !== true)
        .build(),
    )
    const proposal = (await config.getProposal().send()).result
    console.log(`proposal ${id}: ${proposal.status}, ${proposal.score} of ${proposal.threshold} votes`)
    if (proposal.status === 'WAITING_EXE')
      console.log(`its creator ${proposal.creator} executes it with: npx tsx examples/governance.ts execute ${id}`)
    break
  }
  case 'execute':
    show(
      await bvm(
        Proposal()
          .execute(Number(need(1, '<id>')[0]))
          .build(),
      ),
    )
    console.log('executed')
    break
  case 'cancel':
    await bvm(
      Proposal()
        .cancel(Number(need(1, '<id>')[0]))
        .build(),
    )
    console.log('cancelled')
    break
  case 'proposal':
    show((await config.getProposal().send()).result)
    break
  case 'deploy': {
    const source = readFileSync(join(import.meta.dirname, 'Counter.sol'), 'utf8')
    const compiled = (await contracts.compileContract(source).send()).result
    const account = signer()
    const tx = new Transaction.EVMBuilder(account.getAddress(), pm).deploy(compiled.bin[0], compiled.abi[0], [0]).build()
    tx.sign(account)
    console.log(`contract ${(await (await contracts.deploy(tx).send()).poll()).result.contractAddress}`)
    break
  }
  case 'abandon':
    await bvm(new BvmOperation.Account.Builder().abandon(need(1, '<address>')[0], '').build())
    console.log(`account ${args[0]} abandoned`)
    break
  case 'roles':
    show((await accounts.getRoles(need(1, '<address>')[0]).send()).result)
    break
  case 'status':
    console.log((await accounts.getStatus(need(1, '<address>')[0]).send()).result)
    break
  case 'names':
    show((await config.getAllCNS().send()).result)
    break
  default:
    fail(`unknown command ${command}\n${HELP}`)
}
