/**
 * A set of listeners of one kind of event, called in the order they were added: the fan-out the
 * chain thread's hub (hub.ts) and each request thread's events (front/events.ts) share. A listener
 * that throws is logged and does not stop the others; one removed while the others run is still
 * called this time (the set is copied first).
 */
import type { Logger } from '../log.ts'

export interface Listeners<T> {
  /** returns the function that removes it */
  add(listener: (value: T) => void): () => void
  emit(value: T): void
  readonly size: number
}

export function createListeners<T>(log: Pick<Logger, 'error'>): Listeners<T> {
  const listeners = new Set<(value: T) => void>()
  return {
    add(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    emit(value) {
      for (const listener of [...listeners]) {
        try {
          listener(value)
        } catch (error) {
          log.error('an event listener failed', error)
        }
      }
    },
    get size() {
      return listeners.size
    },
  }
}
