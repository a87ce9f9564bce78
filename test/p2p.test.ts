/**
 * The peer network with real TLS on loopback: 4 VPs and 1 NVP in one process, each on a free port,
 * plus hostile peers built from the same frames (src/p2p/link-frames.ts) with raw gRPC clients.
 */
import { randomBytes, sign as signBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect as tlsConnect } from 'node:tls'
import * as grpc from '@grpc/grpc-js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { freePorts } from '../src/devnet/network.ts'
import { createLogger } from '../src/log.ts'
import { loadPeerConfig, localNetworkPlan, type PeerConfigInput, writePeerConfigFiles } from '../src/p2p/config.ts'
import { createNamespaceCa, issueNodeCert, type NamespaceCa, type NodeIdentity, nodeIdentityFrom } from '../src/p2p/identity.ts'
import {
  authTranscript,
  decodeFrame,
  encodeAuth,
  encodeBatch,
  encodeData,
  encodeHello,
  encodePing,
  type Frame,
  type Hello,
  PROTOCOL_VERSION,
} from '../src/p2p/link-frames.ts'
import {
  createPeerNetwork,
  LINK_PATH,
  linkChannelOptions,
  linkClientCredentials,
  type P2pRequestError,
  type PeerEvent,
  type PeerIdentity,
  type PeerLimits,
  type PeerNetwork,
  refusedAsDeleted,
} from '../src/p2p/network.ts'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** one port at a time: picked below the ephemeral range (src/devnet/network.ts freePorts) */
const freePort = async (): Promise<number> => (await freePorts(1))[0]

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const started = performance.now()
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(20)
  }
  return performance.now() - started
}

interface Node {
  net: PeerNetwork
  events: PeerEvent[]
  logs: string[]
  input: PeerConfigInput
  identity: NodeIdentity
  limits: Partial<PeerLimits>
}

function startNode(input: PeerConfigInput, identity: NodeIdentity, limits: Partial<PeerLimits>): Node {
  const dir = tempDir()
  writePeerConfigFiles(dir, input)
  const logs: string[] = []
  const log = createLogger({ level: 'info', write: (line) => logs.push(line) }, input.self.hostname)
  const net = createPeerNetwork({ config: loadPeerConfig(dir), identity, log, limits })
  const events: PeerEvent[] = []
  net.onPeerEvent((event) => events.push(event))
  return { net, events, logs, input, identity, limits }
}

const linked = (node: Node, hostname: string): boolean => node.net.peers().some((p) => p.hostname === hostname && p.status === 0)
const counters = (node: Node, hostname: string) => node.net.stats().byPeer[hostname]
const dirs: string[] = []
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-p2p-net-'))
  dirs.push(dir)
  return dir
}

const ca = await createNamespaceCa({ namespace: 'global' })
const foreignCa = await createNamespaceCa({ namespace: 'global' })
const identityOf = async (authority: NamespaceCa, hostname: string, role: 'VP' | 'NVP'): Promise<NodeIdentity> =>
  nodeIdentityFrom(authority, await issueNodeCert(authority, { hostname, role }))

const limits: Partial<PeerLimits> = { keepaliveMs: 300, reconnectMinMs: 100, reconnectMaxMs: 800 }
const ports = await freePorts(5)
const plan = localNetworkPlan({ vps: 4, nvps: 1, ports })
const nodes = new Map<string, Node>()
for (const [hostname, input] of plan)
  nodes.set(hostname, startNode(input, await identityOf(ca, hostname, input.self.vp ? 'VP' : 'NVP'), limits))
const node = (hostname: string): Node => nodes.get(hostname)!
const all = (): Node[] => [...nodes.values()]
const extra: PeerNetwork[] = []
const rawClients: grpc.Client[] = []

test.after(async () => {
  for (const client of rawClients) client.close()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await Promise.all([...all(), ...extra.map((net) => ({ net }))].map(({ net }) => net.stop()))
})

test('createPeerNetwork refuses a certificate that does not match peerconfig.toml, and limits that drop every big message', async () => {
  const input = plan.get('node2')!
  const dir = tempDir()
  const config = writePeerConfigFiles(dir, input)
  const nvpTwin = await identityOf(ca, 'node2', 'NVP')
  assert.throws(
    () => createPeerNetwork({ config, identity: node('node1').identity }),
    /certificate is for node1 but peerconfig.toml \[self\] hostname is node2/,
  )
  assert.throws(() => createPeerNetwork({ config, identity: nvpTwin }), /certificate says NVP but peerconfig.toml \[self\] vp = true/)
  assert.throws(
    () => createPeerNetwork({ config, identity: node('node2').identity, limits: { inboundByteBurst: 1024 } }),
    /inboundByteBurst \(1024\) is below maxMessageBytes/,
  )
})

