/**
 * Polling subscriptions (filters): created by the sub_new… methods, read and cleared by
 * sub_getSubscriptionChanges, removed by sub_unSubscription (protocol.md §7, reliability.md part B).
 *
 * - Ids are `0x` + 32 lower-case hex digits (16 random bytes).
 * - At most `maxSubscriptions` (1000) are active; one more → -32006
 *   `too many subscriptions: at most 1000 active`, and a jsonrpc `overload` status event when the
 *   cap is first hit (again only once a slot was taken after being free).
 * - A subscription not polled for `idleMs` (5 min) expires: it is removed at the next sweep (every
 *   operation sweeps, and a timer sweeps every minute) and its id answers -32012.
 * - Each cache is bounded in items (blocks 1000, logs 10000, status messages 1000, archive events
 *   1000 by default) and in bytes (16 MiB by default, each item counted as its JSON size). A
 *   poller too slow to keep up loses the OLDEST items, never the newest: what it reads next is
 *   still in order and without duplicates, and it is told through a jsonrpc `overflow`
 *   system-status event naming its id (once per poll interval), plus a warning in the log. An
 *   error on its next poll would lose what is still cached, and the result shape (an array of
 *   items) leaves no room for a marker.
 * - Items are shared, not copied: every subscription caching a block or a log holds the same
 *   object, so the bytes bound is what one subscription may pin, and what all of them pin together
 *   is at most the blocks and logs of the last `idleMs` (older ones are polled or expired).
 * - Filters are bounded where they are compiled (filters.ts); a removed or expired subscription
 *   keeps nothing, so its memory returns at the next garbage collection.
 */
import { randomBytes } from 'node:crypto'
import { SubscriptionNotExist, SystemBusy } from '../errors.ts'
import type { Logger } from '../log.ts'
import { type LogCriteria, matchLog, type StatusMatcher } from './filters.ts'
import type { EventHub } from './hub.ts'
import { jsonrpcStatus } from './status.ts'
import type { ArchiveEvent, BlockEvent, SystemStatusMessage } from './types.ts'

export interface CacheCapacity {
  block: number
  logs: number
  status: number
  archive: number
}

export interface PollingOptions {
  /** monotonic clock in ms for expiry; tests inject their own */
  nowMs: () => number
  /** a subscription expires this long after its last poll (or its creation) */
  idleMs: number
  maxSubscriptions: number
  capacity: CacheCapacity
  /** most bytes (JSON size) one subscription's cache holds */
  cacheBytes: number
  /** how often the timer sweeps expired subscriptions; 0 disables the timer (every operation sweeps anyway) */
  sweepEveryMs: number
  newId: () => string
}

/** A subscription or snapshot id as Hyperchain makes them (protocol.md §7): `0x` + 16 random bytes in hex. */
export const randomId = (): string => `0x${randomBytes(16).toString('hex')}`

export const DEFAULT_POLLING: PollingOptions = {
  nowMs: () => performance.now(),
  idleMs: 5 * 60_000,
  maxSubscriptions: 1000,
  capacity: { block: 1000, logs: 10_000, status: 1000, archive: 1000 },
  cacheBytes: 16 * 1024 * 1024,
  sweepEveryMs: 60_000,
  newId: randomId,
}

export interface PollingSubscriptions {
  newBlockSubscription(full: boolean): string
  newLogSubscription(criteria: LogCriteria): string
  newStatusSubscription(matcher: StatusMatcher): string
  newArchiveSubscription(): string
  /** items cached since the previous poll, oldest first; -32012 for an unknown or expired id */
  changes(id: string): unknown[]
  /** -32012 for an unknown or expired id */
  remove(id: string): void
  /** active subscriptions (after sweeping the expired ones) */
  size(): number
  close(): void
}

/** A FIFO of at most `capacity` items and `maxBytes` bytes (as the caller sizes them); pushing past either drops the oldest. */
export class BoundedQueue<T> {
  private items: (T | undefined)[]
  private sizes: number[]
  private head = 0
  private length = 0
  private held = 0
  constructor(
    readonly capacity: number,
    readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    this.items = new Array(Math.min(capacity, 64))
    this.sizes = new Array(this.items.length)
  }
  /** returns how many of the oldest items were dropped to make room (an item over maxBytes alone is kept alone) */
  push(item: T, bytes = 0): number {
    let dropped = 0
    while (this.length > 0 && (this.length === this.capacity || this.held + bytes > this.maxBytes)) {
      this.held -= this.sizes[this.head]
      this.items[this.head] = undefined
      this.head = (this.head + 1) % this.items.length
      this.length--
      dropped++
    }
    if (this.length === this.items.length) {
      const size = Math.min(this.capacity, this.items.length * 2)
      const grown: (T | undefined)[] = new Array(size)
      const grownSizes: number[] = new Array(size)
      for (let i = 0; i < this.length; i++) {
        grown[i] = this.items[(this.head + i) % this.items.length]
        grownSizes[i] = this.sizes[(this.head + i) % this.items.length]
      }
      this.items = grown
      this.sizes = grownSizes
      this.head = 0
    }
    const at = (this.head + this.length) % this.items.length
    this.items[at] = item
    this.sizes[at] = bytes
    this.length++
    this.held += bytes
    return dropped
  }
  drain(): T[] {
    const out: T[] = new Array(this.length)
    for (let i = 0; i < this.length; i++) out[i] = this.items[(this.head + i) % this.items.length] as T
    this.items = new Array(Math.min(this.capacity, 64))
    this.sizes = new Array(this.items.length)
    this.head = 0
    this.length = 0
    this.held = 0
    return out
  }
  get size(): number {
    return this.length
  }
  /** bytes held, as pushed */
  get bytes(): number {
    return this.held
  }
}

