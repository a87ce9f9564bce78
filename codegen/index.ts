/**
 * Compiles openrpc.json into generated/: the method table, error codes, TypeScript types, handler
 * interfaces per service prefix and the typed client interface. Generated files hold data and
 * types only; the dispatcher (src/rpc/dispatch.ts) and the client (sdk/client.ts) are generic.
 *
 *   npm run codegen             write generated/
 *   npm run codegen -- --check  exit 1 when generated/ differs from what openrpc.json gives
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import schemaUtils from '@open-rpc/schema-utils-js'
import { checkDocument, type OpenRpcDocument } from './check.ts'
import { renderClient, renderErrors, renderHandlers, renderMethods, renderTypes } from './render.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = join(root, 'generated')

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
    'errors.ts': renderErrors(document),
    'methods.ts': renderMethods(document),
    'types.ts': renderTypes(document),
    'handlers.ts': renderHandlers(document),
    'client.ts': renderClient(document),
  }

  const stale: string[] = []
  for (const [name, content] of Object.entries(files)) {
    const path = join(outDir, name)
    const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined
    if (current === content) continue
    stale.push(name)
    if (!check) {
      mkdirSync(outDir, { recursive: true })
      writeFileSync(path, content)
    }
  }
  if (check) {
    if (stale.length > 0) {
      console.error(`generated/ is stale (${stale.join(', ')}): run \`npm run codegen\` and commit the result`)
      process.exit(1)
    }
    console.log(`generated/ is up to date (${document.methods.length} methods)`)
    return
  }
  console.log(`generated/: ${stale.length === 0 ? 'unchanged' : `wrote ${stale.join(', ')}`} (${document.methods.length} methods)`)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
