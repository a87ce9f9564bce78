/**
 * Adding a VP (issue 6): the ATTEND a new VP sends (attend.ts), the certificate its add votes carry
 * and the rule every node replaying the chain applies to it (vp.ts admitAddVote, membership.ts),
 * the wire form of such votes, and old proofs still read.
 */
import { createPrivateKey, sign, verify, X509Certificate } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { changeOf, createMembership } from '../../../src/consensus/bft/membership.ts'
import {
  batchDigest,
  type Commit,
  decodeMessage,
  encodeMessage,
  type MemberVote,
  MessageError,
  type Signed,
} from '../../../src/consensus/bft/messages.ts'
import { GovernanceWriter, NO_GOVERNANCE } from '../../../src/governance/state.ts'
import { type AttendContext, attendBytes, checkAttend, encodeAttend } from '../../../src/network/attend.ts'
import { addedKeys, admitAddVote, decodeProof, encodeProof, membershipFromChain, nodeHooksOf, votesOf } from '../../../src/network/vp.ts'
import { createNamespaceCa, type IssuedCert, issueNodeCert, voteCertOf } from '../../../src/p2p/identity.ts'
import { BINARY_TAG, packTagged } from '../../../src/wire/binary.ts'
import { stringifyJson } from '../../../src/wire/json.ts'

const ca = await createNamespaceCa({ namespace: 'global' })
const caCert = new X509Certificate(ca.certPem)
const otherCa = await createNamespaceCa({ namespace: 'global' })
const node5 = await issueNodeCert(ca, { hostname: 'node5', role: 'VP' })
const nvp5 = await issueNodeCert(ca, { hostname: 'node5', role: 'NVP' })
const stranger5 = await issueNodeCert(otherCa, { hostname: 'node5', role: 'VP' })
const node6 = await issueNodeCert(ca, { hostname: 'node6', role: 'VP' })

const certOf = (issued: IssuedCert) => new X509Certificate(issued.certPem)
const signer = (issued: IssuedCert) => (bytes: Uint8Array) =>
  sign('sha256', bytes, { key: createPrivateKey(issued.keyPem), dsaEncoding: 'ieee-p1363' })
const verifier = (issued: IssuedCert) => (bytes: Uint8Array, signature: Uint8Array) =>
  verify('sha256', bytes, { key: certOf(issued).publicKey, dsaEncoding: 'ieee-p1363' }, signature)
const otherNode5 = await issueNodeCert(ca, { hostname: 'node5', role: 'VP' })

/** a VP of the group 1..4 (node1..node4), whose link to node5 shows `link`'s certificate */
const context = (link: IssuedCert = node5, extra: [number, string][] = []): AttendContext => {
  const known = new Map<number, string>([[1, 'node1'], [2, 'node2'], [3, 'node3'], [4, 'node4'], ...extra])
  return {
    ca: caCert,
    linkVerify: (hostname, bytes, signature) => hostname === link.hostname && verifier(link)(bytes, signature),
    hostnameOf: (id) => known.get(id),
    idOf: (hostname) => [...known].find(([, h]) => h === hostname)?.[0],
    highestId: () => Math.max(...known.keys()),
  }
}
const attendOf = (issued: IssuedCert, id = 5, hostname = issued.hostname) => encodeAttend(id, hostname, certOf(issued), signer(issued))
const vp = (hostname: string) => ({ hostname, vp: true })

test('ATTEND: a VP of the namespace CA asking for the next id, signed with its link key, is accepted', () => {
  const checked = checkAttend(vp('node5'), attendOf(node5), context())
  assert.equal(checked, { id: 5, cert: voteCertOf(certOf(node5)) })
  // asked again once bound: still accepted (no second vote: vp.ts keeps what it cast)
  assert.equal(checkAttend(vp('node5'), attendOf(node5), context(node5, [[5, 'node5']])), checked)
})

