/**
 * The only way to skip part of the conformance replay. Each entry names what it covers, why, and
 * the issue that removes it; the runner prints every skip it applies and fails on an entry that no
 * longer matches anything, so the list cannot go stale.
 */
export interface Deviation {
  /** method names; a trailing `*` matches a prefix, e.g. `tx_*` */
  methods: string[]
  /** what is skipped */
  what: string
  reason: string
  issue: string
}

export const deviations: Deviation[] = [
  {
    methods: ['tx_*', 'contract_*', 'block_*', 'account_*'],
    what: 'examples answered "not implemented yet" (-32601)',
    reason: 'the chain core (store, transactions, EVM) that these handlers read is not built yet',
    issue: 'issue 3',
  },
  {
    methods: ['sub_*'],
    what: 'examples answered "not implemented yet" (-32601)',
    reason: 'subscriptions and logs come with the event service',
    issue: 'issue 4',
  },
  {
    methods: ['node_*'],
    what: 'examples answered "not implemented yet" (-32601)',
    reason: 'peers, consensus and node deletion come with the network',
    issue: 'issue 6',
  },
  {
    methods: ['cert_*', 'archive_*'],
    what: 'examples answered "not implemented yet" (-32601)',
    reason: 'TCerts and the archive service are built later',
    issue: 'issue 7',
  },
]

export function deviationFor(method: string): Deviation | undefined {
  return deviations.find((deviation) =>
    deviation.methods.some((pattern) => (pattern.endsWith('*') ? method.startsWith(pattern.slice(0, -1)) : method === pattern)),
  )
}
