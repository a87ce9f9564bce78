/**
 * node:crypto and node:module as the playground bundle sees them (bundle.mjs aliases them here).
 * Only the SM2 part of the client package uses them — SM3 from OpenSSL, or the sm-crypto-v2
 * fallback loaded through createRequire — and the page signs with secp256k1 only. Loading must
 * not fail (sm2.ts picks its SM3 when the module loads); a call says why it cannot work.
 */
const unavailable = (): never => {
  throw new Error('SM2 signing is not available in the playground page (it signs with secp256k1)')
}

export const getHashes = (): string[] => []
export const createHash = unavailable
export const createRequire = () => () => ({ sm3: unavailable })
