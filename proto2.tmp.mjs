import { Packr } from 'msgpackr'
const mk = () => new Packr({ useRecords: true, structures: [['a','b'],['x','y','z']], maxSharedStructures: 2, shouldShareStructure: () => false, useBigIntExtension: true, mapsAsObjects: true })
const p = mk()
const objs = [{a:1,b:2},{x:1,y:{a:3,b:4},z:5n},{q:1,r:2},{q:3,r:4}, {b:1,a:2}]
const bufs = objs.map(o => p.pack(o))
console.log(bufs.map(b=>b.length), p.structures?.length)
const u = mk()
console.log(bufs.map(b=>JSON.stringify(u.unpack(b), (k,v)=>typeof v==='bigint'? v+'n':v)))
// a decoder created fresh decoding out of order
const u2 = mk(); console.log(JSON.stringify(u2.unpack(bufs[3])))
