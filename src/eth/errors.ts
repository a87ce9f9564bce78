/**
 * The errors of the Ethereum dialect (src/eth/), as Ethereum clients recognise them: geth's codes
 * and message prefixes, which ethers, viem and web3.js match to name an error (docs/ethereum.md
 * "Errors"). They are RpcErrors like every other, so the dispatcher answers them; the Ethereum
 * envelope (envelope.ts) puts `data` into `error.data`.
 */
import { ErrorCode } from '../../generated/errors.ts'
import { RpcError } from '../errors.ts'

/**
 * -32000: a raw transaction refused before it was stored (geth's txpool errors: "nonce too low",
 * "insufficient funds for gas * price + value", "invalid sender", "oversized data", ...). The
 * message starts with geth's text, which the clients match, and goes on with what to do.
 */
export class TransactionRejected extends RpcError {
  static readonly code = ErrorCode.NODE_ERROR
  constructor(message: string) {
    super(ErrorCode.NODE_ERROR, message)
  }
}

/**
 * 3: eth_call or eth_estimateGas reverted. `data` is the revert data as returned (an Error(string)
 * or a custom error), which ethers and viem decode from error.data.
 */
export class ExecutionReverted extends RpcError {
  static readonly code = ErrorCode.EXECUTION_REVERTED
  constructor(message: string, data: string) {
    super(ErrorCode.EXECUTION_REVERTED, message, { data })
  }
}

/**
 * -32000: debug_traceTransaction or debug_traceCall cannot answer: geth's texts where it has one
 * ("transaction not found", "required historical state unavailable"), then what to do.
 */
export class TraceFailed extends RpcError {
  static readonly code = ErrorCode.NODE_ERROR
  constructor(message: string) {
    super(ErrorCode.NODE_ERROR, message)
  }
}

/** -32000 for a failure of execution that is not a revert (out of gas, invalid opcode): geth says the same. */
export class ExecutionFailed extends RpcError {
  static readonly code = ErrorCode.NODE_ERROR
  constructor(message: string) {
    super(ErrorCode.NODE_ERROR, message)
  }
}
