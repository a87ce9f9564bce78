/**
 * Signing test transactions the way a Hyperchain 1.4 client does (the 2017 sign string, protocol.md
 * §1.1), or, for one that carries what that string leaves out (extra, an opcode, a vm type other
 * than EVM), with format A, which covers them (§1.2): Keel refuses unsigned content.
 */
import { randomBytes } from 'node:crypto'
import { signString2017, signStringFormatA } from '../../src/crypto/sign-string.ts'
import { addressFromPrivateKey, signSecp256k1, signSm2 } from '../../src/crypto/signature.ts'

export interface Wallet {
  address: string
  privateKey: string
  transfer(to: string, value: number | bigint, extra?: Partial<TxOverrides>): Record<string, unknown>
  deploy(bin: string, extra?: Partial<TxOverrides>): Record<string, unknown>
  invoke(to: string, data: string, extra?: Partial<TxOverrides>): Record<string, unknown>
  maintain(to: string, opcode: 1 | 2 | 3, payload?: string, extra?: Partial<TxOverrides>): Record<string, unknown>
}

export interface TxOverrides {
  timestamp: bigint
  nonce: bigint
  simulate: boolean
  extra: string
  /** the engine: EVM (the default) or JVM */
  type: string
}

let counter = 0n
const nonce = (): bigint => (BigInt(`0x${randomBytes(6).toString('hex')}`) << 4n) + (counter++ % 16n) + 1n
const now = (): bigint => BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000))

export function wallet(privateKey: string = `0x${randomBytes(32).toString('hex')}`, scheme: 'secp256k1' | 'sm2' = 'secp256k1'): Wallet {
  const address = addressFromPrivateKey(privateKey, scheme)
  const sign = (fields: Record<string, unknown>, overrides: Partial<TxOverrides>): Record<string, unknown> => {
    const tx: Record<string, unknown> = {
      from: address,
      timestamp: overrides.timestamp ?? now(),
      nonce: overrides.nonce ?? nonce(),
      ...fields,
    }
    if (overrides.simulate !== undefined) tx.simulate = overrides.simulate
    if (overrides.extra !== undefined) tx.extra = overrides.extra
    const carriesMore =
      (typeof tx.extra === 'string' && tx.extra !== '') ||
      (tx.opcode !== undefined && Number(tx.opcode) !== 0) ||
      (typeof tx.type === 'string' && tx.type.toUpperCase() !== 'EVM')
    const text = carriesMore ? signStringFormatA(tx as never) : signString2017(tx as never)
    tx.signature = `0x${scheme === 'sm2' ? signSm2(text, privateKey) : signSecp256k1(text, privateKey)}`
    return tx
  }
  return {
    address,
    privateKey,
    transfer: (to, value, extra = {}) => sign({ to, value: Number(value) }, extra),
    deploy: (bin, extra = {}) => sign({ payload: bin, type: extra.type ?? 'EVM' }, extra),
    invoke: (to, data, extra = {}) => sign({ to, payload: data, type: extra.type ?? 'EVM' }, extra),
    maintain: (to, opcode, payload, extra = {}) =>
      sign({ to, opcode, ...(payload === undefined ? { value: 0 } : { payload }), type: extra.type ?? 'EVM' }, extra),
  }
}

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/** The other valid secp256k1 signature (`00‖r‖s‖v`, hex) of the same content: (r, n − s), recovery bit flipped. */
export function flippedS(signature: string): string {
  const sig = signature.slice(2)
  const s = BigInt(`0x${sig.slice(66, 130)}`)
  const v = Number.parseInt(sig.slice(130, 132), 16)
  return `0x${sig.slice(0, 66)}${(SECP256K1_N - s).toString(16).padStart(64, '0')}${(v ^ 1).toString(16).padStart(2, '0')}`
}
