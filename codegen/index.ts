/**
 * Compiles openrpc.json into data and types. Generated files hold data and types only; the
 * dispatcher (src/rpc/dispatch.ts) and the client (sdk/src/client.ts) are generic.
 * - sdk/src/generated/ (the client package, keel-client): error codes, TypeScript types, the
 *   method names and the typed client interface; the node uses the codes and types from there.
 * - generated/ (the node): the method table with its schemas and the handler interfaces per
 *   service prefix; errors.ts and types.ts re-export the package's, so node code imports them
 *   from one place.
 *
 *   npm run codegen             write both
 *   npm run codegen -- --check  exit 1 when either differs from what openrpc.json gives
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import schemaUtils from '@open-rpc/schema-utils-js'
import { checkDocument, type OpenRpcDocument } from './check.ts'
import {
  renderClient,
  renderErrors,
  renderHandlers,
  renderMethodErrors,
  renderMethodNames,
  renderMethods,
  renderReexport,
  renderTypes,
} from './render.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

async function main(): Promise<void> {
  const check = process.argv.includes('--check')
  const source = readFileSync(join(root, 'openrpc.json'), 'utf8')
  const document = JSON.parse(source) as OpenRpcDocument

  const valid = schemaUtils.validateOpenRPCDocument(document as never)
  if (valid !== true) throw new Error(`openrpc.json is not a valid OpenRPC document:\n${String(valid)}`)
  // Dereferencing proves every $ref resolves; the generated table keeps refs as bare names.
  await schemaUtils.parseOpenRPCDocument(structuredClone(document) as never, { dereference: true, validate: false })
  const problems = checkDocument(document)
  if (problems.length > 0) throw new Error(`openrpc.json breaks Keel's conventions:\n- ${problems.join('\n- ')}`)

  const files: Record<string, string> = {
    'sdk/src/generated/errors.ts': renderErrors(document),
    'sdk/src/generated/types.ts': renderTypes(document),
    'sdk/src/generated/method-names.ts': renderMethodNames(document),
    'sdk/src/generated/method-errors.ts': renderMethodErrors(document),
    'sdk/src/generated/client.ts': renderClient(document),
    'generated/errors.ts': renderReexport('../sdk/src/generated/errors.ts', false),
    'generated/types.ts': renderReexport('../sdk/src/generated/types.ts', true),
    'generated/methods.ts': renderMethods(document),
    'generated/handlers.ts': renderHandlers(document),
  }

  const stale: string[] = []
  for (const [name, content] of Object.entries(files)) {
    const path = join(root, name)
    const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined
    if (current === content) continue
    stale.push(name)
    if (!check) {
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, content)
    }
  }
  if (check) {
    if (stale.length > 0) {
      console.error(`generated files are stale (${stale.join(', ')}): run \`npm run codegen\` and commit the result`)
      process.exit(1)
    }
    console.log(`generated/ and sdk/src/generated/ are up to date (${document.methods.length} methods)`)
    return
  }
  console.log(`codegen: ${stale.length === 0 ? 'unchanged' : `wrote ${stale.join(', ')}`} (${document.methods.length} methods)`)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