test('4 VPs and an NVP all link: VPs to each other and to the NVP, the NVP to every VP; ids, roles, hashes, delays', async () => {
  const started = performance.now()
  await Promise.all(all().map((n) => n.net.start()))
  await waitFor(() => all().every((n) => n.net.peers().length === 4 && n.net.peers().every((p) => p.status === 0)), 5000, 'every link')
  const took = performance.now() - started
  assert.ok(took < 3000, `linked in ${took} ms`)
  const peers1 = node('node1').net.peers()
  assert.equal(peers1.map((p) => [p.hostname, p.id, p.vp, p.port]).sort(), [
    ['node2', 2, true, ports[1]],
    ['node3', 3, true, ports[2]],
    ['node4', 4, true, ports[3]],
    ['nvp1', 0, false, ports[4]],
  ])
  assert.is(peers1.find((p) => p.hostname === 'nvp1')?.ip, '127.0.0.1')
  assert.match(node('node1').net.self.nodeHash, /^fa34664e[0-9a-f]{52}663a$/)
  assert.is(
    node('node2')
      .net.peers()
      .find((p) => p.hostname === 'node1')?.nodeHash,
    node('node1').net.self.nodeHash,
  )
  assert.equal(node('nvp1').net.self, { hostname: 'nvp1', id: 0, vp: false, nodeHash: node('nvp1').net.self.nodeHash })
  // one link per pair: each side reports the peer connected exactly once
  for (const n of all()) assert.is(n.events.filter((e) => e.kind === 'connected').length, 4, n.net.self.hostname)
  await waitFor(
    () =>
      node('node1')
        .net.peers()
        .every((p) => p.delayNs > 0),
    2000,
    'keepalive round trips',
  )
  const delay = node('node1').net.peers()[0].delayNs
  assert.ok(delay > 1_000 && delay < 200_000_000, `delay ${delay} ns`)
})

test('send keeps order on a link; both directions; the sender is the authenticated peer', async () => {
  const received: [string, number][] = []
  node('node2').net.on(10, (from, payload) => received.push([from.hostname, Buffer.from(payload).readUInt32BE(0)]))
  const count = 3000
  for (let i = 0; i < count; i++) {
    const payload = Buffer.alloc(4)
    payload.writeUInt32BE(i)
    assert.ok(node('node1').net.send('node2', 10, payload))
  }
  await waitFor(() => received.length === count, 5000, 'all messages')
  assert.ok(
    received.every(([from, i], index) => from === 'node1' && i === index),
    'in order',
  )
  const back: string[] = []
  node('node1').net.on(11, (from) => back.push(from.hostname))
  assert.ok(node('node2').net.send('node1', 11, Buffer.from('x')))
  assert.ok(node('nvp1').net.send('node1', 11, Buffer.from('x')))
  await waitFor(() => back.length === 2, 2000, 'replies')
  assert.equal(back.sort(), ['node2', 'nvp1'])
  assert.not.ok(node('node1').net.send('node9', 10, Buffer.from('x')), 'unknown peer')
})

test('broadcast: to all, or filtered to VPs; an NVP message is marked vp = false', async () => {
  const got = new Map<string, PeerIdentity[]>()
  for (const n of all()) n.net.on(12, (from) => got.set(n.net.self.hostname, [...(got.get(n.net.self.hostname) ?? []), from]))
  assert.is(
    node('node1').net.broadcast(12, Buffer.from('vp only'), (peer) => peer.vp),
    3,
  )
  await waitFor(() => got.size === 3, 2000, 'VP broadcast')
  assert.equal([...got.keys()].sort(), ['node2', 'node3', 'node4'])
  got.clear()
  assert.is(node('node1').net.broadcast(12, Buffer.from('everyone')), 4)
  await waitFor(() => got.size === 4, 2000, 'broadcast')
  got.clear()
  assert.is(node('nvp1').net.broadcast(12, Buffer.from('from the nvp')), 4)
  await waitFor(() => got.size === 4, 2000, 'NVP broadcast')
  assert.ok([...got.values()].every(([from]) => from.hostname === 'nvp1' && from.vp === false && from.id === 0))
})

