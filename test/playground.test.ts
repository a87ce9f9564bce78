/**
 * Browser test of the OpenRPC playground page: a real node on an ephemeral port, Debian's Chromium driven
 * by playwright-core, and assertions on what a person sees. Needs /usr/bin/chromium (scripts/ensure-chromium.sh).
 * Set PLAYGROUND_SCREENSHOT=/tmp/playground.png to save a screenshot for a visual check.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { BVM_ADDRESS, bvmPayload, cnsContent, hashOperation, proposalOperation, SYSTEM_OPERATION_MAX } from '../sdk/src/bvm.ts'
import { jvmRetText } from '../sdk/src/jvm.ts'
import type { TxFields } from '../sdk/src/sign-string.ts'
import { checkTransactionSignature } from '../src/crypto/signature.ts'
import type { KeelNode } from '../src/node.ts'
import { parseJson } from '../src/wire/json.ts'
import { receiptOf } from './helpers/chain.ts'
import { compileExample } from './helpers/jvm.ts'
import { startTestNode } from './helpers/node.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
interface DocumentMethod {
  name: string
  summary?: string
  'x-aliases'?: string[]
}
const documentMethods: DocumentMethod[] = JSON.parse(readFileSync(join(root, 'openrpc.json'), 'utf8')).methods

// These flags matter on this machine: no sandbox for root, and no background traffic on a closed network.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

// 2^53 + 1: the smallest positive integer a double cannot hold, so any trip through JSON.parse shows.
const BIG = '9007199254740993'

interface Watched {
  page: Page
  /** console errors, page errors and CSP violations seen so far */
  problems: string[]
  /** bodies of the JSON-RPC POSTs the page made, in order */
  posts: string[]
}

let node: KeelNode | undefined
let browser: Browser | undefined
let context: BrowserContext | undefined

async function openPage(): Promise<Watched> {
  if (!context || !node) throw new Error('before hook did not run')
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  const problems: string[] = []
  const posts: string[] = []
  page.on('console', (message) => {
    // Chromium fetches /favicon.ico by itself and the node answers 405 there; the page cannot declare an icon
    // instead because its CSP blocks data: URLs, so that one browser-made request is not the page's fault.
    if (new URL(message.location().url || 'about:blank').pathname === '/favicon.ico') return
    if (message.type() === 'error' || /content security policy/i.test(message.text())) problems.push(`console: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  page.on('request', (request) => {
    if (request.method() === 'POST') posts.push(request.postData() ?? '')
  })
  // Chromium also reports CSP violations as console errors; this catches any it reports only as an event.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI}`)
    })
  })
  return { page, problems, posts }
}

async function select(page: Page, method: string): Promise<void> {
  await page.fill('#method-filter', method)
  await page.click(`[data-method="${method}"]`)
  await page.waitForFunction((name) => document.getElementById('method-name')?.textContent === name, method)
}

/** Clicks Send and waits until the status line shows the reply (not the in-flight text). */
async function send(page: Page): Promise<string> {
  await page.click('#send')
  await page.waitForFunction(() => /^(HTTP \d+ · )?code /.test(document.getElementById('status')?.textContent ?? ''))
  return (await page.textContent('#status')) ?? ''
}

test.before(async () => {
  node = await startTestNode()
  try {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, timeout: 30_000 })
  } catch (error) {
    throw new Error(`cannot start /usr/bin/chromium; run scripts/ensure-chromium.sh first\n${error}`)
  }
  context = await browser.newContext()
})

test.after(async () => {
  await context?.close()
  await browser?.close()
  await node?.stop()
})

