/**
 * Positional-params checking, compiled once per method from the schemas of openrpc.json.
 *
 * Messages follow one pattern so a person can act on them:
 *   invalid argument <i> (<name>)[ at /<field>]: <rule broken>[; got <value>]
 */
import { Compile } from 'typebox/schema'
import { InvalidParams } from '../errors.ts'
import type { MethodSpec } from './method-spec.ts'

type Schema = Record<string, unknown>
type Validator = ReturnType<typeof Compile>

interface CompiledParam {
  name: string
  required: boolean
  validator: Validator
  schema: Schema
  /** lower-cased key (or alias spelling) → the key the schema declares */
  keyMap: Map<string, string> | undefined
}

export interface ParamChecker {
  /** Returns the params with object keys normalised, or throws InvalidParams. */
  check(params: readonly unknown[]): unknown[]
}

export function compileParamChecker(method: string, spec: MethodSpec, schemas: Record<string, unknown>): ParamChecker {
  const context = schemas as Record<string, never>
  const compiled: CompiledParam[] = spec.params.map((param) => {
    const schema = param.schema as Schema
    return {
      name: param.name,
      required: param.required,
      validator: Compile(context, schema as never),
      schema,
      keyMap: objectKeyMap(resolve(schema, schemas)),
    }
  })
  const max = compiled.length
  const min = compiled.filter((param) => param.required).length
  const arity = min === max ? `${max}` : `${min} to ${max}`

  return {
    check(params) {
      if (params.length > max) {
        throw new InvalidParams(`too many params: ${method} takes ${min === max ? max : `at most ${max}`}, got ${params.length}`)
      }
      const out = params.slice()
      for (let i = 0; i < max; i++) {
        const param = compiled[i]
        let value = out[i]
        if (value === undefined || value === null) {
          if (param.required)
            throw new InvalidParams(`missing argument ${i} (${param.name}): ${method} expects ${arity} params, got ${params.length}`)
          out.length = Math.min(out.length, i)
          break
        }
        if (param.keyMap !== undefined && isPlainObject(value)) value = normaliseKeys(value, param.keyMap)
        out[i] = value
        const view = toValidationView(value)
        if (!param.validator.Check(view)) {
          const [, errors] = param.validator.Errors(view)
          throw new InvalidParams(`invalid argument ${i} (${param.name})${describe(errors as TypeboxError[], param.schema, schemas, view)}`)
        }
      }
      return out
    },
  }
}

interface TypeboxError {
  keyword: string
  schemaPath: string
  instancePath: string
  params: Record<string, unknown>
  message: string
}

function describe(errors: TypeboxError[], root: Schema, schemas: Record<string, unknown>, value: unknown): string {
  const first = errors[0]
  if (first === undefined) return ': is not valid'
  // A union failing reports each branch first and the union last; the union's description reads best.
  const union = errors.find((error) => error.keyword === 'anyOf' && first.schemaPath.startsWith(error.schemaPath))
  const error = union ?? first
  const at = error.instancePath === '' ? '' : ` at ${error.instancePath}`
  const actual = valueAt(value, error.instancePath)
  if (error.keyword === 'required') {
    const missing = (error.params.requiredProperties as string[] | undefined)?.[0] ?? String(error.params.missingProperty)
    return `${at}: must have required property '${missing}'`
  }
  if (error.keyword === 'pattern' || error.keyword === 'anyOf' || error.keyword === 'format') {
    const description = describedSchema(root, error.schemaPath, schemas)
    if (description !== undefined) return `${at}: must be ${description}; got ${shortJson(actual)}`
  }
  return `${at}: ${error.message}`
}

/** The description of the innermost schema along `schemaPath` that has one. */
function describedSchema(root: Schema, schemaPath: string, schemas: Record<string, unknown>): string | undefined {
  let node: unknown = resolve(root, schemas)
  let description = (root.description as string | undefined) ?? (node as Schema | undefined)?.description
  const steps = schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)
  for (const step of steps) {
    if (node === null || typeof node !== 'object') break
    node = resolve((node as Record<string, unknown>)[decodePointer(step)] as Schema, schemas)
    const here = (node as Schema | undefined)?.description
    if (typeof here === 'string') description = here
  }
  return typeof description === 'string' ? description : undefined
}

function resolve(schema: Schema | undefined, schemas: Record<string, unknown>): Schema | undefined {
  let node = schema
  for (let hops = 0; node !== undefined && typeof node.$ref === 'string' && hops < 16; hops++) {
    node = schemas[node.$ref as string] as Schema | undefined
  }
  return node
}

function objectKeyMap(schema: Schema | undefined): Map<string, string> | undefined {
  if (schema === undefined || schema.type !== 'object' || typeof schema.properties !== 'object') return undefined
  const map = new Map<string, string>()
  for (const key of Object.keys(schema.properties as object)) map.set(key.toLowerCase(), key)
  const aliases = schema['x-property-aliases'] as Record<string, string> | undefined
  for (const [alias, key] of Object.entries(aliases ?? {})) map.set(alias.toLowerCase(), key)
  return map
}

/** Keys match case-insensitively (Hyperchain reads params with Go's encoding/json: `opCode` = `opcode`). */
function normaliseKeys(value: Record<string, unknown>, keyMap: Map<string, string>): Record<string, unknown> {
  const entries = Object.entries(value)
  if (entries.every(([key]) => (keyMap.get(key.toLowerCase()) ?? key) === key)) return value
  const out: Record<string, unknown> = {}
  // exact spellings first, so `opcode` beats `opCode` when a client sends both
  for (const [key, child] of entries) if ((keyMap.get(key.toLowerCase()) ?? key) === key) out[key] = child
  for (const [key, child] of entries) {
    const declared = keyMap.get(key.toLowerCase())
    if (declared !== undefined && declared !== key && !Object.hasOwn(out, declared)) out[declared] = child
  }
  return out
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * typebox's `integer` rejects bigint, so validation sees big integers as (rounded) numbers;
 * handlers keep the exact bigint. Values without bigint are returned as they are.
 */
export function toValidationView(value: unknown): unknown {
  return containsBigInt(value) ? numberView(value) : value
}

function containsBigInt(value: unknown): boolean {
  if (typeof value === 'bigint') return true
  if (value === null || typeof value !== 'object') return false
  for (const child of Object.values(value)) if (containsBigInt(child)) return true
  return false
}

const INT64_MAX = 2n ** 63n - 1n
const INT64_MIN = -(2n ** 63n)

function numberView(value: unknown): unknown {
  // Past int64 the rounded double could still pass `maximum: 2^63-1`; MAX_VALUE fails any int64 bound.
  if (typeof value === 'bigint') return value > INT64_MAX ? Number.MAX_VALUE : value < INT64_MIN ? -Number.MAX_VALUE : Number(value)
  if (Array.isArray(value)) return value.map(numberView)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, child] of Object.entries(value)) out[key] = numberView(child)
    return out
  }
  return value
}

function valueAt(value: unknown, pointer: string): unknown {
  let node = value
  for (const step of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<string, unknown>)[decodePointer(step)]
  }
  return node
}

function decodePointer(step: string): string {
  return step.replaceAll('~1', '/').replaceAll('~0', '~')
}

function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}
