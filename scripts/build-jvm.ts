/**
 * `npm run build:jvm`: compiles the Java contract executor (jvm/src) into build/jvm/keel-executor.jar
 * when its sources changed since the last build; prints the jar's path. A node does the same on its
 * first JVM transaction, so this only moves the ~2 s of javac out of that transaction's way.
 */
import { ensureExecutor, executorIsCurrent } from '../src/exec/jvm/build.ts'

if (process.argv.includes('--help')) {
  console.log(
    'usage: npm run build:jvm\n\nCompiles the Java contract executor (jvm/src) into build/jvm/keel-executor.jar when its sources changed (needs a JDK 17); prints the path of the jar.',
  )
  process.exit(0)
}

const wasCurrent = executorIsCurrent()
const jar = await ensureExecutor()
console.log(`${jar}${wasCurrent ? ' (up to date)' : ' (built)'}`)
