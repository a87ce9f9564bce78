/** Keel's own rules for openrpc.json, on top of the OpenRPC meta-schema. */

export interface JsonSchema {
  $ref?: string
  title?: string
  description?: string
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  prefixItems?: JsonSchema[]
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  enum?: unknown[]
  const?: unknown
  maximum?: number
  additionalProperties?: boolean | JsonSchema
  'x-property-aliases'?: Record<string, string>
  [key: string]: unknown
}

export interface ContentDescriptor {
  name: string
  summary?: string
  description?: string
  required?: boolean
  schema: JsonSchema
}

export interface ExamplePairing {
  name: string
  description?: string
  params: { name: string; value: unknown }[]
  result?: { name: string; value: unknown }
  'x-error'?: { code: number; message: string }
  'x-placeholders'?: string[]
}

export interface MethodObject {
  name: string
  summary?: string
  description?: string
  params: ContentDescriptor[]
  result: ContentDescriptor
  errors?: { $ref: string }[]
  examples?: ExamplePairing[]
  'x-aliases'?: string[]
  /** `websocket`: the method exists only on WebSocket connections */
  'x-transport'?: 'websocket'
  /** an operator method: answered only for a request an administrator signed (src/rpc/operator-auth.ts) */
  'x-operator'?: boolean
  /**
   * `chain`: only the chain thread serves it (what it needs lives there: polling subscriptions, the
   * archive, the peer directory and consensus, the CA and receipt signer, the configuration, the
   * governance records, the operators' replay memory); a request thread forwards it (src/front/thread.ts)
   */
  'x-thread'?: 'chain'
  paramStructure?: string
}

export interface ErrorObject {
  code: number
  message: string
}

export interface OpenRpcDocument {
  openrpc: string
  info: { title: string; version: string; description?: string }
  methods: MethodObject[]
  components: { schemas: Record<string, JsonSchema>; errors: Record<string, ErrorObject> }
  [key: string]: unknown
}

export const SCHEMA_REF = '#/components/schemas/'
export const ERROR_REF = '#/components/errors/'

/** The service prefix of a method name: `tx_getTransactionByHash` → `tx`. */
export function servicePrefix(name: string): string {
  return name.slice(0, name.indexOf('_'))
}

export function checkDocument(document: OpenRpcDocument): string[] {
  const problems: string[] = []
  const schemas = document.components.schemas
  const errors = document.components.errors
  for (const [key, schema] of Object.entries(schemas)) {
    if (schema.title !== key) problems.push(`components.schemas.${key} must have title "${key}"`)
    walkSchema(schema, `components.schemas.${key}`, (node, where, isRoot) => {
      if (node.$ref !== undefined && !node.$ref.startsWith(SCHEMA_REF)) problems.push(`${where}: $ref must point into ${SCHEMA_REF}`)
      if (node.$ref !== undefined && !(node.$ref.slice(SCHEMA_REF.length) in schemas)) problems.push(`${where}: unknown $ref ${node.$ref}`)
      const structured = node.type === 'object' || node.type === 'array'
      if (!isRoot && structured && node.title === undefined) problems.push(`${where}: nested ${node.type} schemas need a title`)
    })
  }

  const seen = new Map<string, string>()
  for (const method of document.methods) {
    if (!/^[a-z][a-z0-9]*_[A-Za-z0-9]+$/.test(method.name)) problems.push(`${method.name}: method names are <prefix>_<name>`)
    for (const name of [method.name, ...(method['x-aliases'] ?? [])]) {
      if (name.startsWith('rpc.')) problems.push(`${method.name}: ${name} uses the reserved rpc. prefix`)
      const owner = seen.get(name)
      if (owner !== undefined) problems.push(`${method.name}: ${name} is already taken by ${owner}`)
      seen.set(name, method.name)
    }
    if (method.paramStructure !== 'by-position') problems.push(`${method.name}: paramStructure must be by-position`)
    for (const param of method.params) {
      if (param.schema.$ref === undefined) problems.push(`${method.name}: param ${param.name} must $ref a titled component schema`)
    }
    if (method.result.schema.$ref === undefined) problems.push(`${method.name}: result must $ref a titled component schema`)
    let optionalSeen = false
    for (const param of method.params) {
      if (param.required !== true) optionalSeen = true
      else if (optionalSeen) problems.push(`${method.name}: required param ${param.name} follows an optional one`)
    }
    if (method['x-thread'] !== undefined && method['x-thread'] !== 'chain')
      problems.push(`${method.name}: x-thread is "chain" or absent (served where the request arrived)`)
    // one replay memory per node (src/rpc/operator-auth.ts): every operator method runs on the chain thread
    if (method['x-operator'] === true && method['x-thread'] !== 'chain')
      problems.push(`${method.name}: an x-operator method needs "x-thread": "chain" (one replay memory per node)`)
    for (const ref of method.errors ?? []) {
      const name = ref.$ref.startsWith(ERROR_REF) ? ref.$ref.slice(ERROR_REF.length) : undefined
      if (name === undefined || !(name in errors)) problems.push(`${method.name}: unknown error ${ref.$ref}`)
    }
  }
  return problems
}

export function walkSchema(
  schema: JsonSchema,
  where: string,
  visit: (node: JsonSchema, where: string, isRoot: boolean) => void,
  isRoot = true,
): void {
  visit(schema, where, isRoot)
  for (const [key, child] of Object.entries(schema.properties ?? {})) walkSchema(child, `${where}.${key}`, visit, false)
  if (schema.items !== undefined) walkSchema(schema.items, `${where}[]`, visit, false)
  for (const [i, child] of (schema.prefixItems ?? []).entries()) walkSchema(child, `${where}[${i}]`, visit, false)
  for (const [i, child] of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].entries()) walkSchema(child, `${where}|${i}`, visit, false)
  if (typeof schema.additionalProperties === 'object') walkSchema(schema.additionalProperties, `${where}{}`, visit, false)
}
