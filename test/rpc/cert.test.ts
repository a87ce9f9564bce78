/**
 * cert_getTCert and the TCert check (protocol.md §3, reliability.md S4) against real nodes on
 * fresh data directories: the issued certificate read back with @peculiar/x509, unusable keys
 * (-32099), the node CA kept across a restart, every refusal of the check (-32098) including a
 * header set replayed with another body or after 5 minutes, WebSocket upgrades, enrollment CAs,
 * Keel's own client with tcertSigner, and the official SDK with the check off.
 *
 *   npx tsx test/rpc/cert.test.ts
 */
import 'reflect-metadata'
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, webcrypto } from 'node:crypto'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as x509 from '@peculiar/x509'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import WebSocket from 'ws'
import { createClient, httpTransport, RpcError, tcertSigner, wsTransport } from '../../sdk/src/index.ts'
import type { KeelNode } from '../../src/node.ts'
import { stringifyJson } from '../../src/wire/json.ts'
import { loadSdk } from '../helpers/jssdk.ts'
import { envelope, post, startTestNode, waitForReceipt } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

x509.cryptoProvider.set(webcrypto as unknown as Crypto)

const ECDSA_SHA384 = { name: 'ECDSA', hash: 'SHA-384' }
const P256 = { name: 'ECDSA', namedCurve: 'P-256' }

interface Reply {
  code: number
  message: string
  id?: unknown
  result?: unknown
}

interface Client {
  key: KeyObject
  /** hex of the PEM text, as the `tcert` header carries it */
  tcertHex: string
  certificate: x509.X509Certificate
}

const hex = (text: string): string => Buffer.from(text, 'latin1').toString('hex')
const pemOf = (tcertHex: string): string => Buffer.from(tcertHex.replace(/^0x/, ''), 'hex').toString('latin1')
const signHex = (key: KeyObject, data: Uint8Array): string => sign('sha256', data, { key, dsaEncoding: 'der' }).toString('hex')

function newKey(namedCurve = 'P-256'): { key: KeyObject; pubkey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve })
  return { key: privateKey, pubkey: hex(publicKey.export({ type: 'spki', format: 'pem' }) as string) }
}

async function getTcert(url: string, namedCurve = 'P-256', headers: Record<string, string> = {}): Promise<Client> {
  const { key, pubkey } = newKey(namedCurve)
  const reply = (await post(url, envelope('cert_getTCert', [{ pubkey }]), { headers })).body as Reply
  assert.is(reply.code, 0, `cert_getTCert: ${reply.message}`)
  const tcertHex = (reply.result as { tcert: string }).tcert
  assert.match(tcertHex, /^0x([0-9a-f]{2})+$/)
  return { key, tcertHex, certificate: new x509.X509Certificate(pemOf(tcertHex)) }
}

/**
 * The three headers of the TCert check, built here by hand (not with the SDK helper, so the wire
 * format is pinned): a DER ECDSA signature with SHA-256 over `<timestamp>\n` followed by `content`,
 * the body (or, for a WebSocket upgrade, the path).
 */
function checkHeaders(
  client: { key: KeyObject; tcertHex: string },
  content: string | Uint8Array,
  timestampMs = Date.now(),
): Record<string, string> {
  const timestamp = String(timestampMs)
  const signed = Buffer.concat([Buffer.from(`${timestamp}\n`, 'utf8'), Buffer.from(content)])
  return { tcert: client.tcertHex, timestamp, signature: signHex(client.key, signed) }
}

/** POSTs `body` with the check headers signed over its exact bytes, now. */
async function signedPost(url: string, client: { key: KeyObject; tcertHex: string }, body: unknown): Promise<Reply> {
  const text = stringifyJson(body)
  return (await post(url, text, { headers: checkHeaders(client, text) })).body as Reply
}

const nodeHash = envelope('node_getNodeHash', [])

/** The node's data directory for its namespace, where the CA files live. */
const nodeDir = (node: KeelNode): string => join(node.config.node.dataDir, node.config.node.namespace)

async function nodeCa(node: KeelNode): Promise<{ certificate: x509.X509Certificate; key: CryptoKey }> {
  const dir = nodeDir(node)
  const certificate = new x509.X509Certificate(readFileSync(join(dir, 'tcert-ca.crt'), 'utf8'))
  const pkcs8 = createPrivateKey(readFileSync(join(dir, 'tcert-ca.key'), 'utf8')).export({ type: 'pkcs8', format: 'der' })
  const key = await webcrypto.subtle.importKey('pkcs8', new Uint8Array(pkcs8), P256, false, ['sign'])
  return { certificate, key }
}

