/**
 * The HVM ABI (`hvm.abi`) of a Java contract written against Hyperchain's 2.x API: the JSON array
 * of "beans" Hyperchain's hvm-abi Maven plugin writes and the official SDKs read
 * (`InvokeParams.HvmAbiBuilder` in @hyperchain/jssdk) to build call payloads. Made here from the
 * compiled classes, without Maven (docs/jvm.md §10):
 *
 * - one `MethodBean` per method of the main class's interfaces that extend
 *   `cn.hyperchain.contract.BaseContractInterface` (the contract's callable functions): `beanName`
 *   the method's name, `inputs` its parameters (each named after its type, as the plugin does),
 *   `output` its result;
 * - one `InvokeBean` per class implementing `cn.hyperchain.contract.BaseInvoke` among
 *   `invokeBeans`: `inputs` its instance fields, `output` the bean's result type, `classBytes` its
 *   class file in hex;
 * - `structs`: the contract's own classes a bean names, with their fields.
 *
 * Each entry is `{name, type, structName, properties}`; `type` is one of Void, Bool, Char, Byte,
 * Short, Int, Long, Float, Double, String, Array, List, Map, Struct; `properties` are an array's or
 * list's element, a map's key and value, or a struct's fields.
 */
import type { JavaContract } from './jvm-payload.ts'

export interface HvmAbiEntry {
  name: string
  type: string
  structName: string
  properties?: HvmAbiEntry[]
}

export interface HvmBeanAbi {
  version: string
  beanName: string
  beanType: 'MethodBean' | 'InvokeBean'
  inputs: HvmAbiEntry[]
  output: HvmAbiEntry
  structs: HvmAbiEntry[]
  classBytes?: string
}

interface Member {
  access: number
  name: string
  descriptor: string
  signature?: string
}

interface ParsedClass {
  name: string
  access: number
  superName?: string
  interfaces: string[]
  signature?: string
  fields: Member[]
  methods: Member[]
}

const ACC_STATIC = 0x0008
const ACC_INTERFACE = 0x0200
const ACC_SYNTHETIC = 0x1000
const BASE_INTERFACE = 'cn/hyperchain/contract/BaseContractInterface'
const BASE_INVOKE = 'cn/hyperchain/contract/BaseInvoke'

/** The parts of a class file the ABI needs: names, super types, members and their generic signatures. */
function parseClass(bytes: Uint8Array): ParsedClass {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let p = 0
  const u1 = (): number => view.getUint8(p++)
  const u2 = (): number => {
    p += 2
    return view.getUint16(p - 2)
  }
  const u4 = (): number => {
    p += 4
    return view.getUint32(p - 4)
  }
  if (u4() !== 0xcafebabe) throw new Error('not a class file')
  p += 4
  const count = u2()
  const utf8: (string | undefined)[] = []
  const classIndex: number[] = []
  for (let i = 1; i < count; i++) {
    const tag = u1()
    if (tag === 1) {
      const length = u2()
      utf8[i] = new TextDecoder().decode(bytes.subarray(p, p + length))
      p += length
    } else if (tag === 7) classIndex[i] = u2()
    else if (tag === 8 || tag === 16 || tag === 19 || tag === 20) p += 2
    else if (tag === 15) p += 3
    else if (tag === 3 || tag === 4 || tag === 9 || tag === 10 || tag === 11 || tag === 12 || tag === 17 || tag === 18) p += 4
    else if (tag === 5 || tag === 6) {
      p += 8
      i++
    } else throw new Error(`constant-pool tag ${tag}`)
  }
  const text = (index: number): string => utf8[index] ?? ''
  const className = (index: number): string | undefined => (index === 0 ? undefined : text(classIndex[index]))
  const attributes = (): string | undefined => {
    let signature: string | undefined
    for (let n = u2(); n > 0; n--) {
      const name = text(u2())
      const length = u4()
      if (name === 'Signature') signature = text(view.getUint16(p))
      p += length
    }
    return signature
  }
  const access = u2()
  const name = className(u2()) as string
  const superName = className(u2())
  const interfaces: string[] = []
  for (let n = u2(); n > 0; n--) interfaces.push(className(u2()) as string)
  const members = (): Member[] => {
    const out: Member[] = []
    for (let n = u2(); n > 0; n--) {
      const memberAccess = u2()
      const memberName = text(u2())
      const descriptor = text(u2())
      out.push({ access: memberAccess, name: memberName, descriptor, signature: attributes() })
    }
    return out
  }
  const fields = members()
  const methods = members()
  const signature = attributes()
  return { name, access, superName, interfaces, signature, fields, methods }
}

