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
  /** node_getConsensusStatus's answer in each namespace served */
  consensus(): Promise<{ defaultName: string; reports: Record<string, ConsensusReport> }>
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
    // issue 30: the default namespace's fields as before; with several namespaces, each one's under `namespaces`, and ready only when all are
    '/ready': async () => {
      const { defaultName, reports } = await sources.consensus()
      const each = Object.entries(reports).map(([name, report]) => [name, readinessOf(report)] as const)
      const first = each.find(([name]) => name === defaultName)?.[1] ?? readinessOf({ state: 'stopped', height: 0 })
      const ready = each.every(([, readiness]) => readiness.ready)
      const body =
        each.length <= 1
          ? first.body
          : {
              ...first.body,
              status: ready ? 'ready' : 'not ready',
              namespaces: Object.fromEntries(each.map(([name, readiness]) => [name, readiness.body])),
            }
      return { status: ready ? 200 : 503, contentType: JSON_TYPE, body: JSON.stringify(body) }
    },
  }
}
