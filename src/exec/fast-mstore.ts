/**
 * MSTORE writing its word straight into memory.
 *
 * @ethereumjs/evm 10.x turns the word into bytes through a hex string (`bigIntToBytes`) and pads
 * them with `setLengthLeft`, which builds the 32 bytes by spreading two arrays: the largest
 * allocation of any opcode in an ERC-20 transfer() (~17 KB per call; Solidity stores its free
 * memory pointer and every ABI word this way). The same 32 big-endian bytes are written here from
 * four 64-bit lanes of the word. The handler of the EVM's own opcode table entry is replaced in
 * place (the entry keeps its name, fee, gas and synchronous kind; analyses cached from the table
 * see the same entry); a table rebuilt later (a hardfork change) has the EVM's handler again.
 */
import type { EVM } from '@ethereumjs/evm'

interface MstoreRunState {
  stack: { popN(count: number): bigint[] }
  memory: { write(offset: number, size: number, value: Uint8Array): void }
}

interface OpcodeEntry {
  opcodeInfo: { name: string; isAsync: boolean }
  opHandler: (runState: MstoreRunState, common: unknown) => void
}

const MSTORE = 0x52
const MASK_64 = (1n << 64n) - 1n

/** Replaces MSTORE's handler in `evm`'s opcode table; false when the table has no plain MSTORE to replace. */
export function installFastMstore(evm: EVM): boolean {
  const entry = (evm as unknown as { _opcodeMap?: OpcodeEntry[] })._opcodeMap?.[MSTORE]
  if (entry === undefined || entry.opcodeInfo.name !== 'MSTORE' || entry.opcodeInfo.isAsync) return false
  // memory.write copies the bytes in, so one buffer serves every MSTORE
  const word = new Uint8Array(32)
  const lanes = new DataView(word.buffer)
  entry.opHandler = (runState) => {
    const [offset, value] = runState.stack.popN(2)
    lanes.setBigUint64(0, (value >> 192n) & MASK_64)
    lanes.setBigUint64(8, (value >> 128n) & MASK_64)
    lanes.setBigUint64(16, (value >> 64n) & MASK_64)
    lanes.setBigUint64(24, value & MASK_64)
    runState.memory.write(Number(offset), 32, word)
  }
  return true
}
