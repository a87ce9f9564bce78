/** Namespace CA and node ECerts: the fields peers rely on, the files and their modes, and what is refused. */
import { X509Certificate } from 'node:crypto'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { x509 } from '../../../src/cert/x509.ts'
import {
  createNamespaceCa,
  ECA_CERT_FILE,
  ECA_KEY_FILE,
  ECERT_FILE,
  ECERT_KEY_FILE,
  issueNodeCert,
  loadNamespaceCa,
  loadNodeIdentity,
  nodeIdentityFrom,
  readPeerCert,
  writeNamespaceCa,
  writeNodeIdentity,
} from '../../../src/p2p/identity.ts'

const fresh = (): string => mkdtempSync(join(tmpdir(), 'keel-p2p-id-'))
const ca = await createNamespaceCa({ namespace: 'global' })
const otherCa = await createNamespaceCa({ namespace: 'global' })

test('the namespace CA: self-signed P-256 CA, namespace in its name', async () => {
  assert.is(ca.certificate.subject, 'O=Hyperchain, CN=hyperchain.cn, G=Keel namespace CA global, C=ZH')
  assert.is(ca.certificate.issuer, ca.certificate.subject)
  assert.is((ca.certificate.publicKey.algorithm as EcKeyAlgorithm).namedCurve, 'P-256')
  assert.is(ca.certificate.getExtension(x509.BasicConstraintsExtension)?.ca, true)
  assert.ok(await ca.certificate.verify({ signatureOnly: true }))
})

test('an ECert: CN and DNS SAN = host name, OU = role, CA=false, both TLS usages, signed by the CA', async () => {
  const issued = await issueNodeCert(ca, { hostname: 'node1', role: 'VP' })
  const cert = new x509.X509Certificate(issued.certPem)
  assert.is(cert.subject, 'O=Hyperchain, OU=VP, CN=node1, C=ZH')
  assert.is(cert.issuer, ca.certificate.subject)
  assert.equal(
    cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items.map((n) => [n.type, n.value]),
    [['dns', 'node1']],
  )
  assert.is(cert.getExtension(x509.BasicConstraintsExtension)?.ca, false)
  assert.equal([...(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [])], ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2'])
  assert.is((cert.publicKey.algorithm as EcKeyAlgorithm).namedCurve, 'P-256')
  assert.ok(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true }))
  const native = new X509Certificate(issued.certPem)
  assert.equal(readPeerCert(native, new X509Certificate(ca.certPem)), { hostname: 'node1', role: 'VP' })
  const nvp = await issueNodeCert(ca, { hostname: 'nvp1', role: 'NVP' })
  assert.equal(readPeerCert(new X509Certificate(nvp.certPem), new X509Certificate(ca.certPem)), { hostname: 'nvp1', role: 'NVP' })
})

test('readPeerCert refuses: another CA, a CA cert, an expired cert, no role', async () => {
  const caCert = new X509Certificate(ca.certPem)
  const foreign = await issueNodeCert(otherCa, { hostname: 'node1', role: 'VP' })
  assert.throws(() => readPeerCert(new X509Certificate(foreign.certPem), caCert), /not issued by the namespace CA/)
  assert.throws(() => readPeerCert(caCert, caCert), /CA certificate is not a node certificate/)
  const old = await issueNodeCert(ca, { hostname: 'node1', role: 'VP', now: new Date('2000-01-01'), years: 1 })
  assert.throws(() => readPeerCert(new X509Certificate(old.certPem), caCert), /not valid now/)
  // a certificate of this CA without OU (e.g. issued for another purpose) is no node certificate
  const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair
  const bare = await x509.X509CertificateGenerator.create({
    serialNumber: '01',
    subject: 'CN=node1',
    issuer: ca.certificate.subject,
    notBefore: new Date(Date.now() - 1000),
    notAfter: new Date(Date.now() + 3600_000),
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  })
  assert.throws(() => readPeerCert(new X509Certificate(bare.toString('pem')), caCert), /OU is undefined, not VP or NVP/)
})

test('files: key 0600, certificates 0644, nothing temporary left; a node loads key, cert and CA', async () => {
  const dir = fresh()
  const issued = await issueNodeCert(ca, { hostname: 'node2', role: 'VP' })
  writeNodeIdentity(dir, { caPem: ca.certPem, certPem: issued.certPem, keyPem: issued.keyPem })
  assert.equal(readdirSync(dir).sort(), [ECA_CERT_FILE, ECERT_FILE, ECERT_KEY_FILE].sort())
  assert.is(statSync(join(dir, ECERT_KEY_FILE)).mode & 0o777, 0o600)
  assert.is(statSync(join(dir, ECERT_FILE)).mode & 0o777, 0o644)
  const warnings: string[] = []
  const identity = loadNodeIdentity(dir, { warn: (m) => warnings.push(m) })
  assert.equal([identity.hostname, identity.role], ['node2', 'VP'])
  assert.is(identity.certPem, issued.certPem)
  assert.is(identity.ca.fingerprint256, new X509Certificate(ca.certPem).fingerprint256)
  assert.ok(identity.cert.checkPrivateKey(identity.privateKey))
  assert.equal(warnings, [])
  chmodSync(join(dir, ECERT_KEY_FILE), 0o644)
  loadNodeIdentity(dir, { warn: (m) => warnings.push(m) })
  assert.match(warnings[0] ?? '', /has mode 644; run chmod 600/)
  rmSync(dir, { recursive: true })
})

test('loadNodeIdentity refuses a key of another cert, a cert of another CA, a missing file', async () => {
  const dir = fresh()
  const a = await issueNodeCert(ca, { hostname: 'node1', role: 'VP' })
  const b = await issueNodeCert(ca, { hostname: 'node1', role: 'VP' })
  writeNodeIdentity(dir, { caPem: ca.certPem, certPem: a.certPem, keyPem: b.keyPem })
  assert.throws(() => loadNodeIdentity(dir), /does not belong to the key/)
  writeNodeIdentity(dir, { caPem: otherCa.certPem, certPem: a.certPem, keyPem: a.keyPem })
  assert.throws(() => loadNodeIdentity(dir), /is not a valid ECert of .*eca\.cert: certificate not issued by the namespace CA/)
  rmSync(join(dir, ECERT_FILE))
  assert.throws(() => loadNodeIdentity(dir), /cannot read .*ecert\.cert.*issue the node's certificate first/)
  rmSync(dir, { recursive: true })
})

test('the CA files: written 0600/0644 and loaded back; a swapped certificate is refused', async () => {
  const dir = fresh()
  writeNamespaceCa(dir, ca)
  assert.is(statSync(join(dir, ECA_KEY_FILE)).mode & 0o777, 0o600)
  const loaded = await loadNamespaceCa(dir, 'global')
  assert.is(loaded.certPem, ca.certPem)
  const issued = await issueNodeCert(loaded, { hostname: 'node3', role: 'NVP' })
  assert.equal([nodeIdentityFrom(ca, issued).hostname, nodeIdentityFrom(ca, issued).role], ['node3', 'NVP'])
  writeFileSync(join(dir, ECA_CERT_FILE), otherCa.certPem)
  await loadNamespaceCa(dir, 'global').then(
    () => assert.unreachable('accepted'),
    (error: Error) => assert.match(error.message, /does not belong to the key/),
  )
  assert.is(readFileSync(join(dir, ECA_KEY_FILE), 'utf8'), ca.keyPem)
  rmSync(dir, { recursive: true })
})

test.run()