/** A certificate for a fresh key, made here with the library and signed by `issuer`. */
async function certificateFrom(
  issuer: { certificate: x509.X509Certificate; key: CryptoKey },
  notBefore: Date,
  notAfter: Date,
): Promise<Client> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: '0a',
    subject: 'O=Hyperchain, CN=hyperchain.cn, G=Develop, C=ZH',
    issuer: issuer.certificate.subjectName,
    notBefore,
    notAfter,
    publicKey: new Uint8Array(publicKey.export({ type: 'spki', format: 'der' })),
    signingKey: issuer.key,
    signingAlgorithm: ECDSA_SHA384,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  })
  return { key: privateKey, tcertHex: `0x${hex(certificate.toString('pem'))}`, certificate }
}

/** A self-signed CA made here: another authority than the node's. */
async function foreignCa(name: string): Promise<{ certificate: x509.X509Certificate; key: CryptoKey }> {
  const keys = (await webcrypto.subtle.generateKey(P256, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name,
    notBefore: new Date(Date.now() - 3600_000),
    notAfter: new Date(Date.now() + 365 * 86400_000),
    keys,
    signingAlgorithm: ECDSA_SHA384,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  })
  return { certificate, key: keys.privateKey }
}

function assertRefused(reply: Reply, detail: RegExp, label: string): void {
  assert.is(reply.code, -32098, `${label}: code (message: ${reply.message})`)
  assert.ok(reply.message.startsWith('Unauthorized, Please check your cert: '), `${label}: message ${reply.message}`)
  assert.match(reply.message, detail, label)
  assert.not.ok('result' in reply, `${label}: no result`)
}

let open: KeelNode
let checked: KeelNode

test.before(async () => {
  // issue 30: the checked node serves a second namespace, whose TCerts are its own
  ;[open, checked] = await Promise.all([
    startTestNode(),
    startTestNode({ tcert: { check: true }, node: { namespaces: ['global', 'ns2'] } }),
  ])
})

test.after(async () => {
  await Promise.all([open?.stop(), checked?.stop()])
})

test('issue 30: a TCert one namespace issued is refused in another, and in a batch naming both', async () => {
  const inGlobal = await getTcert(checked.url)
  const { key, pubkey } = newKey()
  const issued = (await post(checked.url, envelope('cert_getTCert', [{ pubkey }], { namespace: 'ns2' }))).body as Reply
  assert.is(issued.code, 0, issued.message)
  const inNs2 = { key, tcertHex: (issued.result as { tcert: string }).tcert }
  const hashIn = (namespace: string) => envelope('node_getNodeHash', [], { namespace })
  assert.is((await signedPost(checked.url, inGlobal, hashIn('global'))).code, 0)
  assert.is((await signedPost(checked.url, inNs2, hashIn('ns2'))).code, 0)
  for (const [client, namespace] of [
    [inGlobal, 'ns2'],
    [inNs2, 'global'],
  ] as const) {
    const refused = await signedPost(checked.url, client, hashIn(namespace))
    assert.is(refused.code, -32098, `a TCert of another namespace in ${namespace}: ${refused.message}`)
  }
  const batch = await signedPost(checked.url, inGlobal, [hashIn('global'), { ...hashIn('ns2'), id: 2 }])
  assert.is(batch.code, -32098, 'the batch names ns2, which did not issue it')
})

// ---------------------------------------------------------------------------------------------
// issuing

