export type * from '../generated/types.ts'
export { type ClientOptions, createClient, type Envelope, httpTransport, type KeelClient, RpcError, type Transport } from './client.ts'
export {
  type JavaContract,
  type JvmArg,
  jvmArg,
  jvmCallPayload,
  jvmDeployPayload,
  jvmInvokeArgsPayload,
  jvmRetText,
  jvmTarGzDeployPayload,
  jvmTopic,
  readClassDirectory,
} from './jvm.ts'
export { type TcertCredentials, type TcertHeaders, type TcertSigner, tcertHeaders, tcertSigner } from './tcert.ts'
export { type WsTransport, type WsTransportOptions, wsTransport } from './ws-transport.ts'
