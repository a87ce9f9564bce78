/**
 * What the playground page (index.html) takes from the client package, bundled for the browser
 * (bundle.mjs): the node serves it at /playground/keel-client.js. The page signs exactly as
 * keel-client signs (sign string format B 4.1, secp256k1) and encodes Java payloads with the same
 * code, and builds BVM operations (Hyperchain's built-in contracts) with keel-client's builders, so
 * nothing in the page can drift from the package.
 */
export { accountFromPrivateKey } from '../sdk/src/account.ts'
export { cnsContent, hashOperation, permissionContent, proposalOperation, signBvm } from '../sdk/src/bvm.ts'
export { encodeClassStream, encodeMethodCall } from '../sdk/src/jvm-payload.ts'
export { signTransaction } from '../sdk/src/transaction.ts'
