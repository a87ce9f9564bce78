/**
 * An in-memory network of replicas for the consensus tests: a fake clock and event queue, real
 * signatures (ed25519 through node:crypto), every message through the real wire codec, per-link
 * delays, drops and cuts, crashes that keep only what was persisted, and a deterministic
 * "execution": block hash = sha256(parent hash ‖ digest ‖ executed tx hashes).
 */
import { createHash, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto'
import { createMembership, type Membership } from '../../../src/consensus/bft/membership.ts'
import { decodeMessage, encodeMessage, type Hex, type MemberVote, type Signed, signingBytes } from '../../../src/consensus/bft/messages.ts'
import {
  type CommittedBatch,
  type ConsensusEvent,
  createReplica,
  type Replica,
  type ReplicaHost,
  TEST_TIMERS,
} from '../../../src/consensus/bft/replica.ts'

/** a small deterministic PRNG (mulberry32), so a failing seed replays */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const ZERO = `0x${'0'.repeat(64)}` as Hex

interface Node {
  id: number
  replica: Replica
  up: boolean
  records: Map<string, unknown>
  /** chain: seq → block hash; executed tx hashes in order */
  blocks: Hex[]
  digests: Hex[]
  /** txs each block executed */
  ran: Hex[][]
  /** membership votes each block ordered */
  votes: Signed<MemberVote>[][]
  /** fake time each block was executed here */
  executedAt: number[]
  /** seqs of the blocks this node fetched by state transfer rather than ordered itself */
  fetched: Set<number>
  /** the group per seq, as the node's host keeps it: rebuilt from the blocks on a restart */
  membership: Membership
  executed: Set<Hex>
  pool: Hex[]
  pooled: Set<Hex>
  taken: Set<Hex>
  events: ConsensusEvent[]
  /** messages this node sent, for Byzantine checks */
  sent: Signed[]
  /** intercepts this node's outgoing messages (Byzantine behaviour); return undefined to drop */
  tamper?: (to: number, message: Signed) => Signed | undefined
}

export interface SimOptions {
  n: number
  seed: number
  /** probability a message is lost */
  drop?: number
  maxDelayMs?: number
  batchSize?: number
  /** the group at genesis (default 1..n); the others start as new VPs, following the chain until they are added */
  group?: number[]
}

export function createSim(options: SimOptions) {
  const random = rng(options.seed)
  const keys = new Map<number, { privateKey: KeyObject; publicKey: KeyObject }>()
  for (let id = 1; id <= options.n; id++) keys.set(id, generateKeyPairSync('ed25519'))
  let now = 0
  let sequence = 0
  const queue = createEventQueue()
  const schedule = (delay: number, run: () => void): void => {
    queue.push({ at: now + delay, order: sequence++, run })
  }
  /**
   * Verifications already done, by signer and signature: a broadcast reaches every replica with the
   * same bytes and signature, and ed25519 verification is a pure function of (key, bytes,
   * signature), so each distinct message is verified for real once (it was ~55% of these files'
   * CPU). A lookup whose bytes differ (a tampered message reusing a signature) verifies for real.
   */
  const verified = new Map<string, { bytes: Uint8Array; valid: boolean }>()
  const cut = new Set<string>()
  const nodes = new Map<number, Node>()
  const allTxs: Hex[] = []
  const submittedAt = new Map<Hex, number>()
  const drop = options.drop ?? 0
  const maxDelay = options.maxDelayMs ?? 20

  /** each link delivers in send order, as the p2p layer's links do */
  const linkClear = new Map<string, number>()
  const deliverTo = (from: number, to: number, message: Signed): void => {
    const node = nodes.get(to)
    if (node === undefined || !node.up || to === from) return
    if (cut.has(`${from}>${to}`) || random() < drop) return
    const bytes = encodeMessage(message)
    const link = `${from}>${to}`
    const at = Math.max(now + 1 + Math.floor(random() * maxDelay), linkClear.get(link) ?? 0)
    linkClear.set(link, at)
    schedule(at - now, () => {
      const target = nodes.get(to)
      if (target === undefined || !target.up || target !== node) return
      target.replica.receive(from, decodeMessage(bytes))
    })
  }

  /** seq → fake time of its first pre-prepare sent (any view), for latency measurements */
  const proposedAt = new Map<number, number>()
  const send = (from: Node, to: number, message: Signed): void => {
    from.sent.push(message)
    if (message.body.type === 'pre-prepare' && !proposedAt.has(message.body.seq)) proposedAt.set(message.body.seq, now)
    const out = from.tamper === undefined ? message : from.tamper(to, message)
    if (out !== undefined) deliverTo(from.id, to, out)
  }

  const makeNode = (id: number, previous?: Node): Node => {
    const node: Node = previous ?? {
      id,
      replica: undefined as unknown as Replica,
      up: true,
      records: new Map(),
      blocks: [ZERO],
      digests: [ZERO],
      ran: [[]],
      votes: [[]],
      executedAt: [0],
      fetched: new Set(),
      membership: undefined as unknown as Membership,
      executed: new Set(),
      pool: [],
      pooled: new Set(),
      taken: new Set(),
      events: [],
      sent: [],
    }
    node.up = true
    const genesisGroup = options.group ?? Array.from({ length: options.n }, (_, i) => i + 1)
    node.membership = createMembership(genesisGroup)
    for (let seq = 1; seq < node.blocks.length; seq++) node.membership.record(seq, node.votes[seq])
    const pending: { delay: number; run: () => void }[] = []
    const job = (delay: number, run: () => void): void => {
      pending.push({ delay, run })
      if (pending.length === 1) next()
    }
    const next = (): void => {
      const first = pending[0]
      if (first === undefined) return
      schedule(first.delay, () => {
        if (node.up && node.replica === replica) first.run()
        pending.shift()
        next()
      })
    }
    const host: ReplicaHost = {
      sign: (bytes) => sign(null, bytes, keys.get(id)!.privateKey),
      verify: (replica, bytes, signature) => {
        const key = keys.get(replica)
        if (key === undefined) return false
        const seen = `${replica}:${Buffer.from(signature).toString('base64')}`
        const earlier = verified.get(seen)
        if (earlier !== undefined && Buffer.from(earlier.bytes).equals(bytes)) return earlier.valid
        const valid = verify(null, bytes, key.publicKey, signature)
        verified.set(seen, { bytes: Uint8Array.from(bytes), valid })
        return valid
      },
      persist: (key, value) => {
        if (value === undefined) node.records.delete(key)
        else node.records.set(key, structuredClone(value))
      },
      send: (to, message) => send(node, to, message),
      broadcast: (message) => {
        for (let to = 1; to <= options.n; to++) if (to !== id) send(node, to, message)
      },
      takeBatch: (max) => {
        const out: Hex[] = []
        for (const hash of node.pool) {
          if (out.length >= max) break
          if (node.taken.has(hash) || node.executed.has(hash)) continue
          node.taken.add(hash)
          out.push(hash)
        }
        return out
      },
      pendingCount: () => {
        // executed hashes leave the pool here (every reader skips them): it stays the size of what waits
        node.pool = node.pool.filter((h) => !node.executed.has(h))
        return node.pool.filter((h) => !node.taken.has(h)).length
      },
      oldestPendingAgeMs: () => (node.pool.some((h) => !node.taken.has(h) && !node.executed.has(h)) ? TEST_TIMERS.batchMs : undefined),
      missingTxs: (hashes) => hashes.filter((h) => !node.pooled.has(h) && !node.executed.has(h)),
      fetchTxs: (from, hashes, done) =>
        schedule(5, () => {
          const source = nodes.get(from)
          const all =
            source?.up === true && !cut.has(`${from}>${id}`) && hashes.every((h) => source.pooled.has(h) || source.executed.has(h))
          if (all) for (const h of hashes) addToPool(node, h)
          done(all)
        }),
      returnToPool: (hashes) => {
        for (const h of hashes) node.taken.delete(h)
      },
      // like the node's host: deliveries and transfers run one after another, in the order asked
      deliver: (batch: CommittedBatch) =>
        job(1, () => {
          // a transfer that ran first may already hold it (from a peer, the same block)
          if (batch.seq < node.blocks.length) return
          if (batch.seq !== node.blocks.length) throw new Error(`replica ${id}: delivered ${batch.seq} at height ${node.blocks.length - 1}`)
          const ran = batch.txHashes.filter((h) => !node.executed.has(h))
          for (const h of ran) node.executed.add(h)
          const hash = `0x${createHash('sha256')
            .update(`${node.blocks.at(-1)}|${batch.digest}|${ran.join(',')}`)
            .digest('hex')}` as Hex
          node.blocks.push(hash)
          node.digests.push(batch.digest)
          node.ran.push(ran)
          node.votes.push(batch.votes)
          node.executedAt.push(now)
          node.membership.record(batch.seq, batch.votes)
          replica.executed(batch.seq, hash)
        }),
      stateTransfer: (target) =>
        job(20, () => {
          // forward from this node's tip, as block sync does: the source must extend this chain
          const source = target.replicas
            .map((r) => nodes.get(r))
            .find(
              (s) =>
                s?.up &&
                s.blocks.length > target.seq &&
                s.blocks[node.blocks.length - 1] === node.blocks.at(-1) &&
                (target.blockHash === undefined || s.blocks[target.seq] === target.blockHash),
            )
          if (source === undefined && target.claimed) {
            // a claim nobody can back: take what the tallest peer extending this chain has, as block sync does
            const tallest = target.replicas
              .map((r) => nodes.get(r))
              .filter((s) => s?.up && s.blocks[node.blocks.length - 1] === node.blocks.at(-1))
              .sort((a, b) => b!.blocks.length - a!.blocks.length)[0]
            const reach = Math.min(target.seq, (tallest?.blocks.length ?? 0) - 1)
            for (let seq = node.blocks.length; seq <= reach; seq++) {
              node.blocks.push(tallest!.blocks[seq])
              node.digests.push(tallest!.digests[seq])
              node.ran.push(tallest!.ran[seq])
              node.executedAt.push(now)
              node.fetched.add(seq)
              for (const h of tallest!.ran[seq]) node.executed.add(h)
            }
            replica.stateTransferred(node.blocks.length - 1, node.blocks.at(-1) as Hex)
            return
          }
          if (source === undefined) {
            schedule(200, () => host.stateTransfer(target))
            return
          }
          for (let seq = node.blocks.length; seq <= target.seq; seq++) {
            node.blocks.push(source.blocks[seq])
            node.digests.push(source.digests[seq])
            node.ran.push(source.ran[seq])
            node.votes.push(source.votes[seq])
            node.executedAt.push(now)
            node.fetched.add(seq)
            node.membership.record(seq, source.votes[seq])
            for (const h of source.ran[seq]) node.executed.add(h)
          }
          replica.stateTransferred(target.seq, node.blocks[target.seq])
        }),
      event: (event) => node.events.push(event),
      now: () => now,
      // SIM_LOG=2,4 prints those replicas' log lines, stamped with the fake time (to debug a seed)
      log: process.env.SIM_LOG?.split(',').includes(String(id))
        ? { debug: () => {}, info: (m) => console.log(now, id, m), warn: (m) => console.log(now, id, 'WARN', m) }
        : { debug: () => {}, info: () => {}, warn: () => {} },
    }
    const replica = createReplica({
      self: id,
      n: options.n,
      membership: node.membership,
      joining: !genesisGroup.includes(id),
      batchSize: options.batchSize ?? 10,
      timers: TEST_TIMERS,
      host,
    })
    node.replica = replica
    nodes.set(id, node)
    let ticks = 0
    const tickLoop = (): void => {
      if (!node.up || node.replica !== replica) return
      replica.tick()
      // the relay layer re-gossips what waits in the pool, so a partition that heals loses nothing (§10.8)
      if (++ticks % 10 === 0) regossip(node)
      schedule(TEST_TIMERS.tickMs, tickLoop)
    }
    schedule(Math.floor(random() * TEST_TIMERS.tickMs), tickLoop)
    replica.start({
      records: new Map(node.records),
      height: node.blocks.length - 1,
      heightHash: node.blocks.at(-1) as Hex,
      heightTime: 0n,
    })
    return node
  }

  const regossip = (node: Node): void => {
    // what waits, as the node's pool.waiting answers: a transaction in a batch this node proposed
    // (taken) is not sent again, so one the replica takes and never gives back is lost with it
    const waiting = node.pool.filter((h) => !node.executed.has(h) && !node.taken.has(h))
    for (const other of nodes.values()) {
      if (other === node || cut.has(`${node.id}>${other.id}`)) continue
      schedule(1 + Math.floor(random() * maxDelay), () => {
        if (!other.up) return
        for (const h of waiting) addToPool(other, h)
        other.replica.txArrived()
      })
    }
  }

  const addToPool = (node: Node, hash: Hex): void => {
    if (node.pooled.has(hash) || node.executed.has(hash)) return
    node.pooled.add(hash)
    node.pool.push(hash)
  }

  for (let id = 1; id <= options.n; id++) makeNode(id)

  return {
    nodes,
    get now() {
      return now
    },
    /** a client submits `count` transactions to random up nodes (or all to `at`); each relays to every VP */
    submit(count: number, at?: number): Hex[] {
      const hashes: Hex[] = []
      for (let i = 0; i < count; i++) {
        const hash = `0x${createHash('sha256').update(`tx${allTxs.length}`).digest('hex')}` as Hex
        allTxs.push(hash)
        submittedAt.set(hash, now)
        hashes.push(hash)
        const up = [...nodes.values()].filter((node) => node.up)
        const entry = at === undefined ? up[Math.floor(random() * up.length)] : nodes.get(at)!
        addToPool(entry, hash)
        for (const node of nodes.values()) {
          if (node === entry || cut.has(`${entry.id}>${node.id}`)) continue
          schedule(1 + Math.floor(random() * maxDelay), () => {
            if (node.up) {
              addToPool(node, hash)
              node.replica.txArrived()
            }
          })
        }
        entry.replica.txArrived()
      }
      return hashes
    },
    run(ms: number): void {
      const end = now + ms
      for (;;) {
        const next = queue.peek()
        if (next === undefined || next.at > end) break
        queue.pop()
        now = next.at
        next.run()
      }
      now = end
    },
    crash(id: number): void {
      const node = nodes.get(id)!
      node.up = false
      // the pool is memory: a crash loses what was not relayed
      node.taken.clear()
    },
    restart(id: number): void {
      makeNode(id, nodes.get(id))
    },
    cutLink(a: number, b: number): void {
      cut.add(`${a}>${b}`)
      cut.add(`${b}>${a}`)
    },
    isolate(id: number): void {
      for (let other = 1; other <= options.n; other++) if (other !== id) this.cutLink(id, other)
    },
    heal(): void {
      cut.clear()
    },
    /** a message signed with replica `id`'s real key (for a Byzantine replica that equivocates) */
    signAs<T extends Signed['body']>(id: number, body: T): Signed {
      return { from: id, sig: sign(null, signingBytes(id, body), keys.get(id)!.privateKey).toString('hex'), body }
    },
    allTxs,
    proposedAt,
    /** fake time each transaction was submitted */
    submittedAt,
  }
}

export type Sim = ReturnType<typeof createSim>

interface SimEvent {
  at: number
  order: number
  run: () => void
}

/**
 * The fake clock's events as a binary min-heap on (time, order scheduled): the same order a sort of
 * the whole queue before each event gave (so a seed replays as before), at log n per event rather
 * than n log n.
 */
function createEventQueue() {
  const heap: SimEvent[] = []
  const before = (a: SimEvent, b: SimEvent): boolean => a.at < b.at || (a.at === b.at && a.order < b.order)
  return {
    peek: (): SimEvent | undefined => heap[0],
    push(event: SimEvent): void {
      heap.push(event)
      for (let i = heap.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1
        if (!before(heap[i], heap[parent])) break
        ;[heap[i], heap[parent]] = [heap[parent], heap[i]]
        i = parent
      }
    },
    pop(): SimEvent | undefined {
      const top = heap[0]
      const last = heap.pop()
      if (heap.length > 0 && last !== undefined) {
        heap[0] = last
        for (let i = 0; ; ) {
          const left = 2 * i + 1
          const right = left + 1
          let least = i
          if (left < heap.length && before(heap[left], heap[least])) least = left
          if (right < heap.length && before(heap[right], heap[least])) least = right
          if (least === i) break
          ;[heap[i], heap[least]] = [heap[least], heap[i]]
          i = least
        }
      }
      return top
    },
  }
}

/** No fork: every seq two honest nodes both hold has the same digest and block hash. */
export function assertNoFork(sim: Sim, honest: readonly number[]): void {
  const nodes = honest.map((id) => sim.nodes.get(id)!)
  const height = Math.max(...nodes.map((node) => node.blocks.length - 1))
  for (let seq = 1; seq <= height; seq++) {
    const seen = nodes.filter((node) => node.blocks.length > seq).map((node) => `${node.digests[seq]}/${node.blocks[seq]}`)
    if (new Set(seen).size > 1) throw new Error(`fork at seq ${seq}: ${seen.join(' vs ')}`)
  }
}
