/**
 * One way for every `keel` command to read its command line: options declared once with their
 * help text, `--help` printing the usage made from them, and an unknown or malformed option
 * answered with that usage instead of a stack.
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type ParseArgsConfig, parseArgs } from 'node:util'

export interface OptionSpec {
  type: 'string' | 'boolean'
  /** what the value is, in the usage (`--port <port>`) */
  value?: string
  default?: string | boolean
  description: string
}

export interface CommandSpec {
  /** e.g. `keel start` */
  name: string
  /** the arguments after the name in the usage line, e.g. `[options]` or `<command> [options]` */
  synopsis: string
  summary: string
  options: Record<string, OptionSpec>
  /** lines printed after the options (sub-commands, examples) */
  details?: string[]
  allowPositionals?: boolean
}

/** boolean for a flag; string for an option with a default; string | undefined for one without */
export type OptionValues<Spec extends CommandSpec> = {
  [Name in keyof Spec['options']]: Spec['options'][Name]['type'] extends 'boolean'
    ? boolean
    : Spec['options'][Name] extends { default: string }
      ? string
      : string | undefined
}

export type Parsed<Spec extends CommandSpec> = { help: true } | { help: false; values: OptionValues<Spec>; positionals: string[] }

/** A command line the command cannot take; its message says why, `usage` says what it takes. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message)
  }
}

export function usageOf(spec: CommandSpec): string {
  const rows = Object.entries(spec.options).map(([name, option]) => {
    const flag = `--${name}${option.type === 'string' ? ` <${option.value ?? 'value'}>` : ''}`
    const fallback = option.default === undefined || option.default === false ? '' : ` (default: ${option.default})`
    return [flag, `${option.description}${fallback}`]
  })
  rows.push(['--help', 'print this help'])
  const width = Math.max(...rows.map(([flag]) => flag.length))
  return [
    `usage: ${spec.name} ${spec.synopsis}`.trimEnd(),
    '',
    spec.summary,
    '',
    'options:',
    ...rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`),
    ...(spec.details === undefined ? [] : ['', ...spec.details]),
  ].join('\n')
}

export function parseCommand<Spec extends CommandSpec>(spec: Spec, argv: string[]): Parsed<Spec> {
  if (argv.includes('--help') || argv.includes('-h')) return { help: true }
  const options = Object.fromEntries(
    Object.entries(spec.options).map(([name, option]) => [
      name,
      option.default === undefined ? { type: option.type } : { type: option.type, default: option.default },
    ]),
  ) as ParseArgsConfig['options']
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: spec.allowPositionals === true, strict: true })
    return { help: false, values: values as OptionValues<Spec>, positionals }
  } catch (error) {
    // node:util's messages name the option; its advice about `--` is about its own API, not ours
    const message = (error as Error).message.split('. To specify')[0].replace(/^Unknown option/, 'unknown option')
    throw new UsageError(`${spec.name}: ${message}`, usageOf(spec))
  }
}

/** A whole number option, or a UsageError naming it. */
export function integerOption(spec: CommandSpec, name: string, text: string | undefined, min = 0): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text)
  if (!Number.isSafeInteger(value) || value < min) {
    throw new UsageError(`${spec.name}: --${name} takes a whole number ≥ ${min}, got ${JSON.stringify(text)}`, usageOf(spec))
  }
  return value
}

/** For a script that reads its command line at load: the values, or the help or usage printed and the process ended. */
export function parseOrExit<Spec extends CommandSpec>(spec: Spec, argv: string[]): { values: OptionValues<Spec>; positionals: string[] } {
  try {
    const parsed = parseCommand(spec, argv)
    if (!parsed.help) return parsed
    console.log(usageOf(spec))
    process.exit(0)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(`${error.message}\n\n${error.usage}`)
    process.exit(2)
  }
}

/**
 * Runs a command's body with its parsed command line: `--help` prints the usage (exit 0), a
 * UsageError prints its message and the usage (exit 2), any other failure one line (exit 1).
 */
export async function runCommand<Spec extends CommandSpec>(
  spec: Spec,
  argv: string[],
  body: (values: OptionValues<Spec>, positionals: string[]) => Promise<void>,
): Promise<void> {
  try {
    const parsed = parseCommand(spec, argv)
    if (parsed.help) {
      console.log(usageOf(spec))
      return
    }
    await body(parsed.values, parsed.positionals)
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${error.usage}`)
      process.exit(2)
    }
    console.error(`${spec.name.split(' ')[0]}: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
}

/** true in the module node was started with (`node file`, `tsx file`), false when it is imported */
export function isEntryModule(moduleUrl: string): boolean {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return realpathSync(fileURLToPath(moduleUrl)) === realpathSync(entry)
  } catch {
    return false
  }
}
