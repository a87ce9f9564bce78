/**
 * "Persist before you speak" (consensus.md §10.2): the consensus core issues writes and sends in
 * one order, and a send must never leave this node before every write issued ahead of it is
 * durable. Otherwise a node that crashes after voting can come back, not remember the vote, and
 * vote differently for the same (view, seq).
 *
 * The outbox keeps that order without slowing the core down: the writes the core issues while
 * handling one event (and those issued while a write is in flight) are gathered into one durable
 * write, sends issued after them wait for it, sends with no write ahead of them go out as soon as
 * the handler returns. Effects never reorder: a later write is not started before the earlier sends went out, so
 * the storage sees writes in issue order too.
 */

export interface OutboxOptions<Write, Send> {
  /** makes every write of the batch durable (one storage transaction, synced); rejects if it could not */
  persist(writes: Write[]): Promise<void>
  /** hands a message to the network; never throws (a peer that is gone just misses it) */
  transmit(send: Send): void
  /** told when a write failed: the node must stop taking part, since its votes may not be remembered */
  fail(error: unknown): void
}

export interface Outbox<Write, Send> {
  write(write: Write): void
  send(send: Send): void
  /** resolves when everything issued so far is written and sent */
  drained(): Promise<void>
  /** writes issued but not yet durable, sends waiting behind them */
  backlog(): { writes: number; sends: number }
}

type Effect<Write, Send> = { write: Write } | { send: Send }

export function createOutbox<Write, Send>(options: OutboxOptions<Write, Send>): Outbox<Write, Send> {
  const queue: Effect<Write, Send>[] = []
  let writing = 0
  let scheduled = false
  let failed = false
  let idle: (() => void)[] = []

  // after the current handler returns: everything it issued is in the queue by then
  const schedule = (): void => {
    if (scheduled) return
    scheduled = true
    queueMicrotask(() => {
      scheduled = false
      pump()
    })
  }

  const pump = (): void => {
    if (writing > 0 || failed) return
    // sends at the head have nothing unwritten ahead of them
    while (queue.length > 0 && 'send' in queue[0]) options.transmit((queue.shift() as { send: Send }).send)
    if (queue.length === 0) {
      for (const resolve of idle) resolve()
      idle = []
      return
    }
    const writes: Write[] = []
    while (queue.length > 0 && 'write' in queue[0]) writes.push((queue.shift() as { write: Write }).write)
    writing = writes.length
    options.persist(writes).then(
      () => {
        writing = 0
        pump()
      },
      (error: unknown) => {
        // nothing behind a failed write may go out: the sends may state votes the node cannot remember
        failed = true
        writing = 0
        queue.length = 0
        for (const resolve of idle) resolve()
        idle = []
        options.fail(error)
      },
    )
  }

  return {
    write(write) {
      if (failed) return
      queue.push({ write })
      schedule()
    },
    send(send) {
      if (failed) return
      queue.push({ send })
      schedule()
    },
    drained() {
      if (queue.length === 0 && writing === 0 && !scheduled) return Promise.resolve()
      return new Promise((resolve) => idle.push(resolve))
    },
    backlog() {
      let queued = 0
      for (const effect of queue) if ('write' in effect) queued++
      return { writes: writing + queued, sends: queue.length - queued }
    },
  }
}
