/**
 * Node identities of a namespace: a namespace CA (P-256, self-signed) and the ECerts it issues to
 * the nodes. Peers authenticate each other with these certificates (network.ts).
 *
 * ECert layout (Keel's choice; Hyperchain's own ECerts carry no role):
 * - subject `O=Hyperchain, OU=<role>, CN=<hostname>, C=ZH`, role `VP` or `NVP`;
 * - subjectAltName DNS:<hostname>, so ordinary TLS host-name checks apply when dialling;
 * - basicConstraints CA=false, keyUsage digitalSignature, extKeyUsage serverAuth + clientAuth
 *   (every node both dials and listens);
 * - P-256 key, signed ecdsa-with-SHA384 by the CA (as Keel's other certificates, x509.ts).
 * The role sits in OU because every X.509 tool prints it and because the CA's signature covers it:
 * a node cannot promote itself from NVP to VP.
 *
 * Files (Hyperchain's names, in a node's certificate directory):
 * - `eca.cert` namespace CA certificate (every node), `eca.priv` its key (only where certs are issued),
 * - `ecert.cert` this node's certificate, `ecert.priv` its key (PKCS#8 PEM, mode 0600).
 * Each is written to a temporary file, fsynced and renamed, so a crash never leaves half a key.
 */
import { createPrivateKey, createPublicKey, type KeyObject, verify as verifySignature, X509Certificate } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { hyperchainName, randomSerial, yearsLater } from '../cert/ca.ts'
import { CA_KEY_ALGORITHM, SIGNING_ALGORITHM, subtle, x509 } from '../cert/x509.ts'
import { writeFileAtomically } from '../fs-atomic.ts'

export const ECA_CERT_FILE = 'eca.cert'
export const ECA_KEY_FILE = 'eca.priv'
export const ECERT_FILE = 'ecert.cert'
export const ECERT_KEY_FILE = 'ecert.priv'

export type NodeRole = 'VP' | 'NVP'

export interface NamespaceCa {
  namespace: string
  certificate: x509.X509Certificate
  certPem: string
  keyPem: string
  privateKey: CryptoKey
  publicKey: CryptoKey
}

export interface IssuedCert {
  hostname: string
  role: NodeRole
  certPem: string
  keyPem: string
}

/** What a node loads at start: its key and certificate, and the CA its peers must chain to. */
export interface NodeIdentity {
  hostname: string
  role: NodeRole
  certPem: string
  keyPem: string
  caPem: string
  /** node:crypto views, for TLS and signing (native, fast) */
  cert: X509Certificate
  ca: X509Certificate
  privateKey: KeyObject
}

/** The name of a namespace's CA; the namespace is in the subject so CAs of namespaces are told apart. */
export async function createNamespaceCa(options: { namespace: string; now?: Date; years?: number }): Promise<NamespaceCa> {
  const now = options.now ?? new Date()
  const keys = (await subtle.generateKey(CA_KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: hyperchainName(`Keel namespace CA ${options.namespace}`),
    notBefore: new Date(now.getTime() - 3600_000),
    notAfter: yearsLater(now, options.years ?? 100),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  const keyPem = x509.PemConverter.encode(await subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY')
  return { namespace: options.namespace, certificate, certPem: certificate.toString('pem'), keyPem, ...keys }
}

/** Issues an ECert for `hostname` with a fresh P-256 key. */
export async function issueNodeCert(
  ca: NamespaceCa,
  options: { hostname: string; role: NodeRole; now?: Date; years?: number },
): Promise<IssuedCert> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(options.hostname))
    throw new Error(`issueNodeCert: ${JSON.stringify(options.hostname)} is not a plain host name`)
  const now = options.now ?? new Date()
  const keys = (await subtle.generateKey(CA_KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `O=Hyperchain, OU=${options.role}, CN=${options.hostname}, C=ZH`,
    issuer: ca.certificate.subject,
    notBefore: new Date(now.getTime() - 3600_000),
    notAfter: yearsLater(now, options.years ?? 10),
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: options.hostname }]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey),
    ],
  })
  const keyPem = x509.PemConverter.encode(await subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY')
  return { hostname: options.hostname, role: options.role, certPem: certificate.toString('pem'), keyPem }
}

/** The CN and OU of a certificate's subject (node:crypto prints one `KEY=value` per line). */
function subjectField(cert: X509Certificate, key: string): string | undefined {
  for (const line of cert.subject.split('\n')) if (line.startsWith(`${key}=`)) return line.slice(key.length + 1)
  return undefined
}

