/** The node CA files: made once, reused, and refused when they no longer match. */
import { generateKeyPairSync } from 'node:crypto'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CA_CERT_FILE, CA_KEY_FILE, loadOrCreateNodeCa } from '../../../src/cert/ca.ts'
import { x509 } from '../../../src/cert/x509.ts'

const fresh = (): string => mkdtempSync(join(tmpdir(), 'keel-ca-'))

test('first start: a P-256 self-signed CA, key file 0600, certificate names the host', async () => {
  const dir = fresh()
  const ca = await loadOrCreateNodeCa(dir, { hostname: 'vp1' })
  assert.is(statSync(join(dir, CA_KEY_FILE)).mode & 0o777, 0o600)
  assert.is(readFileSync(join(dir, CA_CERT_FILE), 'utf8'), ca.pem)
  assert.is(ca.certificate.subject, 'O=Hyperchain, CN=hyperchain.cn, G=Keel node CA vp1, C=ZH')
  assert.is(ca.certificate.issuer, ca.certificate.subject)
  assert.is((ca.certificate.publicKey.algorithm as EcKeyAlgorithm).namedCurve, 'P-256')
  assert.is(ca.certificate.getExtension(x509.BasicConstraintsExtension)?.ca, true)
  assert.is(await ca.certificate.verify({ signatureOnly: true }), true, 'self-signed')
  assert.equal(readdirSync(dir).sort(), [CA_CERT_FILE, CA_KEY_FILE].sort(), 'no temporary files left')
})

test('second start: the same CA; the key signs for the certificate it was loaded with', async () => {
  const dir = fresh()
  const first = await loadOrCreateNodeCa(dir, { hostname: 'vp1' })
  const second = await loadOrCreateNodeCa(dir, { hostname: 'another name' })
  assert.is(second.pem, first.pem)
  const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, second.privateKey, new Uint8Array([1, 2, 3]))
  assert.ok(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, first.publicKey, signature, new Uint8Array([1, 2, 3])))
})

test('a key without its certificate gets a new certificate for the same key', async () => {
  const dir = fresh()
  const first = await loadOrCreateNodeCa(dir, { hostname: 'vp1' })
  rmSync(join(dir, CA_CERT_FILE))
  const second = await loadOrCreateNodeCa(dir, { hostname: 'vp1' })
  assert.ok(Buffer.from(second.certificate.publicKey.rawData).equals(Buffer.from(first.certificate.publicKey.rawData)))
  assert.ok(existsSync(join(dir, CA_CERT_FILE)))
})

test('a certificate without its key, or a pair that does not match, is refused', async () => {
  const dir = fresh()
  await loadOrCreateNodeCa(dir, { hostname: 'vp1' })
  const other = fresh()
  await loadOrCreateNodeCa(other, { hostname: 'vp1' })
  writeFileSync(join(dir, CA_CERT_FILE), readFileSync(join(other, CA_CERT_FILE)))
  await assertRejects(loadOrCreateNodeCa(dir, { hostname: 'vp1' }), /does not belong to the key/)
  rmSync(join(dir, CA_KEY_FILE))
  await assertRejects(loadOrCreateNodeCa(dir, { hostname: 'vp1' }), /its key .* is missing/)
})

test('a key that is not P-256 PKCS#8 is refused; a readable key file is reported', async () => {
  const dir = fresh()
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
  writeFileSync(join(dir, CA_KEY_FILE), rsa, { mode: 0o600 })
  await assertRejects(loadOrCreateNodeCa(dir, { hostname: 'vp1' }), /not a P-256 private key/)

  const loose = fresh()
  await loadOrCreateNodeCa(loose, { hostname: 'vp1' })
  chmodSync(join(loose, CA_KEY_FILE), 0o644)
  const warnings: string[] = []
  await loadOrCreateNodeCa(loose, { hostname: 'vp1', warn: (message) => warnings.push(message) })
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /mode 644; run chmod 600/)
})

async function assertRejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await promise
  } catch (error) {
    assert.match((error as Error).message, pattern)
    return
  }
  assert.unreachable(`expected a rejection matching ${pattern}`)
}

test.run()
