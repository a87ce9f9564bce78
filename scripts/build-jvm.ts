/**
 * `npm run build:jvm`: compiles the Java contract executor (jvm/src) into build/jvm/keel-executor.jar
 * when its sources changed since the last build; prints the jar's path. A node does the same on its
 * first JVM transaction, so this only moves the ~2 s of javac out of that transaction's way.
 */
import { ensureExecutor, executorIsCurrent } from '../src/exec/jvm/build.ts'

const wasCurrent = executorIsCurrent()
const jar = await ensureExecutor()
console.log(`${jar}${wasCurrent ? ' (up to date)' : ' (built)'}`)
