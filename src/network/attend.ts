/**
 * ATTEND (consensus.md §7 step 2, issue 6): a new VP (peerconfig.toml `new = true`) asks each VP
 * of the group to vote it in. It carries the id the new VP asks for and its ECert, signed with the
 * ECert's key. A VP of the group votes `add` (membership.ts) only for a VP of the namespace (CA,
 * OU=VP) whose certificate is the one of its authenticated link, that asks for the next id and
 * whose host name and id are nobody else's. Its add vote then carries the certificate, so every
 * node replaying the chain learns the new VP's host name and key (vp.ts admitAddVote, addedKeys).
 */
import type { X509Certificate } from 'node:crypto'
import { readVoteCert, verifyWithKey, voteCertOf } from '../p2p/identity.ts'
import { parseJson, stringifyJson } from '../wire/json.ts'

/** what a new VP signs in its ATTEND with its ECert key: the id it asks for and its host name */
export const attendBytes = (id: number, hostname: string): Uint8Array => Buffer.from(stringifyJson(['keel-attend', id, hostname]))

/** the new VP's ATTEND: its id, its ECert (base64 DER) and its signature over attendBytes */
export function encodeAttend(id: number, hostname: string, cert: X509Certificate, sign: (bytes: Uint8Array) => Uint8Array): Uint8Array {
  return Buffer.from(stringifyJson({ id, cert: voteCertOf(cert), sig: Buffer.from(sign(attendBytes(id, hostname))).toString('hex') }))
}

export interface AttendContext {
  /** the namespace CA */
  ca: X509Certificate
  /** checks a signature with the key of `hostname`'s authenticated link (PeerNetwork.verify) */
  linkVerify(hostname: string, bytes: Uint8Array, signature: Uint8Array): boolean
  /** the VPs this node knows by id: its files', the chain's and those that attended before */
  hostnameOf(id: number): string | undefined
  idOf(hostname: string): number | undefined
  /** the highest VP id this node knows of (its files' and every VP the chain ever had) */
  highestId(): number
}

/** The id and certificate an ATTEND from the authenticated peer `from` asks for, or why it is refused. */
export function checkAttend(
  from: { hostname: string; vp: boolean },
  payload: Uint8Array,
  context: AttendContext,
): { id: number; cert: string } | string {
  if (!from.vp) return "its certificate is an NVP's (OU=NVP), not a VP's"
  let message: { id?: unknown; cert?: unknown; sig?: unknown }
  try {
    message = parseJson(Buffer.from(payload).toString('utf8'), { maxDepth: 4 }) as typeof message
  } catch {
    return 'the ATTEND is not JSON'
  }
  const { id, cert, sig } = message ?? {}
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return 'the ATTEND names no replica id'
  if (typeof cert !== 'string' || cert.length > 5000 || typeof sig !== 'string' || !/^[0-9a-f]{2,512}$/.test(sig))
    return 'the ATTEND carries no certificate or signature'
  let read: ReturnType<typeof readVoteCert>
  try {
    read = readVoteCert(cert, context.ca)
  } catch (error) {
    return (error as Error).message
  }
  if (read.hostname !== from.hostname) return `the certificate is ${read.hostname}'s, the link ${from.hostname}'s`
  // the certificate carried must be the one of the authenticated link: its key signed the ATTEND
  const bytes = attendBytes(id, from.hostname)
  const signature = Buffer.from(sig, 'hex')
  if (!verifyWithKey(read.cert.publicKey, bytes, signature) || !context.linkVerify(from.hostname, bytes, signature))
    return 'the ATTEND is not signed with the key of its certificate and of its link'
  // asked before, and bound to it then
  if (context.hostnameOf(id) === from.hostname && context.idOf(from.hostname) === id) return { id, cert }
  const taken = context.idOf(from.hostname)
  if (taken !== undefined) return `${from.hostname} is VP ${taken} already`
  const holder = context.hostnameOf(id)
  if (holder !== undefined) return `id ${id} is ${holder}'s`
  const next = context.highestId() + 1
  if (id !== next) return `id ${id} is not the next one: its peerconfig.toml [self] must say id = ${next}`
  return { id, cert }
}
