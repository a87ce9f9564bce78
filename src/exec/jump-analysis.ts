/**
 * The EVM's jump-destination analysis, done once per contract code instead of once per call.
 *
 * @ethereumjs/evm 10.x analyses the code of every message frame before its first jump: it walks
 * the whole code, decoding every PUSH's immediate into a bigint and looking every opcode up, and
 * allocates three arrays the size of the code (about 6% of an ERC-20 transfer()'s CPU, and much of
 * its garbage). The result depends only on the code bytes and on the EVM's opcode table (its
 * hardfork, EIPs and custom opcodes), and the interpreter only reads it. So it is kept per opcode
 * table and per code array: the state manager hands the EVM the same Uint8Array for a contract's
 * code until that code changes (state-manager.ts `codeEntry`), and a changed code is a new array.
 *
 * The EVM offers no option or hook for this, and its Interpreter class is not exported; it is
 * reached through the module file the EVM itself imports (the same module instance, so the same
 * class), and its method is wrapped, not rewritten: the first analysis of a code is the EVM's own.
 */

interface JumpAnalysis {
  jumps: Uint8Array
  pushes: Record<number, bigint>
  opcodesCached: unknown[]
}

interface InterpreterLike {
  _evm: { _opcodeMap: object }
  _getValidJumpDestinations(code: Uint8Array): JumpAnalysis
}

/** analyses the EVM performed (not answered from the cache): tests read it */
export const jumpAnalysisCount = { performed: 0 }

/**
 * The prototype of the Interpreter class @ethereumjs/evm runs (not exported: reached through the
 * module file the EVM itself imports, so the same module instance and the same class).
 */
export async function interpreterPrototype<T>(): Promise<T> {
  const entry = import.meta.resolve('@ethereumjs/evm')
  const module = (await import(new URL('./interpreter.js', entry).href)) as { Interpreter?: { prototype: T } }
  if (module.Interpreter?.prototype === undefined)
    throw new Error('@ethereumjs/evm: no Interpreter class in interpreter.js (the EVM version changed)')
  return module.Interpreter.prototype
}

let installed: Promise<void> | undefined

/** Installs the cache once per process; every EVM of the process shares it (keyed by its opcode table). */
export function cacheJumpAnalysis(): Promise<void> {
  installed ??= (async () => {
    const prototype = await interpreterPrototype<InterpreterLike>()
    const analyse = prototype._getValidJumpDestinations
    if (typeof analyse !== 'function') {
      throw new Error('@ethereumjs/evm: Interpreter._getValidJumpDestinations not found (the EVM version changed; see jump-analysis.ts)')
    }
    const byTable = new WeakMap<object, WeakMap<Uint8Array, JumpAnalysis>>()
    prototype._getValidJumpDestinations = function (this: InterpreterLike, code: Uint8Array): JumpAnalysis {
      const table = this._evm._opcodeMap
      let byCode = byTable.get(table)
      if (byCode === undefined) {
        byCode = new WeakMap()
        byTable.set(table, byCode)
      }
      let analysis = byCode.get(code)
      if (analysis === undefined) {
        analysis = analyse.call(this, code)
        jumpAnalysisCount.performed++
        byCode.set(code, analysis)
      }
      return analysis
    }
  })()
  return installed
}