test('cert_getTCert: the certificate carries the request key, the Hyperchain subject, validity and extensions, signed by the node CA', async () => {
  const before = Date.now()
  const { key, certificate } = await getTcert(open.url)
  const after = Date.now()
  const ca = await nodeCa(open)

  const fields = (name: x509.Name): string[] =>
    name.toJSON().map((rdn) => Object.entries(rdn).map(([oid, values]) => `${oid}=${values}`)[0])
  assert.equal(fields(certificate.subjectName), ['O=Hyperchain', 'CN=hyperchain.cn', 'G=Develop', 'C=ZH'])
  assert.ok(certificate.subjectName.getField('2.5.4.42').includes('Develop'), 'GN is the givenName attribute')
  assert.is(certificate.issuer, ca.certificate.subject, 'issuer is the node CA')
  assert.match(ca.certificate.subject, /^O=Hyperchain, CN=hyperchain\.cn, G=Keel node CA node1, C=ZH$/)

  // X.509 keeps whole seconds: now − 1 h … now + 100 years
  const hour = 3600_000
  assert.ok(certificate.notBefore.getTime() >= Math.floor((before - hour) / 1000) * 1000, 'notBefore ≥ now − 1 h')
  assert.ok(certificate.notBefore.getTime() <= after - hour, 'notBefore ≤ now − 1 h')
  const hundredYears = new Date(certificate.notBefore.getTime() + hour)
  hundredYears.setUTCFullYear(hundredYears.getUTCFullYear() + 100)
  assert.is(certificate.notAfter.toISOString(), hundredYears.toISOString(), 'notAfter = issuing time + 100 years')

  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' })
  assert.ok(Buffer.from(certificate.publicKey.rawData).equals(spki), 'the requested public key')

  const keyUsage = certificate.getExtension(x509.KeyUsagesExtension)
  assert.ok(keyUsage, 'key usage present')
  assert.is(keyUsage.usages, x509.KeyUsageFlags.keyCertSign)
  assert.is(keyUsage.critical, true)
  assert.equal(
    [...(certificate.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [])],
    ['1.3.6.1.5.5.7.3.2', '1.3.6.1.5.5.7.3.1', '1.2.3', '2.59.1'],
  )
  const constraints = certificate.getExtension(x509.BasicConstraintsExtension)
  assert.is(constraints?.ca, false)
  assert.is(constraints?.critical, true)
  assert.is(certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId, '01020304')
  const caKeyId = ca.certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId
  assert.ok(caKeyId)
  assert.is(certificate.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId, caKeyId)
  const extra = certificate.getExtension('1.2.3.4')
  assert.ok(extra, 'extension 1.2.3.4 present')
  assert.is(Buffer.from(extra.value).toString('utf8'), 'extra extension')

  assert.equal(certificate.signatureAlgorithm, { name: 'ECDSA', hash: { name: 'SHA-384' } }, 'ecdsa-with-SHA384')
  assert.is(await certificate.verify({ publicKey: ca.certificate, signatureOnly: true }), true, 'verifies against the node CA')
  const stranger = await foreignCa('CN=someone else')
  assert.is(await certificate.verify({ publicKey: stranger.certificate, signatureOnly: true }), false, 'and not against another CA')
  assert.ok(/^[0-9a-f]+$/.test(certificate.serialNumber) && certificate.serialNumber !== '01', 'random serial')
})

test('cert_getTCert: P-384 and P-521 keys, a PEM label other than PUBLIC KEY; every TCert is new', async () => {
  const p384 = await getTcert(open.url, 'secp384r1')
  assert.is((p384.certificate.publicKey.algorithm as EcKeyAlgorithm).namedCurve, 'P-384')
  const p521 = await getTcert(open.url, 'secp521r1')
  assert.is((p521.certificate.publicKey.algorithm as EcKeyAlgorithm).namedCurve, 'P-521')

  const { pubkey } = newKey()
  const relabelled = hex(pemOf(pubkey).replaceAll('PUBLIC KEY', 'EC PUBLIC KEY'))
  const first = (await post(open.url, envelope('cert_getTCert', [{ pubkey: relabelled }]))).body as Reply
  assert.is(first.code, 0, first.message)
  const second = (await post(open.url, envelope('cert_getTCert', [{ pubkey: relabelled }]))).body as Reply
  assert.is(second.code, 0)
  assert.is.not((first.result as { tcert: string }).tcert, (second.result as { tcert: string }).tcert, 'serials differ')
})

