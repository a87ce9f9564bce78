/**
 * The node certificate authority that signs TCerts: a P-256 key and a self-signed certificate,
 * made at first start and kept in the node's data directory, so TCerts stay valid across restarts.
 *
 * Files (data directory): `tcert-ca.key` (PKCS#8 PEM, mode 0600) and `tcert-ca.crt` (PEM).
 * Each is written to a temporary file and renamed, so a crash never leaves half a key. The key is
 * written first: a key without its certificate gets a new self-signed certificate for the same key
 * (TCerts issued before stay verifiable); a certificate without its key is refused, because
 * replacing the key would silently invalidate every TCert issued so far.
 */
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomically } from '../fs-atomic.ts'
import { CA_KEY_ALGORITHM, SIGNING_ALGORITHM, subtle, x509 } from './x509.ts'

export const CA_KEY_FILE = 'tcert-ca.key'
export const CA_CERT_FILE = 'tcert-ca.crt'

export interface NodeCa {
  readonly certificate: x509.X509Certificate
  /** PEM text of the CA certificate */
  readonly pem: string
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
}

export interface CaOptions {
  /** names the CA in its subject, so CAs of different nodes are told apart */
  hostname: string
  now?: Date
  /** told when the key file can be read by others than its owner */
  warn?: (message: string) => void
}

/** Hyperchain's certificate subject style (protocol.md §3), with GN naming what the certificate is. */
export function hyperchainName(givenName: string): string {
  return `O=Hyperchain, CN=hyperchain.cn, G=${givenName.replace(/([,+"\\<>;=])/g, '\\$1')}, C=ZH`
}

export async function loadOrCreateNodeCa(dir: string, options: CaOptions): Promise<NodeCa> {
  const keyFile = join(dir, CA_KEY_FILE)
  const certFile = join(dir, CA_CERT_FILE)
  const now = options.now ?? new Date()
  mkdirSync(dir, { recursive: true })
  const hasKey = existsSync(keyFile)
  const hasCert = existsSync(certFile)
  if (!hasKey && hasCert) {
    throw new Error(
      `node CA: ${certFile} exists but its key ${keyFile} is missing; restore the key, or delete ${certFile} to make a new CA (every TCert issued so far then stops working)`,
    )
  }
  if (!hasKey) {
    const keys = (await subtle.generateKey(CA_KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair
    const pkcs8 = await subtle.exportKey('pkcs8', keys.privateKey)
    writeFileAtomically(keyFile, x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'), 0o600)
    const certificate = await selfSign(keys, options.hostname, now)
    writeFileAtomically(certFile, certificate.toString('pem'), 0o644)
    return { certificate, pem: certificate.toString('pem'), privateKey: keys.privateKey, publicKey: keys.publicKey }
  }

  const mode = statSync(keyFile).mode & 0o777
  if ((mode & 0o077) !== 0) options.warn?.(`node CA: ${keyFile} has mode ${mode.toString(8)}; run chmod 600 on it`)
  const keyPem = readFileSync(keyFile, 'utf8')
  let spki: Buffer
  let privateKey: CryptoKey
  try {
    spki = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' })
    privateKey = await subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(keyPem), CA_KEY_ALGORITHM, true, ['sign'])
  } catch (error) {
    throw new Error(`node CA: ${keyFile} is not a P-256 private key in PKCS#8 PEM`, { cause: error })
  }
  const publicKey = await subtle.importKey('spki', new Uint8Array(spki), CA_KEY_ALGORITHM, true, ['verify'])
  let certificate: x509.X509Certificate
  if (hasCert) {
    certificate = new x509.X509Certificate(readFileSync(certFile, 'utf8'))
    if (!Buffer.from(certificate.publicKey.rawData).equals(spki))
      throw new Error(`node CA: ${certFile} does not belong to the key in ${keyFile}; put back the matching pair`)
  } else {
    certificate = await selfSign({ privateKey, publicKey }, options.hostname, now)
    writeFileAtomically(certFile, certificate.toString('pem'), 0o644)
  }
  return { certificate, pem: certificate.toString('pem'), privateKey, publicKey }
}

async function selfSign(keys: CryptoKeyPair, hostname: string, now: Date): Promise<x509.X509Certificate> {
  return x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: hyperchainName(`Keel node CA ${hostname}`),
    notBefore: new Date(now.getTime() - 3600_000),
    notAfter: yearsLater(now, 100),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
}

/** A positive 128-bit serial (RFC 5280 §4.1.2.2 asks for unique serials per issuer). */
export function randomSerial(): string {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0] & 0x7f) | 0x01
  return bytes.toString('hex')
}

export function yearsLater(date: Date, years: number): Date {
  const later = new Date(date.getTime())
  later.setUTCFullYear(later.getUTCFullYear() + years)
  return later
}
