/**
 * What every example takes: the node's URL (--url, else KEEL_URL, else http://127.0.0.1:8081) and
 * a key file (--key-file, else the genesis account `npm start` generated). A missing key file or a
 * node that refuses the connection ends the example with one line saying what to do, and so does
 * an error the node answered (its code and message), so the examples themselves stay plain.
 */
import { readFileSync } from 'node:fs'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { ReceiptTimeoutError, RpcError } from 'keel-client'

export const DEFAULT_KEY_FILE = 'data/global/genesis-account.json'

export interface ExampleOptions {
  url: string
  /** reads the private key (0x hex) from the key file, or ends the example saying why it cannot */
  privateKey(): string
  values: Record<string, string | boolean | (string | boolean)[] | undefined>
  /** the arguments that are not options (only when asked for) */
  positionals: string[]
}

export function exampleOptions(extra: ParseArgsConfig['options'] = {}, allowPositionals = false): ExampleOptions {
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ options: { url: { type: 'string' }, 'key-file': { type: 'string' }, ...extra }, allowPositionals })
  } catch (error) {
    fail(`${(error as Error).message.split('. To specify')[0]}; the examples take --url <node> and --key-file <file>`)
  }
  const values = parsed.values
  const url = (values.url as string | undefined) ?? process.env.KEEL_URL ?? 'http://127.0.0.1:8081'
  // a failed top-level await ends up here
  process.on('uncaughtException', (error) => {
    if (error instanceof RpcError || error instanceof ReceiptTimeoutError) fail(error.message)
    explainConnectionFailure(url, error)
  })
  const keyFile = (values['key-file'] as string | undefined) ?? DEFAULT_KEY_FILE
  return {
    url,
    values,
    positionals: parsed.positionals,
    privateKey() {
      let text: string
      try {
        text = readFileSync(keyFile, 'utf8')
      } catch {
        fail(
          `no key file at ${keyFile}: start a node with \`npm start\` (it writes one), or pass --key-file <file with {"privateKey": "0x…"}>`,
        )
      }
      const key = (JSON.parse(text) as { privateKey?: unknown }).privateKey
      if (typeof key !== 'string') fail(`${keyFile} holds no "privateKey"`)
      return key
    },
  }
}

/** Turns a refused or unreachable connection into one line; any other error is printed whole. */
export function explainConnectionFailure(url: string, error: unknown): never {
  // fetch fails with a TypeError whose cause is the socket's error (ECONNREFUSED, ENOTFOUND, a bad port…)
  if (!(error instanceof TypeError) || error.message !== 'fetch failed') {
    console.error(error)
    process.exit(1)
  }
  const cause = error.cause as { code?: string; message?: string } | undefined
  fail(
    `no Keel node answers at ${url} (${cause?.code ?? cause?.message ?? 'no answer'}): start one with \`npm start\`, or pass --url <node> (or set KEEL_URL)`,
  )
}

export function fail(message: string): never {
  console.error(message)
  process.exit(1)
}