test('request/response: answered, failed at the peer, unknown channel, timeout, not connected', async () => {
  node('node3').net.onRequest(20, async (from, payload) => Buffer.concat([Buffer.from(`${from.hostname}:`), payload]))
  node('node3').net.onRequest(21, async () => {
    throw new Error('no such block')
  })
  node('node3').net.onRequest(22, () => new Promise(() => {}))
  const answer = await node('node1').net.request('node3', 20, Buffer.from('ping'), 2000)
  assert.is(Buffer.from(answer).toString(), 'node1:ping')
  const many = await Promise.all(Array.from({ length: 200 }, (_, i) => node('nvp1').net.request('node3', 20, Buffer.from(String(i)), 2000)))
  assert.ok(many.every((a, i) => Buffer.from(a).toString() === `nvp1:${i}`))
  const failure = async (promise: Promise<unknown>): Promise<P2pRequestError> =>
    promise.then(
      () => {
        throw new Error('resolved')
      },
      (error: P2pRequestError) => error,
    )
  const remote = await failure(node('node1').net.request('node3', 21, Buffer.alloc(0), 2000))
  assert.equal([remote.reason, remote.message], ['remote', 'p2p request to node3 channel 21 failed there: no such block'])
  const unknown = await failure(node('node1').net.request('node3', 23, Buffer.alloc(0), 2000))
  assert.match(unknown.message, /no handler for channel 23/)
  const started = performance.now()
  const timeout = await failure(node('node1').net.request('node3', 22, Buffer.alloc(0), 300))
  assert.equal([timeout.reason, timeout.message], ['timeout', 'p2p request to node3 channel 22: no answer within 300 ms'])
  assert.ok(performance.now() - started < 1000)
  assert.is((await failure(node('node1').net.request('node9', 20, Buffer.alloc(0), 300))).reason, 'not-connected')
})

test('sign/verify with the ECert keys seen on the links', () => {
  const bytes = Buffer.from('checkpoint 10')
  const signature = node('node1').net.sign(bytes)
  assert.is(signature.length, 64)
  assert.ok(node('node2').net.verify('node1', bytes, signature))
  assert.ok(node('nvp1').net.verify('node1', bytes, signature))
  assert.not.ok(node('node2').net.verify('node3', bytes, signature), 'another peer key')
  assert.not.ok(node('node2').net.verify('node1', Buffer.from('checkpoint 11'), signature), 'other bytes')
  assert.not.ok(node('node2').net.verify('node9', bytes, signature), 'unknown peer')
  assert.not.ok(node('node2').net.verify('node1', bytes, signature.subarray(1)), 'malformed signature')
})

test('a node of a foreign CA: the TLS handshake fails within 2 s and nothing it sends arrives', async () => {
  // at the TLS level, with the foreign certificate
  const foreign = await identityOf(foreignCa, 'node4', 'VP')
  const started = performance.now()
  const outcome = await new Promise<string>((resolve) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: ports[0],
      servername: 'node1',
      key: foreign.keyPem,
      cert: foreign.certPem,
      ca: ca.certPem,
      ALPNProtocols: ['h2'],
      checkServerIdentity: () => undefined,
    })
    socket.on('error', (error) => resolve(`error ${error.message}`))
    socket.on('close', () => resolve('closed'))
    socket.on('secureConnect', () => socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'))
  })
  const took = performance.now() - started
  assert.ok(took < 2000, `refused after ${took} ms`)
  assert.match(outcome, /error|closed/)
  // a whole foreign node that believes it is node4's twin and dials node1
  const received: string[] = []
  node('node1').net.on(30, (from) => received.push(from.hostname))
  const port = await freePort()
  const input: PeerConfigInput = {
    self: { id: 2, hostname: 'intruder', n: 2, vp: true },
    nodes: [
      { id: 1, hostname: 'node1' },
      { id: 2, hostname: 'intruder' },
    ],
    hosts: [
      { hostname: 'node1', ip: '127.0.0.1', port: ports[0] },
      { hostname: 'intruder', ip: '127.0.0.1', port },
    ],
  }
  const intruder = startNode(input, await identityOf(foreignCa, 'intruder', 'VP'), limits)
  extra.push(intruder.net)
  await intruder.net.start()
  await sleep(1000)
  assert.not.ok(intruder.net.send('node1', 30, Buffer.from('hello')))
  assert.equal(intruder.events, [])
  assert.not.ok(
    node('node1')
      .net.peers()
      .some((p) => p.hostname === 'intruder'),
  )
  assert.equal(received, [])
  await intruder.net.stop()
})

