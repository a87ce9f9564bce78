/** Loading the official Hyperchain JS SDK (@hyperchain/jssdk 1.1.0, unmodified) in a test. */
import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type * as Sdk from '@hyperchain/jssdk'

const require = createRequire(import.meta.url)

/**
 * The SDK's logger opens `<cwd>/logs/<date>.log` when the package loads (and writes a warning for
 * every tolerated start-up failure), so it is loaded from a scratch directory and then silenced:
 * a test run leaves no `logs/` behind in the repository.
 */
export function loadSdk(): typeof Sdk {
  const cwd = process.cwd()
  process.chdir(mkdtempSync(join(tmpdir(), 'keel-jssdk-')))
  try {
    const sdk = require('@hyperchain/jssdk') as typeof Sdk
    sdk.resetLogger({ silent: true })
    return sdk
  } finally {
    process.chdir(cwd)
  }
}
