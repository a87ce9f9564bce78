/**
 * The repository stands on its own: every design page the README, the code and the tests cite
 * (`protocol.md §1.3`, `reliability.md`, …) is a file of docs/ (or the root), and every cited
 * section number is a heading of that file.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'

const root = join(import.meta.dirname, '..', '..')
const CITING = ['README.md', 'src', 'test', 'bench', 'codegen', 'conformance', 'sdk', 'examples', 'scripts', 'playground', 'docs']
const PAGE = /([A-Za-z][A-Za-z0-9_-]*\.md)/g
const SECTION = /§\s?(\d+(?:\.\d+)*)/g

function trackedFiles(): string[] {
  const listed = (args: string[]): string[] =>
    execFileSync('git', ['ls-files', ...args, '--', ...CITING], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
  return [...listed([]), ...listed(['--others', '--exclude-standard'])]
}

function pagePath(name: string, citedFrom: string): string | undefined {
  for (const candidate of [join(root, 'docs', name), join(root, name), join(root, citedFrom, '..', name)]) {
    if (existsSync(candidate)) return candidate
  }
  return undefined
}

const headingsOf = new Map<string, Set<string>>()
function headings(path: string): Set<string> {
  let found = headingsOf.get(path)
  if (found === undefined) {
    found = new Set()
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const match = /^#+\s+§?(\d+(?:\.\d+)*)[.\s]/.exec(line)
      if (match !== null) found.add(match[1])
    }
    headingsOf.set(path, found)
  }
  return found
}

test('every cited design page is in the repository, with the cited sections', () => {
  const problems: string[] = []
  let citations = 0
  for (const file of trackedFiles()) {
    const path = join(root, file)
    if (!existsSync(path) || /\.(png|ico|lock)$/.test(file)) continue
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        const pages = [...line.matchAll(PAGE)]
        pages.forEach((page, i) => {
          if (page[1] === 'README.md' && file !== 'README.md') return
          citations++
          const target = pagePath(page[1], file)
          if (target === undefined) {
            problems.push(`${file}:${index + 1}: ${page[1]} is not in the repository`)
            return
          }
          const tail = line.slice((page.index ?? 0) + page[1].length, pages[i + 1]?.index ?? line.length)
          for (const section of tail.matchAll(SECTION)) {
            if (!headings(target).has(section[1])) problems.push(`${file}:${index + 1}: ${page[1]} has no section §${section[1]}`)
          }
        })
      })
  }
  assert.ok(citations > 100, `expected the code to cite its design pages, found ${citations} citations`)
  assert.equal(problems, [])
})

test.run()
