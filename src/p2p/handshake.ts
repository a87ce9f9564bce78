/**
 * The handshake of a peer link (link-frames.ts HELLO and AUTH), apart from the links it opens
 * (network.ts): the HELLO this node sends, the checks a peer's HELLO must pass, and the AUTH
 * signatures over both HELLOs by which each side proves it holds its certificate's key.
 */
import { randomBytes, sign as signBytes, verify as verifyBytes, X509Certificate } from 'node:crypto'
import { type NodeIdentity, readPeerCert } from './identity.ts'
import { authTranscript, encodeHello, type Hello, PROTOCOL_VERSION } from './link-frames.ts'

export interface HandshakeModules {
  identity: NodeIdentity
  namespace: string
  self: { hostname: string; vp: boolean }
  /** this process's boot: a peer that sees it change knows this node restarted */
  bootId: Buffer
  /** the p2p port this node listens on, told in its HELLO */
  listenPort(): number
  /** a peer this node deleted (node_deleteVP, node_deleteNVP) */
  isForgotten(hostname: string): boolean
}

/** what a HELLO is checked against: the side of the link, whom it dialled, the certificate TLS saw */
export interface HelloContext {
  dialer: boolean
  /** the host name dialled (dialer side only) */
  expected: string | undefined
  /** the DER of the peer's TLS certificate, when TLS gave one */
  tlsCertDer: Buffer | undefined
}

export interface Handshake {
  /** a fresh HELLO of this node */
  hello(): Buffer
  /** the peer's certificate when its HELLO is accepted, else why it is refused */
  check(hello: Hello, context: HelloContext): { cert: X509Certificate } | { refused: string }
  /** this side's AUTH signature over both HELLOs */
  sign(dialer: boolean, myHello: Buffer, peerHello: Buffer): Buffer
  /** whether the peer's AUTH signature over both HELLOs verifies with its certificate */
  verify(dialer: boolean, myHello: Buffer, peerHello: Buffer, peerCert: X509Certificate, signature: Uint8Array): boolean
}

/** the refusal a deleted peer gets: the one reason it is told, so that it can stop dialling */
export const forgottenReason = (hostname: string): string =>
  `${hostname} was deleted on this node (node_deleteVP, node_deleteNVP, or removed from the VP group)`

export function createHandshake(modules: HandshakeModules): Handshake {
  const { identity, namespace, self } = modules
  /** the HELLOs in transcript order: the dialer's first */
  const ordered = (dialer: boolean, myHello: Buffer, peerHello: Buffer): [Buffer, Buffer] =>
    dialer ? [myHello, peerHello] : [peerHello, myHello]
  return {
    hello: () =>
      encodeHello({
        version: PROTOCOL_VERSION,
        vp: self.vp,
        bootId: modules.bootId,
        nonce: randomBytes(32),
        listenPort: modules.listenPort(),
        hostname: self.hostname,
        namespace,
        certDer: identity.cert.raw,
      }),
    check(hello, context) {
      const refused = (reason: string) => ({ refused: reason })
      if (hello.version !== PROTOCOL_VERSION) return refused(`protocol version ${hello.version}, this node speaks ${PROTOCOL_VERSION}`)
      if (hello.namespace !== namespace) return refused(`namespace ${hello.namespace}, this node is in ${namespace}`)
      let cert: X509Certificate
      let facts: { hostname: string; role: string }
      try {
        cert = new X509Certificate(hello.certDer)
        facts = readPeerCert(cert, identity.ca)
      } catch (error) {
        return refused(`certificate refused: ${(error as Error).message}`)
      }
      if (!context.tlsCertDer || !context.tlsCertDer.equals(hello.certDer))
        return refused('the certificate in HELLO is not the one of the TLS connection')
      if (hello.hostname !== facts.hostname) return refused(`claims to be ${hello.hostname} but its certificate is for ${facts.hostname}`)
      if (hello.vp !== (facts.role === 'VP'))
        return refused(`${hello.hostname} claims vp = ${hello.vp} but its certificate says ${facts.role}`)
      if (context.dialer && hello.hostname !== context.expected)
        return refused(`dialled ${context.expected} but ${hello.hostname} answered`)
      if (hello.hostname === self.hostname) return refused('a link to itself')
      if (modules.isForgotten(hello.hostname)) return refused(forgottenReason(hello.hostname))
      if (!self.vp && !hello.vp) return refused(`${hello.hostname} is an NVP; an NVP links to VPs only`)
      return { cert }
    },
    sign: (dialer, myHello, peerHello) =>
      signBytes('sha256', authTranscript(dialer ? 'dialer' : 'listener', ...ordered(dialer, myHello, peerHello)), {
        key: identity.privateKey,
        dsaEncoding: 'ieee-p1363',
      }),
    verify: (dialer, myHello, peerHello, peerCert, signature) =>
      verifyBytes(
        'sha256',
        authTranscript(dialer ? 'listener' : 'dialer', ...ordered(dialer, myHello, peerHello)),
        { key: peerCert.publicKey, dsaEncoding: 'ieee-p1363' },
        signature,
      ),
  }
}
