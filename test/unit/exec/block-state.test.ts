import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { BlockState, toWord, ZERO_WORD } from '../../../src/exec/block-state.ts'
import { MapState } from './helpers.ts'

const A = '0x1111111111111111111111111111111111111111'
const B = '0x2222222222222222222222222222222222222222'
const S0 = toWord('0x00')
const S1 = toWord('0x01')
const V = (n: number) => toWord(`0x${n.toString(16)}`)

function base(): MapState {
  const s = new MapState().fund(A, 100n)
  s.code.set(A, '0x6000')
  s.storage.set(A, new Map([[S0, V(7)]]))
  s.metas.set(A, { creator: B, createdAt: 1n, createdInBlock: 1, status: 'normal', vmType: 'EVM' })
  return s
}

test('reads fall through to the base; writes shadow it; the base is never written', () => {
  const b = base()
  const s = new BlockState(b)
  assert.equal(s.getAccount(A), { balance: 100n, nonce: 0n })
  assert.is(s.getAccount(B), undefined)
  assert.is(s.getCode(B), '0x')
  assert.is(s.getStorage(A, S0), V(7))
  assert.is(s.getStorage(A, S1), ZERO_WORD, 'missing slots read as the zero word')
  s.putAccount(A, { balance: 1n, nonce: 2n })
  s.putStorage(A, S0, V(8))
  assert.equal(s.getAccount(A), { balance: 1n, nonce: 2n })
  assert.is(s.getStorage(A, S0), V(8))
  assert.equal(b.accounts.get(A), { balance: 100n, nonce: 0n })
  assert.is(b.storage.get(A)?.get(S0), V(7))
})

test('base reads are cached for the block', () => {
  const b = base()
  const s = new BlockState(b)
  for (let i = 0; i < 5; i++) {
    s.getAccount(A)
    s.getStorage(A, S0)
    s.getCode(A)
    s.getContractMeta(A)
  }
  assert.is(b.reads, 4)
})

test('nested checkpoints: revert undoes only the inner level, commit hands writes to the outer one', () => {
  const s = new BlockState(base())
  s.checkpoint()
  s.putStorage(A, S0, V(1))
  s.checkpoint()
  s.putStorage(A, S0, V(2))
  s.putStorage(A, S1, V(3))
  s.putAccount(B, { balance: 5n, nonce: 0n })
  assert.is(s.depth, 2)
  s.revert()
  assert.is(s.getStorage(A, S0), V(1))
  assert.is(s.getStorage(A, S1), ZERO_WORD)
  assert.is(s.getAccount(B), undefined)
  s.checkpoint()
  s.putStorage(A, S1, V(4))
  s.commit()
  assert.is(s.getStorage(A, S1), V(4))
  s.revert()
  assert.is(s.depth, 0)
  assert.is(s.getStorage(A, S0), V(7))
  assert.is(s.getStorage(A, S1), ZERO_WORD)
  assert.equal(s.changes(), { accounts: new Map(), code: new Map(), storage: new Map(), contracts: new Map() })
})

test('revertTo unwinds several levels; commit and revert without a checkpoint throw', () => {
  const s = new BlockState(base())
  s.checkpoint()
  s.putCode(B, '0x01')
  s.checkpoint()
  s.checkpoint()
  s.putCode(B, '0x02')
  s.revertTo(0)
  assert.is(s.getCode(B), '0x')
  assert.throws(() => s.commit(), /without a checkpoint/)
  assert.throws(() => s.revert(), /without a checkpoint/)
})

test('changes: final values only, differences from the base only, keys ascending, zero slots as deletions', () => {
  const s = new BlockState(base())
  s.putAccount(B, { balance: 1n, nonce: 0n })
  s.putAccount(A, { balance: 50n, nonce: 0n })
  s.putAccount(A, { balance: 100n, nonce: 0n }) // back to the base value
  s.putStorage(B, S1, V(9))
  s.putStorage(B, S0, V(9))
  s.putStorage(A, S0, '0x') // delete
  s.putStorage(A, S1, V(1))
  s.putStorage(A, S1, ZERO_WORD) // set and cleared again: no change
  s.putCode(B, '0x00')
  s.putCode(A, '0x6000') // same as base
  s.putContractMeta(B, { creator: A, createdAt: 2n, createdInBlock: 2, status: 'normal', vmType: 'EVM' })
  s.putContractMeta(A, { creator: B, createdAt: 1n, createdInBlock: 1, status: 'normal', vmType: 'EVM' }) // same as base
  const c = s.changes()
  assert.equal(c.accounts, new Map([[B, { balance: 1n, nonce: 0n }]]))
  assert.equal(c.code, new Map([[B, '0x00']]))
  assert.equal([...c.storage.keys()], [A, B])
  assert.equal(c.storage.get(A), new Map([[S0, ZERO_WORD]]))
  assert.equal([...(c.storage.get(B)?.keys() ?? [])], [S0, S1])
  assert.equal([...c.contracts.keys()], [B])
})

test('deleteAccount removes account, code and storage; an existing account becomes empty in changes', () => {
  const s = new BlockState(base())
  s.putStorage(A, S1, V(3))
  s.checkpoint()
  s.deleteAccount(A)
  assert.is(s.getAccount(A), undefined)
  assert.is(s.getCode(A), '0x')
  assert.is(s.getStorage(A, S0), ZERO_WORD)
  assert.is(s.getStorage(A, S1), ZERO_WORD)
  s.revert()
  assert.is(s.getStorage(A, S1), V(3))
  assert.is(s.getStorage(A, S0), V(7))
  s.deleteAccount(A)
  const c = s.changes()
  assert.equal(c.accounts.get(A), { balance: 0n, nonce: 0n })
  assert.is(c.code.get(A), '0x')
  assert.equal(c.storage.get(A), undefined, 'only written slots are reported; S1 was written and cleared: no change')
  const created = new BlockState(base())
  created.putAccount(B, { balance: 0n, nonce: 1n })
  created.deleteAccount(B)
  assert.is(created.changes().accounts.size, 0, 'created and deleted in the block: nothing')
})

test('toWord normalises short, empty and upper-case words', () => {
  assert.is(toWord('0x'), ZERO_WORD)
  assert.is(toWord(undefined), ZERO_WORD)
  assert.is(toWord('0xAB'), `0x${'0'.repeat(62)}ab`)
})

test('journal cost is O(writes): writes outside a checkpoint are not journaled, a revert undoes only its own', () => {
  const s = new BlockState(new MapState())
  for (let i = 0; i < 10_000; i++) s.putStorage(A, V(i), V(i + 1))
  s.checkpoint()
  s.putStorage(A, V(1), V(0))
  s.revert()
  assert.is(s.getStorage(A, V(1)), V(2))
  assert.is(s.changes().storage.get(A)?.size, 10_000)
})

test.run()