test('cert_getTCert: hex that is no usable key → -32099 saying what is wrong; a value that is not hex bytes → -32602', async () => {
  const ask = async (pubkey: string): Promise<Reply> => (await post(open.url, envelope('cert_getTCert', [{ pubkey }]))).body as Reply
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string
  const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }) as string
  const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey.export({ type: 'spki', format: 'pem' }) as string
  // the 65-byte uncompressed point of a P-256 key, in a PEM block: the manual's sample key
  const point = createPublicKey(newKey().key).export({ format: 'jwk' })
  const raw = Buffer.concat([Buffer.from([4]), Buffer.from(point.x as string, 'base64url'), Buffer.from(point.y as string, 'base64url')])
  const barePoint = hex(`-----BEGIN PUBLIC KEY-----\n${raw.toString('base64')}\n-----END PUBLIC KEY-----\n`)
  const unusable: [string, string, RegExp][] = [
    [
      'bare EC point',
      barePoint,
      /\(the PEM block "PUBLIC KEY" holds no SubjectPublicKeyInfo, e\.g\. a bare EC point; export the public key as SPKI/,
    ],
    ['garbage hex', 'deadbeef'.repeat(16), /\(the hex does not decode to a PEM block; send the hex of the whole PEM text/],
    ['not PEM', hex('hello'), /does not decode to a PEM block/],
    ['bad base64', hex('-----BEGIN PUBLIC KEY-----\n@@@@\n-----END PUBLIC KEY-----\n'), /is not base64/],
    ['RSA', hex(rsa), /unsupported key type rsa; use an ECDSA key on P-256, P-384 or P-521\)$/],
    ['Ed25519', hex(ed), /unsupported key type ed25519/],
    ['secp256k1', hex(k1), /unsupported key type ec on curve secp256k1/],
  ]
  for (const [label, pubkey, detail] of unusable) {
    const reply = await ask(pubkey)
    assert.is(reply.code, -32099, `${label}: ${reply.message}`)
    assert.ok(
      reply.message.startsWith('generated tcert failed: the pubkey is not a PEM SubjectPublicKeyInfo of an ECDSA P-256/P-384/P-521 key ('),
      `${label}: ${reply.message}`,
    )
    assert.match(reply.message, detail, label)
    assert.not.ok('result' in reply, label)
  }
  const notHex: [string, string, RegExp][] = [
    ['0x', `0x${hex(rsa)}`, /must be a PEM public key as hex digits without 0x/],
    ['not hex digits', 'hello world', /must be a PEM public key as hex digits without 0x/],
    ['odd hex', 'abc', /odd number of hex digits \(3\); send whole bytes/],
  ]
  for (const [label, pubkey, message] of notHex) {
    const reply = await ask(pubkey)
    assert.is(reply.code, -32602, `${label}: ${reply.message}`)
    assert.match(reply.message, /^invalid argument 0 \(request\) at \/pubkey: /, label)
    assert.match(reply.message, message, label)
  }
})

test('the node CA: key file 0600, reused after a restart; TCerts issued before the restart stay accepted', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-cert-restart-'))
  const first = await startTestNode({ node: { dataDir }, tcert: { check: true } })
  let caBefore: string
  let client: Client
  try {
    const dir = nodeDir(first)
    assert.is(statSync(join(dir, 'tcert-ca.key')).mode & 0o777, 0o600, 'key file mode')
    caBefore = readFileSync(join(dir, 'tcert-ca.crt'), 'utf8')
    client = await getTcert(first.url)
  } finally {
    await first.stop()
  }
  const second = await startTestNode({ node: { dataDir }, tcert: { check: true } })
  try {
    const caAfter = readFileSync(join(nodeDir(second), 'tcert-ca.crt'), 'utf8')
    assert.is(caAfter, caBefore, 'same CA certificate after the restart')
    const reply = await signedPost(second.url, client, nodeHash)
    assert.is(reply.code, 0, `a TCert from before the restart: ${reply.message}`)
    const fresh = await getTcert(second.url)
    assert.is(fresh.certificate.issuer, client.certificate.issuer)
    const ca = new x509.X509Certificate(caAfter)
    assert.is(await fresh.certificate.verify({ publicKey: ca, signatureOnly: true }), true, 'new TCerts are signed by the same CA')
  } finally {
    await second.stop()
  }
})

// ---------------------------------------------------------------------------------------------
// the check

test('check on: cert_getTCert is exempt without enrollment CAs; tcert + timestamp + signature over `<timestamp>\\n<body>` passes', async () => {
  const client = await getTcert(checked.url)
  const reply = await signedPost(checked.url, client, nodeHash)
  assert.is(reply.code, 0, reply.message)
  assert.match(reply.result as string, /^[0-9a-f]{64}$/, 'the node hash')
  // hex compared case-insensitively, 0x optional
  const upper = { key: client.key, tcertHex: client.tcertHex.slice(2).toUpperCase() }
  assert.is((await signedPost(checked.url, upper, nodeHash)).code, 0, 'upper-case hex without 0x')
  const text = stringifyJson(nodeHash)
  const prefixed = checkHeaders(client, text)
  prefixed.signature = `0x${prefixed.signature}`
  assert.is(((await post(checked.url, text, { headers: prefixed })).body as Reply).code, 0, 'signature with 0x')
  // the same headers again within 5 minutes, same body: accepted (the node keeps no replay memory)
  assert.is(((await post(checked.url, text, { headers: prefixed })).body as Reply).code, 0, 'same request again')
})

