/** The shape of one entry of generated/methods.ts; the dispatcher and the client read only this. */

export interface ParamSpec {
  readonly name: string
  readonly required: boolean
  readonly schema: unknown
}

export interface MethodSpec {
  /** service prefix, e.g. `tx` */
  readonly service: string
  readonly summary: string
  /** other spellings that reach this method */
  readonly aliases: readonly string[]
  /** `websocket`: served only on WebSocket connections (src/rpc/ws.ts); HTTP answers -32601 */
  readonly transport?: 'websocket'
  /** an operator method: answered only for a request an administrator signed (operator-auth.ts) */
  readonly operator?: true
  /** `chain`: served only by the chain thread; a request thread forwards it there (openrpc.json `x-thread`) */
  readonly thread?: 'chain'
  readonly params: readonly ParamSpec[]
  readonly result: { readonly name: string; readonly schema: unknown }
  /** codes the method may answer besides 0 */
  readonly errors: readonly number[]
}
