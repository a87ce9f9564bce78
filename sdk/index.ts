export { createClient, httpTransport, RpcError, type ClientOptions, type Envelope, type KeelClient, type Transport } from './client.ts'
export type * from '../generated/types.ts'
