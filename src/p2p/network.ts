/**
 * Keel's peer-to-peer layer: authenticated, bounded, ordered message links between the nodes of a
 * namespace, over gRPC (@grpc/grpc-js, ARCHITECTURE.md decision 9) with mutual TLS.
 *
 * A link is one bidirectional gRPC stream (`/keel.p2p.Peer/Link`, Buffer in, Buffer out: no
 * protoc) carrying the frames of link-frames.ts in both directions, whichever side opened it.
 * - VPs dial every other VP of their peerconfig.toml; an NVP dials the VPs of its own. A VP accepts
 *   any node holding an ECert of the namespace CA, so NVPs (and a joining VP) need not be in its files.
 * - When both sides of a pair dial at once, both keep the link opened by the smaller host name, so
 *   each pair ends with one link; a link from a restarted peer (new boot id) replaces the old one.
 *
 * Who sent a frame is settled once per link, never taken from the frame:
 * 1. TLS: both certificates must chain to the namespace CA (a foreign CA fails the TLS handshake,
 *    within milliseconds); the dialer also checks that the certificate is for the host it dialled.
 * 2. HELLO/AUTH: each side sends its host name, role, certificate, boot id and a fresh nonce, then
 *    signs both HELLOs with its ECert key. The certificate must be the one TLS saw, name the host
 *    claimed and carry the role claimed (identity.ts); the signature covers the other side's fresh
 *    nonce, so nothing recorded on an earlier connection passes. No DATA before both checks.
 * 3. Sequence numbers per sender boot (link-frames.ts) drop replayed or overtaken frames.
 *
 * Bounds: per-peer outbound queue (full → `send` returns false, counted), inbound frame size cap
 * (gRPC's max_receive_message_length; bigger closes the link), per-peer inbound token buckets on
 * messages and bytes (excess dropped, counted), unknown channels dropped (counted), at most
 * `maxInboundRequests` requests served at once per peer. A malformed frame closes that link and is
 * logged; nothing a peer sends can throw out of this module.
 *
 * Frames queued on a link during one turn of the event loop are written after it as one BATCH
 * gRPC message (link-frames.ts), which is what makes small messages cheap.
 *
 * Keepalive: every `keepaliveMs` (3 s, consensus.md §8) each side pings; after `keepaliveMisses` (3)
 * unanswered pings the link is closed and the peer reported lost. The ping's round trip is the
 * peer's delay (ns). Dialled peers are redialled with capped exponential back-off.
 *
 * Why one class of ~600 lines: GrpcPeerNetwork owns the table of peers and links, and every part
 * of it — dialling, accepting, establishing a link, replacing a link, batching, keepalive, the
 * inbound buckets, requests, forgetting a peer — reads and changes the same per-peer entries under
 * the one-link-per-pair rule above. Split along those lines, each part would reach into the others'
 * state; what needs none of it is apart: the frames (link-frames.ts), the handshake's HELLO checks
 * and AUTH signatures (handshake.ts), the requests awaiting answers (pending-requests.ts),
 * identities (identity.ts) and files (config.ts).
 */