test('check on: the signature binds the body — the same headers with another body → -32098', async () => {
  const client = await getTcert(checked.url)
  const text = stringifyJson(nodeHash)
  const headers = checkHeaders(client, text)
  assert.is(((await post(checked.url, text, { headers })).body as Reply).code, 0, 'the captured request itself')
  const otherBody = stringifyJson(envelope('tx_getTransactionsVersion', []))
  assertRefused(
    (await post(checked.url, otherBody, { headers })).body as Reply,
    /header `signature` does not verify over `<timestamp>\\n` followed by the request body/,
    'captured headers, another body',
  )
  // one byte more (a trailing newline) is another body too
  assertRefused((await post(checked.url, `${text}\n`, { headers })).body as Reply, /does not verify/, 'body plus a newline')
  // a signature over the body alone (the Java SDK's way, no timestamp) does not pass
  const bodyOnly = { ...headers, signature: signHex(client.key, Buffer.from(text)) }
  assertRefused((await post(checked.url, text, { headers: bodyOnly })).body as Reply, /does not verify/, 'signed without the timestamp')
})

test('check on: the signature binds a time — 6 minutes old, 6 minutes ahead, missing, malformed or swapped timestamp → -32098', async () => {
  const client = await getTcert(checked.url)
  const text = stringifyJson(nodeHash)
  const minute = 60_000
  assertRefused(
    (await post(checked.url, text, { headers: checkHeaders(client, text, Date.now() - 6 * minute) })).body as Reply,
    /header `timestamp` \(.*\) is 3[56]\d s behind the node's clock \(.*\); a signature is accepted for 5 minutes either side of its timestamp, so sign the request again with the current time/,
    '6 minutes old, signed correctly',
  )
  assertRefused(
    (await post(checked.url, text, { headers: checkHeaders(client, text, Date.now() + 6 * minute) })).body as Reply,
    /header `timestamp` \(.*\) is 3[56]\d s ahead of the node's clock/,
    '6 minutes ahead, signed correctly',
  )
  // 4 minutes either way is inside the window
  for (const offset of [-4 * minute, 4 * minute]) {
    const reply = (await post(checked.url, text, { headers: checkHeaders(client, text, Date.now() + offset) })).body as Reply
    assert.is(reply.code, 0, `${offset / minute} minutes: ${reply.message}`)
  }

  const { timestamp, ...untimed } = checkHeaders(client, text)
  assertRefused(
    (await post(checked.url, text, { headers: untimed })).body as Reply,
    /missing HTTP header `timestamp`; send the time of signing as decimal milliseconds since the Unix epoch/,
    'no timestamp',
  )
  for (const bad of [new Date().toISOString(), `${Date.now()}.5`, `0x${Date.now().toString(16)}`, String(BigInt(Date.now()) * 1_000_000n)])
    assertRefused(
      (await post(checked.url, text, { headers: { ...untimed, timestamp: bad } })).body as Reply,
      /header `timestamp` is not decimal milliseconds since the Unix epoch \(got "/,
      `timestamp ${bad}`,
    )
  // a fresh timestamp on captured headers: the signature covers the old one
  assertRefused(
    (await post(checked.url, text, { headers: { ...untimed, timestamp: String(Number(timestamp) + 1) } })).body as Reply,
    /header `signature` does not verify/,
    'timestamp swapped',
  )
})

test('check on: a `msg` header is refused, even beside a valid signature; the reply says what to sign', async () => {
  const client = await getTcert(checked.url)
  const text = stringifyJson(nodeHash)
  const message = Buffer.from('keel tcert test message')
  const valid = checkHeaders(client, text)
  assertRefused(
    (await post(checked.url, text, { headers: { ...valid, msg: message.toString('hex') } })).body as Reply,
    /header `msg` is not accepted: a signature over it can be replayed with any body; drop it and sign `<timestamp>\\n` followed by the request body/,
    'msg beside a valid signature',
  )
  // Hyperchain 1.4's way: a signature over the hex-decoded msg
  const hyperchain = { tcert: client.tcertHex, msg: message.toString('hex'), signature: signHex(client.key, message) }
  assertRefused(
    (await post(checked.url, text, { headers: hyperchain })).body as Reply,
    /header `msg` is not accepted/,
    'Hyperchain 1.4 headers',
  )
  assertRefused(
    (await post(checked.url, text, { headers: { ...valid, msg: '' } })).body as Reply,
    /header `msg` is not accepted/,
    'an empty msg header',
  )
})

test('check on: no headers, no signature, a bad signature → -32098, HTTP 200', async () => {
  const client = await getTcert(checked.url)
  const none = await post(checked.url, nodeHash)
  assert.is(none.status, 200)
  assertRefused(none.body as Reply, /missing HTTP header `tcert`/, 'no headers')
  assert.is((none.body as Reply).id, null, 'the refusal answers no request id')

  const text = stringifyJson(nodeHash)
  const { signature: _, ...unsigned } = checkHeaders(client, text)
  assertRefused(
    (await post(checked.url, text, { headers: unsigned })).body as Reply,
    /missing HTTP header `signature`; sign `<timestamp>\\n` followed by the request body \(DER ECDSA with SHA-256, by the key of the certificate in `tcert`\)/,
    'no signature',
  )
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
  const wrongKey = { ...checkHeaders({ key: other, tcertHex: client.tcertHex }, text) }
  assertRefused(
    (await post(checked.url, text, { headers: wrongKey })).body as Reply,
    /header `signature` does not verify/,
    'signed by another key',
  )
  const garbage = { ...unsigned, signature: 'xyz' }
  assertRefused((await post(checked.url, text, { headers: garbage })).body as Reply, /header `signature` is not hex/, 'signature not hex')
  assertRefused(
    (await post(checked.url, text, { headers: { tcert: 'nothex', signature: '00' } })).body as Reply,
    /`tcert` is not hex/,
    'tcert not hex',
  )
  assertRefused(
    (await post(checked.url, text, { headers: { tcert: hex('hello'), signature: '00' } })).body as Reply,
    /does not decode to a PEM certificate/,
    'tcert not a certificate',
  )
})

test('check on: a TCert from another CA, an expired one, one the node never issued, the CA itself → -32098', async () => {
  const now = Date.now()
  const stranger = await foreignCa((await nodeCa(checked)).certificate.subject)
  const foreign = await certificateFrom(stranger, new Date(now - 3600_000), new Date(now + 86400_000))
  assertRefused(await signedPost(checked.url, foreign, nodeHash), /not signed by this node's CA/, 'another CA, same names')

  const ca = await nodeCa(checked)
  const expired = await certificateFrom(ca, new Date(now - 2 * 86400_000), new Date(now - 86400_000))
  assertRefused(await signedPost(checked.url, expired, nodeHash), /is valid from .* to .*, not now/, 'expired')
  const notYet = await certificateFrom(ca, new Date(now + 86400_000), new Date(now + 2 * 86400_000))
  assertRefused(await signedPost(checked.url, notYet, nodeHash), /not now/, 'not yet valid')

  // signed by the node CA's key and valid, but never handed out by cert_getTCert
  const unrecorded = await certificateFrom(ca, new Date(now - 3600_000), new Date(now + 86400_000))
  assertRefused(await signedPost(checked.url, unrecorded, nodeHash), /not one this node issued/, 'not recorded')

  const caPem = readFileSync(join(nodeDir(checked), 'tcert-ca.crt'), 'utf8')
  const caKey = createPrivateKey(readFileSync(join(nodeDir(checked), 'tcert-ca.key'), 'utf8'))
  assertRefused(await signedPost(checked.url, { key: caKey, tcertHex: hex(caPem) }, nodeHash), /is a CA certificate/, 'the CA itself')
})

test('check on: a batch is checked once; a refusal is one error object, not an array', async () => {
  const batch = [nodeHash, { ...envelope('tx_getTransactionsVersion', []), id: 2 }]
  const refused = (await post(checked.url, batch)).body as Reply
  assert.not.ok(Array.isArray(refused), 'one object for the whole batch')
  assertRefused(refused, /missing HTTP header `tcert`/, 'batch without headers')

  const client = await getTcert(checked.url)
  const answered = (await signedPost(checked.url, client, batch)) as unknown as Reply[]
  assert.ok(Array.isArray(answered))
  assert.equal(
    answered.map((reply) => reply.code),
    [0, 0],
  )

  // only cert_getTCert calls: exempt as a whole; mixed with anything else: checked
  const asks = [1, 2].map((id) => ({ ...envelope('cert_getTCert', [{ pubkey: newKey().pubkey }]), id }))
  const issued = (await post(checked.url, asks)).body as Reply[]
  assert.equal(
    issued.map((reply) => reply.code),
    [0, 0],
  )
  assertRefused(
    (await post(checked.url, [...asks, nodeHash])).body as Reply,
    /missing HTTP header `tcert`/,
    'getTCert mixed with another method',
  )
})

test('check on: a transfer with TCert headers is executed; refused without them, it never reaches the pool', async () => {
  const dev = wallet((checked.devAccount as { privateKey: string }).privateKey)
  const client = await getTcert(checked.url)
  const unsigned = dev.transfer(wallet().address, 1)
  assertRefused((await post(checked.url, envelope('tx_sendTransaction', [unsigned]))).body as Reply, /missing HTTP header/, 'no headers')
  // the same signed transfer again, now with headers: accepted, not -32007, so the refused one was never pooled
  const sent = await signedPost(checked.url, client, envelope('tx_sendTransaction', [unsigned]))
  assert.is(sent.code, 0, sent.message)
  for (let tries = 0; ; tries++) {
    const receipt = await signedPost(checked.url, client, envelope('tx_getTransactionReceipt', [sent.result]))
    if (receipt.code === 0) break
    assert.is(receipt.code, -32001, receipt.message)
    assert.ok(tries < 100, 'a receipt within 5 s')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
})

/** Opens a WebSocket with `headers` on the upgrade: its first reply to node_getNodeHash, or the refusal. */
async function upgrade(url: string, headers: Record<string, string>): Promise<{ reply: Reply } | { status: number; refusal: Reply }> {
  const socket = new WebSocket(url.replace(/^http/, 'ws'), { headers })
  try {
    return await new Promise((resolve, reject) => {
      socket.on('open', () => socket.send(stringifyJson(nodeHash)))
      socket.on('message', (data: Buffer) => resolve({ reply: JSON.parse(data.toString()) as Reply }))
      socket.on('unexpected-response', (_req, res) => {
        let body = ''
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString()
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, refusal: JSON.parse(body) as Reply }))
      })
      socket.on('error', reject)
    })
  } finally {
    socket.terminate()
  }
}

