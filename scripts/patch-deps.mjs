#!/usr/bin/env node
/**
 * Rewrites the object spreads on @ethereumjs/evm's message path as `Object.assign`, run by npm's
 * `postinstall` (so `npm ci` leaves the installed package patched) and harmless to run again.
 *
 * Why: on Node 20 (V8 11.3) an object literal that spreads an object and then gets more
 * properties (`{ ...a, b }`, `{ ...a, ...b }`) is allocated in the old generation, not the young
 * one. Everything it references is then kept by each minor GC until the next full one: a dead
 * object in the old generation holds its young referents alive. The EVM builds two such objects
 * per message frame — the copy of the message `_executeCall` hands to `runInterpreter` and the
 * result `runInterpreter` returns, whose `runState` reaches the frame's stack, memory and
 * interpreter — so an ERC-20 transfer() promoted ~21 KB to the old generation; with the spreads
 * written as `Object.assign` (same own properties, same order, the same values) 1.4 KB
 * (docs/pipeline.md, "Object spreads in the old generation"). The edits change no behaviour.
 *
 *   node scripts/patch-deps.mjs [--check]
 *
 * --check patches nothing: it exits 1 when an installed file is not patched. A file whose text
 * no longer matches (the package changed) is reported and left as it is; the install goes on
 * (the node is slower, not wrong) and test/unit/patch-deps.test.ts fails until this
 * list is brought up to date.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** a line of its own near the end of a patched file (before the source map comment): a file with it is not patched again */
export const MARKER = '// keel scripts/patch-deps.mjs: object spreads on the message path written as Object.assign'

/** Each edit: a pattern (whitespace as the compilers emit it varies between the ESM and CommonJS builds) and its replacement. */
export const EVM_EDITS = [
  {
    what: "_executeCall's copy of the message for runInterpreter",
    pattern: /\{\s*\.\.\.\{ codeAddress: message\.codeAddress \},\s*\.\.\.message,\s*gasLimit,\s*\}/,
    replacement: 'Object.assign({ codeAddress: message.codeAddress }, message, { gasLimit })',
  },
  {
    what: "_executeCreate's copy of the message for runInterpreter",
    pattern: /\{ \.\.\.message, gasLimit, isCreate: true \}/,
    replacement: 'Object.assign({}, message, { gasLimit, isCreate: true })',
  },
  {
    what: "runInterpreter's result cleared on an error",
    pattern: /\{\s*\.\.\.result,\s*logs: \[\],\s*selfdestruct: new Map\(\),\s*createdAddresses: new Set\(\),\s*\}/,
    replacement: 'Object.assign({}, result, { logs: [], selfdestruct: new Map(), createdAddresses: new Set() })',
  },
  {
    what: "runInterpreter's result and its runState",
    pattern:
      /return \{\s*\.\.\.result,\s*runState: \{\s*\.\.\.interpreterRes\.runState,\s*\.\.\.result,\s*\.\.\.interpreter\._env,\s*\},([\s\S]*?returnValue: result\.returnValue \?\? new Uint8Array\(0\),)\s*\};/,
    replacement:
      'return Object.assign({}, result, {\n            runState: Object.assign({}, interpreterRes.runState, result, interpreter._env),$1\n        });',
  },
]

/** The package's two builds of the EVM class: the ESM one Keel imports and the CommonJS one. */
export function evmFiles(fromDir = dirname(fileURLToPath(import.meta.url))) {
  const entry = createRequire(join(fromDir, 'package.json')).resolve('@ethereumjs/evm')
  const dist = join(dirname(entry), '..')
  return [join(dist, 'esm', 'evm.js'), join(dist, 'cjs', 'evm.js')]
}

const lineCount = (text) => text.split('\n').length

/**
 * `text` with every edit applied, or the edits that did not match. Each replacement keeps the
 * lines it replaces (blank lines make up the difference), so the package's source maps and stack
 * traces still point at the right lines. A text that holds the marker is returned unchanged.
 */
export function patchText(text, edits = EVM_EDITS) {
  if (isPatchedText(text)) return { text, patched: false, missing: [] }
  let out = text
  const missing = []
  for (const edit of edits) {
    const matches = out.match(new RegExp(edit.pattern.source, 'g'))?.length ?? 0
    if (matches !== 1) {
      missing.push(`${edit.what} (${matches} matches)`)
      continue
    }
    out = out.replace(edit.pattern, (...match) => {
      const replaced = edit.replacement.replace(/\$(\d)/g, (_, group) => match[Number(group)])
      return replaced + '\n'.repeat(Math.max(0, lineCount(match[0]) - lineCount(replaced)))
    })
  }
  if (missing.length > 0) return { text, patched: false, missing }
  const sourceMap = out.lastIndexOf('\n//# sourceMappingURL=')
  const at = sourceMap === -1 ? out.length : sourceMap
  return { text: `${out.slice(0, at)}\n${MARKER}${out.slice(at)}`, patched: true, missing }
}

function isPatchedText(text) {
  return text.includes(`\n${MARKER}`)
}

/** Whether `path` holds a patched file. */
export function isPatched(path) {
  return isPatchedText(readFileSync(path, 'utf8'))
}

function main() {
  const check = process.argv.includes('--check')
  let unpatched = 0
  for (const path of evmFiles()) {
    if (check) {
      if (!isPatched(path)) {
        console.error(`patch-deps: ${path} is not patched (run: node scripts/patch-deps.mjs)`)
        unpatched++
      }
      continue
    }
    const { text, patched, missing } = patchText(readFileSync(path, 'utf8'))
    if (missing.length > 0) console.warn(`patch-deps: ${path} left as it is, its text changed: ${missing.join('; ')}`)
    else if (patched) writeFileSync(path, text)
  }
  if (check && unpatched > 0) process.exit(1)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
