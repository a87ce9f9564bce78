/**
 * @peculiar/x509, set up once for the whole node: its dependency container (tsyringe) refuses to
 * load without the Reflect metadata polyfill, and it must sign with Node's own WebCrypto.
 * Every module that builds or reads certificates imports the library from here.
 */
import 'reflect-metadata'
import { webcrypto } from 'node:crypto'
import * as x509 from '@peculiar/x509'

x509.cryptoProvider.set(webcrypto as unknown as Crypto)

export { x509 }
export const subtle = webcrypto.subtle as unknown as SubtleCrypto

/** The node CA's key type (protocol.md §3: the ECert key is P-256). */
export const CA_KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const
/** Every certificate Keel signs uses ecdsa-with-SHA384, as Hyperchain's generTcert does. */
export const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-384' } as const
