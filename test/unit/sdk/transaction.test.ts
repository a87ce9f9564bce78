/**
 * keel-client's transactions (sdk/src/transaction.ts, account.ts): what it signs is what the node
 * verifies. Each kind, signed with secp256k1 and with SM2, is checked by the node's own signature
 * check (src/crypto/signature.ts), which must find the 4.1 sign string; a changed field breaks it.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { accountFromPrivateKey, addressFromPrivateKey, generateAccount } from '../../../sdk/src/account.ts'
import { signStringFormatB } from '../../../sdk/src/sign-string.ts'
import {
  DEFAULT_GAS_LIMIT,
  type SignedTransaction,
  signDeploy,
  signInvoke,
  signMaintain,
  signTransfer,
  TRANSACTION_VERSION,
} from '../../../sdk/src/transaction.ts'
import { checkTransactionSignature } from '../../../src/crypto/signature.ts'

const KEY = '0x8c6b1f9b6f3f1f8e1f0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70'
const TO = '0x3434343434343434343434343434343434343434'

/** The wire transaction as the node reads its sign-string fields (`opCode` on the wire, `opcode` in the sign string). */
function check(tx: SignedTransaction) {
  return checkTransactionSignature({ ...tx, opcode: tx.opCode }, tx.signature)
}

for (const scheme of ['secp256k1', 'sm2'] as const) {
  const account = accountFromPrivateKey(KEY, scheme)

  test(`${scheme}: transfer, deploy, invoke and maintain verify on the node over the 4.1 sign string`, () => {
    assert.is(account.address, addressFromPrivateKey(KEY, scheme))
    const options = { timestamp: 1_700_000_000_000_000_000n, nonce: 4_242_424_242_424_242n }
    const kinds = [
      signTransfer(account, TO, 100n, options),
      signDeploy(account, '0x6001600055', { ...options, extra: 'note', extraIdInt64: [7], extraIdString: ['id'] }),
      signInvoke(account, TO, '0xa9059cbb', { ...options, gasLimit: 5_000_000, cname: 'counter' }),
      signMaintain(account, TO, 2, undefined, options),
    ] as unknown as SignedTransaction[]
    for (const tx of kinds) {
      assert.is(tx.from, account.address)
      assert.is(tx.version, TRANSACTION_VERSION)
      assert.is(tx.expirationTimestamp, options.timestamp + 300_000_000_000n)
      const result = check(tx)
      assert.ok(result.valid, `${tx.type} opCode ${tx.opCode}: ${result.reason}`)
      assert.is(result.scheme, scheme)
      const fourOne = signStringFormatB({ ...tx, opcode: tx.opCode }, { version: TRANSACTION_VERSION, sections: 'all', extraIdBug: false })
      assert.is(result.signString, fourOne)
    }
    assert.is(kinds[0].type, 'TRANSFER')
    assert.is(kinds[0].gasLimit, DEFAULT_GAS_LIMIT)
    assert.is(kinds[1].type, 'EVM')
    assert.is(kinds[3].opCode, 2)
  })

  test(`${scheme}: a field changed after signing, or another account's signature, does not verify`, () => {
    const tx = signTransfer(account, TO, 100n) as unknown as SignedTransaction
    assert.not.ok(check({ ...tx, value: 101n }).valid)
    assert.not.ok(check({ ...tx, to: '0x3535353535353535353535353535353535353535' }).valid)
    assert.not.ok(check({ ...tx, from: generateAccount(scheme).address }).valid)
  })
}

test('defaults: a fresh nonce and timestamp per transaction, so two identical transfers differ', () => {
  const account = accountFromPrivateKey(KEY)
  const [a, b] = [signTransfer(account, TO, 1), signTransfer(account, TO, 1)] as unknown as SignedTransaction[]
  assert.is.not(a.nonce, b.nonce)
  assert.ok(a.nonce >= 10n ** 15n && a.nonce < 10n ** 16n)
  assert.is.not(a.signature, b.signature)
  const nowNs = BigInt(Date.now()) * 1_000_000n
  assert.ok(a.timestamp > nowNs - 60_000_000_000n && a.timestamp <= nowNs + 1_000_000n)
})

test.run()