/** A Java type from a (generic) signature: its internal name, or a primitive letter, and its type arguments. */
interface JavaType {
  name: string
  array?: JavaType
  args: JavaType[]
}

/** Reads one type of a signature at `at.p` (type variables read as Object). */
function readType(sig: string, at: { p: number }): JavaType {
  const c = sig[at.p++]
  if (c === '[') return { name: '[', array: readType(sig, at), args: [] }
  if (c === 'T') {
    at.p = sig.indexOf(';', at.p) + 1
    return { name: 'java/lang/Object', args: [] }
  }
  if (c !== 'L') return { name: c, args: [] }
  let name = ''
  const args: JavaType[] = []
  while (sig[at.p] !== ';') {
    if (sig[at.p] === '<') {
      at.p++
      while (sig[at.p] !== '>') {
        if (sig[at.p] === '*') {
          at.p++
          args.push({ name: 'java/lang/Object', args: [] })
        } else {
          if (sig[at.p] === '+' || sig[at.p] === '-') at.p++
          args.push(readType(sig, at))
        }
      }
      at.p++
    } else name += sig[at.p++]
  }
  at.p++
  return { name: name.replace(/\./g, '$'), args }
}

function methodTypes(member: Member): { params: JavaType[]; result: JavaType } {
  const sig = member.signature ?? member.descriptor
  const at = { p: sig.startsWith('<') ? skipTypeParameters(sig) : 0 }
  at.p++ // (
  const params: JavaType[] = []
  while (sig[at.p] !== ')') params.push(readType(sig, at))
  at.p++
  return { params, result: readType(sig, at) }
}

/** The offset after a generic declaration's `<T:…;U:…;>`. */
function skipTypeParameters(sig: string): number {
  let depth = 0
  for (let i = 0; i < sig.length; i++) {
    if (sig[i] === '<') depth++
    else if (sig[i] === '>' && --depth === 0) return i + 1
  }
  return 0
}

const PRIMITIVES: Record<string, [string, string]> = {
  V: ['Void', 'void'],
  Z: ['Bool', 'boolean'],
  C: ['Char', 'char'],
  B: ['Byte', 'byte'],
  S: ['Short', 'short'],
  I: ['Int', 'int'],
  J: ['Long', 'long'],
  F: ['Float', 'float'],
  D: ['Double', 'double'],
}

const BOXES: Record<string, string> = {
  'java/lang/Void': 'Void',
  'java/lang/Boolean': 'Bool',
  'java/lang/Character': 'Char',
  'java/lang/Byte': 'Byte',
  'java/lang/Short': 'Short',
  'java/lang/Integer': 'Int',
  'java/lang/Long': 'Long',
  'java/lang/Float': 'Float',
  'java/lang/Double': 'Double',
  'java/lang/String': 'String',
}

const LISTS = new Set([
  'java/util/List',
  'java/util/ArrayList',
  'java/util/LinkedList',
  'java/util/Collection',
  'java/util/Set',
  'java/util/HashSet',
])
const MAPS = new Set(['java/util/Map', 'java/util/HashMap', 'java/util/LinkedHashMap', 'java/util/TreeMap'])

