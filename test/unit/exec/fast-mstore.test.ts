import { createCustomCommon, Mainnet } from '@ethereumjs/common'
import { createEVM } from '@ethereumjs/evm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { HARDFORK } from '../../../src/exec/executor.ts'
import { installFastMstore } from '../../../src/exec/fast-mstore.ts'

const evmOf = () => createEVM({ common: createCustomCommon({ chainId: 1 }, Mainnet, { hardfork: HARDFORK }) })

/** PUSH32 value, PUSH1 offset, MSTORE, RETURN the first 96 bytes of memory */
function storeAndReturn(value: bigint, offset: number): Uint8Array {
  const hex = `7f${value.toString(16).padStart(64, '0')}60${offset.toString(16).padStart(2, '0')}5260606000f3`
  return Uint8Array.from(Buffer.from(hex, 'hex'))
}

test("MSTORE's replaced handler writes the same memory, at the same gas, as the EVM's own", async () => {
  const own = await evmOf()
  const fast = await evmOf()
  assert.ok(installFastMstore(fast), 'the MSTORE entry was found and replaced')
  const max = (1n << 256n) - 1n
  const values = [0n, 1n, 0xffn, (1n << 64n) - 1n, 1n << 64n, (1n << 128n) + 5n, 1n << 255n, max, 0x0123456789abcdefn * (1n << 100n)]
  for (const value of values) {
    for (const offset of [0, 3, 32, 63]) {
      const code = storeAndReturn(value, offset)
      const a = await own.runCode({ code, gasLimit: 100_000n })
      const b = await fast.runCode({ code, gasLimit: 100_000n })
      assert.equal(b.returnValue, a.returnValue, `${value.toString(16)} at ${offset}`)
      assert.is(Buffer.from(b.returnValue.subarray(offset, offset + 32)).toString('hex'), value.toString(16).padStart(64, '0'))
      assert.is(b.executionGasUsed, a.executionGasUsed)
      assert.is(b.exceptionError, undefined)
    }
  }
})

test.run()
