/** Handlers of the `cert_` service (protocol.md §3). */
import type { CertHandlers } from '../../generated/handlers.ts'
import type { NodeCa } from '../cert/ca.ts'
import { issueTcert, parseTcertPublicKey } from '../cert/tcert.ts'
import { TcertFailed } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { TcertRecord } from '../store/index.ts'

export interface CertModules {
  ca: NodeCa
  /** keeps every issued TCert; the TCert check admits only recorded ones */
  tcerts: { putTcert(record: TcertRecord): Promise<void> }
  now: () => Date
  log: Logger
}

export function createCertHandlers(modules: CertModules): CertHandlers {
  const { ca, tcerts, now, log } = modules
  return {
    async cert_getTCert([request]) {
      const { spki } = parseTcertPublicKey(request.pubkey)
      let pem: string
      let serial: string
      try {
        ;({ pem, serial } = await issueTcert(ca, spki, now()))
      } catch (error) {
        log.error('issuing a TCert failed', error)
        throw new TcertFailed('generated tcert failed')
      }
      try {
        await tcerts.putTcert({ pem, serial, issuedAtMs: now().getTime() })
      } catch (error) {
        // an unrecorded TCert would be refused by the TCert check, so it is not handed out
        log.error('recording a TCert failed', error)
        throw new TcertFailed('register tcert failed')
      }
      return { tcert: `0x${Buffer.from(pem, 'latin1').toString('hex')}` }
    },
  }
}
