/**
 * Bundles playground/keel-client.ts (the client package's signing and Java payload code) into one
 * browser ES module. `npm run build` writes it to dist/playground/keel-client.js; a node run from
 * the sources (tsx) bundles it on the first request for /playground/keel-client.js
 * (src/front/playground.ts). esbuild is a development dependency: a built node never needs it.
 */
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
/** the file a build writes beside index.html */
export const PLAYGROUND_CLIENT_FILE = 'keel-client.js'

/** The bundle's text (esbuild's synchronous API: the build script is synchronous). */
export function bundlePlaygroundClient() {
  const { buildSync } = createRequire(import.meta.url)('esbuild')
  const shims = `${here}browser-shims.ts`
  const result = buildSync({
    entryPoints: [`${here}keel-client.ts`],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    alias: { 'node:crypto': shims, 'node:module': shims },
    logLevel: 'silent',
  })
  return result.outputFiles[0].text
}
