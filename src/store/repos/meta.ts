/** Keyspace 1 `meta`: schema version, world-state lanes, genesis record, transaction index version. */
import type { Hex } from '../../domain.ts'
import { type Db, encodeFor, ledgerWrite, type Write } from '../db.ts'
import { lanesFromBytes, lanesToBytes } from '../state-hash.ts'

export interface GenesisRecord {
  /** Keccak-256 over the alloc sorted by address (index.ts genesisDigest) */
  digest: Hex
  accounts: number
  /** state root right after the genesis */
  root: Hex
}

export class MetaRepo {
  constructor(private readonly db: Db) {}

  schema(): number | undefined {
    return this.db.get('schema')
  }

  async putSchema(version: number): Promise<void> {
    await ledgerWrite(this.db.put('schema', version))
  }

  lanes(): Uint16Array | undefined {
    const bytes: Uint8Array | undefined = this.db.get('lanes')
    return bytes === undefined ? undefined : lanesFromBytes(bytes)
  }

  /** the write that stores the state's lanes */
  lanesWrites(out: Write[], lanes: Uint16Array): void {
    out.push({ db: this.db, key: 'lanes', value: encodeFor(this.db, lanesToBytes(lanes)) })
  }

  /** the version of the transaction indexes (keyspaces 30–33) built for every live block; absent: build them */
  txIndexes(): number | undefined {
    return this.db.get('txIndexes')
  }

  async putTxIndexes(version: number): Promise<void> {
    await ledgerWrite(this.db.put('txIndexes', version))
  }

  genesis(): GenesisRecord | undefined {
    return this.db.get('genesis')
  }

  /** inside a write transaction */
  putGenesis(record: GenesisRecord): void {
    this.db.putSync('genesis', record)
  }
}