function assertUpgradeRefused(outcome: Awaited<ReturnType<typeof upgrade>>, detail: RegExp, label: string): void {
  assert.ok('refusal' in outcome, `${label}: the upgrade was accepted`)
  assert.is(outcome.status, 401, label)
  assertRefused(outcome.refusal, detail, label)
}

test('check on: a WebSocket upgrade needs the headers, signed over `<timestamp>\\n` and the path', async () => {
  assertUpgradeRefused(await upgrade(checked.url, {}), /missing HTTP header `tcert`/, 'upgrade without headers')

  const client = await getTcert(checked.url)
  const accepted = await upgrade(checked.url, checkHeaders(client, '/'))
  assert.ok('reply' in accepted, `upgrade signed over its path: ${JSON.stringify(accepted)}`)
  assert.is(accepted.reply.code, 0, accepted.reply.message)

  assertUpgradeRefused(
    await upgrade(checked.url, checkHeaders(client, '')),
    /header `signature` does not verify over `<timestamp>\\n` followed by the upgrade request's path \("\/"\)/,
    'signed over the empty body',
  )
  assertUpgradeRefused(
    await upgrade(checked.url, checkHeaders(client, '/', Date.now() - 6 * 60_000)),
    /s behind the node's clock/,
    '6 minutes old',
  )
  const message = Buffer.from(`ws ${Date.now()}`)
  assertUpgradeRefused(
    await upgrade(checked.url, { ...checkHeaders(client, '/'), msg: message.toString('hex') }),
    /header `msg` is not accepted: .* followed by the upgrade request's path/,
    'msg header',
  )
})

