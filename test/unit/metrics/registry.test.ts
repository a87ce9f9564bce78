import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createChainRegistry, createRpcRegistry, mergeMetrics } from '../../../src/metrics/registry.ts'

const sources = {
  height: () => 42,
  poolSize: () => 7,
  ledgerBytes: () => 1_048_576,
  consensus: () => ({ view: 3, state: 'viewChange', primary: 'node2' }),
  peersConnected: () => 3,
  pollingSubscriptions: () => 1,
  jvmWallClockStops: () => 0,
}
const ws = { wsConnections: () => 2, pushSubscriptions: () => 5 }

test('one text from every thread: counters per thread, chain gauges read at scrape, Prometheus names', async () => {
  const chain = createChainRegistry(sources)
  const rpc1 = createRpcRegistry('rpc-1', ws)
  const rpc2 = createRpcRegistry('rpc-2', ws)
  rpc1.record.observeCall('tx_getTransactionReceipt', 0, 0.002)
  rpc1.record.observeCall('tx_getTransactionReceipt', -32001, 0.001)
  rpc2.record.observeCall('tx_getTransactionReceipt', 0, 0.003)
  chain.record.observeAdmission(0)
  chain.record.observeAdmission(-32007)
  chain.record.observeBlock({ valid: 3, discardReasons: ['SIGFAILED', 'OUTOFBALANCE'], seconds: 0.004 })
  chain.record.observeViewChange()
  const { text, contentType } = await mergeMetrics([await chain.snapshot(), await rpc1.snapshot(), await rpc2.snapshot()])
  chain.close()
  rpc1.close()
  rpc2.close()
  assert.match(contentType, /^text\/plain; version=0\.0\.4/)
  const lines = text.split('\n')
  const has = (line: string): void => assert.ok(lines.includes(line), `missing ${line}`)
  has('keel_rpc_requests_total{method="tx_getTransactionReceipt",code="0",thread="rpc-1"} 1')
  has('keel_rpc_requests_total{method="tx_getTransactionReceipt",code="-32001",thread="rpc-1"} 1')
  has('keel_rpc_requests_total{method="tx_getTransactionReceipt",code="0",thread="rpc-2"} 1')
  has('keel_rpc_request_duration_seconds_count{method="tx_getTransactionReceipt",thread="rpc-1"} 2')
  has('keel_tx_admitted_total{thread="chain"} 1')
  has('keel_tx_rejected_total{code="-32007",thread="chain"} 1')
  has('keel_tx_committed_total{thread="chain"} 3')
  has('keel_tx_discarded_total{reason="SIGFAILED",thread="chain"} 1')
  has('keel_block_commit_seconds_count{thread="chain"} 1')
  has('keel_block_transactions_sum{thread="chain"} 5')
  has('keel_block_height{thread="chain"} 42')
  has('keel_pool_transactions{thread="chain"} 7')
  has('keel_consensus_view{thread="chain"} 3')
  has('keel_consensus_state{state="viewChange",thread="chain"} 1')
  has('keel_consensus_state{state="normal",thread="chain"} 0')
  has('keel_consensus_primary{hostname="node2",thread="chain"} 1')
  has('keel_consensus_view_changes_total{thread="chain"} 1')
  has('keel_subscriptions{kind="push",thread="rpc-1"} 5')
  has('keel_subscriptions{kind="polling",thread="chain"} 1')
  has('keel_ws_connections{thread="rpc-2"} 2')
  has('keel_ledger_size_bytes{thread="chain"} 1048576')
  assert.ok(
    lines.some((line) => line.startsWith('keel_process_cpu_seconds_total{thread="chain"}')),
    'process CPU from the chain thread',
  )
  assert.ok(
    lines.some((line) => line.startsWith('keel_thread_event_loop_lag_p99_seconds{thread="rpc-2"}')),
    'each thread its loop lag',
  )
  assert.not.ok(
    lines.some((line) => line.startsWith('keel_process_cpu_seconds_total{thread="rpc')),
    'the process is counted once',
  )
})

test.run()