const helloOf = (identity: NodeIdentity, version = PROTOCOL_VERSION): Hello => ({
  version,
  vp: identity.role === 'VP',
  bootId: randomBytes(16),
  nonce: randomBytes(32),
  listenPort: 1,
  hostname: identity.hostname,
  namespace: 'global',
  certDer: identity.cert.raw,
})

/** A hand-driven link to `port` (dialling `target`), speaking the node's frames; for hostile peers. */
function rawLink(
  port: number,
  target: string,
  identity: NodeIdentity,
  options: { claim?: string; bootId?: Buffer; auth?: Buffer; answerPings?: boolean; silent?: boolean; version?: number } = {},
) {
  const client = new grpc.Client(`127.0.0.1:${port}`, linkClientCredentials(identity, target), {
    ...linkChannelOptions({ maxMessageBytes: 64 * 1024 * 1024 }),
    'grpc.ssl_target_name_override': target,
    'grpc.default_authority': target,
  })
  rawClients.push(client)
  const stream = client.makeBidiStreamRequest(
    LINK_PATH,
    (b: Buffer) => b,
    (b: Buffer) => b,
  )
  const frames: Frame[] = []
  const state = { closed: false, authed: false, signature: undefined as Buffer | undefined }
  const myHello = encodeHello({
    ...helloOf(identity, options.version),
    bootId: options.bootId ?? randomBytes(16),
    hostname: options.claim ?? identity.hostname,
  })
  if (!options.silent) stream.write(myHello)
  stream.on('data', (bytes: Buffer) => {
    const frame = decodeFrame(bytes)
    frames.push(frame)
    if (frame.kind === 'auth') state.authed = true
    if (options.silent) return
    if (frame.kind === 'hello') {
      state.signature = signBytes('sha256', authTranscript('dialer', myHello, bytes), {
        key: identity.privateKey,
        dsaEncoding: 'ieee-p1363',
      })
      stream.write(encodeAuth(options.auth ?? state.signature))
    }
    if (frame.kind === 'ping' && options.answerPings !== false) stream.write(encodePing('pong', frame.id, frame.time))
  })
  const done = (): void => {
    state.closed = true
  }
  stream.on('error', done)
  stream.on('end', done)
  stream.on('close', done)
  return {
    frames,
    state,
    write: (bytes: Buffer) => stream.write(bytes),
    close: () => {
      stream.cancel()
      client.close()
    },
  }
}

test('a peer claiming another host name, or replaying an AUTH from an earlier connection, is refused', async () => {
  const n1 = node('node1')
  const mallory = await identityOf(ca, 'mallory', 'VP')
  const refusedBefore = n1.net.stats().handshakesRefused
  const eventsBefore = n1.events.length
  const liar = rawLink(ports[0], 'node1', mallory, { claim: 'node2' })
  await waitFor(() => liar.state.closed, 2000, 'the liar closed')
  assert.ok(
    n1.logs.some((l) => l.includes('claims to be node2 but its certificate is for mallory')),
    'reason logged',
  )
  // an honest first connection, then its AUTH replayed on a second one
  const first = rawLink(ports[0], 'node1', mallory)
  await waitFor(() => linked(n1, 'mallory'), 2000, 'mallory linked')
  first.close()
  await waitFor(() => !linked(n1, 'mallory'), 2000, 'mallory gone')
  const replay = rawLink(ports[0], 'node1', mallory, { auth: first.state.signature })
  await waitFor(() => replay.state.closed, 2000, 'the replay closed')
  assert.ok(n1.logs.some((l) => l.includes('mallory: handshake signature does not verify')))
  assert.is(n1.net.stats().handshakesRefused, refusedBefore + 2)
  assert.equal(
    n1.events.slice(eventsBefore).map((e) => `${e.kind} ${e.peer.hostname}`),
    ['connected mallory', 'lost mallory'],
  )
  assert.ok(linked(n1, 'node2'), 'the real node2 is untouched')
  n1.net.forget('mallory')
  // a peer of protocol 1 (JSON payloads) is refused at the hello, with both versions named
  const old = rawLink(ports[0], 'node1', mallory, { version: 1 })
  await waitFor(() => old.state.closed, 2000, 'the protocol-1 peer closed')
  assert.ok(
    n1.logs.some((l) => l.includes(`protocol version 1, this node speaks ${PROTOCOL_VERSION}`)),
    'version refusal logged',
  )
  assert.ok(!linked(n1, 'mallory'))
})

