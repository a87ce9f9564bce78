/**
 * The requests this node sent over its peer links and awaits answers to (network.ts `request`):
 * their ids, their time-outs, the answer that settles one, and the failure of every request to a
 * peer whose link went (or of all, when the network stops).
 */

/** What request() rejects with; `reason` tells the cases apart. */
export class P2pRequestError extends Error {
  override readonly name = 'P2pRequestError'
  constructor(
    readonly reason: 'not-connected' | 'queue-full' | 'too-large' | 'timeout' | 'disconnected' | 'remote' | 'stopped',
    message: string,
  ) {
    super(message)
  }
}

interface PendingRequest {
  hostname: string
  channel: number
  resolve: (payload: Uint8Array) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout
}

export interface PendingRequests {
  /** the id of the next request (u32, never 0) */
  nextId(): number
  /** the answer to request `id`, sent to `hostname` on `channel`; it fails after `timeoutMs` */
  awaitAnswer(id: number, hostname: string, channel: number, timeoutMs: number): Promise<Uint8Array>
  /** settles request `id` with the answer `hostname` gave; false when no such request of that peer waits */
  answer(id: number, hostname: string, ok: boolean, payload: Buffer): boolean
  /** fails every request waiting (to `hostname` only, when given) */
  failAll(reason: 'disconnected' | 'stopped', why: string, hostname?: string): void
}

export function createPendingRequests(): PendingRequests {
  const pending = new Map<number, PendingRequest>()
  let nextId = 1
  const what = (request: { hostname: string; channel: number }): string => `p2p request to ${request.hostname} channel ${request.channel}`
  return {
    nextId() {
      const id = nextId
      nextId = (nextId % 0xffffffff) + 1
      return id
    },
    awaitAnswer: (id, hostname, channel, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id)
          reject(new P2pRequestError('timeout', `${what({ hostname, channel })}: no answer within ${timeoutMs} ms`))
        }, timeoutMs)
        pending.set(id, { hostname, channel, resolve, reject, timer })
      }),
    answer(id, hostname, ok, payload) {
      const request = pending.get(id)
      if (!request || request.hostname !== hostname) return false
      pending.delete(id)
      clearTimeout(request.timer)
      if (ok) request.resolve(payload)
      else request.reject(new P2pRequestError('remote', `${what(request)} failed there: ${payload.toString('utf8')}`))
      return true
    },
    failAll(reason, why, hostname) {
      for (const [id, request] of pending) {
        if (hostname !== undefined && request.hostname !== hostname) continue
        clearTimeout(request.timer)
        pending.delete(id)
        request.reject(new P2pRequestError(reason, `${what(request)}: ${why}`))
      }
    },
  }
}
