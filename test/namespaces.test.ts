/**
 * Several namespaces in one node (issue 30; spec "Request envelope": "the node handles the request
 * inside that namespace"; -32010 "the namespace does not exist"). One node serves `global` and
 * `ns2` from the start, with request threads (the default layout), and starts and stops others while
 * it runs. Both configured namespaces fund the same account (its key file is written into both data
 * directories before the start), so the same signed bytes can be sent to each; a namespace started
 * later gets a generated account of its own and knows nothing of that one.
 *
 *   npx tsx test/namespaces.test.ts
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { WebSocket } from 'ws'
import { accountFromPrivateKey } from '../sdk/src/account.ts'
import { operatorHeaders } from '../sdk/src/operator.ts'
import { resolveConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { type KeelNode, startNode } from '../src/node.ts'
import { lockDataDir } from '../src/store/data-dir-lock.ts'
import { parseJson, stringifyJson } from '../src/wire/json.ts'
import { loadSdk } from './helpers/jssdk.ts'
import { post } from './helpers/node.ts'
import { wallet } from './helpers/wallet.ts'

interface Reply {
  namespace: string
  id: unknown
  code: number
  message: string
  result?: unknown
}

const dataDir = mkdtempSync(join(tmpdir(), 'keel-namespaces-'))
const funded = wallet()
const BALANCE = 10n ** 15n
let node: KeelNode
/** the node's log lines (info and above) */
const logLines: string[] = []

/** one request in `namespace` */
async function call(namespace: string, method: string, params: unknown[] = []): Promise<Reply> {
  return (await post(node.url, { jsonrpc: '2.0', namespace, id: 1, method, params })).body as Reply
}

async function balance(namespace: string, address: string): Promise<Reply> {
  return call(namespace, 'account_getBalance', [address])
}

async function receipt(namespace: string, hash: string): Promise<Reply> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const reply = await call(namespace, 'tx_getTransactionReceipt', [hash])
    if (reply.code !== -32001 || Date.now() > deadline) return reply
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function heightOf(namespace: string): Promise<number> {
  const reply = await call(namespace, 'block_latestBlock')
  return reply.code === 0 ? Number((reply.result as { number: string }).number) : 0
}

test.before(async () => {
  for (const name of ['global', 'ns2']) {
    mkdirSync(join(dataDir, name), { recursive: true })
    const account = { address: funded.address, privateKey: funded.privateKey, balance: BALANCE.toString() }
    writeFileSync(join(dataDir, name, 'genesis-account.json'), JSON.stringify(account))
  }
  node = await startNode(
    // two request threads: each opens and closes every namespace
    resolveConfig({ jsonrpc: { port: 0, threads: 2 }, node: { dataDir, namespaces: ['global', 'ns2'] }, log: { level: 'silent' } }),
    { log: createLogger({ level: 'info', write: (line) => logLines.push(line) }) },
  )
})

test.after(async () => {
  await node?.stop()
})

test('an unknown namespace is -32010 naming the namespaces served, over HTTP and WebSocket', async () => {
  const reply = await call('ns9', 'tx_getTransactionsVersion')
  assert.is(reply.code, -32010)
  assert.is(reply.message, "The namespace 'ns9' does not exist; this node serves 'global', 'ns2'")
  const ws = await openWs()
  const answer = await ws.ask({ jsonrpc: '2.0', namespace: 'ns9', id: 7, method: 'sub_subscribe', params: ['block'] })
  assert.is(answer.code, -32010)
  assert.match(answer.message, /'global', 'ns2'/)
  ws.close()
  // each namespace's lines name it
  for (const name of ['global', 'ns2'])
    assert.ok(
      logLines.some((line) => line.includes(`[keel:${name}] ledger in ${join(dataDir, name)}`)),
      `a line of ${name}: ${logLines.join('\n')}`,
    )
  const ready = (await (await fetch(`${node.url}/ready`)).json()) as { status: string; namespaces: Record<string, { status: string }> }
  assert.equal([ready.status, Object.keys(ready.namespaces)], ['ready', ['global', 'ns2']])
  const metrics = await (await fetch(`${node.url}/metrics`)).text()
  for (const name of ['global', 'ns2'])
    assert.match(metrics, new RegExp(`^keel_block_height\\{thread="chain",namespace="${name}"\\} `, 'm'))
  assert.equal(
    node.namespaces.list().map(({ name, state, isDefault }) => ({ name, state, isDefault })),
    [
      { name: 'global', state: 'running', isDefault: true },
      { name: 'ns2', state: 'running', isDefault: false },
    ],
  )
})