/** The Java spelling of a type (`java.util.List<java.lang.String>`, `int[]`). */
function javaName(t: JavaType): string {
  if (t.array !== undefined) return `${javaName(t.array)}[]`
  const primitive = PRIMITIVES[t.name]
  if (primitive !== undefined) return primitive[1]
  const base = t.name.replace(/\//g, '.').replace(/\$/g, '.')
  return t.args.length === 0 ? base : `${base}<${t.args.map(javaName).join(',')}>`
}

/** ABI entries of a contract's types; `structs` collects the contract's own classes met on the way. */
class Describer {
  readonly structs = new Map<string, HvmAbiEntry>()

  constructor(private readonly classes: Map<string, ParsedClass>) {}

  entry(t: JavaType, name?: string): HvmAbiEntry {
    const structName = javaName(t)
    const named = (type: string, properties?: HvmAbiEntry[]): HvmAbiEntry => ({
      name: name ?? structName,
      type,
      structName,
      ...(properties === undefined ? {} : { properties }),
    })
    if (t.array !== undefined) return named('Array', [this.entry(t.array)])
    const primitive = PRIMITIVES[t.name]
    if (primitive !== undefined) return named(primitive[0])
    const box = BOXES[t.name]
    if (box !== undefined) return named(box)
    const object = { name: 'java/lang/Object', args: [] }
    if (LISTS.has(t.name)) return named('List', [this.entry(t.args[0] ?? object)])
    if (MAPS.has(t.name)) return named('Map', [this.entry(t.args[0] ?? object), this.entry(t.args[1] ?? object)])
    const own = this.classes.get(t.name)
    if (own !== undefined && !this.structs.has(own.name)) {
      this.structs.set(own.name, { name: structName, type: 'Struct', structName, properties: [] })
      this.structs.set(own.name, { name: structName, type: 'Struct', structName, properties: this.fields(own) })
    }
    return named('Struct')
  }

  fields(c: ParsedClass): HvmAbiEntry[] {
    const inherited =
      c.superName !== undefined && this.classes.has(c.superName) ? this.fields(this.classes.get(c.superName) as ParsedClass) : []
    const own = c.fields
      .filter((f) => (f.access & (ACC_STATIC | ACC_SYNTHETIC)) === 0)
      .map((f) => this.entry(readType(f.signature ?? f.descriptor, { p: 0 }), f.name))
    return [...inherited, ...own]
  }
}

/** The `hvm.abi` beans of `contract` (its main class's interface methods) and of the InvokeBean classes named in `invokeBeans` (dotted or internal names; their class files in `contract.classes` or `beanClasses`). */
export function hvmAbi(
  contract: JavaContract,
  options: { invokeBeans?: string[]; beanClasses?: Map<string, Uint8Array> } = {},
): HvmBeanAbi[] {
  const all = new Map([...contract.classes, ...(options.beanClasses ?? [])])
  const classes = new Map<string, ParsedClass>()
  for (const [name, bytes] of all) classes.set(name, parseClass(bytes))
  const main = classes.get(contract.main.replaceAll('.', '/'))
  if (main === undefined) throw new Error(`the main class ${contract.main} is not among the classes`)
  const extendsBase = (name: string, seen = new Set<string>()): boolean => {
    if (name === BASE_INTERFACE) return true
    const c = classes.get(name)
    if (c === undefined || seen.has(name)) return false
    seen.add(name)
    return c.interfaces.some((i) => extendsBase(i, seen))
  }
  const interfaces: ParsedClass[] = []
  const collect = (c: ParsedClass | undefined): void => {
    if (c === undefined) return
    for (const name of c.interfaces) {
      const i = classes.get(name)
      if (i !== undefined && (i.access & ACC_INTERFACE) !== 0 && extendsBase(name) && !interfaces.includes(i)) interfaces.push(i)
      collect(i)
    }
    if (c.superName !== undefined) collect(classes.get(c.superName))
  }
  collect(main)

  const beans: HvmBeanAbi[] = []
  const seen = new Set<string>()
  for (const i of interfaces) {
    for (const m of i.methods) {
      if ((m.access & (ACC_STATIC | ACC_SYNTHETIC)) !== 0 || m.name === '<clinit>') continue
      const key = `${m.name}${m.descriptor}`
      if (seen.has(key)) continue
      seen.add(key)
      const describer = new Describer(classes)
      const { params, result } = methodTypes(m)
      beans.push({
        version: 'v1',
        beanName: m.name,
        beanType: 'MethodBean',
        inputs: params.map((t) => describer.entry(t)),
        output: describer.entry(result),
        structs: [...describer.structs.values()],
      })
    }
  }
  for (const beanName of options.invokeBeans ?? []) {
    const internal = beanName.replaceAll('.', '/')
    const bean = classes.get(internal)
    const bytes = all.get(internal)
    if (bean === undefined || bytes === undefined) throw new Error(`the InvokeBean ${beanName} is not among the classes`)
    const sig = bean.signature ?? ''
    const at = { p: sig.startsWith('<') ? skipTypeParameters(sig) : 0 }
    let output: JavaType = { name: 'java/lang/Object', args: [] }
    while (at.p < sig.length) {
      const t = readType(sig, at)
      if (t.name === BASE_INVOKE && t.args[0] !== undefined) output = t.args[0]
    }
    if (!bean.interfaces.includes(BASE_INVOKE)) throw new Error(`${beanName} does not implement cn.hyperchain.contract.BaseInvoke`)
    const describer = new Describer(classes)
    beans.push({
      version: 'v1',
      beanName: internal.replaceAll('/', '.'),
      beanType: 'InvokeBean',
      inputs: describer.fields(bean),
      output: describer.entry(output),
      structs: [...describer.structs.values()],
      classBytes: Buffer.from(bytes).toString('hex'),
    })
  }
  return beans
}
