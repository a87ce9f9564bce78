/**
 * The only way to skip part of the conformance replay. Each entry names what it covers, why, and
 * the issue that removes it; the runner prints every skip it applies and fails on an entry that no
 * longer matches anything, so the list cannot go stale.
 */
export interface Deviation {
  /** method names; a trailing `*` matches a prefix, e.g. `tx_*` */
  methods: string[]
  /**
   * which examples it may skip:
   * - `not-implemented`: those the node answers "not implemented yet" (-32601);
   * - `needs-sample-chain`: examples not marked "on an empty chain" whose reply differs from the
   *   example (examples that match, and every "on an empty chain" example, are still checked).
   */
  when: 'not-implemented' | 'needs-sample-chain'
  what: string
  reason: string
  issue: string
}

export const deviations: Deviation[] = [
  {
    methods: ['tx_*', 'contract_*', 'block_*', 'account_*'],
    when: 'needs-sample-chain',
    what: 'examples drawn from the sample chain of info.description (blocks 1-3) or another named chain state',
    reason:
      "the runner replays against a fresh node; building the sample chain from genesis by real signed transactions, with a pinned clock so its hashes are the examples' values, is not written yet (the handlers are covered by test/rpc/*.test.ts on real chains)",
    issue: 'issue 3',
  },
  {
    methods: ['sub_*'],
    when: 'not-implemented',
    what: 'examples answered "not implemented yet" (-32601)',
    reason: 'subscriptions and logs come with the event service',
    issue: 'issue 4',
  },
  {
    methods: ['node_*'],
    when: 'not-implemented',
    what: 'examples answered "not implemented yet" (-32601)',
    reason: 'peers, consensus and node deletion come with the network',
    issue: 'issue 6',
  },
  {
    methods: ['cert_*', 'archive_*'],
    when: 'not-implemented',
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
