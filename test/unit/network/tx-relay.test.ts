import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { decodeTxs, encodeTxs } from '../../../src/network/tx-relay.ts'
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
  const cases: [string, RegExp][] = [
    ['{}', /JSON array/],
    ['[{"kind":"steal","params":{}}]', /unknown kind/],
    ['[{"kind":"transfer","params":[1]}]', /params must be an object/],
    ['[{"kind":"transfer","params":{"from":"0x12"}}]', /invalid argument 0/],
    [
      '[{"kind":"transfer","params":{"from":"0x1234567890123456789012345678901234567890","to":"0x1234567890123456789012345678901234567890"}}]',
      /required property/,
    ],
    ['[{"kind":"toString","params":{}}]', /unknown kind/],
    [`${'['.repeat(40)}${']'.repeat(40)}`, /deep|nest/i],
    ['not json', /./],
  ]
  for (const [text, reason] of cases) assert.throws(() => decodeTxs(Buffer.from(text), { nowNs }), reason, text)
  const simulated = admitTransaction('transfer', alice.transfer(wallet().address, 1, { simulate: true }), { nowNs })
  assert.throws(() => decodeTxs(encodeTxs([simulated]), { nowNs }), /simulation/)
})

test.run()
