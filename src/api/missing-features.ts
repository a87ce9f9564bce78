/**
 * Methods of the official SDK (@hyperchain/jssdk 1.1.0; docs/sdk-wire.md §7) that need a Hyperchain
 * feature Keel does not have yet. They are not in openrpc.json (Keel cannot answer them); the
 * dispatcher answers each with -32601 naming the feature, so an SDK user learns why instead of
 * meeting an unknown method. README "The official SDK" lists them.
 */
const DID = 'DID documents and credentials (did_ accounts, documents and verifiable credentials)'

export const MISSING_FEATURES: Readonly<Record<string, string>> = {
  did_getDIDDocument: DID,
  did_getCredentialPrimaryMessage: DID,
  did_checkCredentialValid: DID,
  did_checkCredentialAbandoned: DID,
  did_sendDIDTransaction: DID,
}
