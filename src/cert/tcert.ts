/**
 * Issuing transaction certificates (protocol.md §3, Hyperchain's generTcert): the request's public
 * key in an X.509 v3 certificate signed ecdsa-with-SHA384 by the node CA. Two deliberate
 * differences from Hyperchain: the serial is random instead of always 1 (RFC 5280 wants serials
 * unique per issuer), and a key the node cannot use keeps Hyperchain's -32099 "generated tcert
 * failed" but the message goes on to say what is wrong with it and what to send instead. Only a
 * value that is not whole hex bytes is a params error (-32602): the schema pattern refuses non-hex
 * digits and 0x, parseTcertPublicKey an odd number of digits.
 */
import { createPublicKey, type KeyObject } from 'node:crypto'
import { InvalidParams, TcertFailed } from '../errors.ts'
import { hyperchainName, type NodeCa, randomSerial, yearsLater } from './ca.ts'
import { SIGNING_ALGORITHM, x509 } from './x509.ts'

/** Curves Go's x509.ParsePKIXPublicKey accepts for ECDSA, by OpenSSL name → the name people know. */
const CURVES: Readonly<Record<string, string>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }

export const TCERT_SUBJECT = hyperchainName('Develop')
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2'
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1'
/** Hyperchain lists these two unregistered OIDs as extended key usages of every TCert. */
const UNKNOWN_EXT_KEY_USAGES = ['1.2.3', '2.59.1']
const EXTRA_EXTENSION_OID = '1.2.3.4'
const EXTRA_EXTENSION_VALUE = 'extra extension'
const SUBJECT_KEY_ID = '01020304'

const PEM_BLOCK = /-----BEGIN ([^-\r\n]*)-----\r?\n([\s\S]*?)-----END \1-----/

/** The text every -32099 for an unusable key starts with; the detail in parentheses follows. */
export const UNUSABLE_KEY = 'generated tcert failed: the pubkey is not a PEM SubjectPublicKeyInfo of an ECDSA P-256/P-384/P-521 key'

/** -32099 for hex that decodes to something that is not a usable public key. */
function badKey(detail: string): TcertFailed {
  return new TcertFailed(`${UNUSABLE_KEY} (${detail})`)
}

/**
 * The SubjectPublicKeyInfo DER of `pubkeyHex` (hex of a PEM text whose label is ignored, as Go's
 * pem.Decode does), after checking it is an ECDSA key on P-256, P-384 or P-521. Throws -32602
 * (InvalidParams) for an odd number of hex digits, -32099 (TcertFailed) for any other unusable key.
 */
export function parseTcertPublicKey(pubkeyHex: string): { spki: Buffer; curve: string } {
  if (pubkeyHex.length % 2 !== 0)
    throw new InvalidParams(`invalid argument 0 (request) at /pubkey: odd number of hex digits (${pubkeyHex.length}); send whole bytes`)
  const text = Buffer.from(pubkeyHex, 'hex').toString('latin1')
  const block = PEM_BLOCK.exec(text)
  if (block === null)
    throw badKey(
      'the hex does not decode to a PEM block; send the hex of the whole PEM text, "-----BEGIN PUBLIC KEY-----" line to "-----END PUBLIC KEY-----" line',
    )
  const body = block[2].replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length % 4 !== 0) throw badKey(`the body of the PEM block "${block[1]}" is not base64`)
  const der = Buffer.from(body, 'base64')
  let key: KeyObject
  try {
    key = createPublicKey({ key: der, format: 'der', type: 'spki' })
  } catch {
    throw badKey(
      `the PEM block "${block[1]}" holds no SubjectPublicKeyInfo, e.g. a bare EC point; export the public key as SPKI, e.g. with "openssl ec -pubout"`,
    )
  }
  const curveName = key.asymmetricKeyDetails?.namedCurve
  const curve = key.asymmetricKeyType === 'ec' && curveName !== undefined ? CURVES[curveName] : undefined
  if (curve === undefined)
    throw badKey(
      `unsupported key type ${key.asymmetricKeyType}${curveName === undefined ? '' : ` on curve ${curveName}`}; use an ECDSA key on P-256, P-384 or P-521`,
    )
  return { spki: key.export({ type: 'spki', format: 'der' }), curve }
}

export interface IssuedTcert {
  /** PEM text of the certificate */
  pem: string
  /** hex serial number */
  serial: string
  notBefore: Date
  notAfter: Date
}

/** Signs a TCert for `spki` with the node CA; valid from an hour ago for 100 years (protocol.md §3). */
export async function issueTcert(ca: NodeCa, spki: Buffer, now: Date): Promise<IssuedTcert> {
  // X.509 times have whole seconds; rounding here keeps the record equal to the certificate
  const second = new Date(Math.floor(now.getTime() / 1000) * 1000)
  const notBefore = new Date(second.getTime() - 3600_000)
  const notAfter = yearsLater(second, 100)
  const serial = randomSerial()
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: TCERT_SUBJECT,
    issuer: ca.certificate.subjectName,
    notBefore,
    notAfter,
    publicKey: new Uint8Array(spki),
    signingKey: ca.privateKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      new x509.ExtendedKeyUsageExtension([OID_CLIENT_AUTH, OID_SERVER_AUTH, ...UNKNOWN_EXT_KEY_USAGES]),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.SubjectKeyIdentifierExtension(SUBJECT_KEY_ID),
      // Go's x509.CreateCertificate names the parent's key id, so chain builders find the CA
      await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey),
      new x509.Extension(EXTRA_EXTENSION_OID, false, Buffer.from(EXTRA_EXTENSION_VALUE, 'utf8')),
    ],
  })
  return { pem: certificate.toString('pem'), serial, notBefore, notAfter }
}
