/**
 * The lossless JSON codec lives once, in the client package's sources (sdk/src/json.ts), because
 * the node and the client must read and write int64 values the same way; the node's modules
 * import it from here.
 */
export * from '../../sdk/src/json.ts'
