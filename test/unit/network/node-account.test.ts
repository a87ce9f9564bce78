/**
 * A node's own account (src/network/node-account.ts, docs/governance.md §17): made on the first
 * start in the data directory with mode 0600, the same on every later start, and a file whose
 * address is not its key's stops the node instead of signing as another account.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { addressFromPrivateKey } from '../../../src/crypto/signature.ts'
import { loadOrCreateNodeAccount, NODE_ACCOUNT_FILE } from '../../../src/network/node-account.ts'

test('made once (0600), read back the same; a file whose address is not its key is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-node-account-'))
  try {
    const made = loadOrCreateNodeAccount(join(dir, 'global'))
    const file = join(dir, 'global', NODE_ACCOUNT_FILE)
    assert.is(statSync(file).mode & 0o777, 0o600)
    assert.is(made.address, addressFromPrivateKey(made.privateKey))
    assert.equal(loadOrCreateNodeAccount(join(dir, 'global')), made)
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { address: string; privateKey: string }
    writeFileSync(file, JSON.stringify({ ...saved, address: `0x${'1'.repeat(40)}` }))
    assert.throws(() => loadOrCreateNodeAccount(join(dir, 'global')), /the address is not the private key's/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
