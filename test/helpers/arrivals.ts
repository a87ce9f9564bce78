/** Waiting for what a connection receives: `until(predicate)` resolves once a `wake()` finds it true. */
export class Arrivals {
  private readonly waiters = new Set<() => void>()

  /** something arrived: every waiter checks its predicate again */
  wake(): void {
    for (const waiter of [...this.waiters]) waiter()
  }

  /** resolves when `predicate` holds; rejects after `timeoutMs` naming `what` */
  until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (predicate()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake)
        reject(new Error(`timed out waiting for ${what}`))
      }, timeoutMs)
      const wake = (): void => {
        if (!predicate()) return
        clearTimeout(timer)
        this.waiters.delete(wake)
        resolve()
      }
      this.waiters.add(wake)
    })
  }
}
