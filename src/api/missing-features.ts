/**
 * Methods of the official SDK (@hyperchain/jssdk 1.1.0; docs/sdk-wire.md §7) that need a Hyperchain
 * feature Keel does not have yet. They are not in openrpc.json (Keel cannot answer them); the
 * dispatcher answers each with -32601 naming the feature, so an SDK user learns why instead of
 * meeting an unknown method. README "The official SDK" lists them.
 */
const DID = 'DID documents and credentials (did_ accounts, documents and verifiable credentials)'
const ROLES = "account roles and account status (Hyperchain's built-in account management)"
const CNS = 'contract name service (names for contract addresses)'
const PROPOSALS = 'governance proposals (votes on configuration, contracts and system upgrades)'

export const MISSING_FEATURES: Readonly<Record<string, string>> = {
  did_getDIDDocument: DID,
  did_getCredentialPrimaryMessage: DID,
  did_checkCredentialValid: DID,
  did_checkCredentialAbandoned: DID,
  did_sendDIDTransaction: DID,
  account_getRoles: ROLES,
  account_getAccountsByRole: ROLES,
  account_getStatus: ROLES,
  config_getRoles: ROLES,
  config_isRoleExist: ROLES,
  contract_getStatusByCName: CNS,
  contract_getCreatorByCName: CNS,
  contract_getCreateTimeByCName: CNS,
  config_getCNameByAddress: CNS,
  config_getAddressByCName: CNS,
  config_getAllCNS: CNS,
  config_getProposal: PROPOSALS,
  contract_manageContractByVote: PROPOSALS,
  simulate_manageContractByVote: PROPOSALS,
  version_setSupportedVersion: PROPOSALS,
}
