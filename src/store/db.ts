/** Opens the LMDB environment and one sub-database per keyspace entry. */
import { asBinary, type Database, type DatabaseOptions, open, type RootDatabase } from 'lmdb'
import { Keyspace, type KeyspaceName, keyspaceEncoding } from './keyspace.ts'

// biome-ignore lint/suspicious/noExplicitAny: lmdb-js databases are typed per call site by the repos
export type Db = Database<any, any>
export type Dbs = Record<KeyspaceName, Db>

/** msgpackr option missing from lmdb-js's DatabaseOptions type: bigints outside int64 use an extension instead of throwing. */
type MsgpackOptions = DatabaseOptions & { useBigIntExtension?: boolean }

export function openEnvironment(path: string, mapSizeBytes: number | undefined): RootDatabase {
  const options: MsgpackOptions & { path: string; maxDbs: number; mapSize?: number } = {
    path,
    maxDbs: 64,
    useBigIntExtension: true,
    // defaults kept on purpose (reliability.md A6): overlappingSync (a write resolves at commit, kill -9 safe),
    // no useWritemap (a full disk must be ENOSPC, not SIGBUS), no noSync, no cache (childTransaction needs it off)
  }
  if (mapSizeBytes !== undefined) options.mapSize = mapSizeBytes
  return open(options)
}

export function openKeyspaces(root: RootDatabase): Dbs {
  const dbs = {} as Dbs
  for (const name of Object.keys(Keyspace) as KeyspaceName[]) {
    const options: MsgpackOptions & { name: string } = {
      name: String(Keyspace[name]),
      ...keyspaceEncoding[name],
      useBigIntExtension: true,
    }
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

/** bytes made by encodeFor, stored as they are */
export const stored = (bytes: Buffer): ReturnType<typeof asBinary> => asBinary(bytes)
