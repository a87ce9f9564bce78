import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { decodeTxs, encodeTxs } from '../../../src/network/tx-relay.ts'
import { pack } from '../../../src/wire/binary.ts'
import { wallet } from '../../helpers/wallet.ts'

const nowNs = () => BigInt(Date.now()) * 1_000_000n
const alice = wallet()

test('a relayed transaction is the signed params: admitted again, same hash, bigints exact', () => {
  const params = [
    alice.transfer(wallet().address, 5, { timestamp: nowNs() + 123n }),
    alice.deploy('0x6080604052'),
    alice.invoke(wallet().address, '0xa9059cbb', { extra: 'note \u2028 "quoted"' }),
  ]
  const txs = params.map((p, i) => admitTransaction((['transfer', 'deploy', 'invoke'] as const)[i], p, { nowNs }))
  const back = decodeTxs(encodeTxs(txs), { nowNs })
  assert.equal(
    back.map((tx) => tx.hash),
    txs.map((tx) => tx.hash),
  )
  assert.is(back[0].timestamp, txs[0].timestamp, 'a nanosecond timestamp above 2^53 survives')
  assert.is(back[2].extra, 'note \u2028 "quoted"')
})

test('the time window applies unless the caller turns it off (relayed and batch-named transactions)', () => {
  const old = admitTransaction('transfer', alice.transfer(wallet().address, 1), { nowNs })
  const later = () => nowNs() + 2n * 24n * 3600n * 1_000_000_000n
  assert.throws(() => decodeTxs(encodeTxs([old]), { nowNs: later }), /out of date/)
  assert.is(decodeTxs(encodeTxs([old]), { nowNs: later, timeWindow: false })[0].hash, old.hash)
})

test('malformed payloads are refused with a reason, never half-read', () => {
  const address = '0x1234567890123456789012345678901234567890'
  const cases: [unknown, RegExp][] = [
    [{}, /must be a list/],
    [[['steal', {}]], /unknown kind/],
    [[['transfer', [1]]], /params must be an object/],
    [[['transfer', { from: '0x12' }]], /invalid argument 0/],
    [[['transfer', { from: address, to: address }]], /required property/],
    [[['toString', {}]], /unknown kind/],
    [[{ kind: 'transfer', params: {} }], /unknown kind/],
    [[['transfer', {}, 'more']], /unknown kind/],
  ]
  for (const [value, reason] of cases) assert.throws(() => decodeTxs(pack(value), { nowNs }), reason, JSON.stringify(value))
  const nested = new Uint8Array(200_001).fill(0x91)
  assert.throws(() => decodeTxs(nested, { nowNs }), /not msgpack/, 'too deep to decode')
  assert.throws(() => decodeTxs(Uint8Array.of(0x92, 0x01), { nowNs }), /not msgpack/, 'cut short')
  assert.throws(() => decodeTxs(Buffer.from('[{"kind":"transfer","params":{}}]'), { nowNs }), /./, 'JSON (protocol 1) is not read')
  const simulated = admitTransaction('transfer', alice.transfer(wallet().address, 1, { simulate: true }), { nowNs })
  assert.throws(() => decodeTxs(encodeTxs([simulated]), { nowNs }), /simulation/)
})

test.run()
