/**
 * `keel <command>`: the node's one command-line entry (package.json `bin`). Each command has its
 * own options and `--help`.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { isEntryModule } from './command-line.ts'
import { runningBuilt } from './workers/start.ts'

/**
 * The bench reads its command line when it loads, and is a development tool: it runs as a child
 * under tsx from the checkout's sources, also when the node runs built (dist/ sits in the checkout).
 */
function runBench(argv: string[]): Promise<void> {
  const bench = fileURLToPath(new URL(runningBuilt ? '../../bench/run.ts' : '../bench/run.ts', import.meta.url))
  if (!existsSync(bench)) {
    console.error(`keel bench: ${bench} not found; the bench runs from a source checkout with its dev dependencies (npm ci)`)
    process.exit(1)
  }
  const child = spawn(process.execPath, ['--import', 'tsx', bench, ...argv], {
    stdio: 'inherit',
  })
  return new Promise((resolve) => child.on('exit', (code) => (code === 0 ? resolve() : process.exit(code ?? 1))))
}

const COMMANDS: Record<string, { summary: string; run(argv: string[]): Promise<void> }> = {
  start: { summary: 'run a node (npm start)', run: async (argv) => (await import('./main.ts')).runStart(argv) },
  init: { summary: 'write a commented keel.toml to start a node with', run: async (argv) => (await import('./init.ts')).runInit(argv) },
  network: {
    summary: 'a local network of nodes on this machine (npm run network)',
    run: async (argv) => (await import('./devnet/cli.ts')).runNetwork(argv),
  },
  operator: {
    summary: "send an operator method (node_deleteVP, archive_snapshot, …) signed with an admin's key",
    run: async (argv) => (await import('./operator-cli.ts')).runOperator(argv),
  },
  bench: { summary: 'the benchmark: a node and a load generator (npm run bench)', run: runBench },
}

export function keelUsage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length))
  return [
    'usage: keel <command> [options]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    '`keel <command> --help` lists the options of a command.',
  ].join('\n')
}

export async function runKeel(argv: string[]): Promise<void> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(keelUsage())
    return
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    console.error(`keel: unknown command ${JSON.stringify(name)}\n\n${keelUsage()}`)
    process.exit(2)
  }
  await command.run(rest)
}

if (isEntryModule(import.meta.url)) await runKeel(process.argv.slice(2))