test('the same signed bytes sent to both namespaces are two independent transactions', async () => {
  const receiver = wallet().address
  const body = stringifyJson({ jsonrpc: '2.0', id: 1, method: 'tx_sendTransaction', params: [funded.transfer(receiver, 7)] })
  const inGlobal = parseJson(body.replace('"jsonrpc"', '"namespace":"global","jsonrpc"'), { maxDepth: 64 }) as Record<string, unknown>
  const inNs2 = parseJson(body.replace('"jsonrpc"', '"namespace":"ns2","jsonrpc"'), { maxDepth: 64 }) as Record<string, unknown>
  const sentGlobal = (await post(node.url, inGlobal)).body as Reply
  const sentNs2 = (await post(node.url, inNs2)).body as Reply
  assert.is(sentGlobal.code, 0, sentGlobal.message)
  assert.is(sentNs2.code, 0, `not a replay of the other namespace's transaction: ${sentNs2.message}`)
  assert.is(sentGlobal.result, sentNs2.result, 'the same bytes hash alike')
  const hash = sentGlobal.result as string
  for (const namespace of ['global', 'ns2']) {
    const got = await receipt(namespace, hash)
    assert.is(got.code, 0, `${namespace}: ${got.message}`)
    assert.is(got.namespace, namespace)
    assert.is(BigInt((await balance(namespace, receiver)).result as string), 7n, `${namespace}: the receiver got it once`)
    assert.is(BigInt((await balance(namespace, funded.address)).result as string), BALANCE - 7n, `${namespace}: the sender paid once`)
  }
  // sent again to either: a replay there
  assert.is(((await post(node.url, inNs2)).body as Reply).code, -32007)
})

test('balances, heights and transactions of one namespace are unknown in the other', async () => {
  const receiver = wallet().address
  const startNs2 = await heightOf('ns2')
  const hashes: string[] = []
  for (let i = 0; i < 3; i++) {
    const sent = await call('global', 'tx_sendTransaction', [funded.transfer(receiver, 5)])
    assert.is(sent.code, 0, sent.message)
    hashes.push(sent.result as string)
  }
  for (const hash of hashes) assert.is((await receipt('global', hash)).code, 0)
  assert.is(BigInt((await balance('global', receiver)).result as string), 15n)
  assert.is((await balance('ns2', receiver)).code, -32009, 'the account does not exist in ns2')
  assert.is(await heightOf('ns2'), startNs2, 'ns2 did not grow')
  assert.ok((await heightOf('global')) > startNs2)
  const unknown = await call('ns2', 'tx_getTransactionByHash', [hashes[0]])
  assert.is(unknown.code, -32001, unknown.message)
  const blockHash = ((await call('global', 'tx_getTransactionByHash', [hashes[0]])).result as { blockHash: string }).blockHash
  assert.is((await call('ns2', 'block_getBlockByHash', [blockHash, false])).code, -32001)
})

test('a batch mixing namespaces answers each element in its own', async () => {
  const receiver = wallet().address
  const sent = await call('ns2', 'tx_sendTransaction', [funded.transfer(receiver, 3)])
  assert.is((await receipt('ns2', sent.result as string)).code, 0)
  const batch = (
    await post(node.url, [
      { jsonrpc: '2.0', namespace: 'global', id: 1, method: 'account_getBalance', params: [receiver] },
      { jsonrpc: '2.0', namespace: 'ns2', id: 2, method: 'account_getBalance', params: [receiver] },
      { jsonrpc: '2.0', id: 3, method: 'account_getBalance', params: [receiver] },
      { jsonrpc: '2.0', namespace: 'nope', id: 4, method: 'account_getBalance', params: [receiver] },
    ])
  ).body as Reply[]
  assert.equal(
    batch.map(({ namespace, code }) => ({ namespace, code })),
    [
      { namespace: 'global', code: -32009 },
      { namespace: 'ns2', code: 0 },
      { namespace: 'global', code: -32009 },
      { namespace: 'global', code: -32010 },
    ],
  )
  assert.is(BigInt(batch[1].result as string), 3n)
})