/**
 * Checks a peer's certificate against the namespace CA and returns what it says about the peer.
 * Throws with the reason when the certificate is not an ECert of this namespace.
 */
export function readPeerCert(cert: X509Certificate, ca: X509Certificate, now: Date = new Date()): { hostname: string; role: NodeRole } {
  if (now < new Date(cert.validFrom) || now > new Date(cert.validTo)) {
    // the CA check first: a stranger's certificate is refused as such, whatever its dates
    readCertSubject(cert, ca)
    throw new Error(`certificate not valid now (${cert.validFrom} … ${cert.validTo})`)
  }
  return readCertSubject(cert, ca)
}

/** readPeerCert without the validity period: what a certificate says, the same on every node at any time */
function readCertSubject(cert: X509Certificate, ca: X509Certificate): { hostname: string; role: NodeRole } {
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) throw new Error('certificate not issued by the namespace CA')
  if (cert.ca) throw new Error('a CA certificate is not a node certificate')
  const hostname = subjectField(cert, 'CN')
  const role = subjectField(cert, 'OU')
  if (!hostname) throw new Error('certificate has no CN (host name)')
  if (role !== 'VP' && role !== 'NVP') throw new Error(`certificate OU is ${JSON.stringify(role)}, not VP or NVP`)
  if (cert.checkHost(hostname, { subject: 'never' }) !== hostname)
    throw new Error(`certificate has no DNS name ${hostname} in subjectAltName`)
  return { hostname, role }
}

export function writeNamespaceCa(dir: string, ca: NamespaceCa): void {
  mkdirSync(dir, { recursive: true })
  writeFileAtomically(join(dir, ECA_KEY_FILE), ca.keyPem, 0o600)
  writeFileAtomically(join(dir, ECA_CERT_FILE), ca.certPem, 0o644)
}

export async function loadNamespaceCa(dir: string, namespace: string): Promise<NamespaceCa> {
  const certPem = readFileSync(join(dir, ECA_CERT_FILE), 'utf8')
  const keyPem = readFileSync(join(dir, ECA_KEY_FILE), 'utf8')
  const certificate = new x509.X509Certificate(certPem)
  const privateKey = await subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(keyPem), CA_KEY_ALGORITHM, true, ['sign'])
  const spki = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' })
  if (!Buffer.from(certificate.publicKey.rawData).equals(spki))
    throw new Error(`namespace CA: ${join(dir, ECA_CERT_FILE)} does not belong to the key in ${join(dir, ECA_KEY_FILE)}`)
  const publicKey = await subtle.importKey('spki', new Uint8Array(spki), CA_KEY_ALGORITHM, true, ['verify'])
  return { namespace, certificate, certPem, keyPem, privateKey, publicKey }
}

/** Writes a node's certificate directory: its key (0600) and certificate, and the CA certificate. */
export function writeNodeIdentity(dir: string, files: { caPem: string; certPem: string; keyPem: string }): void {
  mkdirSync(dir, { recursive: true })
  // the key first: a certificate whose key is missing is the one unrecoverable state
  writeFileAtomically(join(dir, ECERT_KEY_FILE), files.keyPem, 0o600)
  writeFileAtomically(join(dir, ECERT_FILE), files.certPem, 0o644)
  writeFileAtomically(join(dir, ECA_CERT_FILE), files.caPem, 0o644)
}

/**
 * Loads and checks a node's identity from its certificate directory: the certificate must chain to
 * the CA file and belong to the key. `warn` is told when the key file is readable by others.
 */
