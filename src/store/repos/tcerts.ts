/** Keyspace 20 `tcerts`: every TCert this node issued, found by the digest of its exact PEM bytes. */
import { createHash } from 'node:crypto'
import { type Db, ledgerWrite } from '../db.ts'

export interface TcertRecord {
  /** PEM text exactly as returned to the caller */
  pem: string
  /** hex serial number */
  serial: string
  /** when it was issued, Unix ms */
  issuedAtMs: number
}

const digestOf = (pemBytes: Uint8Array): Buffer => createHash('sha256').update(pemBytes).digest()

export class TcertsRepo {
  constructor(private readonly db: Db) {}

  /** resolves once LMDB committed the record */
  async put(record: TcertRecord): Promise<void> {
    await ledgerWrite(this.db.put(digestOf(Buffer.from(record.pem, 'latin1')), record))
  }

  /** the record of a certificate whose PEM is exactly `pemBytes` */
  get(pemBytes: Uint8Array): TcertRecord | undefined {
    const record: TcertRecord | undefined = this.db.get(digestOf(pemBytes))
    // a digest match with other bytes would be a SHA-256 collision; compare anyway, it is cheap
    return record !== undefined && Buffer.from(record.pem, 'latin1').equals(pemBytes) ? record : undefined
  }
}
