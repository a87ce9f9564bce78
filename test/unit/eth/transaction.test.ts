/**
 * A raw Ethereum transaction's sender, recovered by the node's native secp256k1 (src/eth/transaction.ts
 * senderOf): the same address @ethereumjs/tx recovers, for legacy (EIP-155), EIP-2930 and EIP-1559
 * transactions; a high-s signature (EIP-2) and a wrong v refused as geth refuses them.
 */
import { createCustomCommon, Mainnet } from '@ethereumjs/common'
import { RLP } from '@ethereumjs/rlp'
import { createTx } from '@ethereumjs/tx'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeEthereumTx } from '../../../src/eth/transaction.ts'

const CHAIN_ID = 1337n
const common = createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet)
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

const signed = (type: 0 | 1 | 2, key: Uint8Array) => {
  const base = { nonce: 3n, gasLimit: 21_000n, to: '0x3535353535353535353535353535353535353535', value: 7n, data: '0x' as const }
  const fields =
    type === 0
      ? { ...base, gasPrice: 1n }
      : type === 1
        ? { ...base, type, gasPrice: 1n, accessList: [] }
        : { ...base, type, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n }
  return createTx(fields as Parameters<typeof createTx>[0], { common }).sign(key)
}

test('the sender is the one @ethereumjs/tx recovers, for every transaction type and many keys', () => {
  for (let i = 1; i <= 30; i++) {
    const key = hexToBytes(i.toString(16).padStart(64, '0'))
    for (const type of [0, 1, 2] as const) {
      const tx = signed(type, key)
      const raw = `0x${bytesToHex(tx.serialize())}`
      assert.is(decodeEthereumTx(raw, CHAIN_ID).from, tx.getSenderAddress().toString().toLowerCase(), `type ${type}, key ${i}`)
    }
  }
})

/** the raw bytes of `tx` with some of its RLP fields replaced (by index) */
function rawWith(tx: ReturnType<typeof signed>, replace: Record<number, bigint>): string {
  const fields = tx.raw() as Uint8Array[]
  for (const [index, value] of Object.entries(replace))
    fields[Number(index)] =
      value === 0n
        ? new Uint8Array()
        : hexToBytes(value.toString(16).padStart(value.toString(16).length + (value.toString(16).length % 2), '0'))
  const body = RLP.encode(fields)
  return `0x${tx.type === 0 ? '' : `0${tx.type}`}${bytesToHex(body)}`
}

/** the other recovery id of an EIP-155 v (2·chainId + 35 + recovery id) */
const flippedLegacyV = (v: bigint): bigint => 2n * CHAIN_ID + 35n + (1n - (v - 2n * CHAIN_ID - 35n))

test('a high-s copy of a signature (EIP-2) and a v that gives no recovery id are refused as invalid sender', () => {
  const key = hexToBytes('11'.repeat(32))
  // legacy: v, r, s are fields 6, 7, 8; EIP-1559: y-parity, r, s are 9, 10, 11
  const legacy = signed(0, key)
  const typed = signed(2, key)
  assert.throws(
    () => decodeEthereumTx(rawWith(legacy, { 6: flippedLegacyV(legacy.v as bigint), 8: N - (legacy.s as bigint) }), CHAIN_ID),
    /invalid sender: .*s-values/,
  )
  assert.throws(
    () => decodeEthereumTx(rawWith(typed, { 9: (typed.v as bigint) ^ 1n, 11: N - (typed.s as bigint) }), CHAIN_ID),
    /invalid sender: .*s-values/,
  )
  // the untouched bytes still decode: the refusal is the change's
  assert.is(decodeEthereumTx(rawWith(typed, {}), CHAIN_ID).from, typed.getSenderAddress().toString().toLowerCase())
  assert.throws(() => decodeEthereumTx(rawWith(typed, { 9: 2n }), CHAIN_ID), /invalid sender|not a valid transaction/)
})

test.run()
