/**
 * The TCert check of every JSON-RPC request while `[tcert] check` is on (protocol.md §3), run by
 * the transport before anything is dispatched.
 *
 * HTTP headers, all three required:
 * - `tcert`: hex (0x optional) of the PEM certificate;
 * - `timestamp`: decimal milliseconds since the Unix epoch, at most 5 minutes from the node's
 *   clock either way (MAX_CLOCK_SKEW_MS);
 * - `signature`: hex (0x optional) of an ASN.1 DER ECDSA signature, with SHA-256, by the
 *   certificate's key over the bytes of `<timestamp>\n` (the header value exactly as sent, UTF-8)
 *   followed by the raw request body bytes. A WebSocket upgrade has no body: there the path of the
 *   upgrade request (e.g. `/`) takes the body's place.
 *
 * Why not Hyperchain's way (reliability.md part A, weakness 6; S4): Hyperchain 1.4 checks a
 * signature over a `msg` header the client picks, so one captured header set authorises any body,
 * forever; the Java SDK signs the body but no time, so a captured request can be sent again any day.
 * Binding the signature to the body and to a time closes both: another body, or the same headers
 * more than 5 minutes later, is refused. What stays open: the very same request (body and headers)
 * replayed within those 5 minutes; the node keeps no memory of signatures it has seen. A `msg`
 * header is refused rather than ignored, so no client believes it is checked.
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

/** How far the `timestamp` header may be from the node's clock, either way. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000

/** What the signature covers after `<timestamp>\n`: an HTTP request's body, or a WebSocket upgrade's path. */
export type SignedRequest = { body: Uint8Array; parsed: unknown } | { upgradePath: string }

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
   * The -32098 refusal of a request, or undefined when it may be dispatched. For an HTTP request,
   * `body` is the body as received and `parsed` the same body as JSON; a WebSocket upgrade has no
   * body and names its path instead.
   */
  check(headers: Headers, request: SignedRequest): Promise<InvalidTcert | undefined>
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

/** The bytes the `signature` header signs: UTF-8 of `<timestamp>\n`, then the body (or the upgrade path). */
export function signedBytes(timestamp: string, content: Uint8Array | string): Buffer {
  return Buffer.concat([Buffer.from(`${timestamp}\n`, 'utf8'), typeof content === 'string' ? Buffer.from(content, 'utf8') : content])
}

/**
 * Milliseconds since the epoch in a `timestamp` header (or the one named `header`), or a refusal
 * detail saying what is wrong with it: it must be decimal digits (no sign, no fraction, at most 15 digits) within
 * MAX_CLOCK_SKEW_MS of `now`.
 */
export function checkTimestamp(value: string | undefined, now: Date, header = 'timestamp'): { ms: number } | { refusal: string } {
  const how = 'send the time of signing as decimal milliseconds since the Unix epoch (e.g. Date.now())'
  if (value === undefined || value.trim() === '') return { refusal: `missing HTTP header \`${header}\`; ${how}` }
  if (!/^[0-9]{1,15}$/.test(value))
    return {
      refusal: `header \`${header}\` is not decimal milliseconds since the Unix epoch (got ${JSON.stringify(value.slice(0, 40))}); ${how}`,
    }
  const ms = Number(value)
  const skew = ms - now.getTime()
  if (Math.abs(skew) > MAX_CLOCK_SKEW_MS) {
    const seconds = Math.round(Math.abs(skew) / 1000)
    return {
      refusal: `header \`${header}\` (${new Date(ms).toISOString()}) is ${seconds} s ${skew < 0 ? 'behind' : 'ahead of'} the node's clock (${now.toISOString()}); a signature is accepted for ${MAX_CLOCK_SKEW_MS / 60_000} minutes either side of its timestamp, so sign the request again with the current time (and check the client's clock)`,
    }
  }
  return { ms }
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
    async check(headers, request) {
      const upgrade = 'upgradePath' in request
      const elements = upgrade ? [undefined] : Array.isArray(request.parsed) ? request.parsed : [request.parsed]
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

      const content = upgrade ? `the upgrade request's path (${JSON.stringify(request.upgradePath)})` : 'the request body'
      const rule = `sign \`<timestamp>\\n\` followed by ${content} (DER ECDSA with SHA-256, by the key of the certificate in \`tcert\`)`
      if (headerOf(headers, 'msg') !== undefined)
        return refuse(`header \`msg\` is not accepted: a signature over it can be replayed with any body; drop it and ${rule}`)
      const timestamp = checkTimestamp(headerOf(headers, 'timestamp'), at)
      if ('refusal' in timestamp) return refuse(timestamp.refusal)
      const signatureHeader = headerOf(headers, 'signature')
      if (signatureHeader === undefined || signatureHeader.trim() === '') return refuse(`missing HTTP header \`signature\`; ${rule}`)
      const signature = hexHeaderBytes(signatureHeader)
      if (signature === undefined) return refuse('header `signature` is not hex bytes (0x optional)')
      const timestampHeader = headerOf(headers, 'timestamp') as string
      const signed = signedBytes(timestampHeader, upgrade ? request.upgradePath : request.body)
      if (!verifyHeaderSignature(certificate, signed, signature))
        return refuse(
          `header \`signature\` does not verify over \`<timestamp>\\n\` followed by ${content} with the key of the certificate in \`tcert\`; ${rule}, with the same timestamp as in the \`timestamp\` header`,
        )
      return undefined
    },
  }
}
