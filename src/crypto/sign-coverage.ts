/**
 * What each sign string covers, and the refusal of a transaction carrying content its signature
 * does not cover (protocol.md §1.4).
 *
 * A signature verifies under one of several sign strings (sign-string.ts), and the older ones
 * leave fields out: the 2017 string signs neither `extra` nor the opcode nor the vm type, format A
 * not the amount of a contract call, format B before 3.6 not the gas fields. Anything a relay adds
 * or changes in such a field would commit under the client's signature, so a transaction that
 * carries one (a value other than what its absence means) is refused with -32602, naming the
 * field and a sign string that covers it.
 */
import { amountOf, DEFAULT_NODE_TX_VERSION, formatBHasSection, int, type SignStringKind, type TxFields } from './sign-string.ts'

/**
 * Every field of a transaction a sign string may cover (protocol.md §1). Always covered, by every
 * sign string: from, to, timestamp, nonce and the payload. `simulate` and `signature` are covered
 * by none and are no content: the first says how the request is served (a simulated transaction
 * is never recorded), the second is what is checked.
 */
export const SIGNABLE_FIELDS = [
  'value',
  'opcode',
  'extra',
  'type',
  'version',
  'extraIdInt64',
  'extraIdString',
  'cname',
  'gasPrice',
  'gasLimit',
  'expirationTimestamp',
  'participant',
] as const
export type SignableField = (typeof SIGNABLE_FIELDS)[number]

const nonEmpty = (value: unknown): boolean => typeof value === 'string' && value !== ''
const nonZero = (value: TxFields['opcode'] | TxFields['value']): boolean => {
  if (value == null || value === '') return false
  try {
    return int(value, 'field') !== 0n
  } catch {
    return true
  }
}
const hasPayload = (tx: TxFields): boolean => tx.payload != null && tx.payload.trim() !== '' && tx.payload !== '0x'

/** Whether `tx` carries `field`: holds a value other than what the field's absence means. */
export function carries(tx: TxFields, field: SignableField): boolean {
  switch (field) {
    case 'value':
      // a contract call's amount; a transfer's is what the 2017 string and format A sign
      if (!hasPayload(tx)) return false
      try {
        return amountOf(tx) !== 0n
      } catch {
        return true
      }
    case 'opcode':
      return nonZero(tx.opcode)
    case 'extra':
    case 'version':
    case 'cname':
      return nonEmpty(tx[field])
    case 'type':
      // EVM is the default; a transfer may say TRANSFER, as the official SDK does (admission.ts)
      return nonEmpty(tx.type) && !['EVM', 'TRANSFER'].includes((tx.type as string).toUpperCase())
    case 'extraIdInt64':
    case 'extraIdString':
      return Array.isArray(tx[field]) && (tx[field] as unknown[]).length > 0
    case 'gasPrice':
      return nonZero(tx.gasPrice)
    case 'gasLimit':
    case 'expirationTimestamp':
      return tx[field] != null
    case 'participant':
      return tx.participant != null && (nonEmpty(tx.participant.initiator) || (tx.participant.withholding ?? []).length > 0)
  }
}

/** Whether a signature over the `kind` sign string of `tx` covers `field`. */
export function covers(kind: SignStringKind, field: SignableField, tx: TxFields): boolean {
  if (kind.format !== 'B') {
    // the 2017 string and format A sign the payload in place of the amount when there is one
    if (field === 'value') return !hasPayload(tx)
    return kind.format === 'A' && (field === 'opcode' || field === 'extra' || field === 'type')
  }
  switch (field) {
    case 'version':
      return kind.version === tx.version
    case 'extraIdInt64':
    case 'extraIdString':
      return formatBHasSection(kind.version, kind.sections, '2.1')
    case 'cname':
      return formatBHasSection(kind.version, kind.sections, '2.2')
    case 'gasPrice':
    case 'gasLimit':
    case 'expirationTimestamp':
    case 'participant':
      return formatBHasSection(kind.version, kind.sections, '3.6')
    default:
      return true
  }
}

/** The first field `tx` carries that its `kind` sign string leaves out. */
export function uncoveredField(tx: TxFields, kind: SignStringKind): SignableField | undefined {
  return SIGNABLE_FIELDS.find((field) => carries(tx, field) && !covers(kind, field, tx))
}

/** How a message names a sign string. */
export function signStringName(kind: SignStringKind): string {
  if (kind.format === '2017') return 'the 2017 sign string'
  if (kind.format === 'A') return 'the format A sign string'
  const sections =
    kind.sections === 'all' ? '' : kind.sections === 'before3.6' ? ' without its 3.6 section' : ' with the sections its version implies'
  return `the ${kind.version} sign string (format B${sections})`
}

/**
 * The -32602 message for `tx` signed under `kind`, or undefined when that sign string covers every
 * field it carries: e.g. "extra is not covered by the 2017 sign string this signature verifies
 * under; sign with the 4.1 sign string, which covers extra".
 */
export function coverageRefusal(tx: TxFields, kind: SignStringKind, nodeVersion = DEFAULT_NODE_TX_VERSION): string | undefined {
  const field = uncoveredField(tx, kind)
  if (field === undefined) return undefined
  const alsoA = kind.format === '2017' && covers({ format: 'A' }, field, tx) ? ' (or format A)' : ''
  const version = field === 'version' && nonEmpty(tx.version) ? (tx.version as string) : nodeVersion
  return `${field} is not covered by ${signStringName(kind)} this signature verifies under; sign with the ${version} sign string${alsoA}, which covers ${field}`
}