test('ATTEND refused, with the reason: NVP link, OU=NVP, another CA, wrong id, taken id or host, other key, garbage', () => {
  const refused = (checked: ReturnType<typeof checkAttend>, pattern: RegExp, what: string) => {
    assert.type(checked, 'string', what)
    assert.match(checked as string, pattern, what)
  }
  refused(checkAttend({ hostname: 'node5', vp: false }, attendOf(node5), context()), /NVP/, 'an NVP link')
  refused(checkAttend(vp('node5'), attendOf(nvp5), context(nvp5)), /NVP, not a VP/, 'a certificate with OU=NVP')
  refused(checkAttend(vp('node5'), attendOf(stranger5), context(stranger5)), /not issued by the namespace CA/, 'a key not from the CA')
  refused(checkAttend(vp('node5'), attendOf(node5, 7), context()), /not the next one: .*id = 5/, 'id 7 when 5 is next')
  refused(checkAttend(vp('node5'), attendOf(node5, 3), context()), /id 3 is node3's/, 'an id taken')
  refused(checkAttend(vp('node5'), attendOf(node5), context(node5, [[5, 'node9']])), /id 5 is node9's/, 'id 5 bound to another host')
  refused(checkAttend(vp('node5'), attendOf(node5, 6), context(node5, [[5, 'node5']])), /node5 is VP 5 already/, 'a second id')
  refused(
    checkAttend(vp('node6'), attendOf(node5), context(node6)),
    /certificate is node5's, the link node6's/,
    "another host's certificate",
  )
  // node5's certificate, but signed by another key than the link's
  const forged = encodeAttend(5, 'node5', certOf(node5), signer(node6))
  refused(checkAttend(vp('node5'), forged, context()), /not signed with the key/, 'signed with another key')
  refused(checkAttend(vp('node5'), Buffer.from('{'), context()), /not JSON/, 'garbage')
  refused(
    checkAttend(vp('node5'), Buffer.from(stringifyJson({ id: 5, cert: 'AAAA', sig: '00' })), context()),
    /does not parse/,
    'a bad cert',
  )
  assert.ok(attendBytes(5, 'node5').length > 0)
})

const signedVote = (from: number, body: MemberVote): Signed<MemberVote> => ({ from, sig: '00', body })
const addVote = (from: number, issued: IssuedCert | string, target = 5) =>
  signedVote(from, { type: 'member-vote', action: 'add', target, cert: typeof issued === 'string' ? issued : voteCertOf(certOf(issued)) })

test('replaying add votes: a certificate not from the CA, for an NVP or absent is refused with the reason; a good one counts', () => {
  const admit = admitAddVote(caCert)
  assert.is(admit(addVote(1, node5).body), undefined)
  assert.match(admit(addVote(1, nvp5).body)!, /NVP, not a VP/)
  assert.match(admit(addVote(1, stranger5).body)!, /not issued by the namespace CA/)
  assert.match(admit({ type: 'member-vote', action: 'add', target: 5 })!, /must carry/)
  assert.match(admit(addVote(1, 'AAAAAAAAAAAAAAAAAAAA').body)!, /does not parse/)

  const group = createMembership([1, 2, 3, 4], undefined, { admit })
  const refused = group.record(3, [addVote(1, stranger5), addVote(2, stranger5), addVote(3, stranger5), addVote(4, stranger5)])
  assert.is(refused.length, 4)
  for (const outcome of refused) {
    assert.is(outcome.kind, 'refused')
    assert.match((outcome as { reason: string }).reason, /not issued by the namespace CA/)
  }
  assert.equal(group.latest(), [1, 2, 3, 4], 'nothing changes')
  // votes for one id with different certificates are different changes: all must name the same
  assert.equal(group.record(4, [addVote(1, node5), addVote(2, node5), addVote(3, node5)]), [])
  assert.equal(group.record(5, [addVote(4, otherNode5)]), [], 'another node5 key')
  const [outcome] = group.record(6, [addVote(4, node5)])
  assert.is(outcome.kind, 'scheduled')
  assert.equal(group.latest(), [1, 2, 3, 4, 5])
  assert.is(group.certOf(5), voteCertOf(certOf(node5)))
  // the key every node checks node5's signatures with after the boundary
  const keyOf = addedKeys(group, caCert)
  assert.is(keyOf(5)?.hostname, 'node5')
  assert.ok(keyOf(5)?.key.equals(certOf(node5).publicKey))
  assert.is(keyOf(1), undefined, 'a genesis VP has no certificate in the chain')
  // a restart from the snapshot knows the certificate
  const again = createMembership([1, 2, 3, 4], JSON.parse(JSON.stringify(group.snapshot())), { admit })
  assert.is(again.certOf(5), group.certOf(5))
  assert.equal(again.epochs(), group.epochs())
  assert.is.not(changeOf(addVote(1, node5).body), changeOf(addVote(1, node6).body))
  assert.is(changeOf({ type: 'member-vote', action: 'delete', target: 5 }), 'delete/5', 'delete votes keep their old key')
})

test('wire: an add vote carries its certificate (signed, in the batch digest); a delete vote may not; old proofs still read', () => {
  const vote = addVote(1, node5)
  const decoded = decodeMessage(encodeMessage(vote)) as Signed<MemberVote>
  assert.equal(decoded, vote)
  const bare = signedVote(1, { type: 'member-vote', action: 'add', target: 5 })
  assert.equal(decodeMessage(encodeMessage(bare)), bare, 'an add vote without a certificate (before issue 6 Deliver 4) decodes')
  assert.throws(
    () => decodeMessage(encodeMessage(signedVote(1, { type: 'member-vote', action: 'delete', target: 5, cert: vote.body.cert }))),
    (error: unknown) => error instanceof MessageError && /only an add vote/.test((error as Error).message),
  )
  assert.throws(
    () => decodeMessage(encodeMessage(signedVote(1, { type: 'member-vote', action: 'add', target: 5, cert: 'not base64!' }))),
    (error: unknown) => error instanceof MessageError,
  )
  assert.is.not(batchDigest(9, 1n, [], [vote]), batchDigest(9, 1n, [], [bare]), 'the digest covers the certificate')
  const commit: Signed<Commit> = { from: 2, sig: 'ab', body: { type: 'commit', view: 0, seq: 9, digest: `0x${'1'.repeat(64)}` } }
  assert.equal(decodeProof(encodeProof([commit], [vote])), { commits: [commit], votes: [vote] })
  assert.equal(decodeProof(encodeProof([commit])), { commits: [commit], votes: [] }, 'no votes')
  // blocks stored by protocol 1 keep JSON proofs: a bare list, or {commits, votes}
  assert.equal(decodeProof(Buffer.from(JSON.stringify([commit]))), { commits: [commit], votes: [] }, 'an old bare list')
  assert.equal(
    decodeProof(Buffer.from(JSON.stringify({ commits: [commit], votes: [vote] }))),
    { commits: [commit], votes: [vote] },
    'old votes',
  )
  assert.equal(votesOf({ proof: encodeProof([commit], [vote]) }), [vote])
  assert.equal(votesOf({ proof: encodeProof([commit]) }), [])
  assert.equal(votesOf({ proof: Buffer.from(JSON.stringify({ commits: [commit], votes: [vote] })) }), [vote])
  assert.throws(() => decodeProof(packTagged(BINARY_TAG, [[commit], [vote], []])), /\[commits\] or \[commits, votes\]/)
  const deleteVote = signedVote(3, { type: 'member-vote', action: 'delete', target: 4 })
  assert.equal(decodeProof(encodeProof([commit], [deleteVote])), { commits: [commit], votes: [deleteVote] }, 'delete votes as before')
})

test('NODE proposals: the hooks read a VP ECert (PEM) against the namespace CA; after a crash before the group snapshot, the decisions come back from the state in block order', () => {
  const membership = createMembership([1, 2, 3, 4])
  const hooks = nodeHooksOf({
    membership,
    genesisHostnames: new Map([1, 2, 3, 4].map((id) => [id, `node${id}`])),
    addedKey: addedKeys(membership, caCert),
    ca: caCert,
    namespace: 'global',
  })
  assert.equal(hooks.readCert(node5.certPem), { hostname: 'node5', cert: voteCertOf(certOf(node5)) })
  assert.match(hooks.readCert(nvp5.certPem) as string, /for an NVP, not a VP/)
  assert.type(hooks.readCert(stranger5.certPem), 'string', "another CA's certificate is refused")
  assert.match(hooks.readCert('pub1') as string, /is no PEM certificate/)
  assert.is(hooks.effectiveFrom(12), 61)

  // the state after block 7 holds an addition decided at block 3 and a removal at block 6; the saved
  // group snapshot is from block 2 (the node crashed before saving the later ones)
  const slots = new Map<string, `0x${string}`>()
  const state = {
    getStorage: (address: string, slot: string) => slots.get(`${address}/${slot}`) ?? '0x',
    putStorage: (address: string, slot: string, value: `0x${string}`) => void slots.set(`${address}/${slot}`, value),
  }
  const writer = new GovernanceWriter(state, NO_GOVERNANCE)
  const cert = voteCertOf(certOf(node5))
  writer.addNodeDecision({ block: 3, action: 'add', id: 5, hostname: 'node5', cert })
  writer.addNodeDecision({ block: 6, action: 'delete', id: 1, hostname: 'node1' })
  const saved = createMembership([1, 2, 3, 4])
  saved.record(2, [])
  const store = {
    height: () => 7,
    getBlockBatch: () => undefined,
    readConsensus: () => [{ key: 'membership', value: Buffer.from(stringifyJson(saved.snapshot())) }],
    writeConsensus: async () => {},
    state,
  }
  const restarted = membershipFromChain([1, 2, 3, 4], store as unknown as Parameters<typeof membershipFromChain>[1])
  assert.equal(restarted.epochs(), [
    { from: 1, members: [1, 2, 3, 4] },
    { from: 51, members: [2, 3, 4, 5] },
  ])
  assert.is(restarted.certOf(5), cert)
  assert.is(restarted.height(), 6, 'recorded up to the last block that decided something')
})

test.run()