/**
 * The size of `value` as JSON, roughly (strings count their UTF-16 length): what a cached item
 * costs. Objects are measured once each, so a block shared by many subscriptions is walked once.
 */
const measured = new WeakMap<object, number>()
export function jsonSize(value: unknown): number {
  if (typeof value === 'string') return value.length + 2
  if (value === null || typeof value !== 'object') return String(value).length
  const known = measured.get(value)
  if (known !== undefined) return known
  let size = 2
  if (Array.isArray(value)) for (const element of value) size += jsonSize(element) + 1
  else for (const [key, element] of Object.entries(value)) if (element !== undefined) size += key.length + 4 + jsonSize(element)
  measured.set(value, size)
  return size
}

interface Subscription {
  id: string
  lastPoll: number
  queue: BoundedQueue<unknown>
  /** items lost since the last poll */
  dropped: number
  onBlock?(event: BlockEvent, put: (item: unknown) => void): void
  onStatus?(message: SystemStatusMessage, put: (item: unknown) => void): void
  onArchive?(event: ArchiveEvent, put: (item: unknown) => void): void
  put: (item: unknown) => void
}

/** Options a caller overrides; each cache capacity on its own. */
export type PollingOverrides = Partial<Omit<PollingOptions, 'capacity'>> & { capacity?: Partial<CacheCapacity> }

export function createPollingSubscriptions(hub: EventHub, log: Logger, overrides: PollingOverrides = {}): PollingSubscriptions {
  const options: PollingOptions = { ...DEFAULT_POLLING, ...overrides, capacity: { ...DEFAULT_POLLING.capacity, ...overrides.capacity } }
  const active = new Map<string, Subscription>()
  let overloadReported = false

  const sweep = (): void => {
    const now = options.nowMs()
    for (const [id, subscription] of active) if (now - subscription.lastPoll > options.idleMs) active.delete(id)
  }

  const cache = (subscription: Subscription, item: unknown): void => {
    const dropped = subscription.queue.push(item, jsonSize(item))
    if (dropped === 0) return
    const first = subscription.dropped === 0
    subscription.dropped += dropped
    if (first) {
      log.warn(`subscription ${subscription.id} is not polled fast enough: its cache is full and loses its oldest items`)
      // reported once per poll interval, so a full status subscription cannot feed itself
      hub.publishStatus(jsonrpcStatus.overflow(subscription.id, subscription.queue.capacity, subscription.queue.maxBytes))
    }
  }

  const add = (capacity: number, handlers: Pick<Subscription, 'onBlock' | 'onStatus' | 'onArchive'>): string => {
    sweep()
    if (active.size >= options.maxSubscriptions) {
      const message = `too many subscriptions: at most ${options.maxSubscriptions} active`
      // raised when the cap is hit, and again only after a slot was free in between
      if (!overloadReported) hub.publishStatus(jsonrpcStatus.overload(message))
      overloadReported = true
      throw new SystemBusy(message)
    }
    overloadReported = false
    let id = options.newId()
    while (active.has(id)) id = options.newId()
    const subscription: Subscription = {
      id,
      lastPoll: options.nowMs(),
      queue: new BoundedQueue(capacity, options.cacheBytes),
      dropped: 0,
      ...handlers,
      put: (item) => cache(subscription, item),
    }
    active.set(id, subscription)
    return id
  }

  const find = (id: string): Subscription => {
    const subscription = active.get(id)
    if (subscription === undefined) throw new SubscriptionNotExist()
    if (options.nowMs() - subscription.lastPoll > options.idleMs) {
      active.delete(id)
      throw new SubscriptionNotExist()
    }
    return subscription
  }

  const offBlock = hub.onBlock((event) => {
    sweep()
    for (const subscription of active.values()) subscription.onBlock?.(event, subscription.put)
  })
  const offStatus = hub.onStatus((message) => {
    for (const subscription of active.values()) subscription.onStatus?.(message, subscription.put)
  })
  const offArchive = hub.onArchive((event) => {
    for (const subscription of active.values()) subscription.onArchive?.(event, subscription.put)
  })
  const timer = options.sweepEveryMs > 0 ? setInterval(sweep, options.sweepEveryMs) : undefined
  timer?.unref()

  return {
    newBlockSubscription: (full) => add(options.capacity.block, { onBlock: (event, put) => put(full ? event.full() : event.hash) }),
    newLogSubscription: (criteria) =>
      add(options.capacity.logs, {
        onBlock: (event, put) => {
          for (const entry of event.logs()) if (matchLog(criteria, entry)) put(entry)
        },
      }),
    newStatusSubscription: (matcher) =>
      add(options.capacity.status, {
        onStatus: (message, put) => {
          if (matcher(message)) put(message)
        },
      }),
    newArchiveSubscription: () => add(options.capacity.archive, { onArchive: (event, put) => put(event) }),
    changes(id) {
      const subscription = find(id)
      subscription.lastPoll = options.nowMs()
      if (subscription.dropped > 0) {
        log.warn(`subscription ${id} lost ${subscription.dropped} items before this poll`)
        subscription.dropped = 0
      }
      return subscription.queue.drain()
    },
    remove(id) {
      find(id)
      active.delete(id)
    },
    size() {
      sweep()
      return active.size
    },
    close() {
      if (timer !== undefined) clearInterval(timer)
      offBlock()
      offStatus()
      offArchive()
      active.clear()
    },
  }
}
