/**
 * The one error hierarchy of Keel. Codes come from components.errors of openrpc.json
 * (generated/errors.ts); the message is the text a person reads on the wire. Anything that is not
 * an RpcError reaching the dispatcher becomes -32603 with its stack in the log only.
 */
import { ErrorCode } from '../generated/errors.ts'

export class RpcError extends Error {
  override name = 'RpcError'
  /** the reply's `data` beside code and message (a discarded transaction's reason), when there is one */
  readonly data: string | undefined
  constructor(
    readonly code: number,
    message: string,
    options?: { cause?: unknown; data?: string },
  ) {
    super(message, options)
    this.data = options?.data
  }
}

/** -32700 PARSE_ERROR: the body is not JSON (or not UTF-8). */
export class ParseError extends RpcError {
  static readonly code = ErrorCode.PARSE_ERROR
  constructor(message: string) {
    super(ErrorCode.PARSE_ERROR, message)
  }
}

/** -32600 INVALID_REQUEST: JSON, but not a request envelope the spec accepts. */
export class InvalidRequest extends RpcError {
  static readonly code = ErrorCode.INVALID_REQUEST
  constructor(message: string) {
    super(ErrorCode.INVALID_REQUEST, message)
  }
}

/** -32601 METHOD_NOT_FOUND: unknown method, or one whose handler is not built yet. */
export class MethodNotFound extends RpcError {
  static readonly code = ErrorCode.METHOD_NOT_FOUND
  constructor(message: string) {
    super(ErrorCode.METHOD_NOT_FOUND, message)
  }
}

/** -32602 INVALID_PARAMS: params that break the method's schema or rules. */
export class InvalidParams extends RpcError {
  static readonly code = ErrorCode.INVALID_PARAMS
  constructor(message: string) {
    super(ErrorCode.INVALID_PARAMS, message)
  }
}

/** -32603 INTERNAL_ERROR: a fault inside Keel; details go to the log, never to the wire. */
export class InternalError extends RpcError {
  static readonly code = ErrorCode.INTERNAL_ERROR
  constructor(message = 'internal error: the node logged the details') {
    super(ErrorCode.INTERNAL_ERROR, message)
  }
}

/** -32000 NODE_ERROR: the node cannot serve the call (e.g. no contract compiler). */
export class NodeError extends RpcError {
  static readonly code = ErrorCode.NODE_ERROR
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.NODE_ERROR, message, options)
  }
}

/** -32001 DATA_NOT_FOUND: the queried block, transaction or receipt does not exist (yet). */
export class DataNotFound extends RpcError {
  static readonly code = ErrorCode.DATA_NOT_FOUND
  constructor(message: string) {
    super(ErrorCode.DATA_NOT_FOUND, message)
  }
}

/** how Hyperchain words -32006 */
const SYSTEM_BUSY_WORDS = 'System is too busy to response'

/** -32006 SYSTEM_BUSY: the node sheds load; the client may retry the same request. */
export class SystemBusy extends RpcError {
  static readonly code = ErrorCode.SYSTEM_BUSY
  constructor(message = `${SYSTEM_BUSY_WORDS}.`) {
    super(ErrorCode.SYSTEM_BUSY, message)
  }

  /** -32006 in Hyperchain's words (which clients may match on), then why and what to do */
  static because(reason: string): SystemBusy {
    return new SystemBusy(`${SYSTEM_BUSY_WORDS}: ${reason}`)
  }
}

/** -32007 DUPLICATE_TRANSACTION. */
export class DuplicateTransaction extends RpcError {
  static readonly code = ErrorCode.DUPLICATE_TRANSACTION
  constructor(message: string) {
    super(ErrorCode.DUPLICATE_TRANSACTION, message)
  }
}

/**
 * -32008 INVALID_PERMISSION: the sender's account or role may not do this, or an operator method came
 * without an admin's signed request (docs/governance.md, src/rpc/operator-auth.ts).
 */
export class InvalidPermission extends RpcError {
  static readonly code = ErrorCode.INVALID_PERMISSION
  constructor(message: string) {
    super(ErrorCode.INVALID_PERMISSION, message)
  }
}

/** -32009 ACCOUNT_NOT_EXIST. */
export class AccountNotExist extends RpcError {
  static readonly code = ErrorCode.ACCOUNT_NOT_EXIST
  constructor(message: string) {
    super(ErrorCode.ACCOUNT_NOT_EXIST, message)
  }
}

/** -32010 NAMESPACE_NOT_EXIST. */
export class NamespaceNotExist extends RpcError {
  static readonly code = ErrorCode.NAMESPACE_NOT_EXIST
  /** `known`: the namespaces this node serves, so the client sees what it may name */
  constructor(namespace: string, known?: readonly string[]) {
    super(
      ErrorCode.NAMESPACE_NOT_EXIST,
      `The namespace '${namespace}' does not exist${known === undefined ? '' : `; this node serves ${known.map((name) => `'${name}'`).join(', ')}`}`,
    )
  }
}

/** -32011 NO_BLOCK_GENERATED: the chain has no block past genesis. */
export class NoBlockGenerated extends RpcError {
  static readonly code = ErrorCode.NO_BLOCK_GENERATED
  constructor() {
    super(ErrorCode.NO_BLOCK_GENERATED, 'There is no block generated!')
  }
}

/** -32012 SUBSCRIPTION_NOT_EXIST: unknown or expired subscription id. */
export class SubscriptionNotExist extends RpcError {
  static readonly code = ErrorCode.SUBSCRIPTION_NOT_EXIST
  constructor(message = 'required subscription does not existed or has expired') {
    super(ErrorCode.SUBSCRIPTION_NOT_EXIST, message)
  }
}

/** -32013 SNAPSHOT_ARCHIVE_FAILED. */
export class SnapshotArchiveFailed extends RpcError {
  static readonly code = ErrorCode.SNAPSHOT_ARCHIVE_FAILED
  constructor(message: string) {
    super(ErrorCode.SNAPSHOT_ARCHIVE_FAILED, message)
  }
}

/** -32098 INVALID_TCERT: a request without a valid TCert while enforcement is on. */
export class InvalidTcert extends RpcError {
  static readonly code = ErrorCode.INVALID_TCERT
  constructor(message = 'Unauthorized, Please check your cert') {
    super(ErrorCode.INVALID_TCERT, message)
  }
}

/** -32099 TCERT_FAILED: the node could not issue a TCert. */
export class TcertFailed extends RpcError {
  static readonly code = ErrorCode.TCERT_FAILED
  constructor(message: string) {
    super(ErrorCode.TCERT_FAILED, message)
  }
}

/** -32014 RESPONSE_TOO_LARGE (Keel extension): a batch reply passed its size bound. */
export class ResponseTooLarge extends RpcError {
  static readonly code = ErrorCode.RESPONSE_TOO_LARGE
  constructor(limitBytes: number) {
    super(ErrorCode.RESPONSE_TOO_LARGE, `response too large: the batch reply passed ${limitBytes} bytes; send fewer requests per batch`)
  }
}