test('a listener with the wrong certificate for the dialled host name is refused by the dialer', async () => {
  // "node2" in this prober's hosts.toml points at a node whose certificate is for mallory2
  const impostorPort = await freePort()
  const impostorInput: PeerConfigInput = {
    self: { id: 1, hostname: 'mallory2', n: 1, vp: true },
    nodes: [{ id: 1, hostname: 'mallory2' }],
    hosts: [{ hostname: 'mallory2', ip: '127.0.0.1', port: impostorPort }],
  }
  const impostor = startNode(impostorInput, await identityOf(ca, 'mallory2', 'VP'), limits)
  extra.push(impostor.net)
  await impostor.net.start()
  const proberPort = await freePort()
  const prober = startNode(
    {
      self: { id: 0, hostname: 'prober', n: 1, vp: false },
      nodes: [{ id: 1, hostname: 'node2' }],
      hosts: [
        { hostname: 'node2', ip: '127.0.0.1', port: impostorPort },
        { hostname: 'prober', ip: '127.0.0.1', port: proberPort },
      ],
    },
    await identityOf(ca, 'prober', 'NVP'),
    limits,
  )
  extra.push(prober.net)
  await prober.net.start()
  await sleep(800)
  assert.equal(prober.events, [])
  assert.equal(impostor.events, [])
  assert.is(prober.net.peers()[0].status, 1, 'still pending')
  await Promise.all([prober.net.stop(), impostor.net.stop()])
})

test('garbage: raw bytes on the port, garbage frames before and after the handshake, a silent dialer; nothing crashes', async () => {
  const n2 = node('node2')
  for (const bytes of [randomBytes(1000), Buffer.from('GET / HTTP/1.1\r\n\r\n'), Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')]) {
    await new Promise<void>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port: ports[1] }, () => socket.end(bytes))
      // the listener may leave a half-closed socket open (seen once: the whole file hung); what
      // matters here is that it does not crash, which the rest of the test checks
      const giveUp = setTimeout(() => socket.destroy(), 3000)
      socket.on('error', () => resolve())
      socket.on('close', () => {
        clearTimeout(giveUp)
        resolve()
      })
    })
  }
  const eve = await identityOf(ca, 'eve', 'VP')
  const early = rawLink(ports[1], 'node2', eve, { silent: true })
  early.write(randomBytes(200))
  await waitFor(() => early.state.closed, 2000, 'garbage instead of HELLO refused')
  const silent = rawLink(ports[1], 'node2', eve, { silent: true })
  const took = await waitFor(() => silent.state.closed, 4000, 'the silent dialer dropped')
  assert.ok(took > 1500 && took < 3000, `handshake timeout after ${took} ms`)
  const errorsBefore = n2.net.stats().protocolErrors
  const late = rawLink(ports[1], 'node2', eve)
  await waitFor(() => linked(n2, 'eve'), 2000, 'eve linked')
  late.write(Buffer.from([0xee, 1, 2, 3]))
  await waitFor(() => late.state.closed && !linked(n2, 'eve'), 2000, 'link closed on a garbage frame')
  assert.is(n2.net.stats().protocolErrors, errorsBefore + 1)
  assert.ok(n2.logs.some((l) => l.includes('unknown frame kind 238')))
  // a HELLO smuggled inside a BATCH after the handshake
  const smuggler = rawLink(ports[1], 'node2', eve)
  await waitFor(() => linked(n2, 'eve'), 2000, 'eve linked again')
  smuggler.write(encodeBatch([encodeData(40, 1n, Buffer.from('x')), encodeHello({ ...helloOf(eve), hostname: 'node3' })]))
  await waitFor(() => smuggler.state.closed && !linked(n2, 'eve'), 2000, 'link closed on a bad batch')
  assert.ok(n2.logs.some((l) => l.includes('batch: frame kind 1 cannot be batched')))
  n2.net.forget('eve')
  // the network carries on
  const got: string[] = []
  n2.net.on(40, (from) => got.push(from.hostname))
  assert.ok(node('node3').net.send('node2', 40, Buffer.from('still here')))
  await waitFor(() => got.length === 1, 2000, 'a message after the garbage')
})

