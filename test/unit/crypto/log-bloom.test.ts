import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ChainReader } from '../../../src/api/chain-reader.ts'
import { createSubHandlers } from '../../../src/api/sub.ts'
import { BLOOM_BYTES, bloomQuery, logsBloom } from '../../../src/crypto/log-bloom.ts'
import type { Hex } from '../../../src/domain.ts'
import { compileLogCriteria } from '../../../src/events/filters.ts'
import { createEventHub } from '../../../src/events/hub.ts'
import { createPollingSubscriptions } from '../../../src/events/subscriptions.ts'
import { createLogger } from '../../../src/log.ts'

const address = (n: number): Hex => `0x${n.toString(16).padStart(40, '0')}`
const topic = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`

test('a bloom answers "may match" for every item put in and "no" for a block without logs', () => {
  const bloom = logsBloom([{ address: address(1), topics: [topic(10), topic(11)] }])
  assert.is(bloom.length, BLOOM_BYTES)
  const may = (filter: Parameters<typeof compileLogCriteria>[0]) => bloomQuery(compileLogCriteria(filter))(bloom)
  assert.ok(may({}))
  assert.ok(may({ addresses: [address(1)] }))
  assert.ok(may({ addresses: [address(1).toUpperCase().replace('0X', '0x')] }))
  assert.ok(may({ topics: [[topic(10)], null, [topic(11)]] }))
  assert.ok(may({ addresses: [address(2), address(1)] }), 'an OR list matches when one member is present')
  // absent items: with 3 of 2048 bits per item and 3 items in, a false positive is ~1e-6
  assert.not.ok(may({ addresses: [address(2)] }))
  assert.not.ok(may({ addresses: [address(1)], topics: [[topic(12)]] }))
  assert.is(logsBloom([]).length, 0)
  assert.not.ok(bloomQuery(compileLogCriteria({}))(logsBloom([])), 'a block without logs never matches')
})

test('sub_getLogs reads receipts only of blocks whose bloom may match, and the result is unchanged', () => {
  // 3000 blocks of one transaction; only every 100th block holds a log of address 7
  const height = 3000
  const logOf = (n: number) => (n % 100 === 0 ? [{ address: address(7), topics: [topic(n)], data: '0x' as Hex }] : [])
  let receiptReads = 0
  const chain = {
    height: () => height,
    genesisNumber: () => 1,
    getBlock: (n: number) => ({ number: n, logsBloom: logsBloom(logOf(n)) }),
    getBlockTxHashes: (n: number) => [topic(n)],
    getReceipt: (hash: Hex) => {
      receiptReads++
      const n = Number(BigInt(hash))
      return {
        txHash: hash,
        vmType: 'EVM',
        contractAddress: address(0),
        gasUsed: 0,
        ret: '0x',
        logs: logOf(n),
        blockNumber: n,
        blockHash: topic(n),
        txIndex: 0,
        version: '1.3',
      }
    },
  } as unknown as ChainReader
  const subscriptions = createPollingSubscriptions(
    createEventHub({ nowNs: () => 0n, log: createLogger({ level: 'silent' }) }),
    createLogger({ level: 'silent' }),
  )
  const handlers = createSubHandlers({ chain, subscriptions })
  const all = handlers.sub_getLogs([{ fromBlock: 1, toBlock: 3000 }], {} as never) as { blockNumber: number }[]
  assert.is(all.length, 30)
  assert.is(receiptReads, 30, 'blocks without logs are skipped by their empty bloom')
  receiptReads = 0
  const none = handlers.sub_getLogs([{ fromBlock: 1, toBlock: 3000, addresses: [address(8)] }], {} as never) as unknown[]
  assert.is(none.length, 0)
  assert.ok(receiptReads <= 1, `an address in no bloom reads (almost) no receipt; read ${receiptReads}`)
  receiptReads = 0
  const one = handlers.sub_getLogs([{ fromBlock: 1, toBlock: 3000, topics: [[topic(1500)]] }], {} as never) as unknown[]
  assert.is(one.length, 1)
  assert.ok(receiptReads <= 2, `a topic in one bloom reads that block's receipt; read ${receiptReads}`)
  subscriptions.close()
})

test.run()
