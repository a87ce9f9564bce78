/**
 * /playground/keel-client.js, the module the playground page signs with (playground/keel-client.ts:
 * the client package's own code). A built node (dist/) serves the bundle its build wrote; a node
 * run from the sources bundles it on the first request (playground/bundle.mjs, esbuild, a
 * development dependency) and keeps the text.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { RouteReply } from '../rpc/http.ts'

const FILE = 'keel-client.js'

export function playgroundClientRoute(root: string): () => Promise<RouteReply> {
  let text: Promise<string> | undefined
  const load = async (): Promise<string> => {
    const built = join(root, 'playground', FILE)
    if (existsSync(built)) return readFileSync(built, 'utf8')
    const bundler = (await import(pathToFileURL(join(root, 'playground', 'bundle.mjs')).href)) as { bundlePlaygroundClient(): string }
    return bundler.bundlePlaygroundClient()
  }
  return async () => {
    text ??= load()
    try {
      return { status: 200, contentType: 'text/javascript; charset=utf-8', body: await text }
    } catch (error) {
      text = undefined
      throw error
    }
  }
}
