/**
 * The node's admission rate limit ([chain] txRatePerSecond, txRateBurst): a token bucket that
 * refills continuously, checked where a client's transaction enters the pool (on the chain thread,
 * so one bucket serves every request thread). A peer's relayed copy is never limited: its own VP
 * already admitted it, and refusing it here would only make the VPs' pools differ.
 */
import { SystemBusy } from '../errors.ts'

export interface RateLimit {
  /** takes one token, or throws -32006 saying the limit and when a retry may succeed */
  take(): void
}

export interface RateLimitOptions {
  /** tokens added per second; 0 turns the limit off */
  perSecond: number
  /** most tokens held at once (the burst admitted after a quiet spell); 0 means one second's worth */
  burst: number
  /** milliseconds, monotonic; performance.now by default */
  now?: () => number
}

/** A limiter, or undefined when the limit is off. */
export function createRateLimit(options: RateLimitOptions): RateLimit | undefined {
  const { perSecond } = options
  if (perSecond <= 0) return undefined
  const burst = options.burst > 0 ? options.burst : perSecond
  const now = options.now ?? (() => performance.now())
  let tokens = burst
  let refilledAt = now()
  return {
    take() {
      const at = now()
      tokens = Math.min(burst, tokens + ((at - refilledAt) * perSecond) / 1000)
      refilledAt = at
      if (tokens >= 1) {
        tokens -= 1
        return
      }
      const retryMs = Math.ceil(((1 - tokens) * 1000) / perSecond)
      throw SystemBusy.because(
        `this node admits ${perSecond} transactions per second with bursts of ${burst} ` +
          `([chain] txRatePerSecond, txRateBurst); retry in ${retryMs} ms or more`,
      )
    },
  }
}