test('sequence numbers: a frame not above the last delivered from that boot is dropped, also on a new connection', async () => {
  const n4 = node('node4')
  const trent = await identityOf(ca, 'trent', 'VP')
  const got: string[] = []
  n4.net.on(50, (_from, payload) => got.push(Buffer.from(payload).toString()))
  const bootId = randomBytes(16)
  const first = rawLink(ports[3], 'node4', trent, { bootId })
  await waitFor(() => linked(n4, 'trent'), 2000, 'trent linked')
  first.write(encodeData(50, 5n, Buffer.from('five')))
  first.write(encodeData(50, 3n, Buffer.from('three, overtaken')))
  first.write(encodeData(50, 6n, Buffer.from('six')))
  await waitFor(() => got.length === 2, 2000, 'two delivered')
  first.close()
  await waitFor(() => !linked(n4, 'trent'), 2000, 'trent gone')
  const second = rawLink(ports[3], 'node4', trent, { bootId })
  await waitFor(() => linked(n4, 'trent'), 2000, 'trent back, same boot')
  second.write(encodeData(50, 6n, Buffer.from('six, replayed')))
  second.write(encodeData(50, 7n, Buffer.from('seven')))
  await waitFor(() => got.length === 3, 2000, 'seven delivered')
  assert.equal(got, ['five', 'six', 'seven'])
  assert.is(counters(n4, 'trent').droppedReplay, 2)
  second.close()
  await waitFor(() => !linked(n4, 'trent'), 2000, 'trent gone again')
  const third = rawLink(ports[3], 'node4', trent)
  await waitFor(() => third.state.authed && linked(n4, 'trent'), 2000, 'trent restarted')
  third.write(encodeData(50, 1n, Buffer.from('one, new boot')))
  await waitFor(() => got.length === 4, 2000, 'a new boot starts over')
  third.close()
  n4.net.forget('trent')
})

test('stop one VP: the others report it lost at once and relink after it restarts', async () => {
  const n3 = node('node3')
  await n3.net.stop()
  const lostAfter = await waitFor(
    () => all().every((n) => n === n3 || n.events.some((e) => e.kind === 'lost' && e.peer.hostname === 'node3')),
    10_000,
    'node3 lost everywhere',
  )
  assert.ok(lostAfter < 10_000)
  assert.is(
    node('node1')
      .net.peers()
      .find((p) => p.hostname === 'node3')?.status,
    1,
    'pending while it is down',
  )
  assert.not.ok(node('node1').net.send('node3', 10, Buffer.from('x')))
  const restarted = startNode(n3.input, n3.identity, n3.limits)
  nodes.set('node3', restarted)
  await restarted.net.start()
  await waitFor(() => all().every((n) => n.net.peers().length === 4 && n.net.peers().every((p) => p.status === 0)), 5000, 'relinked').catch(
    (error) => {
      for (const n of all())
        console.log(
          n.net.self.hostname,
          n.net
            .peers()
            .map((p) => `${p.hostname}:${p.status}`)
            .join(' '),
          n.logs.slice(-8).join('\n'),
        )
      throw error
    },
  )
  const got: string[] = []
  restarted.net.on(60, (from) => got.push(from.hostname))
  node('node1').net.send('node3', 60, Buffer.from('welcome back'))
  await waitFor(() => got.length === 1, 2000, 'a message to the restarted node')
})

test('keepalive: a peer that stops answering pings is lost after 3 missed ones', async () => {
  const n1 = node('node1')
  const walter = await identityOf(ca, 'walter', 'VP')
  const mute = rawLink(ports[0], 'node1', walter, { answerPings: false })
  await waitFor(() => linked(n1, 'walter'), 2000, 'walter linked')
  const took = await waitFor(() => n1.events.some((e) => e.kind === 'lost' && e.peer.hostname === 'walter'), 3000, 'walter lost')
  // 3 pings unanswered, then the 4th tick closes: 3..4 intervals of 300 ms
  assert.ok(took > 600 && took < 1800, `lost after ${took} ms`)
  assert.ok(n1.logs.some((l) => l.includes('lost walter (no answer to 3 keepalive pings)')))
  mute.close()
  n1.net.forget('walter')
})