test('lists, describes and calls methods as a person would', async () => {
  const { page, problems, posts } = await openPage()
  const response = await page.goto(`${node?.url}/playground`)
  assert.is(response?.status(), 200)
  assert.is(await page.title(), 'Keel JSON-RPC playground')

  const total = documentMethods.length
  await page.waitForSelector('[data-method]')
  assert.is(await page.textContent('#method-count'), `${total} method${total === 1 ? '' : 's'}`)
  assert.is(await page.locator('[data-method]').count(), total)
  for (const { name } of documentMethods) assert.ok(await page.isVisible(`[data-method="${name}"]`), `${name} listed`)
  const groups = await page.locator('#method-list h3').allTextContents()
  assert.ok(groups.indexOf('tx') < groups.indexOf('block'), `services in a fixed order: ${groups.join(', ')}`)

  await page.fill('#method-filter', 'Version')
  assert.ok(await page.isVisible('[data-method="tx_getTransactionsVersion"]'))
  assert.not.ok(await page.isVisible('[data-method="tx_getTransactionByHash"]'), 'non-matching methods are hidden')
  // the filter looks at names, summaries and aliases, ignoring case; the document grows, so count from it
  const matching = documentMethods.filter((m) =>
    [m.name, m.summary ?? '', ...(m['x-aliases'] ?? [])].join('\n').toLowerCase().includes('version'),
  )
  assert.is(await page.textContent('#method-count'), `${matching.length} of ${total} methods`)
  assert.is(await page.locator('[data-method]:visible').count(), matching.length)

  await page.click('[data-method="tx_getTransactionsVersion"]')
  assert.is(await page.getAttribute('[data-method="tx_getTransactionsVersion"]', 'aria-current'), 'true')
  assert.is(await page.textContent('#method-name'), 'tx_getTransactionsVersion')
  assert.is(await page.textContent('#method-summary'), 'Transaction format version the node signs and verifies.')
  assert.match((await page.textContent('#method-errors')) ?? '', /-32602\s+INVALID_PARAMS/)
  assert.match((await page.textContent('#method-result')) ?? '', /TxVersion/)
  assert.is(await page.inputValue('#params'), '[]', 'prefilled from the success example')
  assert.is(await page.inputValue('#namespace'), 'global')

  assert.is(await send(page), 'code 0 · SUCCESS')
  assert.ok(await page.evaluate(() => document.getElementById('status')?.classList.contains('ok')), 'success is styled as such')
  assert.match((await page.textContent('#response')) ?? '', /"result": "4\.1"/)
  assert.match((await page.textContent('#elapsed')) ?? '', /^\d+(\.\d+)? ms round trip$/)
  const sent = JSON.parse(posts[posts.length - 1])
  assert.equal({ ...sent, id: 0 }, { jsonrpc: '2.0', namespace: 'global', id: 0, method: 'tx_getTransactionsVersion', params: [] })

  await select(page, 'tx_getTransactionByHash')
  assert.match(await page.inputValue('#params'), /^\["0x[0-9a-f]{64}"\]$/, 'prefilled from the first success example')
  assert.match((await page.textContent('#method-params')) ?? '', /txHash[\s\S]*required[\s\S]*Hash/)
  assert.match((await page.textContent('#method-errors')) ?? '', /-32001\s+DATA_NOT_FOUND/)
  await page.fill('#params', '["0x12"]')
  const status = await send(page)
  assert.match(status, /^code -32602 · /)
  assert.ok(await page.evaluate(() => document.getElementById('status')?.classList.contains('err')), 'failure is styled as such')
  assert.match((await page.textContent('#response')) ?? '', /"message": "invalid argument 0/)
  assert.not.match((await page.textContent('#response')) ?? '', /"result"/)

  // a broken params text must be reported on the page and nothing may leave it
  const before = posts.length
  await page.fill('#params', '["0x12",')
  await page.click('#send')
  await page.waitForSelector('#params-error', { state: 'visible' })
  assert.match(
    (await page.textContent('#params-error')) ?? '',
    /not valid JSON: unexpected end of input.*line 1, column 9\. Nothing was sent\./,
  )
  assert.is(await page.getAttribute('#params', 'aria-invalid'), 'true')
  assert.match((await page.textContent('#status')) ?? '', /not sent/)
  assert.is(await page.textContent('#response'), '')
  // a good send afterwards proves the request listener was live: exactly one more POST, the good one
  await page.fill('#params', '["0x1234"]')
  assert.ok(await page.isHidden('#params-error'), 'editing clears the error')
  assert.match(await send(page), /^code -32602 · /)
  assert.is(posts.length, before + 1)
  assert.match(posts[before], /"params":\["0x1234"\]/)

  if (process.env.PLAYGROUND_SCREENSHOT) await page.screenshot({ path: process.env.PLAYGROUND_SCREENSHOT, fullPage: true })
  assert.equal(problems, [])
  await page.close()
})

test('replays the examples of a method', async () => {
  const { page, problems } = await openPage()
  await page.goto(`${node?.url}/playground#tx_getTransactionsVersion`)
  await page.waitForFunction(() => document.getElementById('method-name')?.textContent === 'tx_getTransactionsVersion')
  await page.click('#replay')
  await page.waitForFunction(() => /passed$/.test(document.getElementById('replay-summary')?.textContent ?? ''))
  assert.is(await page.textContent('#replay-summary'), '2 of 2 examples passed')
  assert.is(await page.getAttribute('[data-example="current version"]', 'data-verdict'), 'pass')
  assert.is(await page.getAttribute('[data-example="unexpected argument"]', 'data-verdict'), 'pass')
  assert.equal(problems, [])
  await page.close()
})

test('keeps integers above 2^53 exact from document to editor, wire and reply', async () => {
  const { page, problems, posts } = await openPage()
  // The real node has no method taking or returning such a number yet, so an echo method is added on the wire.
  const fake = {
    name: 'test_echoNumber',
    summary: 'Echoes its first param.',
    params: [{ name: 'timestamp', required: true, schema: { $ref: '#/components/schemas/TimestampNs' } }],
    result: { name: 'timestamp', schema: { $ref: '#/components/schemas/TimestampNs' } },
    examples: [
      { name: 'echo', params: [{ name: 'timestamp', value: 'BIG' }], result: { name: 'timestamp', value: 'BIG' } },
      // equal to BIG once rounded to a double, so only a lossless comparison sees the difference
      { name: 'off by one', params: [{ name: 'timestamp', value: 'BIG' }], result: { name: 'timestamp', value: 'BIG_LESS_ONE' } },
    ],
  }
  const fakeText = JSON.stringify(fake)
    .replaceAll('"BIG_LESS_ONE"', (BigInt(BIG) - 1n).toString())
    .replaceAll('"BIG"', BIG)
  await page.route(`${node?.url}/`, async (route) => {
    const body = route.request().postData() ?? ''
    if (body.includes('"rpc.discover"')) {
      const upstream = await route.fetch()
      const text = (await upstream.text()).replace(/"methods":\s*\[/, (open) => `${open}${fakeText},`)
      await route.fulfill({ response: upstream, body: text })
    } else if (body.includes('"test_echoNumber"')) {
      const id = /"id":(\d+)/.exec(body)?.[1] ?? 'null'
      const first = /"params":\[([^,\]]*)/.exec(body)?.[1] || 'null'
      await route.fulfill({
        contentType: 'application/json',
        body: `{"jsonrpc":"2.0","namespace":"global","id":${id},"code":0,"message":"SUCCESS","result":${first}}`,
      })
    } else await route.continue()
  })
  await page.goto(`${node?.url}/playground`)
  await page.waitForSelector('[data-method="test_echoNumber"]')
  assert.is(await page.textContent('#method-count'), `${documentMethods.length + 1} methods`)
  await select(page, 'test_echoNumber')
  assert.is(await page.inputValue('#params'), `[${BIG}]`)
  assert.is(await send(page), 'code 0 · SUCCESS')
  assert.match(posts[posts.length - 1], new RegExp(`"params":\\[${BIG}\\]`))
  assert.match((await page.textContent('#response')) ?? '', new RegExp(`"result": ${BIG}\\b`))

  await page.click('#replay')
  await page.waitForFunction(() => /passed$/.test(document.getElementById('replay-summary')?.textContent ?? ''))
  assert.is(await page.getAttribute('[data-example="echo"]', 'data-verdict'), 'pass')
  assert.is(await page.getAttribute('[data-example="off by one"]', 'data-verdict'), 'fail')
  assert.equal(problems, [])
  await page.close()
})

test('builds, signs and sends a JVM deploy and a JVM call (Java contract class files from javac)', async () => {
  const { page, problems } = await openPage()
  const counter = await compileExample('counter', 'demo.Counter')
  const dir = mkdtempSync(join(tmpdir(), 'keel-playground-'))
  const classFile = join(dir, 'Counter.class')
  writeFileSync(classFile, counter.classes.get('demo/Counter') as Uint8Array)
  const dev = node?.devAccount
  if (dev === undefined || node === undefined) throw new Error('the test node has a generated genesis account')
  await page.goto(`${node.url}/playground`)
  await page.waitForSelector('[data-method]')
  const signAndSend = async (fill: () => Promise<void>): Promise<string> => {
    if (!(await page.evaluate(() => (document.getElementById('signer') as HTMLDetailsElement).open))) await page.click('#signer > summary')
    await page.fill('#sign-from', dev.address)
    await page.fill('#sign-key', dev.privateKey)
    await page.selectOption('#sign-engine', 'JVM')
    await fill()
    await page.click('#sign')
    await page.waitForFunction(() => document.getElementById('sign-status')?.textContent === 'signed: press Send')
    assert.match((await send(page)) ?? '', /^code 0 · SUCCESS/)
    const reply = JSON.parse((await page.textContent('#response')) ?? '{}') as { result: string }
    return reply.result
  }

  await select(page, 'contract_deployContract')
  assert.ok(await page.isVisible('#signer'), 'submission methods offer the signer')
  const deployHash = await signAndSend(async () => {
    await page.setInputFiles('#sign-classes', classFile)
    await page.fill('#sign-main', 'demo.Counter')
  })
  const deployed = await receiptOf(node.url, deployHash)
  assert.is(deployed.code, 0, deployed.message)
  assert.is(deployed.result?.vmType, 'JVM')
  const at = deployed.result?.contractAddress as string

  await select(page, 'contract_invokeContract')
  const callHash = await signAndSend(async () => {
    await page.fill('#sign-to', at)
    await page.fill('#sign-method', 'increment')
    await page.fill('#sign-args', '["visits"]')
  })
  const called = await receiptOf(node.url, callHash)
  assert.is(called.code, 0, called.message)
  assert.is(jvmRetText(called.result?.ret as string), '1')
  await select(page, 'block_latestBlock')
  assert.not.ok(await page.isVisible('#signer'), 'other methods do not')
  rmSync(dir, { recursive: true, force: true })
  assert.equal(problems, [])
})

test("builds, signs and sends BVM operations (Hash Set, a CNS proposal) with keel-client's builders; the node's answer is shown", async () => {
  const { page, problems, posts } = await openPage()
  const dev = node?.devAccount
  if (dev === undefined || node === undefined) throw new Error('the test node has a generated genesis account')
  await page.goto(`${node.url}/playground`)
  await page.waitForSelector('[data-method]')
  await select(page, 'contract_deployContract')
  assert.ok(await page.isHidden('#sign-engine option[data-for-kind="invoke"]'), 'BVM is offered for contract calls only')
  await select(page, 'contract_invokeContract')
  await page.click('#signer > summary')
  await page.fill('#sign-key', dev.privateKey)
  await page.selectOption('#sign-engine', 'BVM')
  assert.ok(await page.isHidden('#sign-to'), 'the operation names the built-in contract')
  const signAndSend = async (operation: string, first: string, second?: string) => {
    await page.selectOption('#bvm-operation', operation)
    await page.fill('#bvm-arg1', first)
    if (second !== undefined) await page.fill('#bvm-arg2', second)
    await page.click('#sign')
    await page.waitForFunction(() => document.getElementById('sign-status')?.textContent === 'signed: press Send')
    const status = await send(page)
    const sent = parseJson(posts[posts.length - 1], { maxDepth: 64 }) as { method: string; params: Record<string, unknown>[] }
    assert.is(sent.method, 'contract_invokeContract')
    const tx = sent.params[0]
    const check = checkTransactionSignature({ ...(tx as unknown as TxFields), opcode: tx.opCode as number }, tx.signature as string)
    assert.ok(check.valid, `the page's signature verifies on the node: ${check.reason}`)
    // the node's answer, whatever it is until BVM execution is merged (-32602 before), is what the page shows
    const reply = parseJson((await page.textContent('#response')) ?? '', { maxDepth: 64 }) as { code: number; message: string }
    assert.is(status, `code ${reply.code} · ${reply.message}`)
    return tx
  }
  assert.is(await page.textContent('#bvm-arg2-label'), 'Value')
  const put = await signAndSend('hash.set', 'greeting 键', 'hello 值')
  assert.is(put.type, 'BVM')
  assert.is(put.to, BVM_ADDRESS.hash)
  assert.is(put.payload, bvmPayload(hashOperation.set('greeting 键', 'hello 值')))
  assert.is(put.gasPrice, 0)
  const contract = '0x3434343434343434343434343434343434343434'
  const proposed = await signAndSend('proposal.cns', contract, 'counter')
  assert.is(proposed.to, BVM_ADDRESS.proposal)
  assert.is(proposed.payload, bvmPayload(proposalOperation.createForCNS(cnsContent.setCName(contract, 'counter'))))
  assert.is(proposed.gasPrice, SYSTEM_OPERATION_MAX, 'a proposal is a system operation')
  assert.is(proposed.expirationTimestamp, SYSTEM_OPERATION_MAX)
  await page.selectOption('#bvm-operation', 'proposal.vote')
  await page.fill('#bvm-arg1', 'one')
  await page.click('#sign')
  await page.waitForFunction(() => !document.getElementById('sign-error')?.hidden)
  assert.match((await page.textContent('#sign-error')) ?? '', /a proposal id is a whole number, got "one"/)
  assert.equal(problems, [])
})

test.run()
