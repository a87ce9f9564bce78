/** The p2p channels Keel's nodes talk on (src/p2p carries opaque payloads per channel number). */
export const Channel = {
  /** RBFT messages among VPs (src/consensus/bft/messages.ts) */
  consensus: 1,
  /** a transaction a VP admitted, relayed to every other VP (consensus.md §3 step 2) */
  tx: 2,
  /** request: transactions of a batch this node lacks, by hash; answered by the primary */
  fetchTxs: 3,
  /** request: committed blocks with their proof, for state transfer and NVP sync */
  fetchBlocks: 4,
  /** a VP pushes each committed block with its proof to its NVPs */
  blockPush: 5,
  /** request: an NVP forwards a client transaction to a VP, which admits it and answers */
  forwardTx: 6,
  /** a new VP (peerconfig.toml `new = true`) asks the group's VPs to vote it in (Hyperchain's ATTEND; vp.ts) */
  attend: 7,
  /** request: a node's state for node_getNodeStates and version_getSupportedVersionByHostname (node-state.ts) */
  nodeState: 8,
} as const

export type ChannelNumber = (typeof Channel)[keyof typeof Channel]
