/**
 * scripts/patch-deps.mjs (npm's postinstall): @ethereumjs/evm's message-path object spreads are
 * rewritten as Object.assign in the installed package, the rewrite keeps every line where it was,
 * runs once, and leaves a file whose text it does not know alone; src/copy-with.ts is the same
 * rewrite for Keel's own paths. The EVM's results keep their shape (runState still merges the
 * frame's state, result and environment).
 */
import { readFileSync } from 'node:fs'
import { createEVM } from '@ethereumjs/evm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { EVM_EDITS, evmFiles, isPatched, MARKER, patchText } from '../../scripts/patch-deps.mjs'
import { copyWith } from '../../src/copy-with.ts'

/** The shapes the edits look for, as the package's ESM build writes them. */
const SHAPES = `class EVM {
    async _executeCall(message) {
            result = await this.runInterpreter({
                ...{ codeAddress: message.codeAddress },
                ...message,
                gasLimit,
            }, { initialLogs: undefined });
    }
    async _executeCreate(message) {
        let result = await this.runInterpreter({ ...message, gasLimit, isCreate: true }, {
    }
    async runInterpreter(message, opts = {}) {
        if (interpreterRes.exceptionError) {
            result = {
                ...result,
                logs: [],
                selfdestruct: new Map(),
                createdAddresses: new Set(),
            };
        }
        return {
            ...result,
            runState: {
                ...interpreterRes.runState,
                ...result,
                ...interpreter._env,
            },
            exceptionError: interpreterRes.exceptionError,
            returnValue: result.returnValue ?? new Uint8Array(0),
        };
    }
}
//# sourceMappingURL=evm.js.map`

test('the installed @ethereumjs/evm builds (ESM and CommonJS) are patched: npm ci ran the postinstall', () => {
  for (const path of evmFiles()) {
    assert.ok(isPatched(path), `${path} is not patched: run node scripts/patch-deps.mjs (or update its edits)`)
    const text = readFileSync(path, 'utf8')
    for (const edit of EVM_EDITS) assert.not.match(text, edit.pattern, `${path}: ${edit.what} still spreads`)
  }
})

test('each edit applies once, every line stays where it was, the marker sits before the source map comment', () => {
  const { text, patched, missing } = patchText(SHAPES)
  assert.ok(patched)
  assert.equal(missing, [])
  assert.not.match(text, /\.\.\./)
  const before = SHAPES.split('\n')
  const after = text.split('\n')
  assert.is(after.length, before.length + 1)
  assert.is(after.at(-2), MARKER)
  assert.is(after.at(-1), before.at(-1))
  // the lines after each edit are where they were
  for (const line of [
    '    async _executeCreate(message) {',
    '    async runInterpreter(message, opts = {}) {',
    '        if (interpreterRes.exceptionError) {',
  ])
    assert.is(after.indexOf(line), before.indexOf(line), line)
  assert.is(after.lastIndexOf('    }'), before.lastIndexOf('    }'))
  assert.is(after.lastIndexOf('}'), before.lastIndexOf('}'))
  assert.match(text, 'return Object.assign({}, result, {')
  assert.match(text, 'runState: Object.assign({}, interpreterRes.runState, result, interpreter._env),')
  assert.match(text, 'exceptionError: interpreterRes.exceptionError,')

  const again = patchText(text)
  assert.not.ok(again.patched)
  assert.is(again.text, text)
})

test('a text that no longer matches is left whole and the missing edits are named', () => {
  const changed = SHAPES.replace('...interpreter._env,', '...interpreter.env,')
  const { text, patched, missing } = patchText(changed)
  assert.not.ok(patched)
  assert.is(text, changed)
  assert.equal(missing, ["runInterpreter's result and its runState (0 matches)"])
})

test("the patched EVM's result keeps the spread's shape: runState merges the frame's state, result and environment", async () => {
  const evm = await createEVM()
  // PUSH1 1, PUSH1 2, ADD, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN
  const result = await evm.runCode({
    code: Uint8Array.from([0x60, 1, 0x60, 2, 0x01, 0x60, 0, 0x52, 0x60, 32, 0x60, 0, 0xf3]),
    gasLimit: 100_000n,
  })
  assert.is(result.exceptionError, undefined)
  assert.is(result.returnValue.length, 32)
  assert.is(result.returnValue[31], 3)
  assert.equal(result.logs, [])
  const runState = result.runState as unknown as Record<string, unknown>
  assert.ok(runState.stack !== undefined && runState.memory !== undefined, 'the frame state')
  assert.ok(Array.isArray(runState.logs), 'the result')
  assert.ok(runState.address !== undefined && runState.caller !== undefined, 'the environment')
})

test('copyWith is the spread: own properties in order, changes win, the base untouched', () => {
  const base = { a: 1, b: 2, c: 3 }
  const copy = copyWith(base, { b: 20, d: 4 })
  assert.equal(copy, { a: 1, b: 20, c: 3, d: 4 })
  assert.equal(Object.keys(copy), Object.keys({ ...base, ...{ b: 20, d: 4 } }))
  assert.equal(base, { a: 1, b: 2, c: 3 })
  assert.is(Object.getPrototypeOf(copy), Object.prototype)
})

test('copyWith keeps a `__proto__` key of parsed JSON an own property, as the spread does', () => {
  const parsed = JSON.parse('{"from":"0x01","__proto__":{"extra":"inherited"}}') as Record<string, unknown>
  const copy = copyWith(parsed, { to: '0x02' }) as Record<string, unknown>
  assert.is(Object.getPrototypeOf(copy), Object.prototype)
  assert.ok(Object.hasOwn(copy, '__proto__'))
  assert.is(copy.extra, undefined)
  assert.is(copy.to, '0x02')
})

test.run()