test('a WebSocket subscription in one namespace sees nothing of the other; its id is unknown there', async () => {
  const ws = await openWs()
  const inGlobal = await ws.ask({ jsonrpc: '2.0', namespace: 'global', id: 1, method: 'sub_subscribe', params: ['block'] })
  const inNs2 = await ws.ask({ jsonrpc: '2.0', namespace: 'ns2', id: 2, method: 'sub_subscribe', params: ['block'] })
  assert.is(inNs2.namespace, 'ns2')
  const receiver = wallet().address
  for (let i = 0; i < 2; i++) {
    const sent = await call('global', 'tx_sendTransaction', [funded.transfer(receiver, 1)])
    assert.is((await receipt('global', sent.result as string)).code, 0)
  }
  const sent = await call('ns2', 'tx_sendTransaction', [funded.transfer(receiver, 1)])
  assert.is((await receipt('ns2', sent.result as string)).code, 0)
  const ns2Block = await heightOf('ns2')
  await ws.until((n) => n.some((m) => m.params?.subscription === inNs2.result && m.namespace === 'ns2'))
  await ws.until((n) => n.filter((m) => m.params?.subscription === inGlobal.result).length >= 2)
  const toNs2 = ws.notifications.filter((m) => m.params?.subscription === inNs2.result)
  assert.is(toNs2.length, 1, 'one block in ns2, none of global')
  assert.is((toNs2[0].params?.result as string).length, 66)
  assert.is(toNs2[0].params?.result, ((await call('ns2', 'block_getBlockByNumber', [ns2Block, false])).result as { hash: string }).hash)
  assert.ok(ws.notifications.filter((m) => m.params?.subscription === inGlobal.result).every((m) => m.namespace === 'global'))
  const crossed = await ws.ask({ jsonrpc: '2.0', namespace: 'ns2', id: 3, method: 'sub_unsubscribe', params: [inGlobal.result] })
  assert.is(crossed.code, -32012, 'a subscription of global is unknown in ns2')
  assert.is((await ws.ask({ jsonrpc: '2.0', namespace: 'global', id: 4, method: 'sub_unsubscribe', params: [inGlobal.result] })).code, 0)
  ws.close()
})

test('a polling filter of one namespace is unknown in the other', async () => {
  const made = await call('global', 'sub_newBlockSubscription', [false])
  assert.is(made.code, 0)
  assert.is((await call('ns2', 'sub_getSubscriptionChanges', [made.result])).code, -32012)
  assert.is((await call('global', 'sub_getSubscriptionChanges', [made.result])).code, 0)
})

