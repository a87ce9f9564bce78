/**
 * docs/style.md §8: a function in src/ longer than FUNCTION_LINE_LIMIT lines says at its top why it
 * is long. Every function of src/ is measured — declarations, function expressions, arrow functions,
 * methods, accessors and constructors, closures inside other functions included — from the line of
 * its first token to the line of its closing brace. A long one needs, among the comments right above
 * the statement, property or member that holds it, a line that starts (after the comment markers)
 * with `Long because:`.
 *
 *   npx tsx test/unit/function-length.test.ts --list   prints every function over the limit
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { test } from 'uvu'
import * as assert from 'uvu/assert'

const root = join(import.meta.dirname, '..', '..')
const FUNCTION_LINE_LIMIT = 150
const REASON = /^\s*(?:\/\*\*?|\/\/|\*)?\s*Long because:\s*\S/m

interface MeasuredFunction {
  file: string
  name: string
  line: number
  lines: number
  reason: boolean
}

function sourceFiles(dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) found.push(...sourceFiles(path))
    else if (/\.(ts|mts|cts)$/.test(entry) && !entry.endsWith('.d.ts')) found.push(path)
  }
  return found
}

/** the node whose leading comments document `fn`: the statement, property or member holding it */
function documentedHolder(fn: ts.Node): ts.Node {
  let node: ts.Node = fn
  for (;;) {
    const parent = node.parent
    if (parent === undefined) return node
    if (
      ts.isVariableDeclaration(parent) ||
      ts.isVariableDeclarationList(parent) ||
      ts.isVariableStatement(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isExportAssignment(parent) ||
      ts.isParenthesizedExpression(parent) ||
      ts.isAsExpression(parent) ||
      ts.isSatisfiesExpression(parent)
    ) {
      node = parent
      continue
    }
    return node
  }
}

function nameOf(fn: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (fn.name !== undefined) return fn.name.getText(source)
  const parent = fn.parent
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    parent.name !== undefined
  ) {
    return parent.name.getText(source)
  }
  if (ts.isConstructorDeclaration(fn)) return 'constructor'
  return '(anonymous)'
}

/** the functions of one file over the limit */
function measure(path: string, text = readFileSync(path, 'utf8')): MeasuredFunction[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found: MeasuredFunction[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const fn = node as ts.FunctionLikeDeclaration
      const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line
      const lines = last - first + 1
      if (lines > FUNCTION_LINE_LIMIT) {
        const holder = documentedHolder(fn)
        const comments = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? []
        const reason = comments.some((range) => REASON.test(text.slice(range.pos, range.end)))
        found.push({ file: relative(root, path), name: nameOf(fn, source), line: first + 1, lines, reason })
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const long = sourceFiles(join(root, 'src')).flatMap((path) => measure(path))

if (process.argv.includes('--list')) {
  for (const fn of long.sort((a, b) => b.lines - a.lines)) {
    console.log(`${String(fn.lines).padStart(4)}  ${fn.reason ? 'reason' : 'NONE  '}  ${fn.file}:${fn.line} ${fn.name}`)
  }
}

test(`every function in src/ over ${FUNCTION_LINE_LIMIT} lines starts with the reason it is long`, () => {
  const unexplained = long.filter((fn) => !fn.reason).map((fn) => `${fn.file}:${fn.line} ${fn.name} (${fn.lines} lines)`)
  assert.equal(unexplained, [], `add a comment line "Long because: …" above each, or split it:\n${unexplained.join('\n')}`)
})

test('the measure sees a long closure and the reason above it', () => {
  const body = Array.from({ length: FUNCTION_LINE_LIMIT }, (_, i) => `    const v${i} = ${i}`).join('\n')
  const sample = (comment: string): MeasuredFunction[] =>
    measure(join(root, 'sample.ts'), `${comment}\nexport function outer() {\n  const inner = () => {\n${body}\n  }\n  return inner\n}\n`)
  const seen = (comment: string): string[] => sample(comment).map((fn) => `${fn.name} ${fn.lines} ${fn.reason}`)
  assert.equal(seen('/** does things */'), [`outer ${FUNCTION_LINE_LIMIT + 5} false`, `inner ${FUNCTION_LINE_LIMIT + 2} false`])
  assert.equal(seen('/**\n * does things\n *\n * Long because: one state machine\n */'), [
    `outer ${FUNCTION_LINE_LIMIT + 5} true`,
    `inner ${FUNCTION_LINE_LIMIT + 2} false`,
  ])
  assert.equal(
    seen('// Long because:'),
    [`outer ${FUNCTION_LINE_LIMIT + 5} false`, `inner ${FUNCTION_LINE_LIMIT + 2} false`],
    'a reason says something',
  )
})

test.run()
