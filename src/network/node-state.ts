/**
 * Asking a peer how it is (node_getNodeStates, version_getSupportedVersionByHostname): one p2p
 * request on Channel.nodeState, answered by every node (VP and NVP) with its consensus state,
 * view, height, the hash of its latest block and the versions it runs. A peer's answer is only its
 * word: it is shown as the peer's, never used for anything else.
 */
import type { NodeStateReport } from '../api/node.ts'
import { parseJson, stringifyJson } from '../wire/json.ts'
import { Channel } from './channels.ts'

/** how long node_getNodeStates waits for each peer */
export const NODE_STATE_TIMEOUT_MS = 2_000

interface StateNetwork {
  onRequest(channel: number, handler: (from: { hostname: string }, payload: Uint8Array) => Promise<Uint8Array>): void
  request(hostname: string, channel: number, payload: Uint8Array, timeoutMs: number): Promise<Uint8Array>
}

export function serveNodeState(network: StateNetwork, report: () => NodeStateReport): void {
  network.onRequest(Channel.nodeState, async () => Buffer.from(stringifyJson(report())))
}

const isString = (value: unknown): value is string => typeof value === 'string' && value.length <= 200
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0

/** The peer's report, or undefined when it is not linked, does not answer in time or answers nonsense. */
export async function askNodeState(
  network: StateNetwork,
  hostname: string,
  timeoutMs = NODE_STATE_TIMEOUT_MS,
): Promise<NodeStateReport | undefined> {
  let reply: unknown
  try {
    reply = parseJson(Buffer.from(await network.request(hostname, Channel.nodeState, new Uint8Array(0), timeoutMs)).toString('utf8'), {
      maxDepth: 4,
    })
  } catch {
    return undefined
  }
  if (reply === null || typeof reply !== 'object') return undefined
  const { state, view, height, hash, versions } = reply as Record<string, unknown>
  if (!isString(state) || !isCount(view) || !isCount(height) || !isString(hash)) return undefined
  if (versions === null || typeof versions !== 'object') return undefined
  const named = Object.entries(versions as Record<string, unknown>)
  if (named.length > 16 || !named.every(([, value]) => isString(value))) return undefined
  return { state, view, height, hash, versions: Object.fromEntries(named) as Record<string, string> }
}