import { type KeyObject, randomBytes, sign as signBytes, verify as verifyBytes, type X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import { checkServerIdentity } from 'node:tls'
import * as grpc from '@grpc/grpc-js'
import { nodeHash } from '../crypto/hash.ts'
import type { Logger } from '../log.ts'
import type { PeerConfig } from './config.ts'
import { createHandshake, forgottenReason, type Handshake } from './handshake.ts'
import type { NodeIdentity } from './identity.ts'
import {
  decodeBatch,
  decodeFrame,
  encodeAuth,
  encodeBatch,
  encodeData,
  encodePing,
  encodeRequest,
  encodeResponse,
  FRAME,
  type Frame,
  FrameError,
  type Hello,
} from './link-frames.ts'
import { createPendingRequests, P2pRequestError, type PendingRequests } from './pending-requests.ts'

export interface PeerIdentity {
  hostname: string
  /** VP id from peerconfig.toml; 0 for an NVP and for a VP this node's files do not list */
  id: number
  /** the role its certificate carries */
  vp: boolean
  /** lower-case hex Keccak-256(hostname + namespace) (protocol.md "Node hash") */
  nodeHash: string
}

/** 0 alive (linked); 1 pending (dialled, not linked yet); 2 stop (not linked and not dialled: it must come back itself) */
export type PeerState = 0 | 1 | 2

export interface PeerStatus extends PeerIdentity {
  ip: string
  /** its p2p port (hosts.toml, else the port it said it listens on) */
  port: number
  status: PeerState
  /** last measured keepalive round trip in ns; 0 before the first */
  delayNs: number
}

export interface PeerCounters {
  sent: number
  received: number
  /** `send`/`broadcast`/`request` refused because the link's queue was full */
  droppedQueueFull: number
  /** inbound frames over the peer's rate */
  droppedRate: number
  /** inbound frames for a channel with no handler */
  droppedUnknownChannel: number
  /** inbound frames whose seq was not above the last delivered (replayed or overtaken) */
  droppedReplay: number
  /** responses that match no request of ours */
  droppedUnexpected: number
  /** requests refused because `maxInboundRequests` were being served */
  droppedBusy: number
}

export interface PeerNetworkStats {
  /** links refused during the handshake (bad HELLO/AUTH, wrong name, forgotten peer, timeout…) */
  handshakesRefused: number
  /** links closed because a frame could not be decoded or broke the protocol */
  protocolErrors: number
  byPeer: Record<string, PeerCounters>
}

/** `refused`: a peer this node dials refused it and said why (once per reason) */
export type PeerEvent = { kind: 'connected' | 'lost'; peer: PeerIdentity } | { kind: 'refused'; peer: PeerIdentity; reason: string }

export interface PeerNetwork {
  readonly self: PeerIdentity
  /** the address this node listens on for peers */
  readonly address: { ip: string; port: number }
  start(): Promise<void>
  /** closes every link and the port; an instance is not started again (make a new one) */
  stop(): Promise<void>
  /**
   * true: queued on the link (it is still lost if the link fails before it is written: the layer
   * above retries what matters); false: not linked, payload over `maxMessageBytes`, or the link's
   * queue is full (counted)
   */
  send(hostname: string, channel: number, payload: Uint8Array): boolean
  /** sends to every linked peer `to` accepts (default: all); returns how many accepted it */
  broadcast(channel: number, payload: Uint8Array, to?: (peer: PeerIdentity) => boolean): number
  /** one handler per channel (0..65535); a later call replaces it */
  on(channel: number, handler: (from: PeerIdentity, payload: Uint8Array) => void): void
  onRequest(channel: number, handler: (from: PeerIdentity, payload: Uint8Array) => Promise<Uint8Array>): void
  /** rejects with P2pRequestError on timeout, disconnect, a full queue or a failure at the peer */
  request(hostname: string, channel: number, payload: Uint8Array, timeoutMs: number): Promise<Uint8Array>
  /** every other node: the configured VPs and whoever else is or was linked */
  peers(): PeerStatus[]
  /**
   * dial a VP this node's peerconfig.toml does not list (the chain added it) from now on, redialled
   * like the configured ones; nothing when it is dialled already or was forgotten
   */
  addPeer(hostname: string, address: { ip: string; port: number }): void
  onPeerEvent(listener: (event: PeerEvent) => void): void
  /** disconnect it, stop dialling it and refuse it until restart (node_deleteNVP on a VP, node_deleteVP on an NVP) */
  forget(hostname: string): void
  /** ECDSA P-256 / SHA-256 with this node's ECert key, IEEE P1363 (r‖s, 64 bytes) */
  sign(bytes: Uint8Array): Uint8Array
  /** with the ECert key of `hostname` as seen on a link (false when it was never linked) */
  verify(hostname: string, bytes: Uint8Array, signature: Uint8Array): boolean
  stats(): PeerNetworkStats
}

export interface PeerLimits {
  keepaliveMs: number
  keepaliveMisses: number
  handshakeTimeoutMs: number
  reconnectMinMs: number
  reconnectMaxMs: number
  /** largest payload sent or accepted (block sync needs big ones) */
  maxMessageBytes: number
  maxQueuedMessages: number
  maxQueuedBytes: number
  inboundMessagesPerSecond: number
  inboundMessageBurst: number
  inboundBytesPerSecond: number
  inboundByteBurst: number
  maxInboundRequests: number
}

export const defaultPeerLimits: PeerLimits = {
  keepaliveMs: 3000,
  keepaliveMisses: 3,
  handshakeTimeoutMs: 2000,
  reconnectMinMs: 250,
  reconnectMaxMs: 5000,
  maxMessageBytes: 16 * 1024 * 1024,
  maxQueuedMessages: 8192,
  maxQueuedBytes: 64 * 1024 * 1024,
  inboundMessagesPerSecond: 50_000,
  inboundMessageBurst: 100_000,
  inboundBytesPerSecond: 64 * 1024 * 1024,
  inboundByteBurst: 64 * 1024 * 1024,
  maxInboundRequests: 256,
}

export interface PeerNetworkOptions {
  config: PeerConfig
  identity: NodeIdentity
  /** the namespace in the node hash and in the handshake; default `global` */
  namespace?: string
  log?: Logger
  /** address to bind; default the IP hosts.toml gives this node (use `0.0.0.0` behind NAT) */
  listenHost?: string
  limits?: Partial<PeerLimits>
}

export { P2pRequestError } from './pending-requests.ts'

export const LINK_PATH = '/keel.p2p.Peer/Link'
const passBuffer = (b: Buffer): Buffer => b
const LINK_SERVICE: grpc.ServiceDefinition = {
  link: {
    path: LINK_PATH,
    requestStream: true,
    responseStream: true,
    requestSerialize: passBuffer,
    requestDeserialize: passBuffer,
    responseSerialize: passBuffer,
    responseDeserialize: passBuffer,
    originalName: 'link',
  },
}
/** room for the frame header on top of the largest payload */
const FRAME_OVERHEAD = 64
/** most frames and bytes put in one BATCH message */
const BATCH_FRAMES = 1024
const BATCH_BYTES = 256 * 1024
/** pings answered per second per link; more is ignored */
const PINGS_PER_SECOND = 10

/** grpc-js channel options of both ends (message size caps, stream count per connection). */
export function linkChannelOptions(limits: Pick<PeerLimits, 'maxMessageBytes'>): grpc.ChannelOptions {
  return {
    'grpc.max_receive_message_length': limits.maxMessageBytes + FRAME_OVERHEAD,
    'grpc.max_send_message_length': limits.maxMessageBytes + FRAME_OVERHEAD,
  }
}

/** Client credentials that accept only a server whose certificate chains to `identity.ca` and names `hostname`. */
export function linkClientCredentials(
  identity: Pick<NodeIdentity, 'caPem' | 'keyPem' | 'certPem'>,
  hostname: string,
): grpc.ChannelCredentials {
  return grpc.credentials.createSsl(Buffer.from(identity.caPem), Buffer.from(identity.keyPem), Buffer.from(identity.certPem), {
    checkServerIdentity: (_host, cert) => checkServerIdentity(hostname, cert),
  })
}

export function formatHostPort(ip: string, port: number): string {
  return `${isIP(ip) === 6 ? `[${ip}]` : ip}:${port}`
}

class TokenBucket {
  private tokens: number
  private last = performance.now()
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    this.tokens = burst
  }
  take(amount: number): boolean {
    const now = performance.now()
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000)
    this.last = now
    if (this.tokens < amount) return false
    this.tokens -= amount
    return true
  }
}

