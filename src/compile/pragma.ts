/**
 * Which solc release compiles a source (ARCHITECTURE.md decision 6): the newest installed release
 * that satisfies every `pragma solidity` of the source; a source without one is compiled with
 * 0.4.26, the release Hyperchain's own examples (no pragma, functions without visibility) expect.
 * Version expressions follow npm semver ranges, as solc reads them (`^0.5.0`, `>=0.4.22 <0.6.0`,
 * `0.4.24`, `||`).
 */
import semver from 'semver'
import { NodeError } from '../errors.ts'

/** The release a source without any `pragma solidity` gets. */
export const NO_PRAGMA_RELEASE = '0.4.26'

/**
 * The text of every `pragma solidity …;` statement, comments and string literals skipped (a
 * commented-out pragma does not count).
 */
export function solidityPragmas(source: string): string[] {
  const pragmas: string[] = []
  let code = ''
  for (let i = 0; i < source.length; ) {
    const two = source.slice(i, i + 2)
    if (two === '//') {
      const end = source.indexOf('\n', i)
      i = end < 0 ? source.length : end
      code += ' '
    } else if (two === '/*') {
      const end = source.indexOf('*/', i + 2)
      i = end < 0 ? source.length : end + 2
      code += ' '
    } else if (source[i] === '"' || source[i] === "'") {
      const quote = source[i]
      let j = i + 1
      while (j < source.length && source[j] !== quote && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1
      i = j + 1
      code += ' '
    } else {
      code += source[i]
      i++
    }
  }
  for (const match of code.matchAll(/\bpragma\s+solidity\b([^;]*);/g)) pragmas.push(match[1].trim())
  return pragmas
}

/** Release numbers newest first, e.g. `0.8.37, 0.7.6, …`, as a sentence. */
export function releaseList(releases: readonly string[]): string {
  const sorted = [...releases].sort(semver.rcompare)
  return sorted.length <= 1 ? sorted.join('') : `${sorted.slice(0, -1).join(', ')} and ${sorted.at(-1)}`
}

/**
 * The newest of `releases` every pragma of `source` accepts; NodeError (-32000) naming the
 * pragma and the releases when none does, or when a pragma is not a version expression.
 */
export function chooseRelease(source: string, releases: readonly string[]): string {
  const pragmas = solidityPragmas(source)
  if (pragmas.length === 0) {
    if (releases.includes(NO_PRAGMA_RELEASE)) return NO_PRAGMA_RELEASE
    throw new NodeError(
      `the source has no \`pragma solidity\`, which compiles with solc ${NO_PRAGMA_RELEASE}, and this node has only solc ${releaseList(releases)}; add a pragma one of them accepts`,
    )
  }
  for (const pragma of pragmas) {
    if (semver.validRange(pragma, { loose: true }) === null)
      throw new NodeError(`compile failed: \`pragma solidity ${pragma};\` is not a version expression (e.g. ^0.5.0 or >=0.4.22 <0.6.0)`)
  }
  const newestFirst = [...releases].sort(semver.rcompare)
  const chosen = newestFirst.find((release) => pragmas.every((pragma) => semver.satisfies(release, pragma, { loose: true })))
  if (chosen !== undefined) return chosen
  const stated = pragmas.map((pragma) => `\`pragma solidity ${pragma};\``).join(' with ')
  throw new NodeError(
    `no Solidity compiler of this node accepts ${stated}: it has solc ${releaseList(releases)} (the newest release of each of 0.4 to 0.8); change the pragma to accept one of them`,
  )
}
