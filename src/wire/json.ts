/**
 * The lossless JSON codec lives once, in the client package's sources (sdk/src/json.ts), because
 * the node and the client must read and write int64 values the same way; the node's modules
 * import it from here.
 */
export * from '../../sdk/src/json.ts'

import { JsonText, parseJson } from '../../sdk/src/json.ts'

/** A handler's answer as a value, whether it was made as a value or as text made once. */
export function answerValue<T>(answer: T | JsonText<T>): T {
  return answer instanceof JsonText ? (parseJson(answer.text, { maxDepth: Number.POSITIVE_INFINITY }) as T) : answer
}