test('the official SDK against each namespace (its provider option `namespace`)', async () => {
  const { ProviderManager, HttpProvider, ServiceManager, Transaction, Algo } = loadSdk()
  const host = node.url.replace(/^http:\/\//, '')
  const account = ServiceManager.getAccountService(ProviderManager.emptyManager()).genAccount(Algo.ECRAW)
  const receiver = `0x${'77'.repeat(20)}`
  for (const [namespace, amount] of [
    ['global', 11],
    ['ns2', 22],
  ] as const) {
    const funding = await call(namespace, 'tx_sendTransaction', [funded.transfer(`0x${account.getAddress().toLowerCase()}`, 100)])
    assert.is((await receipt(namespace, funding.result as string)).code, 0)
    const pm = await ProviderManager.createManager({ namespace, httpProviders: [new HttpProvider(1, host)] })
    assert.is(pm.getNamespace(), namespace)
    const tx = new Transaction.Builder(account.getAddress(), pm).transfer(receiver, amount).build()
    tx.sign(account)
    const response = await ServiceManager.getTxService(pm).sendTx(tx).send()
    assert.is(response.namespace, namespace)
    const polled = await response.poll()
    assert.is(polled.code, 0)
    const got = await ServiceManager.getAccountService(pm).getBalance(receiver).send()
    assert.is(BigInt(got.result), BigInt(amount), `${namespace}: the balance of that namespace alone`)
  }
})

test('a namespace started while the node runs serves at once; stopped, it is -32010; the others keep serving', async () => {
  const started = await node.namespaces.start('ns3')
  assert.is(started.state, 'running', started.reason)
  const ns3Account = node.namespaces.get('ns3')?.devAccount
  assert.ok(ns3Account !== undefined && ns3Account.address !== funded.address, 'a generated account of its own')
  assert.is(BigInt((await balance('ns3', ns3Account.address)).result as string) > 0n, true)
  // the account both configured namespaces fund does not exist in ns3's genesis
  const refused = await call('ns3', 'tx_sendTransaction', [funded.transfer(wallet().address, 1)])
  if (refused.code === 0) assert.is.not((await receipt('ns3', refused.result as string)).code, 0, 'no balance in ns3')
  else assert.is.not(refused.code, 0)
  const stopped = await node.namespaces.stop('ns3')
  assert.is(stopped.state, 'stopped')
  assert.is((await balance('ns3', ns3Account.address)).code, -32010)
  assert.is((await balance('ns2', funded.address)).code, 0)
  // started again: the same ledger
  assert.is((await node.namespaces.start('ns3')).state, 'running')
  assert.is((await balance('ns3', ns3Account.address)).code, 0)
  await node.namespaces.stop('ns3')
  const refusal = await node.namespaces.stop('global').then(
    () => undefined,
    (error: Error) => error.message,
  )
  assert.match(refusal ?? '', /default/)
})

test('a namespace that cannot start (its directory locked) is reported failed and the others serve', async () => {
  const lock = lockDataDir(join(dataDir, 'ns4'))
  try {
    const failed = await node.namespaces.start('ns4')
    assert.is(failed.state, 'failed')
    assert.match(failed.reason ?? '', /lock|held|used/i)
    assert.is((await call('ns4', 'block_latestBlock')).code, -32010)
    assert.is((await balance('global', funded.address)).code, 0)
    assert.is(node.namespaces.list().find((status) => status.name === 'ns4')?.state, 'failed')
  } finally {
    lock.release()
  }
  assert.is((await node.namespaces.start('ns4')).state, 'running', 'started once the directory is free')
  await node.namespaces.stop('ns4')
})

test('node_startNamespace / node_stopNamespace / node_getNamespaces: operator methods, answered in the namespace the request names', async () => {
  const unsigned = await call('global', 'node_startNamespace', ['ns5'])
  assert.is(unsigned.code, -32008, unsigned.message)
  const started = await operatorCall('global', 'node_startNamespace', ['ns5'])
  assert.is(started.code, 0, started.message)
  assert.equal(started.result, { name: 'ns5', state: 'running', isDefault: false, height: 0 })
  const listed = await call('ns2', 'node_getNamespaces')
  assert.equal(
    (listed.result as { name: string; state: string }[]).map(({ name, state }) => `${name} ${state}`),
    ['global running', 'ns2 running', 'ns3 stopped', 'ns4 stopped', 'ns5 running'],
  )
  assert.is((await call('ns5', 'block_latestBlock')).namespace, 'ns5')
  const again = await operatorCall('global', 'node_startNamespace', ['ns5'])
  assert.is(again.code, -32602)
  assert.match(again.message, /ns5 is running/)
  // the funded account is no admin of ns5's genesis (ns5 generated its own): refused there
  assert.is((await operatorCall('ns5', 'node_stopNamespace', ['ns5'])).code, -32008)
  const stopped = await operatorCall('global', 'node_stopNamespace', ['ns5'])
  assert.equal(stopped.result, { name: 'ns5', state: 'stopped', isDefault: false })
  assert.is((await call('ns5', 'block_latestBlock')).code, -32010)
  assert.is((await operatorCall('global', 'node_stopNamespace', ['global'])).code, -32602)
})

/** one request in `namespace`, signed by the funded account as an operator (an admin of global's and ns2's genesis) */
async function operatorCall(namespace: string, method: string, params: unknown[]): Promise<Reply> {
  const body = stringifyJson({ jsonrpc: '2.0', namespace, id: 1, method, params })
  return (await post(node.url, body, { headers: operatorHeaders(accountFromPrivateKey(funded.privateKey), body) })).body as Reply
}

interface Notification {
  namespace?: string
  params?: { subscription: string; result: unknown }
}

/** a WebSocket client of the node: answers by id, notifications kept */
async function openWs(): Promise<{
  ask(request: Record<string, unknown>): Promise<Reply>
  notifications: Notification[]
  until(done: (notifications: Notification[]) => boolean): Promise<void>
  close(): void
}> {
  const socket = new WebSocket(node.url.replace(/^http/, 'ws'))
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  const notifications: Notification[] = []
  const waiting = new Map<unknown, (reply: Reply) => void>()
  let changed: (() => void) | undefined
  socket.on('message', (data: Buffer) => {
    const message = parseJson(data.toString('utf8'), { maxDepth: 64 }) as unknown as Reply & Notification & { method?: string }
    if (message.method === 'sub_subscription') {
      notifications.push(message)
      changed?.()
    } else waiting.get(Number(message.id))?.(message)
  })
  return {
    ask: (request) =>
      new Promise((resolve) => {
        waiting.set(Number(request.id), resolve)
        socket.send(stringifyJson(request))
      }),
    notifications,
    async until(done) {
      const deadline = Date.now() + 10_000
      while (!done(notifications)) {
        if (Date.now() > deadline) throw new Error(`notifications did not arrive: ${stringifyJson(notifications)}`)
        await new Promise<void>((resolve) => {
          changed = resolve
          setTimeout(resolve, 100)
        })
      }
    },
    close: () => socket.close(),
  }
}

test.run()
