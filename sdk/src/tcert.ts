/**
 * The client side of the TCert check (README "TCerts"): the HTTP headers a node with
 * `[tcert] check = true` wants on every request, made from a TCert and its private key.
 *
 * - `tcert`: hex of the TCert's PEM text, exactly as cert_getTCert returned it;
 * - `timestamp`: the time of signing, decimal milliseconds since the Unix epoch (the node refuses
 *   one more than 5 minutes from its clock, either way);
 * - `signature`: hex of a DER ECDSA signature, SHA-256, over the UTF-8 bytes of `<timestamp>\n`
 *   followed by the request body. A WebSocket upgrade has no body: there the path of the upgrade
 *   request (usually `/`) is signed instead.
 *
 * ```ts
 * const signer = tcertSigner({ tcert, privateKey })  // tcert: cert_getTCert's result `tcert`
 * const client = createClient({ transport: httpTransport(url, { headersFor: signer }) })
 * const ws = await wsTransport(url, { headersFor: signer })
 * ```
 */
import { createPrivateKey, type KeyObject, sign } from 'node:crypto'

export interface TcertCredentials {
  /** the TCert as cert_getTCert returned it (`0x` + hex of the PEM text), or its PEM text */
  tcert: string
  /** the private key the TCert was issued for: a KeyObject, or its PEM text (PKCS#8 or SEC1) */
  privateKey: KeyObject | string
}

export interface TcertHeaders {
  tcert: string
  timestamp: string
  signature: string
  [name: string]: string
}

/** Headers for one request: `content` is the exact body sent (or a WebSocket upgrade's path). */
export type TcertSigner = (content: string | Uint8Array) => TcertHeaders

/** The `tcert` header value: the hex of the PEM text, as the node compares it byte for byte. */
function tcertHeaderOf(tcert: string): string {
  if (tcert.includes('-----BEGIN')) return Buffer.from(tcert, 'latin1').toString('hex')
  const digits = tcert.replace(/^0x/i, '')
  if (digits.length === 0 || digits.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(digits))
    throw new Error('tcert: expected the PEM text of the TCert or cert_getTCert\'s "0x…" hex of it')
  return digits
}

/** The headers for `content` signed at `nowMs` (default: now). */
export function tcertHeaders(credentials: TcertCredentials, content: string | Uint8Array, nowMs: number = Date.now()): TcertHeaders {
  return tcertSigner(credentials, { now: () => nowMs })(content)
}

/** A signer that makes fresh headers for each request; parses the TCert and the key once. */
export function tcertSigner(credentials: TcertCredentials, options: { now?: () => number } = {}): TcertSigner {
  const tcert = tcertHeaderOf(credentials.tcert)
  const key = typeof credentials.privateKey === 'string' ? createPrivateKey(credentials.privateKey) : credentials.privateKey
  if (key.type !== 'private' || key.asymmetricKeyType !== 'ec')
    throw new Error(`tcert: the private key must be an EC private key, got a ${key.type} ${key.asymmetricKeyType ?? ''} key`)
  const now = options.now ?? Date.now
  return (content) => {
    const timestamp = String(Math.floor(now()))
    const bytes = Buffer.concat([
      Buffer.from(`${timestamp}\n`, 'utf8'),
      typeof content === 'string' ? Buffer.from(content, 'utf8') : content,
    ])
    const signature = sign('sha256', bytes, { key, dsaEncoding: 'der' }).toString('hex')
    return { tcert, timestamp, signature }
  }
}
