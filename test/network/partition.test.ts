/**
 * A network partition over real processes: 4 VPs, each its own process (test timers), every peer
 * link through a TCP proxy of this test (test/helpers/tcp-proxy.ts: each node's hosts.toml points
 * at one proxy per peer), so one node can be cut off from all the others, both ways, and healed.
 * While a node is cut off the other three (a quorum) go on; once healed it catches up, and what it
 * accepted from clients while alone is re-gossiped and committed (consensus.md §10.8). After each
 * step: identical blocks at every height (I1), one outcome per accepted hash, the same on every
 * node (I3).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type NetworkPlan, nodeUrl } from '../../src/devnet/network.ts'
import { HOSTS_FILE } from '../../src/p2p/config.ts'
import { assertNoFork, assertSameOutcomes, call, height } from '../helpers/audit.ts'
import { primaryAt, sendTransfers, sleep, waitCommitted } from '../helpers/client-load.ts'
import { processNetwork } from '../helpers/process-network.ts'
import { type Partitioner, partitionable } from '../helpers/tcp-proxy.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

const net = processNetwork('partition')
const { dir, processes } = net
let plan: NetworkPlan
let funder: Wallet
let partition: Partitioner
const accepted: string[] = []

const urlOf = net.urlOf
const allUrls = () => plan.nodes.map((node) => nodeUrl(node))
const urlsOf = (...hostnames: string[]) => hostnames.map(urlOf)
const hostnames = () => plan.nodes.map((node) => node.hostname)

/**
 * Transfers sent to a node that has just been cut off, for as long as it still takes them (it
 * turns them away with -32006 once it notices it is alone): what it accepted must not be lost.
 */
async function sendWhileAlone(hostname: string, upTo: number): Promise<string[]> {
  const hashes: string[] = []
  for (let i = 0; i < upTo; i++) {
    const reply = await call(urlOf(hostname), 'tx_sendTransaction', [funder.transfer(wallet().address, 1)])
    if (reply.code !== 0) {
      assert.is(reply.code, -32006, `an isolated node may only answer "busy": ${reply.message}`)
      break
    }
    hashes.push(reply.result as string)
  }
  accepted.push(...hashes)
  return hashes
}

async function load(count: number, ...hostnames: string[]): Promise<string[]> {
  const hashes = await sendTransfers(funder, urlsOf(...hostnames), count)
  accepted.push(...hashes)
  return hashes
}

test.before(async () => {
  ;({ plan, funder } = await net.create({ vps: 4 }))
  partition = await partitionable(plan.nodes, (hostname, lines) =>
    writeFileSync(
      join(dir, hostname, 'config', HOSTS_FILE),
      `hosts = [\n${lines.map((line) => `  ${JSON.stringify(line)},`).join('\n')}\n]\n`,
    ),
  )
  await Promise.all(plan.nodes.map((node) => net.start(node.hostname)))
})

test.after(async () => {
  await net.killAll()
  await partition?.close()
})

test('every link through the proxies: the four VPs commit one chain', async () => {
  const hashes = await load(40, 'node1', 'node2', 'node3', 'node4')
  const ms = await waitCommitted(hashes, allUrls(), 60_000)
  console.log(`  40 transfers committed on all 4 VPs through the proxies in ${ms} ms`)
  assert.ok((await assertNoFork(allUrls())) >= 1)
  console.log(`  primary: ${await primaryAt(urlOf('node2'))}`)
})

test('a backup cut off under load: the others go on; healed, it catches up and what it accepted alone is committed', async () => {
  // the primary may have changed already (nodes starting seconds apart on a busy machine)
  const primary = (await primaryAt(urlOf('node1')))!
  const victim = ['node4', 'node3'].find((hostname) => hostname !== primary)!
  const others = hostnames().filter((hostname) => hostname !== victim)
  partition.cut(victim)
  const cutAt = Date.now()
  const alone = await sendWhileAlone(victim, 5)
  const during = await load(60, ...others)
  await waitCommitted(during, urlsOf(...others), 60_000)
  const stuckAt = await height(urlOf(victim))
  // long enough for node4's request timer and several rounds of recovery while alone
  await sleep(Math.max(0, 12_000 - (Date.now() - cutAt)))
  const tip = await height(urlOf(others[0]))
  assert.ok(tip > stuckAt, `the three went on without ${victim} (${tip} > ${stuckAt})`)
  assert.is(await height(urlOf(victim)), stuckAt, `${victim} alone commits nothing`)
  partition.heal(victim)
  const healedAt = Date.now()
  const ms = await waitCommitted([...during, ...alone], allUrls(), 60_000)
  console.log(
    `  backup ${victim} cut off for ${healedAt - cutAt} ms (accepted ${alone.length} transfers alone, the others went from block ${stuckAt} to ${tip}); healed, it caught up and its own transfers committed everywhere in ${ms} ms`,
  )
  assert.ok(alone.length > 0, `${victim} took transfers before it noticed it was alone`)
  await waitCommitted(await load(20, victim, others[0]), allUrls(), 60_000)
  await assertNoFork(allUrls())
})

test('the primary cut off under load: a new view without it; healed, it rejoins, nothing it accepted is lost', async () => {
  const victim = (await primaryAt(urlOf('node1')))!
  const others = hostnames().filter((hostname) => hostname !== victim)
  partition.cut(victim)
  const cutAt = Date.now()
  const alone = await sendWhileAlone(victim, 5)
  const during = await load(40, ...others)
  const viewChangeMs = await waitCommitted(during, urlsOf(...others), 60_000)
  const primary = await primaryAt(urlOf(others[0]))
  assert.ok(primary !== undefined && primary !== victim, `the others chose a new primary, got ${primary}`)
  await sleep(Math.max(0, 15_000 - (Date.now() - cutAt)))
  partition.heal(victim)
  const healedAt = Date.now()
  const ms = await waitCommitted([...during, ...alone], allUrls(), 90_000).catch((error) => {
    for (const [hostname, node] of processes)
      console.log(
        `${hostname}:\n${node
          .output()
          .split('\n')
          .filter((l) => /view|recover|transfer|sync|WARN|ERROR/.test(l))
          .slice(-25)
          .join('\n')}`,
      )
    throw error
  })
  console.log(
    `  primary ${victim} cut off for ${healedAt - cutAt} ms: ${primary} took over (the load committed ${viewChangeMs} ms after the last was sent); healed, ${victim} caught up and its ${alone.length} lone transfers committed everywhere in ${ms} ms`,
  )
  assert.ok(alone.length > 0, `${victim} took transfers before it noticed it was alone`)
  const after = await load(20, 'node1', 'node2', 'node3', 'node4')
  await waitCommitted(after, allUrls(), 60_000)
  await assertNoFork(allUrls())
  await assertSameOutcomes(allUrls(), accepted)
  for (const [hostname, node] of processes) assert.not.ok(node.hasExited(), `${hostname} is still running`)
})

test.run()
