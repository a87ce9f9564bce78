/**
 * The TCert check of every JSON-RPC request while `[tcert] check` is on (protocol.md §3), run by
 * the transport before anything is dispatched.
 *
 * HTTP headers: `tcert` = hex (0x optional) of the PEM certificate; `signature` = hex (0x
 * optional) of a DER ECDSA signature over SHA-256 of the hex-decoded `msg` header when one is
 * sent (Hyperchain 1.4), else over the raw request body bytes (the Java SDK's way).
 *
 * Which certificate is accepted:
 * - a request made only of cert_getTCert calls: a certificate signed by one of the configured
 *   enrollment CAs (`[tcert] enrollmentCaFiles`, Hyperchain's namespace ECA); with none
 *   configured cert_getTCert is not checked at all, so a client can get its first TCert;
 * - anything else: a TCert this node issued (the exact PEM bytes are in the store), signed by the
 *   node CA, within its validity, and not a CA certificate.
 * A batch is one request: the headers are checked once for the whole body, and a refusal is one
 * -32098 error object, not an array.
 */
import { createPublicKey, verify } from 'node:crypto'
import type { NodeCa } from '../cert/ca.ts'
import { x509 } from '../cert/x509.ts'
import { InvalidTcert } from '../errors.ts'

export type Headers = Readonly<Record<string, string | string[] | undefined>>

export interface TcertCheckOptions {
  ca: NodeCa
  /** whether the node issued the certificate with exactly these PEM bytes */
  isIssued(pemBytes: Uint8Array): boolean
  /** certificates of the CAs whose certificates may call cert_getTCert; empty: cert_getTCert is exempt */
  enrollmentCas: readonly x509.X509Certificate[]
  /** whether a request's `method` names cert_getTCert (its canonical name or an alias) */
  isGetTcert(method: string): boolean
  now?: () => Date
}

export interface TcertCheck {
  /**
   * The -32098 refusal of a request, or undefined when it may be dispatched. `bytes` is the body
   * as received, `parsed` the same body as JSON (undefined for a WebSocket upgrade, which has none).
   */
  check(headers: Headers, bytes: Uint8Array, parsed: unknown): Promise<InvalidTcert | undefined>
}

const refuse = (detail: string): InvalidTcert => new InvalidTcert(`Unauthorized, Please check your cert: ${detail}`)

/** Bytes of a hex header value (0x optional), or undefined when it is not whole hex bytes. */
export function hexHeaderBytes(value: string): Buffer | undefined {
  const digits = value.trim().replace(/^0x/i, '')
  if (digits.length === 0 || digits.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(digits)) return undefined
  return Buffer.from(digits, 'hex')
}

function headerOf(headers: Headers, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Whether `signature` (DER ECDSA) over SHA-256(data) verifies with the certificate's key. */
export function verifyHeaderSignature(certificate: x509.X509Certificate, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(certificate.publicKey.rawData), format: 'der', type: 'spki' })
    return verify('sha256', data, { key, dsaEncoding: 'der' }, signature)
  } catch {
    return false
  }
}

export function createTcertCheck(options: TcertCheckOptions): TcertCheck {
  const now = options.now ?? (() => new Date())
  const caSpki = Buffer.from(options.ca.certificate.publicKey.rawData)

  const signedBy = async (certificate: x509.X509Certificate, issuer: x509.X509Certificate): Promise<boolean> => {
    try {
      return await certificate.verify({ publicKey: issuer, signatureOnly: true })
    } catch {
      return false
    }
  }

  return {
    async check(headers, body, parsed) {
      const elements = Array.isArray(parsed) ? parsed : [parsed]
      const onlyGetTcert =
        elements.length > 0 &&
        elements.every((element) => {
          const method = element !== null && typeof element === 'object' ? (element as { method?: unknown }).method : undefined
          return typeof method === 'string' && options.isGetTcert(method)
        })
      if (onlyGetTcert && options.enrollmentCas.length === 0) return undefined
      const tcertHeader = headerOf(headers, 'tcert')
      if (tcertHeader === undefined || tcertHeader.trim() === '')
        return refuse(
          onlyGetTcert
            ? 'missing HTTP header `tcert`; cert_getTCert needs the hex of your enrollment certificate there'
            : 'missing HTTP header `tcert`; send the hex of the PEM certificate cert_getTCert returned',
        )
      const pemBytes = hexHeaderBytes(tcertHeader)
      if (pemBytes === undefined) return refuse('header `tcert` is not hex bytes (0x optional)')
      let certificate: x509.X509Certificate
      try {
        certificate = new x509.X509Certificate(pemBytes.toString('latin1'))
      } catch {
        return refuse('header `tcert` does not decode to a PEM certificate')
      }
      const at = now()
      if (at < certificate.notBefore || at > certificate.notAfter)
        return refuse(
          `the certificate in \`tcert\` is valid from ${certificate.notBefore.toISOString()} to ${certificate.notAfter.toISOString()}, not now`,
        )
      if (certificate.getExtension(x509.BasicConstraintsExtension)?.ca === true)
        return refuse('the certificate in `tcert` is a CA certificate; send a TCert')

      if (onlyGetTcert) {
        let trusted = false
        for (const enrollmentCa of options.enrollmentCas) if (await signedBy(certificate, enrollmentCa)) trusted = true
        if (!trusted)
          return refuse('the certificate in `tcert` is not signed by any enrollment CA this node trusts ([tcert] enrollmentCaFiles)')
      } else {
        if (Buffer.from(certificate.publicKey.rawData).equals(caSpki) || !(await signedBy(certificate, options.ca.certificate)))
          return refuse("the certificate in `tcert` is not signed by this node's CA; get a TCert from this node with cert_getTCert")
        if (!options.isIssued(pemBytes))
          return refuse('the certificate in `tcert` is not one this node issued; send it exactly as cert_getTCert returned it')
      }

      const signatureHeader = headerOf(headers, 'signature')
      if (signatureHeader === undefined || signatureHeader.trim() === '')
        return refuse('missing HTTP header `signature`; sign SHA-256 of the request body (or of the `msg` header) with the TCert key')
      const signature = hexHeaderBytes(signatureHeader)
      if (signature === undefined) return refuse('header `signature` is not hex bytes (0x optional)')
      const msgHeader = headerOf(headers, 'msg')
      let signed: Uint8Array = body
      let over = 'the request body'
      if (msgHeader !== undefined) {
        const message = hexHeaderBytes(msgHeader)
        if (message === undefined) return refuse('header `msg` is not hex bytes (0x optional)')
        signed = message
        over = 'the hex-decoded `msg` header'
      }
      if (!verifyHeaderSignature(certificate, signed, signature))
        return refuse(
          `header \`signature\` is not a DER ECDSA signature over SHA-256 of ${over} by the key of the certificate in \`tcert\``,
        )
      return undefined
    },
  }
}
