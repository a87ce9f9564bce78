/**
 * README "TCerts": a TCert for a new P-256 key (cert_getTCert), then every request signed with it,
 * over HTTP and over WebSocket, as a node with `[tcert] check = true` wants (one with the check off
 * takes the headers too):
 *
 *   npx tsx examples/tcert.ts [--url http://127.0.0.1:8081]
 */
import { generateKeyPairSync } from 'node:crypto'
import { createClient, httpTransport, tcertSigner, wsTransport } from 'keel-client'
import { exampleOptions } from './options.ts'

const { url } = exampleOptions({}, 'gets a TCert from the node for a new P-256 key and signs a request with the TCert headers')
const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const pubkey = Buffer.from(publicKey.export({ type: 'spki', format: 'pem' })).toString('hex')
const { tcert } = await createClient({ url }).cert_getTCert({ pubkey })

// tcert: the `tcert` result of cert_getTCert (or the PEM text); privateKey: the PEM (or a KeyObject) of the key it was issued for
const signer = tcertSigner({ tcert, privateKey })
const client = createClient({ transport: httpTransport(url, { headersFor: signer }) })
console.log(`over HTTP with a TCert: transaction format version ${await client.tx_getTransactionsVersion()}`)

const ws = await wsTransport(url, { headersFor: signer })
console.log(`over WebSocket with a TCert: node ${(await createClient({ transport: ws }).node_getNodeHash()).slice(0, 18)}…`)
await ws.close()
