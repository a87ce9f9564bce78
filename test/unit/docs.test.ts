/**
 * The repository stands on its own: every design page the README, the code and the tests cite
 * (`protocol.md §1.3`, `reliability.md`, …) is a file of docs/ (or the root), and every cited
 * section number is a heading of that file; every file path the README, docs/ and src/ cite
 * (`src/store/keyspace.ts`, `network/channels.ts`, `thread.ts`) is a file of the repository.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'

const root = join(import.meta.dirname, '..', '..')
const CITING = ['README.md', 'src', 'test', 'bench', 'codegen', 'conformance', 'sdk', 'examples', 'scripts', 'playground', 'docs']
const PAGE = /([A-Za-z][A-Za-z0-9_-]*\.md)/g
const SECTION = /§\s?(\d+(?:\.\d+)*)/g

/** the repository's files under `paths` (all of them for []), committed or not yet */
function trackedFiles(paths: string[] = CITING): string[] {
  const listed = (args: string[]): string[] =>
    execFileSync('git', ['ls-files', ...args, '--', ...paths], { cwd: root, encoding: 'utf8' })
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

/**
 * A cited path of the code base: folders and a source or document file (`src/store/keyspace.ts`,
 * `../p2p/link-frames.ts`), or a bare `.ts` or `.md` file name. Configuration and data files the
 * node writes (keel.toml, genesis-account.json, …) are not files of the repository.
 */
const CITED_PATH =
  /(?<![\w@./-])((?:\.{1,2}\/)*(?:[\w-]+\/)+[\w-]+(?:\.[\w-]+)*\.(?:ts|mjs|cjs|js|md|java|proto)|[\w-]+(?:\.[\w-]+)*\.(?:ts|md))(?![\w/-])/g
/** what the README, docs/ and src/ cite paths from */
const PATH_CITING = ['README.md', 'docs', 'src']
/** paths that name what the build, a test run or another package makes, not a file of the repository */
const NOT_OURS = /^(?:dist|build|coverage|bench-results|node_modules)\//
/**
 * Files of other repositories the docs name as their sources: the official SDK's (docs/governance.md
 * [S], docs/sdk-wire.md), Hyperchain's Go SDK and Go node, a Hardhat project's script.
 */
const FOREIGN = new Set([
  'src/common/util/encode.ts',
  'src/common/util/decode.ts',
  'src/transaction/transaction.ts',
  'config-service.d.ts',
  'test/common/transaction.spec.ts',
  'bvm/proposal.proto',
  'core/types/transaction.proto',
  'scripts/deploy.js',
])

/** the comments of a TypeScript file (what its code names, tsc and the tests check), its other text as it is */
function citingText(file: string, text: string): string {
  if (!file.endsWith('.ts')) return text
  return text
    .split('\n')
    .map((line) => (/^\s*(?:\/\*|\*)/.test(line) ? line : (/(?:^|\s)\/\/\s.*$/.exec(line)?.[0] ?? '')))
    .join('\n')
}

/**
 * The paths `text` (the file `file`) cites that are not among `tracked`: a path with a folder is
 * looked up from the citing file's folder and each folder above it (`api/index.ts` from src/front/
 * is src/api/index.ts), a bare file name anywhere in the repository; a TypeScript file's comments only.
 */
function missingPaths(file: string, text: string, tracked: Set<string>, basenames: Set<string>): { problems: string[]; citations: number } {
  // and from src/, which the docs leave out (`chain/admission.ts`)
  const folders: string[] = ['src']
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    folders.push(folder)
    if (folder === '.') break
  }
  const problems: string[] = []
  let citations = 0
  citingText(file, text)
    .split('\n')
    .forEach((line, index) => {
      for (const match of line.matchAll(CITED_PATH)) {
        const cited = match[1]
        if (FOREIGN.has(cited)) continue
        // a URL's path, a scoped package's file (`@hyperchain/jssdk/lib/x.js`), what the build makes
        if (/(?:[\w-]+:\/\/\S*|@[\w-]+\/\S*)$/.test(line.slice(0, match.index)) || NOT_OURS.test(cited)) continue
        citations++
        const found = cited.includes('/') ? folders.some((folder) => tracked.has(normalize(join(folder, cited)))) : basenames.has(cited)
        if (!found) problems.push(`${file}:${index + 1}: ${cited} is not a file of the repository`)
      }
    })
  return { problems, citations }
}

const basenamesOf = (files: Iterable<string>): Set<string> => new Set([...files].map((file) => file.slice(file.lastIndexOf('/') + 1)))

test('every file path the README, docs/ and src/ cite is a file of the repository', () => {
  const tracked = new Set(trackedFiles([]))
  const basenames = basenamesOf(tracked)
  const problems: string[] = []
  let citations = 0
  for (const file of trackedFiles(PATH_CITING)) {
    if (!existsSync(join(root, file))) continue
    const found = missingPaths(file, readFileSync(join(root, file), 'utf8'), tracked, basenames)
    problems.push(...found.problems)
    citations += found.citations
  }
  assert.ok(citations > 300, `expected the code and the docs to cite files, found ${citations} citations`)
  assert.equal(problems, [])
})

test('a cited path is looked up from the citing folder and those above it; URLs and packages are not paths', () => {
  const tracked = new Set(['src/exec/changes.ts', 'src/p2p/link-frames.ts', 'src/store/types.ts', 'docs/protocol.md'])
  const text = [
    ' * as exec/changes.ts says, and src/store/types.ts, ../p2p/link-frames.ts, link-frames.ts, docs/protocol.md',
    ' * network/channels.ts and docs/sdk-wire.md, wire.ts',
    ' * https://example.org/a/b.ts, @hyperchain/jssdk/lib/x.js, dist/src/main.js, the SDK`s src/common/util/encode.ts',
    "const bench = new URL('../../bench/run.ts', import.meta.url) // code is checked by tsc; this comment's gone.ts is not",
  ].join('\n')
  const { problems, citations } = missingPaths('src/store/types.ts', text, tracked, basenamesOf(tracked))
  assert.equal(problems, [
    'src/store/types.ts:2: network/channels.ts is not a file of the repository',
    'src/store/types.ts:2: docs/sdk-wire.md is not a file of the repository',
    'src/store/types.ts:2: wire.ts is not a file of the repository',
    'src/store/types.ts:4: gone.ts is not a file of the repository',
  ])
  assert.is(citations, 9)
})

test.run()