type LinkStream = grpc.ClientDuplexStream<Buffer, Buffer> | grpc.ServerDuplexStream<Buffer, Buffer>

interface PeerEntry {
  identity: PeerIdentity
  ip: string
  port: number
  /** dialled by this node (a VP of its peerconfig) */
  dialled: boolean
  /** the last reason the peer gave for refusing this node (logged once) */
  refusal?: string
  link?: Link
  dialing?: Link
  dialTimer?: NodeJS.Timeout
  backoffMs: number
  /** the ECert key last seen on a link, for verify() */
  publicKey?: KeyObject
  /** boot id of the peer's process whose frames we deliver, and the last seq delivered from it */
  inBoot?: string
  lastSeqIn: bigint
  /** last seq this process sent to the peer */
  seqOut: bigint
  messageBucket: TokenBucket
  byteBucket: TokenBucket
  inboundRequests: number
  delayNs: number
  counters: PeerCounters
}

/** One gRPC stream to one peer, from its handshake to its close. */
class Link {
  state: 'handshake' | 'open' | 'closed' = 'handshake'
  peerHello?: Hello
  peerHelloBytes?: Buffer
  peerCert?: X509Certificate
  entry?: PeerEntry
  queue: Buffer[] = []
  queuedBytes = 0
  blocked = false
  flushScheduled = false
  unanswered = 0
  pingId = 0
  readonly pingBucket = new TokenBucket(PINGS_PER_SECOND, PINGS_PER_SECOND)
  handshakeTimer?: NodeJS.Timeout
  constructor(
    readonly stream: LinkStream,
    readonly dialer: boolean,
    readonly myHello: Buffer,
    /** the host name dialled (dialer side only) */
    readonly expected: string | undefined,
    readonly remoteIp: string,
    readonly client: grpc.Client | undefined,
    /** a BATCH never grows past this (nor past what the peer's message cap admits) */
    readonly maxBatchBytes: number,
  ) {}

  get label(): string {
    const who = this.peerHello?.hostname ?? this.expected ?? this.remoteIp
    return `${this.dialer ? 'to' : 'from'} ${who}`
  }

  /** Frames outside the sequenced queue (handshake, ping, pong): small, written at once. */
  writeNow(frame: Buffer): void {
    if (this.state === 'closed') return
    try {
      this.stream.write(frame)
    } catch {
      // the stream is already failing; its error event closes the link
    }
  }

  enqueue(frame: Buffer, limits: PeerLimits): boolean {
    if (this.state !== 'open') return false
    if (this.queue.length >= limits.maxQueuedMessages || this.queuedBytes + frame.length > limits.maxQueuedBytes) return false
    this.queue.push(frame)
    this.queuedBytes += frame.length
    // written after the current turn, so the frames of one burst share gRPC messages (BATCH)
    if (!this.flushScheduled) {
      this.flushScheduled = true
      queueMicrotask(() => {
        this.flushScheduled = false
        this.pump()
      })
    }
    return true
  }

  private pump(): void {
    while (!this.blocked && this.queue.length > 0 && this.state === 'open') {
      let count = 0
      let bytes = 0
      let framed = 5 // a BATCH's header, then 4 bytes of length per frame
      while (
        count < this.queue.length &&
        count < BATCH_FRAMES &&
        (count === 0 || framed + 4 + this.queue[count].length <= this.maxBatchBytes)
      ) {
        bytes += this.queue[count].length
        framed += 4 + this.queue[count].length
        count++
      }
      const frames = this.queue.splice(0, count)
      this.queuedBytes -= bytes
      let more = true
      try {
        more = this.stream.write(count === 1 ? frames[0] : encodeBatch(frames))
      } catch {
        return
      }
      if (!more) {
        this.blocked = true
        this.stream.once('drain', () => {
          this.blocked = false
          this.pump()
        })
      }
    }
  }

