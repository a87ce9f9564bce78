/** sdk/src/tcert.ts without a node: the headers it makes, and what the node's check makes of them. */
import { generateKeyPairSync, verify } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { tcertHeaders, tcertSigner } from '../../../sdk/src/tcert.ts'
import { checkTimestamp, signedBytes } from '../../../src/rpc/tcert-check.ts'

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
// the header carries the PEM bytes; the check parses them, the helper only encodes them
const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
const pemHex = Buffer.from(pem, 'latin1').toString('hex')
const body = '{"jsonrpc":"2.0","namespace":"global","id":1,"method":"node_getNodeHash","params":[]}'

test('tcertHeaders: tcert = hex of the PEM; timestamp = the time in ms; signature over `<timestamp>\\n<body>`', () => {
  const headers = tcertHeaders({ tcert: pem, privateKey }, body, 1_900_000_000_123)
  assert.equal(Object.keys(headers).sort(), ['signature', 'tcert', 'timestamp'])
  assert.is(headers.tcert, pemHex)
  assert.is(headers.timestamp, '1900000000123')
  assert.match(headers.signature, /^([0-9a-f]{2})+$/)
  const signature = Buffer.from(headers.signature, 'hex')
  const expected = Buffer.from(`1900000000123\n${body}`, 'utf8')
  assert.ok(verify('sha256', expected, { key: publicKey, dsaEncoding: 'der' }, signature), 'DER ECDSA with SHA-256')
  assert.ok(expected.equals(signedBytes(headers.timestamp, body)), 'the bytes the node verifies')
  assert.not.ok(verify('sha256', Buffer.from(body), { key: publicKey, dsaEncoding: 'der' }, signature), 'not the body alone')
  assert.equal(checkTimestamp(headers.timestamp, new Date(1_900_000_000_000)), { ms: 1_900_000_000_123 })
})

test("tcertSigner: cert_getTCert's 0x hex or the PEM; PEM or KeyObject keys; bytes or text; a fresh time per request", () => {
  let now = 1_000
  const signer = tcertSigner(
    { tcert: `0x${pemHex.toUpperCase()}`, privateKey: privateKey.export({ type: 'sec1', format: 'pem' }) as string },
    { now: () => now },
  )
  const first = signer(body)
  assert.is(first.tcert, pemHex.toUpperCase(), 'hex passed on without 0x')
  assert.is(first.timestamp, '1000')
  now = 2_500.7
  const second = signer(new TextEncoder().encode('/'))
  assert.is(second.timestamp, '2500', 'whole milliseconds')
  assert.ok(verify('sha256', Buffer.from('2500\n/'), { key: publicKey, dsaEncoding: 'der' }, Buffer.from(second.signature, 'hex')))
  const byDefault = Number(tcertSigner({ tcert: pem, privateKey })(body).timestamp)
  assert.ok(Math.abs(byDefault - Date.now()) < 5_000, 'Date.now by default')
})

test('tcertSigner: a tcert that is neither PEM nor hex, or a key that is no EC private key, throws at once', () => {
  assert.throws(() => tcertSigner({ tcert: 'hello', privateKey }), /expected the PEM text of the TCert or cert_getTCert's "0x…" hex of it/)
  assert.throws(() => tcertSigner({ tcert: '0xabc', privateKey }), /expected the PEM text/)
  assert.throws(() => tcertSigner({ tcert: pem, privateKey: publicKey }), /must be an EC private key, got a public ec key/)
  const ed = generateKeyPairSync('ed25519').privateKey
  assert.throws(() => tcertSigner({ tcert: pem, privateKey: ed }), /must be an EC private key, got a private ed25519 key/)
})

test.run()
