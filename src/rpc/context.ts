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

/** What the transport found in a request's operator headers (operator-auth.ts readOperatorProof): who signed it, or why it proves nothing. */
export type OperatorProof =
  | {
      /** the signer's address, `0x` + 40 lower-case hex digits */
      address: string
      /** the signed `operator-timestamp` */
      timestampMs: number
      /** the signature's hex, lower case, no 0x: names the signed request in the replay memory */
      signature: string
    }
  | { refusal: string }
