/**
 * keel-client: a client for Keel (and Hyperchain's JSON-RPC dialect). Everything is exported here;
 * the subpaths (keel-client/abi, /account, /transaction, /receipt, /client, /ws, /json, /tcert,
 * /operator, /bvm, /jvm, /sign-string, /errors, /types) give one part each.
 */
export {
  type Abi,
  type AbiEntry,
  AbiError,
  type AbiParameter,
  type DecodedEvent,
  decodeEventLog,
  decodeFunctionResult,
  decodeParameters,
  decodeRevertReason,
  encodeDeploy,
  encodeFunctionCall,
  encodeParameters,
  entrySignature,
  eventTopic,
  functionSelector,
} from './abi.ts'
export {
  type Account,
  accountFromPrivateKey,
  addressFromPrivateKey,
  generateAccount,
  type PrivateKey,
  SIGNATURE_FLAG,
  type SignatureScheme,
  signSecp256k1,
  signSm2,
} from './account.ts'
export {
  accountOperation,
  type BuiltinOperation,
  BVM_ADDRESS,
  type BvmOperation,
  type BvmResult,
  balanceOperation,
  bvmPayload,
  type CompileOptions,
  caModeContent,
  certOperation,
  cnsContent,
  configContent,
  contractContent,
  decodeBvmRet,
  decodeProposalExecution,
  didOperation,
  encodeOperation,
  encodeProposalContents,
  hashChangeOperation,
  hashOperation,
  mpcOperation,
  type NsFilterRule,
  nodeContent,
  type OperationResult,
  type ProposalContent,
  type ProposalType,
  permissionContent,
  proposalOperation,
  rootCAOperation,
  SYSTEM_OPERATION_MAX,
  signBvm,
  systemUpgradeContent,
  versionOperation,
} from './bvm.ts'
export {
  type ClientOptions,
  createClient,
  type Envelope,
  type HttpTransportOptions,
  httpTransport,
  isErrorOf,
  type KeelClient,
  type MethodError,
  RpcError,
  type Transport,
} from './client.ts'
export { ErrorCode, type ErrorCodeValue, ErrorMeaning, type ErrorName } from './generated/errors.ts'
export { methodErrorCodes } from './generated/method-errors.ts'
export { type MethodName, methodNames } from './generated/method-names.ts'
export type * from './generated/types.ts'
export { JsonDepthError, JsonSyntaxError, JsonText, type JsonValue, parseJson, stringifyJson } from './json.ts'
export {
  type HvmAbiEntry,
  type HvmBeanAbi,
  hvmAbi,
  type JavaContract,
  type JvmArg,
  jvmArg,
  jvmCallPayload,
  jvmDeployPayload,
  jvmInvokeArgsPayload,
  jvmInvokeBeanPayload,
  jvmJarDeployPayload,
  jvmRetText,
  jvmTarGzDeployPayload,
  jvmTopic,
  readClassDirectory,
  readJar,
  writeJar,
} from './jvm.ts'
export {
  OPERATOR_SIGNATURE_HEADER,
  OPERATOR_TIMESTAMP_HEADER,
  type OperatorHeaders,
  type OperatorSigner,
  operatorHeaders,
  operatorSignedText,
  operatorSigner,
} from './operator.ts'
export { ReceiptTimeoutError, type WaitForReceiptOptions, waitForReceipt } from './receipt.ts'
export { signString2017, signStringFormatA, signStringFormatB, type TxFields } from './sign-string.ts'
export { type TcertCredentials, type TcertHeaders, type TcertSigner, tcertHeaders, tcertSigner } from './tcert.ts'
export {
  DEFAULT_GAS_LIMIT,
  type SignedTransaction,
  signDeploy,
  signInvoke,
  signMaintain,
  signTransaction,
  signTransfer,
  TRANSACTION_VERSION,
  type TransactionFields,
  type TransactionOptions,
} from './transaction.ts'
export { type WsTransport, type WsTransportOptions, wsTransport } from './ws-transport.ts'