// ---------------------------------------------------------------------------------------------
// enrollment CAs

test('enrollment CAs configured: cert_getTCert needs a certificate they signed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-eca-'))
  const eca = await foreignCa('O=Hyperchain, CN=eca, C=ZH')
  const ecaFile = join(dir, 'eca.cert')
  writeFileSync(ecaFile, eca.certificate.toString('pem'))
  const node = await startTestNode({ tcert: { check: true, enrollmentCaFiles: [ecaFile] } })
  try {
    const { pubkey } = newKey()
    const ask = envelope('cert_getTCert', [{ pubkey }])
    assertRefused((await post(node.url, ask)).body as Reply, /cert_getTCert needs the hex of your enrollment certificate/, 'no headers')

    const now = Date.now()
    const sdkCert = await certificateFrom(eca, new Date(now - 3600_000), new Date(now + 86400_000))
    const reply = await signedPost(node.url, sdkCert, ask)
    assert.is(reply.code, 0, `with an enrollment certificate: ${reply.message}`)
    const tcert = { key: newKey().key, tcertHex: (reply.result as { tcert: string }).tcert }
    assert.is(new x509.X509Certificate(pemOf(tcert.tcertHex)).subject, 'O=Hyperchain, CN=hyperchain.cn, G=Develop, C=ZH')

    const another = envelope('cert_getTCert', [{ pubkey: newKey().pubkey }])
    const stale = checkHeaders(sdkCert, stringifyJson(ask))
    assertRefused((await post(node.url, another, { headers: stale })).body as Reply, /does not verify/, 'signature of another body')
    const old = checkHeaders(sdkCert, stringifyJson(another), Date.now() - 6 * 60_000)
    assertRefused((await post(node.url, another, { headers: old })).body as Reply, /behind the node's clock/, '6 minutes old')

    const other = await foreignCa('O=Hyperchain, CN=not the eca, C=ZH')
    const outsider = await certificateFrom(other, new Date(now - 3600_000), new Date(now + 86400_000))
    assertRefused(await signedPost(node.url, outsider, ask), /not signed by any enrollment CA/, 'certificate of another CA')
    assertRefused(await signedPost(node.url, sdkCert, nodeHash), /not signed by this node's CA/, 'an enrollment certificate is no TCert')
  } finally {
    await node.stop()
  }
})