export function loadNodeIdentity(dir: string, options: { warn?: (message: string) => void; now?: Date } = {}): NodeIdentity {
  const path = (name: string): string => join(dir, name)
  const read = (name: string): string => {
    try {
      return readFileSync(path(name), 'utf8')
    } catch (error) {
      throw new Error(`node identity: cannot read ${path(name)} (${(error as Error).message}); issue the node's certificate first`)
    }
  }
  const keyPem = read(ECERT_KEY_FILE)
  const certPem = read(ECERT_FILE)
  const caPem = read(ECA_CERT_FILE)
  const mode = statSync(path(ECERT_KEY_FILE)).mode & 0o777
  if ((mode & 0o077) !== 0) options.warn?.(`node identity: ${path(ECERT_KEY_FILE)} has mode ${mode.toString(8)}; run chmod 600 on it`)
  let privateKey: KeyObject
  let cert: X509Certificate
  let ca: X509Certificate
  try {
    privateKey = createPrivateKey(keyPem)
    cert = new X509Certificate(certPem)
    ca = new X509Certificate(caPem)
  } catch (error) {
    throw new Error(`node identity: ${dir} holds a file that is not PEM of the expected kind (${(error as Error).message})`)
  }
  if (!cert.checkPrivateKey(privateKey))
    throw new Error(`node identity: ${path(ECERT_FILE)} does not belong to the key in ${path(ECERT_KEY_FILE)}`)
  let facts: { hostname: string; role: NodeRole }
  try {
    facts = readPeerCert(cert, ca, options.now)
  } catch (error) {
    throw new Error(`node identity: ${path(ECERT_FILE)} is not a valid ECert of ${path(ECA_CERT_FILE)}: ${(error as Error).message}`)
  }
  return { ...facts, certPem, keyPem, caPem, cert, ca, privateKey }
}

/** The identity of an issued certificate without files (tests, and the local-network command). */
export function nodeIdentityFrom(ca: { certPem: string }, issued: IssuedCert): NodeIdentity {
  const cert = new X509Certificate(issued.certPem)
  const caCert = new X509Certificate(ca.certPem)
  return {
    ...readPeerCert(cert, caCert),
    certPem: issued.certPem,
    keyPem: issued.keyPem,
    caPem: ca.certPem,
    cert,
    ca: caCert,
    privateKey: createPrivateKey(issued.keyPem),
  }
}

/** `certs/peers/<hostname>.cert`: the VPs' certificates, so their signatures in proofs can be checked while they are down. */
export const PEER_CERTS_DIR = 'peers'

export function writePeerCerts(dir: string, certs: readonly { hostname: string; certPem: string }[]): void {
  mkdirSync(join(dir, PEER_CERTS_DIR), { recursive: true })
  for (const { hostname, certPem } of certs) writeFileAtomically(join(dir, PEER_CERTS_DIR, `${hostname}.cert`), certPem)
}

/**
 * The VP keys of `certs/peers/` (absent directory: none), each certificate checked against the
 * namespace CA and its file name against its CN.
 */
export function loadPeerKeys(dir: string, ca: X509Certificate): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>()
  const peersDir = join(dir, PEER_CERTS_DIR)
  if (!existsSync(peersDir)) return keys
  for (const file of readdirSync(peersDir)) {
    if (!file.endsWith('.cert')) continue
    const cert = new X509Certificate(readFileSync(join(peersDir, file)))
    const { hostname, role } = readPeerCert(cert, ca)
    if (`${hostname}.cert` !== file) throw new Error(`${join(peersDir, file)} is the certificate of ${hostname}; name it ${hostname}.cert`)
    if (role === 'VP') keys.set(hostname, cert.publicKey)
  }
  return keys
}

/**
 * The new VP's certificate carried by an add vote (base64 DER, messages.ts MemberVote.cert),
 * checked as every node replaying the chain checks it: issued by the namespace CA, a node (not a
 * CA) certificate, OU=VP, CN and subjectAltName naming one host. Its validity period is not checked:
 * the result must not depend on when the block is replayed (the VPs that voted saw the certificate
 * valid on the new VP's authenticated link). Throws with the reason.
 */
export function readVoteCert(certBase64: string, ca: X509Certificate): { hostname: string; cert: X509Certificate } {
  let cert: X509Certificate
  try {
    cert = new X509Certificate(Buffer.from(certBase64, 'base64'))
  } catch (error) {
    throw new Error(`the certificate does not parse (${(error as Error).message})`)
  }
  const { hostname, role } = readCertSubject(cert, ca)
  if (role !== 'VP') throw new Error(`the certificate of ${hostname} is for an ${role}, not a VP (OU=${role})`)
  return { hostname, cert }
}

/** An ECert as an add vote carries it: base64 DER. */
export const voteCertOf = (cert: X509Certificate): string => cert.raw.toString('base64')

/** A P1363 ECDSA-SHA256 signature (the p2p layer's) checked with a known key. */
export function verifyWithKey(key: KeyObject | undefined, bytes: Uint8Array, signature: Uint8Array): boolean {
  if (key === undefined) return false
  try {
    return verifySignature('sha256', bytes, { key, dsaEncoding: 'ieee-p1363' }, signature)
  } catch {
    return false
  }
}
