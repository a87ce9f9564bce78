/**
 * Throughput of executeBlock with 500-tx blocks: plain transfers and ERC-20 `transfer` calls.
 * Not part of the test run (no `.test.ts`): `npx tsx test/unit/exec/perf.bench.ts`.
 * Times executeBlock only (execution + changes()); applying the changes to the Map state that
 * stands in for the store is outside the timed region.
 */

import { bytesToHex } from '@noble/hashes/utils.js'
import { keccak256 } from '../../../src/crypto/hash.ts'
import type { Hex } from '../../../src/domain.ts'
import { createExecutor } from '../../../src/exec/executor.ts'
import { calldata, compile, DEPLOYER, deployTx, invokeTx, MapState, transferTx, word } from './helpers.ts'

const BLOCK = 500
const WARM = 3
const BLOCKS = 12
const SENDERS = 1000

const addr = (i: number): Hex => `0x${(0x10000000 + i).toString(16).padStart(40, '0')}`
const ctx = (n: number) => ({ number: n, timestamp: BigInt(n) * 1_000_000_000n })

async function run(label: string, state: MapState, makeBlock: (b: number) => ReturnType<typeof transferTx>[]) {
  const ex = createExecutor()
  const times: number[] = []
  let gas = 0n
  for (let b = 0; b < WARM + BLOCKS; b++) {
    const txs = makeBlock(b).map((tx) => ({ tx, signatureValid: true }))
    const t0 = process.hrtime.bigint()
    const r = await ex.executeBlock(state, txs, ctx(b + 2))
    const ns = Number(process.hrtime.bigint() - t0)
    const failed = r.outcomes.filter((o) => !o.ok)
    if (failed.length > 0) throw new Error(`${label}: ${failed.length} failed: ${JSON.stringify(failed[0])}`)
    state.apply(r.changes)
    if (b >= WARM) {
      times.push(ns)
      gas += r.gasUsed
    }
  }
  times.sort((a, b) => a - b)
  const median = times[times.length >> 1]
  const rate = (BLOCK * 1e9) / median
  console.log(
    `${label}: ${rate.toFixed(0)} tx/s (median block ${(median / 1e6).toFixed(1)} ms; min ${(times[0] / 1e6).toFixed(1)}, max ${(times[times.length - 1] / 1e6).toFixed(1)}; avg gas/tx ${gas / BigInt(BLOCK * BLOCKS)})`,
  )
}

// transfers
{
  const state = new MapState()
  for (let i = 0; i < SENDERS; i++) state.fund(addr(i), 10n ** 18n)
  for (let i = 0; i < 10_000; i++) state.fund(addr(100_000 + i), 1n)
  let k = 0
  await run('transfer', state, () =>
    Array.from({ length: BLOCK }, () => {
      k++
      return transferTx(addr(k % SENDERS), addr(100_000 + ((k * 7919) % 10_000)), 1n)
    }),
  )
}

// ERC-20 transfer()
{
  const SOURCE = `pragma solidity ^0.8.0;
contract MiniERC20 {
  mapping(address => uint256) public balanceOf;
  event Transfer(address indexed from, address indexed to, uint256 value);
  function transfer(address to, uint256 amount) external returns (bool) {
    balanceOf[msg.sender] -= amount;
    balanceOf[to] += amount;
    emit Transfer(msg.sender, to, amount);
    return true;
  }
}`
  const C = compile(SOURCE, true)
  const state = new MapState()
  const ex = createExecutor()
  const r = await ex.executeBlock(state, [{ tx: deployTx(C.MiniERC20.bin), signatureValid: true }], ctx(1))
  const token = r.outcomes[0].ok ? r.outcomes[0].contractAddress! : ''
  state.apply(r.changes)
  // pre-fund balances by writing storage: balanceOf[a] lives at keccak(a . 0)
  const slots = new Map<Hex, Hex>()
  for (let i = 0; i < SENDERS; i++) {
    const slot = `0x${bytesToHex(keccak256(Buffer.from(word(addr(i)) + word(0n), 'hex')))}`
    slots.set(slot, `0x${word(10n ** 24n)}`)
  }
  state.storage.set(token, slots)
  let k = 0
  await run('ERC-20 transfer()', state, () =>
    Array.from({ length: BLOCK }, () => {
      k++
      return invokeTx(token, calldata('transfer(address,uint256)', addr(100_000 + ((k * 7919) % 10_000)), 1n), addr(k % SENDERS))
    }),
  )
  void DEPLOYER
}