// ---------------------------------------------------------------------------------------------
// Keel's own client (sdk/), check on

test("check on: Keel's client with tcertSigner (sdk/src/tcert.ts) over HTTP and WebSocket; without it, or late, -32098", async () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const plain = createClient({ url: checked.url })
  const { tcert } = await plain.cert_getTCert({ pubkey: hex(publicKey.export({ type: 'spki', format: 'pem' }) as string) })
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
  const signer = tcertSigner({ tcert, privateKey: pem })

  const signed = createClient({ transport: httpTransport(checked.url, { headersFor: signer }) })
  assert.match(await signed.node_getNodeHash(), /^[0-9a-f]{64}$/)
  assert.ok(await signed.tx_getTransactionsVersion(), 'a second request, freshly signed')
  // the PEM text instead of cert_getTCert's hex, and a KeyObject, make the same headers
  const fromPem = tcertSigner({ tcert: pemOf(tcert), privateKey })
  assert.match(await createClient({ transport: httpTransport(checked.url, { headersFor: fromPem }) }).node_getNodeHash(), /^[0-9a-f]{64}$/)

  const refused = async (client: ReturnType<typeof createClient>, detail: RegExp, label: string): Promise<void> => {
    try {
      await client.node_getNodeHash()
    } catch (error) {
      assert.instance(error, RpcError, label)
      assert.is((error as RpcError).code, -32098, label)
      assert.match((error as RpcError).shortMessage, detail, label)
      return
    }
    assert.unreachable(`${label}: accepted`)
  }
  await refused(plain, /missing HTTP header `tcert`/, 'no signer')
  const late = tcertSigner({ tcert, privateKey }, { now: () => Date.now() - 6 * 60_000 })
  await refused(createClient({ transport: httpTransport(checked.url, { headersFor: late }) }), /behind the node's clock/, '6 minutes late')
  // static headers made once for another body: what a replayed header set looks like
  const replay = httpTransport(checked.url, { headers: signer(stringifyJson(envelope('tx_getTransactionsVersion', []))) })
  await refused(createClient({ transport: replay }), /header `signature` does not verify/, 'headers of another body')

  const ws = await wsTransport(checked.url, { headersFor: signer })
  try {
    assert.match(await createClient({ transport: ws }).node_getNodeHash(), /^[0-9a-f]{64}$/, 'over WebSocket')
  } finally {
    await ws.close()
  }
  try {
    await wsTransport(checked.url)
    assert.unreachable('an unsigned upgrade was accepted')
  } catch (error) {
    assert.match((error as Error).message, /^WebSocket upgrade refused: HTTP 401 .*-32098.*missing HTTP header `tcert`/)
  }
})

// ---------------------------------------------------------------------------------------------
// the official SDK, check off

test('check off: the official SDK (@hyperchain/jssdk) makes a transfer on a node that issues TCerts', async () => {
  const { Algo, HttpProvider, ProviderManager, ServiceManager, Transaction } = loadSdk()
  const sender = ServiceManager.getAccountService(ProviderManager.emptyManager()).genAccount(Algo.ECRAW)
  const node = await startTestNode({ genesis: { accounts: [{ address: `0x${sender.getAddress()}`, balance: '1000' }] } })
  try {
    await getTcert(node.url)
    const pm = await ProviderManager.createManager({ httpProviders: [new HttpProvider(1, node.url.replace(/^http:\/\//, ''))] })
    const tx = new Transaction.Builder(sender.getAddress(), pm).transfer('0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd', 7).build()
    tx.sign(sender)
    const sent = await ServiceManager.getTxService(pm).sendTx(tx).send()
    assert.is(sent.code, 0, `sendTx: ${sent.message}`)
    const polled = await sent.poll()
    assert.is(polled.code, 0)
    const receipt = await waitForReceipt(node.url, sent.result as string)
    assert.is(receipt.code, 0, receipt.message)
  } finally {
    await node.stop()
  }
})

test.run()
