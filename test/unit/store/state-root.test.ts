import { rmSync } from 'node:fs'
import { keccak_256, shake256 } from '@noble/hashes/sha3.js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Hex } from '../../../src/domain.ts'
import { EMPTY_STATE_ROOT, hashedEntryCount, openStore, type Store } from '../../../src/store/index.ts'
import { WorldStateRepo } from '../../../src/store/repos/world-state.ts'
import { addr, changes, commitNext, nextBlock, tempDir, word } from './fixtures.ts'

const opened: { store: Store; dir: string }[] = []
const fresh = async (name: string): Promise<Store> => {
  const dir = tempDir(name)
  const store = await openStore(dir)
  opened.push({ store, dir })
  return store
}

test.after(async () => {
  for (const { store, dir } of opened) {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

const a = addr('a')
const b = addr('b')
const c = addr('c')
const meta = { creator: a, createdAt: 1_700_000_000_000_000_000n, createdInBlock: 1, status: 'normal' as const, vmType: 'EVM' as const }

test('the same state reached by different change orders and block splits has the same root', async () => {
  const one = await fresh('order-1')
  await one.initGenesis([{ address: a, balance: 100n }])
  await commitNext(one, {
    changes: changes({
      accounts: [
        [a, { balance: 40n, nonce: 1n }],
        [b, { balance: 60n, nonce: 0n }],
      ],
      code: [[c, '0x6001']],
      storage: [
        [
          c,
          [
            [word(1), word(11)],
            [word(2), word(22)],
          ],
        ],
      ],
      contracts: [[c, meta]],
    }),
  })

  // other order, other blocks, a detour through intermediate values
  const two = await fresh('order-2')
  await two.initGenesis([{ address: a, balance: 100n }])
  await commitNext(two, { changes: changes({ storage: [[c, [[word(2), word(99)]]]], accounts: [[b, { balance: 1n, nonce: 5n }]] }) })
  await commitNext(two, {
    changes: changes({
      contracts: [[c, meta]],
      storage: [
        [
          c,
          [
            [word(2), word(22)],
            [word(1), word(11)],
          ],
        ],
      ],
    }),
  })
  await commitNext(two, {
    changes: changes({
      code: [[c, '0x6001']],
      accounts: [
        [b, { balance: 60n, nonce: 0n }],
        [a, { balance: 40n, nonce: 1n }],
      ],
    }),
  })

  // no genesis, the genesis account written in a block instead
  const three = await fresh('order-3')
  await commitNext(three, {
    changes: changes({
      contracts: [[c, meta]],
      code: [[c, '0x6001']],
      storage: [
        [
          c,
          [
            [word(1), word(11)],
            [word(2), word(22)],
          ],
        ],
      ],
      accounts: [
        [b, { balance: 60n, nonce: 0n }],
        [a, { balance: 40n, nonce: 1n }],
      ],
    }),
  })

  assert.is(two.stateRoot(), one.stateRoot())
  assert.is(three.stateRoot(), one.stateRoot())
  assert.is(one.getBlock(1)!.merkleRoot, one.stateRoot())
})

test('a changed value changes the root; deleting returns to the previous root', async () => {
  const s = await fresh('delete')
  await s.initGenesis([{ address: a, balance: 5n }])
  const r0 = s.stateRoot()
  assert.is.not(r0, EMPTY_STATE_ROOT)

  const seen = new Set<Hex>([r0])
  const expectNew = (root: Hex): void => {
    assert.not.ok(seen.has(root), `root ${root} seen before`)
    seen.add(root)
  }
  expectNew(s.stateRootAfter(changes({ accounts: [[a, { balance: 6n, nonce: 0n }]] })))
  expectNew(s.stateRootAfter(changes({ accounts: [[a, { balance: 5n, nonce: 1n }]] })))
  expectNew(s.stateRootAfter(changes({ storage: [[a, [[word(1), word(1)]]]] })))
  expectNew(s.stateRootAfter(changes({ storage: [[a, [[word(1), word(2)]]]] })))
  expectNew(s.stateRootAfter(changes({ storage: [[a, [[word(2), word(1)]]]] })))
  expectNew(s.stateRootAfter(changes({ code: [[a, '0x01']] })))
  expectNew(s.stateRootAfter(changes({ contracts: [[a, meta]] })))
  expectNew(s.stateRootAfter(changes({ contracts: [[a, { ...meta, status: 'frozen' }]] })))
  // the same bytes under another kind are another entry
  expectNew(s.stateRootAfter(changes({ code: [[a, '0x0105']] })))
  // writing the value already there changes nothing
  assert.is(s.stateRootAfter(changes({ accounts: [[a, { balance: 5n, nonce: 0n }]] })), r0)
  assert.is(s.stateRootAfter(changes({ storage: [[a, [[word(1), word(0)]]]] })), r0, 'deleting an absent slot is a no-op')
  // one representation of a deleted slot (domain.ts WorldChanges): '0x' or a short word is refused, not read as zero
  assert.throws(() => s.stateRootAfter(changes({ storage: [[a, [[word(1), '0x']]]] })), /expected 32 bytes/)
  assert.throws(() => s.stateRootAfter(changes({ storage: [[a, [[word(1), '0x05']]]] })), /expected 32 bytes/)
  assert.throws(() => s.stateRootAfter(changes({ storage: [[a, [['0x01', word(5)]]]] })), /expected 32 bytes/)

  await commitNext(s, { changes: changes({ storage: [[a, [[word(7), word(8)]]]], code: [[a, '0x6000']] }) })
  const r1 = s.stateRoot()
  assert.is.not(r1, r0)
  await commitNext(s, { changes: changes({ storage: [[a, [[word(9), word(1)]]]] }) })
  assert.is.not(s.stateRoot(), r1)
  await commitNext(s, { changes: changes({ storage: [[a, [[word(9), word(0)]]]] }) })
  assert.is(s.stateRoot(), r1, 'deleting with a zero word returns to the previous root')
  await commitNext(s, { changes: changes({ storage: [[a, [[word(7), word(0)]]]], code: [[a, '0x']] }) })
  assert.is(s.stateRoot(), r0, 'deleting the last slot and the code returns to the genesis root')
})

test('cost per block scales with changed keys, not with the size of the state', async () => {
  const s = await fresh('cost')
  const big = Array.from({ length: 2000 }, (_, i) => ({ address: addr(`g${i}`), balance: BigInt(i + 1) }))
  let before = hashedEntryCount()
  await s.initGenesis(big)
  assert.is(hashedEntryCount() - before, 2000, 'genesis: one hash per new entry')

  // 3 changed keys in a 2000-entry state: 2 replaced (out + in), 1 new (in) = 5 hashes
  const small = changes({
    accounts: [
      [addr('g1'), { balance: 1n, nonce: 1n }],
      [addr('g2'), { balance: 0n, nonce: 0n }],
    ],
    storage: [[addr('g3'), [[word(1), word(1)]]]],
  })
  before = hashedEntryCount()
  const root = s.stateRootAfter(small)
  assert.is(hashedEntryCount() - before, 5)
  // commitBlock reuses stateRootAfter's result for the same changes: no second hashing
  before = hashedEntryCount()
  await commitNext(s, { changes: small })
  assert.is(hashedEntryCount() - before, 5, 'nextBlock calls stateRootAfter (5), commitBlock adds none')
  assert.is(s.stateRoot(), root)

  // unchanged values cost nothing; 10x the changed keys costs 10x
  before = hashedEntryCount()
  s.stateRootAfter(changes({ accounts: [[addr('g1'), { balance: 1n, nonce: 1n }]] }))
  assert.is(hashedEntryCount() - before, 0)
  const many = (n: number) => changes({ accounts: Array.from({ length: n }, (_, i) => [addr(`g${100 + i}`), { balance: 0n, nonce: 9n }]) })
  before = hashedEntryCount()
  s.stateRootAfter(many(10))
  const ten = hashedEntryCount() - before
  before = hashedEntryCount()
  s.stateRootAfter(many(100))
  assert.is(hashedEntryCount() - before, 10 * ten)
  assert.is(ten, 20)
})

test("commitBlock reads the state for a block's changes once: the root planned on the same changes is not diffed again", async () => {
  const s = await fresh('diff-once')
  const x = changes({
    accounts: [
      [a, { balance: 1n, nonce: 0n }],
      [b, { balance: 2n, nonce: 0n }],
    ],
    storage: [[c, [[word(1), word(7)]]]],
  })
  const raw = WorldStateRepo.prototype.raw
  let reads = 0
  WorldStateRepo.prototype.raw = function (this: WorldStateRepo, ...args: Parameters<typeof raw>) {
    reads++
    return raw.apply(this, args)
  }
  try {
    await commitNext(s, { changes: x })
  } finally {
    WorldStateRepo.prototype.raw = raw
  }
  assert.is(reads, 3, 'three changed keys, each read once (for the root), none again at the commit')
  assert.is(s.state.getAccount(b)?.balance, 2n)
})

test('commitBlock does not trust a stale stateRootAfter: changes mutated after it are recomputed and refused', async () => {
  const s = await fresh('recompute')
  const x = changes({ accounts: [[a, { balance: 1n, nonce: 0n }]] })
  const block = nextBlock(s, { changes: x })
  // the header's merkleRoot was computed for x; the caller then mutates x before committing
  x.accounts.set(a, { balance: 2n, nonce: 0n })
  try {
    await s.commitBlock(block)
    assert.unreachable()
  } catch (error) {
    assert.match((error as Error).message, /merkleRoot/)
  }
  assert.is(s.state.getAccount(a), undefined)
})

test('the root is Keccak-256 of the little-endian lanes of Σ SHAKE-256(kind ‖ key ‖ value), recomputed independently', async () => {
  const s = await fresh('kat')
  await s.initGenesis([{ address: a, balance: 258n }])
  await commitNext(s, { changes: changes({ storage: [[c, [[word(1), word(2)]]]], code: [[c, '0x6001']], contracts: [[c, meta]] }) })

  const bytes = (hex: Hex): Buffer => Buffer.from(hex.slice(2), 'hex')
  const time = Buffer.alloc(8)
  time.writeBigUInt64BE(meta.createdAt + 2n ** 63n)
  const entries: [number, Buffer, Buffer][] = [
    // account: length-prefixed minimal big-endian balance (258 = 0x0102), then nonce 0 (length 0)
    [1, bytes(a), Buffer.from([2, 0x01, 0x02, 0])],
    [2, bytes(c), Buffer.from([0x60, 0x01])],
    [3, Buffer.concat([bytes(c), bytes(word(1))]), bytes(word(2))],
    // contract: creator ‖ createdAt + 2^63 (u64be) ‖ createdInBlock (u32be) ‖ status normal ‖ vm EVM
    [4, bytes(c), Buffer.concat([bytes(a), time, Buffer.from([0, 0, 0, 1, 0, 0])])],
  ]
  const lanes = new Uint16Array(1024)
  for (const [kind, key, value] of entries) {
    const d = shake256(Buffer.concat([Buffer.from([kind]), key, value]), { dkLen: 2048 })
    for (let i = 0; i < 1024; i++) lanes[i] += d[2 * i] | (d[2 * i + 1] << 8)
  }
  const le = Buffer.alloc(2048)
  for (let i = 0; i < 1024; i++) le.writeUInt16LE(lanes[i], 2 * i)
  assert.is(s.stateRoot(), `0x${Buffer.from(keccak_256(le)).toString('hex')}`)
  assert.is(EMPTY_STATE_ROOT, `0x${Buffer.from(keccak_256(new Uint8Array(2048))).toString('hex')}`)
})

test.run()
