import type { OperatorProof } from './operator-auth.ts'

/** What a handler knows about the call it answers, besides its params. */
export interface CallContext {
  /** namespace that handles the request (`global` when the request named none) */
  readonly namespace: string
  /** canonical method name, even when the request used an alias */
  readonly method: string
  /** raw HTTP headers of the request (TCert checks read them) */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** what the request's operator headers prove (operator-auth.ts); absent when it sent none, or came over WebSocket */
  readonly operator?: OperatorProof
}
