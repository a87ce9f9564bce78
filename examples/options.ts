/**
 * What every example takes: the node's URL (--url, else KEEL_URL, else http://127.0.0.1:8081), a
 * key file (--key-file, else KEEL_KEY_FILE, else the genesis account `npm start` generated) and
 * --help (what it does and its options). A missing key file or a node that refuses the connection
 * ends the example with one line saying what to do, and so does an error the node answered (its
 * code and message), so the examples themselves stay plain.
 */
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import { ReceiptTimeoutError, RpcError } from 'keel-client'

export const DEFAULT_KEY_FILE = 'data/global/genesis-account.json'

/** an option of one example, with what --help says of it */
export interface ExampleOption {
  type: 'string' | 'boolean'
  default?: string | boolean
  description: string
}

const COMMON: Record<string, ExampleOption> = {
  url: { type: 'string', description: 'the node, http:// or ws:// (default: $KEEL_URL, else http://127.0.0.1:8081)' },
  'key-file': {
    type: 'string',
    description: `a JSON file with {"privateKey": "0x…"} (default: $KEEL_KEY_FILE, else ${DEFAULT_KEY_FILE}, the key \`npm start\` writes on embedded defaults)`,
  },
  help: { type: 'boolean', description: 'prints this and ends' },
}

function usage(about: string, options: Record<string, ExampleOption>): string {
  const script = process.argv[1] === undefined ? 'example' : basename(process.argv[1])
  const rows = Object.entries(options).map(([name, option]) => {
    const head = `--${name}${option.type === 'string' ? ' <value>' : ''}`
    const fallback = option.default === undefined || option.default === false ? '' : ` (default ${option.default})`
    return `  ${head.padEnd(22)} ${option.description}${fallback}`
  })
  return `${script}: ${about}\n\noptions:\n${rows.join('\n')}`
}

export interface ExampleOptions {
  url: string
  /** reads the private key (0x hex) from the key file, or ends the example saying why it cannot */
  privateKey(): string
  values: Record<string, string | boolean | (string | boolean)[] | undefined>
  /** the arguments that are not options (only when asked for) */
  positionals: string[]
}

/** `about`: what the example does, for --help; `allowPositionals`: it takes words besides its options (examples/governance.ts) */
export function exampleOptions(extra: Record<string, ExampleOption>, about: string, allowPositionals = false): ExampleOptions {
  const all = { ...COMMON, ...extra }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({
      options: Object.fromEntries(Object.entries(all).map(([name, { type, default: fallback }]) => [name, { type, default: fallback }])),
      allowPositionals,
    })
  } catch (error) {
    fail(`${(error as Error).message.split('. To specify')[0]}\n\n${usage(about, all)}`)
  }
  const values = parsed.values
  if (values.help === true) {
    console.log(usage(about, all))
    process.exit(0)
  }
  const url = (values.url as string | undefined) ?? process.env.KEEL_URL ?? 'http://127.0.0.1:8081'
  // a failed top-level await ends up here
  process.on('uncaughtException', (error) => {
    if (error instanceof RpcError || error instanceof ReceiptTimeoutError) fail(error.message)
    explainConnectionFailure(url, error)
  })
  const keyFile = (values['key-file'] as string | undefined) ?? process.env.KEEL_KEY_FILE ?? DEFAULT_KEY_FILE
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
          `no key file at ${keyFile}: start a node with \`npm start\` (it writes one and its banner names the file), then pass --key-file <that file> or set KEEL_KEY_FILE`,
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
