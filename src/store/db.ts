/** Opens the LMDB environment and one sub-database per keyspace entry. */
import { asBinary, type Database, type DatabaseOptions, open, type RootDatabase } from 'lmdb'
import { recordEncoder } from '../wire/record-codec.ts'
import { Keyspace, type KeyspaceName, keyspaceEncoding } from './keyspace.ts'

// biome-ignore lint/suspicious/noExplicitAny: lmdb-js databases are typed per call site by the repos
export type Db = Database<any, any>
export type Dbs = Record<KeyspaceName, Db>

/** options missing from lmdb-js's DatabaseOptions type: bigints outside int64 use an extension instead of throwing; a custom encoder (record-codec.ts) */
type MsgpackOptions = DatabaseOptions & {
  useBigIntExtension?: boolean
  encoder?: { encode(value: unknown): Uint8Array; decode(bytes: Uint8Array, end?: unknown): unknown }
}

export function openEnvironment(path: string, mapSizeBytes: number | undefined): RootDatabase {
  const options: MsgpackOptions & { path: string; maxDbs: number; mapSize?: number } = {
    path,
    maxDbs: 64,
    useBigIntExtension: true,
    // defaults kept on purpose (reliability.md A6): overlappingSync (a write resolves at commit, kill -9 safe),
    // no useWritemap (a full disk must be ENOSPC, not SIGBUS), no noSync, no cache (childTransaction needs it off)
  }
  if (mapSizeBytes !== undefined) options.mapSize = mapSizeBytes
  guardCommitFailures()
  const root = open(options)
  // every write transaction of the store goes through these two: a failed commit becomes a readable error
  const transaction = root.transaction.bind(root)
  root.transaction = <T>(action: () => T): Promise<T> => ledgerWrite(transaction(action), path)
  const childTransaction = root.childTransaction.bind(root)
  root.childTransaction = <T>(action: () => T): Promise<T> => ledgerWrite(childTransaction(action), path)
  return root
}

/**
 * A failed LMDB commit (a full disk, a failing one) rejects every write of its batch with an
 * error whose `commitError` is one more promise, rejected with the cause, that lmdb-js leaves to
 * the caller. Unhandled, it would end the process (Node's default for an unhandled rejection)
 * while the node is reporting the failure (ordering stopped, -32006 for new transactions). This
 * takes that promise over and names the cause.
 */
export async function ledgerWrite<T>(write: Promise<T>, path?: string): Promise<T> {
  try {
    return await write
  } catch (error) {
    const commitError = (error as { commitError?: unknown } | undefined)?.commitError
    if (!(commitError instanceof Promise)) throw error
    const cause = await Promise.race([
      commitError.then(
        () => undefined,
        (reason: unknown) => reason,
      ),
      // lmdb-js rejects it in the very callback that failed the commit, so it has settled by now;
      // the next turn is only a safety net
      new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined))),
    ])
    const reason = cause instanceof Error ? cause.message : 'the cause was not reported'
    const errno = (cause as { code?: unknown } | undefined)?.code
    throw new Error(
      `the ledger write${path === undefined ? '' : ` to ${path}`} failed: ${reason}${typeof errno === 'number' ? ` (errno ${errno})` : ''}; a full or failing disk is the usual cause`,
      { cause },
    )
  }
}

let guarded = false

/**
 * lmdb-js also rejects promises of its own that nobody holds when a commit fails: the batch it
 * opens for each event turn's writes, and the `commitError` of each failed write. Node would end
 * the process on them (an unhandled rejection), though the failure is reported where Keel awaited
 * the write (ledgerWrite: ordering stops, -32006 for new transactions, the node keeps answering
 * reads). Only those two are taken here; any other unhandled rejection still ends the process as
 * Node's default does, by being thrown again.
 */
function guardCommitFailures(): void {
  if (guarded) return
  guarded = true
  process.on('unhandledRejection', (reason, promise) => {
    const commitError = (reason as { commitError?: unknown } | undefined)?.commitError
    if (reason instanceof Error && commitError instanceof Promise) {
      commitError.catch(() => undefined)
      return
    }
    // the commitError promise itself: lmdb-js gives it a `reject` method
    if (typeof (promise as { reject?: unknown }).reject === 'function' && typeof (reason as { code?: unknown })?.code === 'number') return
    throw reason
  })
}

export function openKeyspaces(root: RootDatabase): Dbs {
  const dbs = {} as Dbs
  for (const name of Object.keys(Keyspace) as KeyspaceName[]) {
    const { keyEncoding, encoding } = keyspaceEncoding[name]
    const options: MsgpackOptions & { name: string } =
      encoding === 'record'
        ? { name: String(Keyspace[name]), keyEncoding, encoder: recordEncoder }
        : { name: String(Keyspace[name]), keyEncoding, encoding, useBigIntExtension: true }
    dbs[name] = root.openDB(options)
  }
  return dbs
}

/**
 * The bytes a msgpack keyspace stores for `value`, made before the write transaction: a value that
 * cannot be encoded fails on its own, and the transaction only copies bytes (`asBinary`).
 */
export function encodeFor(db: Db, value: unknown): Buffer {
  return Buffer.from((db as unknown as { encoder: { encode(value: unknown): Uint8Array } }).encoder.encode(value))
}

/** One change of a commit: the exact bytes to store under `key` (undefined removes it), keyed and encoded before anything is written. */
export interface Write {
  readonly db: Db
  readonly key: Buffer | number | string
  readonly value: Buffer | undefined
}

/**
 * Makes `writes`; resolves once the transaction holding them has committed. Inside a write
 * transaction's callback each is made at once. Outside one (a block commit) lmdb-js queues them
 * for its own write thread, which makes every write of this event turn in one transaction: the
 * B-tree work (~40 µs per transfer, blocks of 200–500 writes held the calling thread 7–28 ms) leaves
 * the calling thread, which only copies instructions. Nothing here throws half-way for writes
 * made by the repos (fixed keys, bytes): a throw between two puts would leave the first in the
 * turn's transaction, so every key and value is made, and may fail, before this is called.
 */
export function applyWrites(writes: readonly Write[]): Promise<unknown> {
  const commits = new Set<Promise<unknown>>()
  for (const { db, key, value } of writes) commits.add(value === undefined ? db.remove(key) : db.put(key, asBinary(value)))
  return Promise.all(commits)
}