test('forget: the peer is disconnected, no longer dialled, and refused when it dials', async () => {
  const n1 = node('node1')
  const nvp = node('nvp1')
  n1.net.forget('nvp1')
  assert.ok(n1.events.some((e) => e.kind === 'lost' && e.peer.hostname === 'nvp1'))
  assert.not.ok(n1.net.peers().some((p) => p.hostname === 'nvp1'))
  await waitFor(() => !linked(nvp, 'node1'), 2000, 'nvp1 sees node1 gone')
  // nvp1 keeps dialling node1 and is refused each time
  await sleep(1200)
  assert.not.ok(linked(nvp, 'node1'))
  assert.ok(n1.logs.some((l) => l.includes('nvp1 was deleted on this node')))
  // the refused peer learns why, once
  const told = nvp.logs.filter((l) => l.includes('node1 refuses this node: nvp1 was deleted on this node (node_deleteVP'))
  assert.is(told.length, 1, `nvp1 logs the refusal once: ${nvp.logs.filter((l) => l.includes('refuses')).join(' | ')}`)
  const refused = nvp.events.filter((e) => e.kind === 'refused')
  assert.is(refused.length, 1, 'one refused event')
  assert.ok(refused[0].kind === 'refused' && refused[0].peer.hostname === 'node1' && refusedAsDeleted(refused[0].reason, 'nvp1'))
  assert.not.ok(refusedAsDeleted(refused[0].kind === 'refused' ? refused[0].reason : '', 'node1'), 'the reason names the deleted node')
  // an NVP forgetting a VP (node_deleteVP on an NVP) stops dialling it
  nvp.net.forget('node2')
  await waitFor(() => !linked(node('node2'), 'nvp1'), 2000, 'node2 sees nvp1 gone')
  await sleep(1000)
  assert.not.ok(linked(node('node2'), 'nvp1'))
  assert.equal(
    nvp.net
      .peers()
      .map((p) => p.hostname)
      .sort(),
    ['node1', 'node3', 'node4'],
  )
  assert.ok(linked(nvp, 'node3'))
})

test('addPeer: a node dials a VP its files do not list (the chain added it) from then on; a forgotten one is not dialled again', async () => {
  const nvp = node('nvp1')
  const hostOf = (hostname: string) => plan.get('nvp1')!.hosts.find((host) => host.hostname === hostname)!
  nvp.net.addPeer('node2', hostOf('node2')) // forgotten above
  await sleep(500)
  assert.not.ok(linked(nvp, 'node2'))
  // an NVP whose files list node1 only
  const input = plan.get('nvp1')!
  const port = await freePort()
  const lone = startNode(
    {
      ...input,
      self: { ...input.self, hostname: 'nvp2', n: 1 },
      nodes: input.nodes.filter((entry) => entry.hostname === 'node1'),
      hosts: [hostOf('node1'), { hostname: 'nvp2', ip: '127.0.0.1', port }],
      addr: { domain: 'domain1', addrs: [{ domain: 'domain1', ip: '127.0.0.1', port }] },
    },
    await identityOf(ca, 'nvp2', 'NVP'),
    limits,
  )
  extra.push(lone.net)
  await lone.net.start()
  await waitFor(() => linked(lone, 'node1'), 5000, 'nvp2 links node1')
  await sleep(300)
  assert.not.ok(linked(lone, 'node3'), 'node3 is not in its files')
  lone.net.addPeer('node3', hostOf('node3'))
  lone.net.addPeer('node3', hostOf('node3'))
  await waitFor(() => linked(lone, 'node3'), 5000, 'nvp2 links node3 after addPeer')
  assert.ok(lone.net.peers().find((peer) => peer.hostname === 'node3')!.vp)
  assert.is(lone.logs.filter((line) => line.includes('dialling node3')).length, 1, 'a second addPeer changes nothing')
  // it redials the added VP like a configured one
  await node('node3').net.stop()
  await waitFor(() => !linked(lone, 'node3'), 3000, 'nvp2 sees node3 gone')
  const restarted = startNode(node('node3').input, node('node3').identity, limits)
  nodes.set('node3', restarted)
  await restarted.net.start()
  await waitFor(() => linked(lone, 'node3'), 5000, 'nvp2 relinks the restarted node3')
})