  /** `refusal`: the accepting side tells the dialler why (a gRPC PERMISSION_DENIED status) */
  close(refusal?: string): void {
    if (this.state === 'closed') return
    this.state = 'closed'
    clearTimeout(this.handshakeTimer)
    this.queue = []
    this.queuedBytes = 0
    try {
      if (this.client) {
        ;(this.stream as grpc.ClientDuplexStream<Buffer, Buffer>).cancel()
        this.client.close()
      } else if (refusal !== undefined) {
        this.stream.emit('error', { code: grpc.status.PERMISSION_DENIED, details: refusal })
      } else {
        ;(this.stream as grpc.ServerDuplexStream<Buffer, Buffer>).end()
      }
    } catch {
      // closing a stream that already failed
    }
  }
}

/** a refusal (PeerEvent `refused`) saying the peer deleted `hostname`, this node */
export const refusedAsDeleted = (reason: string, hostname: string): boolean => reason === forgottenReason(hostname)

export function createPeerNetwork(options: PeerNetworkOptions): PeerNetwork {
  return new GrpcPeerNetwork(options)
}

/** The peer network over gRPC links. Long on purpose: the file's header says why its parts share one table. */
class GrpcPeerNetwork implements PeerNetwork {
  readonly self: PeerIdentity
  readonly address: { ip: string; port: number }
  private readonly limits: PeerLimits
  private readonly namespace: string
  private readonly log: Logger | undefined
  private readonly identity: NodeIdentity
  private readonly bootId = randomBytes(16)
  private readonly handshake: Handshake
  private readonly maxBatchBytes: number
  private readonly entries = new Map<string, PeerEntry>()
  private readonly forgotten = new Set<string>()
  private readonly handlers = new Map<number, (from: PeerIdentity, payload: Uint8Array) => void>()
  private readonly requestHandlers = new Map<number, (from: PeerIdentity, payload: Uint8Array) => Promise<Uint8Array>>()
  private readonly listeners: ((event: PeerEvent) => void)[] = []
  private readonly pending: PendingRequests = createPendingRequests()
  private readonly links = new Set<Link>()
  private handshakesRefused = 0
  private protocolErrors = 0
  private server?: grpc.Server
  private keepaliveTimer?: NodeJS.Timeout
  private state: 'new' | 'running' | 'stopped' = 'new'

  constructor(private readonly options: PeerNetworkOptions) {
    const { config, identity } = options
    this.limits = { ...defaultPeerLimits, ...options.limits }
    this.maxBatchBytes = Math.min(BATCH_BYTES, this.limits.maxMessageBytes)
    if (this.limits.inboundByteBurst < this.limits.maxMessageBytes)
      throw new Error(
        `p2p: inboundByteBurst (${this.limits.inboundByteBurst}) is below maxMessageBytes (${this.limits.maxMessageBytes}): the largest messages would always be dropped; raise the burst`,
      )
    this.namespace = options.namespace ?? 'global'
    this.log = options.log
    this.identity = identity
    const self = config.self
    if (identity.hostname !== self.hostname)
      throw new Error(
        `p2p: the node certificate is for ${identity.hostname} but peerconfig.toml [self] hostname is ${self.hostname}; issue a certificate for ${self.hostname} or fix the hostname`,
      )
    if ((identity.role === 'VP') !== self.vp)
      throw new Error(`p2p: the node certificate says ${identity.role} but peerconfig.toml [self] vp = ${self.vp}; they must agree`)
    const own = config.hosts.get(self.hostname)!
    this.address = { ip: own.ip, port: own.port }
    this.self = { hostname: self.hostname, id: self.id, vp: self.vp, nodeHash: nodeHash(self.hostname, this.namespace) }
    this.handshake = createHandshake({
      identity,
      namespace: this.namespace,
      self: this.self,
      bootId: this.bootId,
      listenPort: () => this.address.port,
      isForgotten: (hostname) => this.forgotten.has(hostname),
    })
    for (const node of config.nodes) {
      if (node.hostname === self.hostname) continue
      const address = config.hosts.get(node.hostname)!
      this.entries.set(node.hostname, this.newEntry(node.hostname, node.id, true, address.ip, address.port, true))
    }
  }

