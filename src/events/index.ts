/** The event service: hub, polling subscriptions, filters and the system-status sources. */
export { blockEventOf } from './block-event.ts'
export { compileLogCriteria, compileStatusFilter, type LogCriteria, matchLog, type StatusMatcher } from './filters.ts'
export { createEventHub, type EventHub } from './hub.ts'
export { executorStatuses, formatStatusDate, jsonrpcStatus } from './status.ts'
export {
  BoundedQueue,
  createPollingSubscriptions,
  DEFAULT_POLLING,
  type PollingOptions,
  type PollingSubscriptions,
} from './subscriptions.ts'
export type { BlockEvent, StatusEvent } from './types.ts'
