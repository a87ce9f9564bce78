/**
 * Submission checks (protocol.md §4, -32602 with the real node's messages) and the conversion of
 * validated params into a SignedTx. The signature is NOT checked here: a bad one makes the
 * transaction invalid later (SIGFAILED), as the spec's "Transaction life" says.
 */
import { copyWith } from '../copy-with.ts'
import { amountOf, signHash2017, type TxFields } from '../crypto/sign-string.ts'
import { transactionHash } from '../crypto/tx-hash.ts'
import { Opcode, type OpcodeValue, type SignedTx, type TxKind, type VmType, ZERO_ADDRESS } from '../domain.ts'
import { InvalidParams } from '../errors.ts'
import { BUILTIN_ADDRESSES } from '../governance/wire.ts'
import { bytesToHex } from '../wire/hex.ts'

const ZERO_ADDRESS_HEX = /^(0x)?0{40}$/i
const FIVE_MINUTES_NS = 5n * 60n * 1_000_000_000n
const ONE_DAY_NS = 24n * 60n * 60n * 1_000_000_000n
/** Largest decoded payload (reliability.md part B). */
export const MAX_PAYLOAD_BYTES = 256 * 1024

export interface AdmissionOptions {
  /** node clock in ns; injectable so tests and replays can pin time */
  nowNs(): bigint
  /**
   * false: skip the "not in the future, not older than a day" window. For a transaction another
   * VP admitted, or one an agreed batch names: the window is a client-facing rule, and a peer's
   * clock a little ahead must not keep this node from ordering it.
   */
  timeWindow?: boolean
}

function lowerHex(raw: unknown): string {
  if (typeof raw !== 'string' || raw === '') return '0x'
  const lower = raw.toLowerCase()
  return lower.startsWith('0x') ? lower : `0x${lower}`
}

function address(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw === '' || ZERO_ADDRESS_HEX.test(raw)) return undefined
  return lowerHex(raw)
}

export function admitTransaction(kind: TxKind, params: Record<string, unknown>, options: AdmissionOptions): SignedTx {
  // issue 28: `signed.ethereum` marks a transaction of the Ethereum dialect (src/eth/transaction.ts); a
  // Hyperchain-dialect one carrying it would be executed and relayed as another transaction
  if (Object.hasOwn(params, 'ethereum'))
    throw new InvalidParams(
      '`ethereum` is not a field of a Hyperchain transaction: send raw Ethereum transactions with eth_sendRawTransaction',
    )
  const from = address(params.from)
  if (from === undefined) throw new InvalidParams('address `from` is invalid')
  // a contract named by `cname` (the SDK's Builder.contractName) has the zero address as `to`; the
  // executor resolves the name when the transaction runs (docs/governance.md §8)
  const named =
    (kind === 'invoke' || kind === 'maintain') &&
    typeof params.cname === 'string' &&
    params.cname !== '' &&
    ZERO_ADDRESS_HEX.test(String(params.to ?? ''))
  const to = kind === 'deploy' ? null : named ? ZERO_ADDRESS : address(params.to)
  if (to === undefined) throw new InvalidParams('address `to` is invalid')

  const timestamp = BigInt(params.timestamp as number | bigint)
  const now = options.nowNs()
  if (timestamp <= 0n) throw new InvalidParams('`timestamp` is invalid')
  if (options.timeWindow !== false) {
    if (timestamp > now + FIVE_MINUTES_NS) throw new InvalidParams('`timestamp` is invalid')
    if (timestamp < now - ONE_DAY_NS) throw new InvalidParams('transaction out of date')
  }

  const signature = lowerHex(params.signature)
  if (signature === '0x') throw new InvalidParams('missing params `signature`')
  const nonce = BigInt(params.nonce as number | bigint)
  if (nonce <= 0n) throw new InvalidParams('`nonce` is invalid')

  const opcode = (kind === 'maintain' ? Number(params.opcode) : Opcode.normal) as OpcodeValue
  const payload = kind === 'transfer' ? '0x' : lowerHex(params.payload)
  if ((kind === 'deploy' || opcode === Opcode.upgrade) && payload === '0x') throw new InvalidParams('contract code is empty')
  if ((payload.length - 2) / 2 > MAX_PAYLOAD_BYTES) {
    throw new InvalidParams(`payload too large: at most ${MAX_PAYLOAD_BYTES} bytes, got ${(payload.length - 2) / 2}`)
  }
  if (kind === 'invoke' && payload === '0x') throw new InvalidParams('contract code is empty')

  const fields = params as unknown as TxFields
  const value = kind === 'transfer' ? amountOf(fields) : 0n
  const extra = typeof params.extra === 'string' ? params.extra : ''
  const vmType = vmTypeOf(kind, params.type)
  if (vmType === 'BVM' && (to === null || !BUILTIN_ADDRESSES.has(to)))
    throw new InvalidParams(`a BVM transaction goes to a built-in contract (${[...BUILTIN_ADDRESSES].join(', ')}); got \`to\` ${to}`)
  // Hyperchain hashes contract calls with their payload, op, extra and vmType, and transfers with the amount only
  const hashFields: TxFields & { signature: string } = copyWith(fields, {
    from,
    to,
    value,
    payload: kind === 'transfer' ? undefined : payload,
    opcode,
    extra,
    type: vmType,
    signature,
  })
  return {
    hash: transactionHash(hashFields, kind === 'transfer' ? 'transfer' : 'contract'),
    kind,
    from,
    to,
    value,
    payload,
    timestamp,
    nonce,
    extra,
    opcode,
    vmType,
    signature,
    signHash: bytesToHex(signHash2017(copyWith(fields, { from, to, payload: kind === 'transfer' ? undefined : payload, value }))),
    simulate: params.simulate === true,
    signed: params,
  }
}

/**
 * The engine a transaction names: `type` EVM (the default) or JVM, any case (Hyperchain 1.x's CLI
 * sends "jvm"); HVM, which the official SDK's Java contract builder (`Transaction.HVMBuilder`)
 * sends, is the same Java engine (docs/jvm.md); BVM calls a built-in contract (docs/governance.md);
 * a transfer may also say TRANSFER, as the SDK does.
 * Anything else is refused rather than silently run as EVM.
 */
function vmTypeOf(kind: TxKind, raw: unknown): VmType {
  if (raw === undefined || raw === null || raw === '') return 'EVM'
  const type = typeof raw === 'string' ? raw.toUpperCase() : undefined
  if (type === 'EVM' || type === 'JVM') return type
  if (type === 'HVM' && kind !== 'transfer') return 'JVM'
  if (type === 'BVM') {
    if (kind === 'invoke') return type
    throw new InvalidParams(`\`type\` BVM calls a built-in contract: send it with contract_invokeContract (got a ${kind} transaction)`)
  }
  if (type === 'TRANSFER' && kind === 'transfer') return 'EVM'
  throw new InvalidParams(`\`type\` ${JSON.stringify(raw)} is not supported: EVM (the default), JVM, HVM or BVM`)
}

/** tx_getSignHash: the 2017 string's hash, with the same `from`/`timestamp` checks but no time window. */
export function signHashOf(params: Record<string, unknown>): string {
  const from = address(params.from)
  if (from === undefined) throw new InvalidParams('address `from` is invalid')
  if (BigInt(params.timestamp as number | bigint) <= 0n) throw new InvalidParams('`timestamp` is invalid')
  return bytesToHex(signHash2017(copyWith(params as unknown as TxFields, { from })))
}