test('bounds: a full outbound queue refuses and counts; the inbound rate cap and unknown channels drop and count; oversize frames close the link', async () => {
  const [portA, portB] = await freePorts(2)
  const pair = localNetworkPlan({ vps: 2, ports: [portA, portB] })
  const tight: Partial<PeerLimits> = {
    ...limits,
    maxQueuedMessages: 16,
    inboundMessagesPerSecond: 500,
    inboundMessageBurst: 500,
    maxMessageBytes: 4096,
    // the flood below can keep the receiver busy past 3 × 300 ms on a loaded machine, and the
    // flooder's pongs queue behind its 3000 frames: a keepalive loss would close the link mid-flood
    // (its remaining frames then neither delivered nor dropped). Keepalive has a case of its own.
    keepaliveMs: 5_000,
  }
  const a = startNode(pair.get('node1')!, await identityOf(ca, 'node1', 'VP'), tight)
  const b = startNode(pair.get('node2')!, await identityOf(ca, 'node2', 'VP'), tight)
  extra.push(a.net, b.net)
  await Promise.all([a.net.start(), b.net.start()])
  await waitFor(() => linked(a, 'node2') && linked(b, 'node1'), 3000, 'pair linked')
  let delivered = 0
  b.net.on(1, () => delivered++)
  // queue: a burst far larger than the queue in one tick
  let accepted = 0
  for (let i = 0; i < 2000; i++) if (a.net.send('node2', 1, Buffer.alloc(100))) accepted++
  assert.ok(accepted >= 16 && accepted < 2000, `accepted ${accepted}`)
  assert.is(counters(a, 'node2').droppedQueueFull, 2000 - accepted)
  assert.is(counters(a, 'node2').sent, accepted)
  await waitFor(() => delivered === accepted, 15_000, 'the accepted ones delivered')
  // a burst of frames near the size cap: batches must stay under the peer's message cap
  for (let i = 0; i < 16; i++) assert.ok(a.net.send('node2', 1, Buffer.alloc(4000)), `big ${i}`)
  await waitFor(() => delivered === accepted + 16, 15_000, 'big frames delivered')
  assert.ok(linked(a, 'node2'), 'the link survived')
  accepted += 16
  // rate: a raw peer writes 3000 frames at once against 500/s with a burst of 500
  const flooder = rawLink(portB, 'node2', await identityOf(ca, 'flood', 'VP'))
  await waitFor(() => linked(b, 'flood'), 2000, 'flood linked')
  let flooded = 0
  b.net.on(2, () => flooded++)
  const floodStarted = performance.now()
  for (let i = 1; i <= 3000; i++) flooder.write(encodeData(2, BigInt(i), Buffer.alloc(10)))
  // generous: at load 15-30 on 2 cores this process got so little CPU that 15 s saw only 584-1314 of
  // the 3000 frames handled. A frame lost (neither delivered nor counted as dropped) still fails here.
  await waitFor(() => flooded + counters(b, 'flood').droppedRate === 3000, 60_000, 'every frame delivered or dropped').catch(
    (error: Error) => {
      throw new Error(
        `${error.message}: ${flooded} delivered, ${counters(b, 'flood').droppedRate} dropped of 3000; the flood link is ${linked(b, 'flood') ? 'up' : 'down'}`,
      )
    },
  )
  // the bucket: a burst of 500 plus 500/s for as long as the frames took to arrive (long on a loaded machine)
  const floodSeconds = (performance.now() - floodStarted) / 1000
  assert.ok(flooded >= 500 && flooded < 500 + 500 * floodSeconds + 100, `delivered ${flooded} in ${floodSeconds.toFixed(2)} s`)
  assert.ok(linked(b, 'flood'), 'dropping is not disconnecting')
  flooder.close()
  // unknown channel
  const unknownBefore = counters(b, 'node1').droppedUnknownChannel
  assert.ok(a.net.send('node2', 999, Buffer.from('nobody listens')))
  await waitFor(() => counters(b, 'node1').droppedUnknownChannel === unknownBefore + 1, 2000, 'unknown channel counted')
  // size: refused locally, and a raw peer sending an oversize frame loses its link
  assert.not.ok(a.net.send('node2', 1, Buffer.alloc(5000)))
  const big = rawLink(portB, 'node2', await identityOf(ca, 'oscar', 'VP'))
  await waitFor(() => linked(b, 'oscar'), 2000, 'oscar linked')
  big.write(encodeData(1, 1n, Buffer.alloc(10_000)))
  await waitFor(() => big.state.closed && !linked(b, 'oscar'), 2000, 'oversize frame closes the link')
  assert.ok(linked(b, 'node1'))
  await Promise.all([a.net.stop(), b.net.stop()])
})

test.run()