  private newEntry(hostname: string, id: number, vp: boolean, ip: string, port: number, dialled: boolean): PeerEntry {
    return {
      identity: { hostname, id, vp, nodeHash: nodeHash(hostname, this.namespace) },
      ip,
      port,
      dialled,
      backoffMs: this.limits.reconnectMinMs,
      lastSeqIn: 0n,
      seqOut: 0n,
      messageBucket: new TokenBucket(this.limits.inboundMessagesPerSecond, this.limits.inboundMessageBurst),
      byteBucket: new TokenBucket(this.limits.inboundBytesPerSecond, this.limits.inboundByteBurst),
      inboundRequests: 0,
      delayNs: 0,
      counters: {
        sent: 0,
        received: 0,
        droppedQueueFull: 0,
        droppedRate: 0,
        droppedUnknownChannel: 0,
        droppedReplay: 0,
        droppedUnexpected: 0,
        droppedBusy: 0,
      },
    }
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('p2p: start() called twice; make a new network to restart')
    this.state = 'running'
    const server = new grpc.Server({ ...linkChannelOptions(this.limits), 'grpc.max_concurrent_streams': 8 })
    server.addService(LINK_SERVICE, { link: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => this.accept(call) })
    const credentials = grpc.ServerCredentials.createSsl(
      Buffer.from(this.identity.caPem),
      [{ private_key: Buffer.from(this.identity.keyPem), cert_chain: Buffer.from(this.identity.certPem) }],
      true,
    )
    const bindTo = formatHostPort(this.options.listenHost ?? this.address.ip, this.address.port)
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(bindTo, credentials, (error) =>
        error
          ? reject(new Error(`p2p: cannot listen on ${bindTo} (hosts.toml entry of ${this.self.hostname}): ${error.message}`))
          : resolve(),
      ),
    )
    this.server = server
    this.keepaliveTimer = setInterval(() => this.keepalive(), this.limits.keepaliveMs)
    this.keepaliveTimer.unref()
    for (const entry of this.entries.values()) if (entry.dialled) this.dial(entry)
    this.log?.info(`p2p: ${this.self.hostname} (${this.self.vp ? 'VP' : 'NVP'}) listening on ${bindTo}`)
  }

  async stop(): Promise<void> {
    if (this.state !== 'running') {
      this.state = 'stopped'
      return
    }
    this.state = 'stopped'
    clearInterval(this.keepaliveTimer)
    for (const entry of this.entries.values()) clearTimeout(entry.dialTimer)
    for (const link of [...this.links]) this.closeLink(link, 'network stopped')
    this.pending.failAll('stopped', 'network stopped')
    const server = this.server
    if (!server) return
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.forceShutdown()
        resolve()
      }, 1000)
      server.tryShutdown(() => {
        clearTimeout(force)
        resolve()
      })
    })
  }

  // ── links ────────────────────────────────────────────────────────────────

  private dial(entry: PeerEntry): void {
    const hostname = entry.identity.hostname
    if (this.state !== 'running' || entry.link || entry.dialing || this.forgotten.has(hostname)) return
    clearTimeout(entry.dialTimer)
    entry.dialTimer = undefined
    const client = new grpc.Client(formatHostPort(entry.ip, entry.port), linkClientCredentials(this.identity, hostname), {
      ...linkChannelOptions(this.limits),
      'grpc.ssl_target_name_override': hostname,
      'grpc.default_authority': hostname,
    })
    const stream = client.makeBidiStreamRequest(LINK_PATH, passBuffer, passBuffer)
    const link = new Link(stream, true, this.handshake.hello(), hostname, entry.ip, client, this.maxBatchBytes)
    link.entry = entry
    entry.dialing = link
    this.attach(link)
    link.writeNow(link.myHello)
  }

  private accept(call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    if (this.state !== 'running') {
      call.end()
      return
    }
    const link = new Link(call, false, this.handshake.hello(), undefined, parseRemoteIp(call.getPeer()), undefined, this.maxBatchBytes)
    this.attach(link)
    link.writeNow(link.myHello)
  }

  private attach(link: Link): void {
    this.links.add(link)
    link.handshakeTimer = setTimeout(
      () => this.refuse(link, `no handshake within ${this.limits.handshakeTimeoutMs} ms`),
      this.limits.handshakeTimeoutMs,
    )
    link.stream.on('data', (bytes: Buffer) => this.onFrame(link, bytes))
    link.stream.on('error', (error: Error & { code?: number; details?: string }) => {
      if (link.dialer && error.code === grpc.status.PERMISSION_DENIED) this.refusedBy(link, error.details ?? error.message)
      this.closeLink(link, `stream error: ${error.message}`)
    })
    link.stream.on('end', () => this.closeLink(link, 'closed by the peer'))
    link.stream.on('close', () => this.closeLink(link, 'stream closed'))
    link.stream.on('cancelled', () => this.closeLink(link, 'cancelled by the peer'))
  }

  private refuse(link: Link, reason: string, tellThePeer = false): void {
    if (link.state === 'closed') return
    this.handshakesRefused++
    this.log?.warn(`p2p: link ${link.label} refused: ${reason}`)
    this.closeLink(link, reason, tellThePeer ? reason : undefined)
  }

  /** logged once per reason: a dialled peer refuses this node and said why */
  private refusedBy(link: Link, reason: string): void {
    const entry = link.entry
    if (entry === undefined || entry.refusal === reason) return
    entry.refusal = reason
    this.log?.warn(`p2p: ${entry.identity.hostname} refuses this node: ${reason}; it is dialled again with back-off`)
    this.emit({ kind: 'refused', peer: entry.identity, reason })
  }

  private closeLink(link: Link, reason: string, refusal?: string): void {
    if (link.state === 'closed') return
    const wasOpen = link.state === 'open'
    link.close(refusal)
    this.links.delete(link)
    const entry = link.entry
    if (entry && entry.dialing === link) {
      entry.dialing = undefined
      this.scheduleDial(entry)
    }
    if (!entry || !wasOpen || entry.link !== link) return
    entry.link = undefined
    this.log?.info(`p2p: lost ${entry.identity.hostname} (${reason})`)
    this.pending.failAll('disconnected', `link lost (${reason})`, entry.identity.hostname)
    this.emit({ kind: 'lost', peer: entry.identity })
    this.scheduleDial(entry)
  }

  private scheduleDial(entry: PeerEntry): void {
    if (
      !entry.dialled ||
      this.state !== 'running' ||
      entry.link ||
      entry.dialing ||
      entry.dialTimer ||
      this.forgotten.has(entry.identity.hostname)
    )
      return
    const delay = entry.backoffMs * (0.8 + Math.random() * 0.4)
    entry.backoffMs = Math.min(this.limits.reconnectMaxMs, entry.backoffMs * 2)
    entry.dialTimer = setTimeout(() => {
      entry.dialTimer = undefined
      this.dial(entry)
    }, delay)
    entry.dialTimer.unref()
  }

  private onFrame(link: Link, bytes: Buffer): void {
    if (link.state === 'closed') return
    if (bytes[0] === FRAME.batch && link.state === 'open') {
      let frames: Buffer[]
      try {
        frames = decodeBatch(bytes)
      } catch (error) {
        this.protocolError(link, error instanceof FrameError ? error.message : String(error))
        return
      }
      for (const frame of frames) {
        if (link.state !== 'open') return
        this.onOneFrame(link, frame)
      }
      return
    }
    this.onOneFrame(link, bytes)
  }

  private onOneFrame(link: Link, bytes: Buffer): void {
    let frame: Frame
    try {
      frame = decodeFrame(bytes)
    } catch (error) {
      this.protocolError(link, error instanceof FrameError ? error.message : String(error))
      return
    }
    try {
      if (link.state === 'handshake') this.onHandshakeFrame(link, frame, bytes)
      else this.onOpenFrame(link, link.entry!, frame)
    } catch (error) {
      // a bug here must cost one link, not the node
      this.log?.error(`p2p: link ${link.label}: frame handling failed`, error)
      this.closeLink(link, 'internal error')
    }
  }

  private protocolError(link: Link, reason: string): void {
    if (link.state === 'handshake') {
      this.refuse(link, reason)
      return
    }
    this.protocolErrors++
    this.log?.warn(`p2p: link ${link.label} closed: ${reason}`)
    this.closeLink(link, reason)
  }

  private onHandshakeFrame(link: Link, frame: Frame, bytes: Buffer): void {
    if (frame.kind === 'hello' && !link.peerHello) {
      const tlsCertDer = (link.stream as { getAuthContext?: () => { sslPeerCertificate?: { raw?: Buffer } } | null }).getAuthContext?.()
        ?.sslPeerCertificate?.raw
      const checked = this.handshake.check(frame, { dialer: link.dialer, expected: link.expected, tlsCertDer })
      if ('refused' in checked) {
        // a deleted peer passed every check of its identity: it may learn why it is refused
        this.refuse(link, checked.refused, !link.dialer && checked.refused === forgottenReason(frame.hostname))
        return
      }
      link.peerCert = checked.cert
      link.peerHello = frame
      link.peerHelloBytes = bytes
      link.writeNow(encodeAuth(this.handshake.sign(link.dialer, link.myHello, bytes)))
      return
    }
    if (frame.kind === 'auth' && link.peerHello && link.peerHelloBytes && link.peerCert) {
      if (this.handshake.verify(link.dialer, link.myHello, link.peerHelloBytes, link.peerCert, frame.signature)) this.establish(link)
      else this.refuse(link, `${link.peerHello.hostname}: handshake signature does not verify with its certificate`)
      return
    }
    this.refuse(link, `${frame.kind} frame during the handshake`)
  }

  private establish(link: Link): void {
    const hello = link.peerHello!
    const hostname = hello.hostname
    clearTimeout(link.handshakeTimer)
    let entry = this.entries.get(hostname)
    if (!entry) {
      entry = this.newEntry(hostname, 0, hello.vp, link.remoteIp, hello.listenPort, false)
      this.entries.set(hostname, entry)
    }
    link.entry = entry
    entry.refusal = undefined
    if (entry.dialing === link) entry.dialing = undefined
    // the certificate decides the role; a VP's id comes from this node's peerconfig only
    const configured = this.options.config.nodes.find((node) => node.hostname === hostname)
    entry.identity.vp = hello.vp
    entry.identity.id = hello.vp && configured ? configured.id : 0
    if (configured && !hello.vp) this.log?.warn(`p2p: ${hostname} is a VP in peerconfig.toml but its certificate says NVP; treated as NVP`)
    if (!entry.dialled) entry.port = hello.listenPort
    entry.publicKey = link.peerCert!.publicKey
    const boot = hello.bootId.toString('hex')
    const current = entry.link
    if (current) {
      const currentBoot = current.peerHello!.bootId.toString('hex')
      if (currentBoot === boot) {
        // both sides dialled: keep the link the smaller host name opened, on both sides alike
        const preferredDialer = this.self.hostname < hostname ? this.self.hostname : hostname
        const dialerOf = (l: Link): string => (l.dialer ? this.self.hostname : hostname)
        if (dialerOf(current) === preferredDialer || dialerOf(link) !== preferredDialer) {
          link.state = 'open'
          this.links.delete(link)
          link.close()
          return
        }
        link.state = 'open'
        entry.link = link
        current.entry = undefined
        this.links.delete(current)
        current.close()
        return
      }
      // the peer restarted: its old link is dead even if TCP has not said so yet
      this.closeLink(current, 'replaced by a link from the restarted peer')
    }
    if (entry.inBoot !== boot) {
      entry.inBoot = boot
      entry.lastSeqIn = 0n
    }
    link.state = 'open'
    entry.link = link
    entry.backoffMs = this.limits.reconnectMinMs
    clearTimeout(entry.dialTimer)
    entry.dialTimer = undefined
    this.log?.info(`p2p: connected ${hostname} (${hello.vp ? 'VP' : 'NVP'}, link ${link.label})`)
    this.emit({ kind: 'connected', peer: entry.identity })
  }

  private onOpenFrame(link: Link, entry: PeerEntry, frame: Frame): void {
    switch (frame.kind) {
      case 'ping':
        if (link.pingBucket.take(1)) link.writeNow(encodePing('pong', frame.id, frame.time))
        return
      case 'pong': {
        link.unanswered = 0
        const now = process.hrtime.bigint()
        if (frame.time <= now) entry.delayNs = Number(now - frame.time)
        return
      }
      case 'hello':
      case 'auth':
        this.protocolError(link, `${frame.kind} frame after the handshake`)
        return
    }
    // a link replaced while frames were in flight: they belong to the link that replaced it, if any
    if (entry.link !== link) return
    if (!entry.messageBucket.take(1) || !entry.byteBucket.take(frame.payload.length)) {
      entry.counters.droppedRate++
      return
    }
    if (frame.seq <= entry.lastSeqIn) {
      entry.counters.droppedReplay++
      return
    }
    entry.lastSeqIn = frame.seq
    entry.counters.received++
    if (frame.kind === 'data') {
      const handler = this.handlers.get(frame.channel)
      if (!handler) {
        entry.counters.droppedUnknownChannel++
        return
      }
      try {
        handler(entry.identity, frame.payload)
      } catch (error) {
        this.log?.error(`p2p: handler of channel ${frame.channel} threw on a message from ${entry.identity.hostname}`, error)
      }
      return
    }
    if (frame.kind === 'request') {
      this.serveRequest(entry, frame.channel, frame.requestId, frame.payload)
      return
    }
    if (!this.pending.answer(frame.requestId, entry.identity.hostname, frame.ok, frame.payload)) entry.counters.droppedUnexpected++
  }

  private serveRequest(entry: PeerEntry, channel: number, requestId: number, payload: Buffer): void {
    const handler = this.requestHandlers.get(channel)
    const answer = (ok: boolean, body: Uint8Array): void => {
      const link = entry.link
      if (!link) return
      const seq = entry.seqOut + 1n
      if (link.enqueue(encodeResponse(seq, requestId, ok, body), this.limits)) {
        entry.seqOut = seq
        entry.counters.sent++
      } else entry.counters.droppedQueueFull++
    }
    if (!handler) {
      entry.counters.droppedUnknownChannel++
      answer(false, Buffer.from(`no handler for channel ${channel}`))
      return
    }
    if (entry.inboundRequests >= this.limits.maxInboundRequests) {
      entry.counters.droppedBusy++
      answer(false, Buffer.from(`busy: ${this.limits.maxInboundRequests} requests from you are being served`))
      return
    }
    entry.inboundRequests++
    Promise.resolve()
      .then(() => handler(entry.identity, payload))
      .then(
        (result) => {
          if (result.length > this.limits.maxMessageBytes)
            answer(false, Buffer.from(`response of ${result.length} bytes is over the limit`))
          else answer(true, result)
        },
        (error: unknown) => answer(false, Buffer.from(error instanceof Error ? error.message : String(error)).subarray(0, 1024)),
      )
      .finally(() => entry.inboundRequests--)
  }

  private keepalive(): void {
    for (const link of this.links) {
      if (link.state !== 'open') continue
      if (link.unanswered >= this.limits.keepaliveMisses) {
        this.closeLink(link, `no answer to ${link.unanswered} keepalive pings`)
        continue
      }
      link.unanswered++
      link.pingId = (link.pingId + 1) >>> 0
      link.writeNow(encodePing('ping', link.pingId, process.hrtime.bigint()))
    }
  }

  private emit(event: PeerEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        this.log?.error('p2p: peer event listener threw', error)
      }
    }
  }

  // ── the interface ────────────────────────────────────────────────────────

  send(hostname: string, channel: number, payload: Uint8Array): boolean {
    const entry = this.entries.get(hostname)
    const link = entry?.link
    if (!entry || !link || payload.length > this.limits.maxMessageBytes) return false
    checkChannel(channel)
    const seq = entry.seqOut + 1n
    if (!link.enqueue(encodeData(channel, seq, payload), this.limits)) {
      entry.counters.droppedQueueFull++
      return false
    }
    entry.seqOut = seq
    entry.counters.sent++
    return true
  }

  broadcast(channel: number, payload: Uint8Array, to?: (peer: PeerIdentity) => boolean): number {
    let accepted = 0
    for (const entry of this.entries.values())
      if (entry.link && (!to || to(entry.identity)) && this.send(entry.identity.hostname, channel, payload)) accepted++
    return accepted
  }

  on(channel: number, handler: (from: PeerIdentity, payload: Uint8Array) => void): void {
    checkChannel(channel)
    this.handlers.set(channel, handler)
  }

  onRequest(channel: number, handler: (from: PeerIdentity, payload: Uint8Array) => Promise<Uint8Array>): void {
    checkChannel(channel)
    this.requestHandlers.set(channel, handler)
  }

  request(hostname: string, channel: number, payload: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    checkChannel(channel)
    const what = `p2p request to ${hostname} channel ${channel}`
    const entry = this.entries.get(hostname)
    const link = entry?.link
    if (!entry || !link) return Promise.reject(new P2pRequestError('not-connected', `${what}: not connected`))
    if (payload.length > this.limits.maxMessageBytes)
      return Promise.reject(
        new P2pRequestError('too-large', `${what}: ${payload.length} bytes is over the ${this.limits.maxMessageBytes}-byte limit`),
      )
    const requestId = this.pending.nextId()
    const seq = entry.seqOut + 1n
    if (!link.enqueue(encodeRequest(channel, seq, requestId, payload), this.limits)) {
      entry.counters.droppedQueueFull++
      return Promise.reject(new P2pRequestError('queue-full', `${what}: outbound queue full`))
    }
    entry.seqOut = seq
    entry.counters.sent++
    return this.pending.awaitAnswer(requestId, hostname, channel, timeoutMs)
  }

  peers(): PeerStatus[] {
    return [...this.entries.values()].map((entry) => ({
      ...entry.identity,
      ip: entry.ip,
      port: entry.port,
      status: entry.link ? 0 : entry.dialled && this.state === 'running' ? 1 : 2,
      delayNs: entry.delayNs,
    }))
  }

  onPeerEvent(listener: (event: PeerEvent) => void): void {
    this.listeners.push(listener)
  }

  addPeer(hostname: string, address: { ip: string; port: number }): void {
    if (hostname === this.self.hostname || this.forgotten.has(hostname)) return
    let entry = this.entries.get(hostname)
    if (entry?.dialled) return
    if (entry === undefined) {
      entry = this.newEntry(hostname, 0, true, address.ip, address.port, true)
      this.entries.set(hostname, entry)
    } else {
      entry.dialled = true
      entry.ip = address.ip
      entry.port = address.port
    }
    this.log?.info(`p2p: dialling ${hostname} at ${formatHostPort(address.ip, address.port)} from now on (a VP the chain added)`)
    if (this.state === 'running') this.dial(entry)
  }

  forget(hostname: string): void {
    this.forgotten.add(hostname)
    const entry = this.entries.get(hostname)
    if (!entry) return
    clearTimeout(entry.dialTimer)
    entry.dialTimer = undefined
    if (entry.dialing) this.closeLink(entry.dialing, 'forgotten')
    if (entry.link) this.closeLink(entry.link, 'forgotten')
    for (const link of [...this.links]) if (link.peerHello?.hostname === hostname) this.closeLink(link, 'forgotten')
    this.entries.delete(hostname)
    this.log?.info(`p2p: forgot ${hostname}`)
  }

  sign(bytes: Uint8Array): Uint8Array {
    return signBytes('sha256', bytes, { key: this.identity.privateKey, dsaEncoding: 'ieee-p1363' })
  }

  verify(hostname: string, bytes: Uint8Array, signature: Uint8Array): boolean {
    const key = this.entries.get(hostname)?.publicKey
    if (!key) return false
    try {
      return verifyBytes('sha256', bytes, { key, dsaEncoding: 'ieee-p1363' }, signature)
    } catch {
      return false
    }
  }

  stats(): PeerNetworkStats {
    const byPeer: Record<string, PeerCounters> = {}
    for (const [hostname, entry] of this.entries) byPeer[hostname] = { ...entry.counters }
    return { handshakesRefused: this.handshakesRefused, protocolErrors: this.protocolErrors, byPeer }
  }
}

function checkChannel(channel: number): void {
  if (!Number.isInteger(channel) || channel < 0 || channel > 0xffff)
    throw new RangeError(`p2p channel ${channel} is not an integer in 0..65535`)
}

/** grpc-js peer strings: `1.2.3.4:port`, `[::1]:port`, sometimes with an `ipv4:`/`ipv6:` scheme. */
function parseRemoteIp(peer: string): string {
  const bare = peer.replace(/^ipv[46]:/, '')
  const bracket = /^\[([^\]]+)\]/.exec(bare)
  if (bracket) return bracket[1]
  const colon = bare.lastIndexOf(':')
  return colon > 0 ? bare.slice(0, colon) : bare
}
