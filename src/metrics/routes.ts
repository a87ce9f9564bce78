/**
 * The operator's GET routes: `/metrics` (Prometheus text), `/health` (the process answers) and
 * `/ready` (it serves and is in sync). A load balancer or an orchestrator sends clients only to a
 * ready node and restarts one that is not alive; Prometheus scrapes `/metrics`.
 */

/** what node_getConsensusStatus answers (src/api/node.ts): `/ready` reads the same report */
export interface ConsensusReport {
  state: string
  height: number | bigint
  /** why ordering stopped, when it has */
  reason?: string
}

/** the consensus states in which a node orders (a VP) or follows (an NVP) the chain as it grows */
const SERVING_STATES = new Set(['normal', 'following'])

export interface Readiness {
  ready: boolean
  body: { status: 'ready' | 'not ready'; state: string; height: number; reason?: string }
}

export function readinessOf(report: ConsensusReport): Readiness {
  const ready = SERVING_STATES.has(report.state)
  const reason =
    report.reason ??
    (ready
      ? undefined
      : `consensus is ${report.state}: this node is not ordering the chain in step with its network; send requests to another node until it is normal`)
  return {
    ready,
    body: {
      status: ready ? 'ready' : 'not ready',
      state: report.state,
      height: Number(report.height),
      ...(reason === undefined ? {} : { reason }),
    },
  }
}

export interface OperatorRouteSources {
  /** the node's metrics, every thread merged */
  metrics(): Promise<{ contentType: string; text: string }>
  /** node_getConsensusStatus's answer */
  consensus(): Promise<ConsensusReport>
}

export interface OperatorRouteReply {
  status: number
  contentType: string
  body: string
}

const JSON_TYPE = 'application/json'

export function operatorRoutes(sources: OperatorRouteSources): Record<string, () => Promise<OperatorRouteReply>> {
  const startedAt = Date.now()
  return {
    '/metrics': async () => {
      const { contentType, text } = await sources.metrics()
      return { status: 200, contentType, body: text }
    },
    // alive: this answer needs the event loop and nothing else, so a stalled or deadlocked node fails it
    '/health': async () => ({
      status: 200,
      contentType: JSON_TYPE,
      body: JSON.stringify({ status: 'alive', uptimeSeconds: Math.round((Date.now() - startedAt) / 1000) }),
    }),
    '/ready': async () => {
      const { ready, body } = readinessOf(await sources.consensus())
      return { status: ready ? 200 : 503, contentType: JSON_TYPE, body: JSON.stringify(body) }
    },
  }
}
