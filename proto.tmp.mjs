import { open } from 'lmdb'
import { Packr, addExtension } from 'msgpackr'
class HexBytes { constructor(b){ this.b=b } }
const HEX = /^0x(?:[0-9a-f]{2})+$/
const packr = new Packr({ useRecords: false, useBigIntExtension: true, mapsAsObjects: true })
addExtension({ Class: HexBytes, type: 0x48, write: (h) => h.b, read: (b) => '0x' + Buffer.from(b).toString('hex') })
const dehex = (v) => typeof v === 'string' ? (v.length >= 6 && HEX.test(v) ? new HexBytes(Buffer.from(v.slice(2),'hex')) : v)
  : Array.isArray(v) ? v.map(dehex) : (v && typeof v === 'object' && !(v instanceof Uint8Array)) ? Object.fromEntries(Object.entries(v).map(([k,x])=>[k,dehex(x)])) : v
const env = open({ path: process.argv[2], readOnly: true, maxDbs: 64 })
for (const n of ['6','7']) {
  const db = env.openDB({ name: n, keyEncoding: 'binary', useBigIntExtension: true })
  const dbRaw = env.openDB({ name: n, keyEncoding: 'binary', encoding: 'binary' })
  let a=0,b=0,c=0
  for (const {key, value} of db.getRange({limit: 2000})) { c++; a += dbRaw.get(key).length; b += packr.pack(dehex(value)).length }
  console.log(n, 'avg old', a/c, 'avg new', b/c)
}
const HEX2 = /^(?:0x)?(?:[0-9a-f]{2}){20,}$/
const dehex2 = (v) => typeof v === 'string' ? (HEX2.test(v) ? new HexBytes(Buffer.from(v.replace(/^0x/,''),'hex')) : v)
  : Array.isArray(v) ? v.map(dehex2) : (v && typeof v === 'object' && !(v instanceof Uint8Array)) ? Object.fromEntries(Object.entries(v).map(([k,x])=>[k,dehex2(x)])) : v
const structures = []
const p2 = new Packr({ useRecords: true, structures, useBigIntExtension: true })
for (const n of ['6','7']) {
  const db = env.openDB({ name: n, keyEncoding: 'binary', useBigIntExtension: true })
  let b=0,c=0, d=0
  for (const {key, value} of db.getRange({limit: 2000})) { c++; b += p2.pack(dehex2(value)).length; d += packr.pack(dehex2(value)).length }
  console.log(n, 'records+hex', b/c, 'hex2 only', d/c)
}
