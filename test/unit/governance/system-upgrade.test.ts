/**
 * Hyperchain's system upgrade in the executor (docs/governance.md §17): a VP's declaration of what
 * it supports (Version.SetSupportedVersion, bound to its node account by its ECert key), a SYSTEM
 * proposal refused until every VP supports its target, its execution raising the running versions,
 * and the running tx_version's gate on the transactions of the same block, on four VPs with real
 * ECerts of a namespace CA.
 */
import { sign, X509Certificate } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { generateAccount } from '../../../sdk/src/account.ts'
import { genesisGovernanceOf } from '../../../src/chain/genesis.ts'
import type { ExecutionOutcome, Hex } from '../../../src/domain.ts'
import { createExecutor } from '../../../src/exec/executor.ts'
import type { NodeHooks } from '../../../src/governance/execute.ts'
import { GovernanceView } from '../../../src/governance/state.ts'
import { BUILD_RUNNING, BUILD_SUPPORTED, nodeBindingBytes } from '../../../src/governance/versions.ts'
import { BuiltinAddress, encodeContents, encodeOperation } from '../../../src/governance/wire.ts'
import { createNamespaceCa, type IssuedCert, issueNodeCert, readVoteCert, voteCertOf } from '../../../src/p2p/identity.ts'
import { DEPLOYER, MapState, mkTx, OTHER } from '../exec/helpers.ts'

const genesis = {
  admins: [DEPLOYER],
  adminThreshold: 0,
  proposalTimeoutNs: 300_000_000_000n,
  runningVersions: { ...BUILD_RUNNING, tx_version: '3.6' },
}
const HOSTS = ['node1', 'node2', 'node3', 'node4']

const bvmTx = (to: Hex, method: string, args: (string | Uint8Array)[], from: Hex = DEPLOYER, signed: Record<string, unknown> = {}) =>
  mkTx({ kind: 'invoke', to, from, vmType: 'BVM', signed, payload: `0x${Buffer.from(encodeOperation(method, args)).toString('hex')}` })
const result = (outcome: ExecutionOutcome) => {
  if (!outcome.ok) throw new Error(`discarded: ${outcome.detail}`)
  return JSON.parse(Buffer.from(outcome.ret.slice(2), 'hex').toString('utf8')) as { Success: boolean; Ret: string | null; Err: string }
}
const retOf = (outcome: ExecutionOutcome) => JSON.parse(Buffer.from(result(outcome).Ret ?? '', 'base64').toString('utf8'))

let certs: Map<string, IssuedCert>
let hooks: NodeHooks
const accounts = new Map(HOSTS.map((host) => [host, generateAccount().address.toLowerCase()]))

test.before(async () => {
  const ca = await createNamespaceCa({ namespace: 'global' })
  const caCert = new X509Certificate(ca.certPem)
  certs = new Map(await Promise.all(HOSTS.map(async (hostname) => [hostname, await issueNodeCert(ca, { hostname, role: 'VP' })] as const)))
  hooks = {
    namespace: 'global',
    minVps: 4,
    vps: () => HOSTS.map((hostname, i) => ({ id: i + 1, hostname })),
    everVps: () => HOSTS.map((hostname, i) => ({ id: i + 1, hostname })),
    readCert(pem) {
      try {
        const cert = voteCertOf(new X509Certificate(pem))
        return { hostname: readVoteCert(cert, caCert).hostname, cert }
      } catch (error) {
        return (error as Error).message
      }
    },
    effectiveFrom: (block) => block + 41,
  }
})

/** SetSupportedVersion as `host` sends it from its node account; `signer` signs the binding (default: the host itself) */
function declaration(host: string, options: { from?: Hex; signer?: string; versions?: object; certOf?: string } = {}) {
  const from = options.from ?? (accounts.get(host) as Hex)
  const key = (certs.get(options.signer ?? host) as IssuedCert).keyPem
  const binding = sign('sha256', nodeBindingBytes(host, from), { key, dsaEncoding: 'ieee-p1363' }).toString('hex')
  return bvmTx(
    BuiltinAddress.version,
    'SetSupportedVersion',
    [host, JSON.stringify(options.versions ?? BUILD_SUPPORTED), (certs.get(options.certOf ?? host) as IssuedCert).certPem, binding],
    from,
  )
}

const systemProposal = (target: object) =>
  bvmTx(BuiltinAddress.proposal, 'Create', [encodeContents([encodeOperation('SystemUpgrade', [JSON.stringify(target)])]), 'SYSTEM'])

function chain() {
  const executor = createExecutor({ governance: genesis })
  executor.attachNetwork(hooks)
  const state = new MapState().fund(DEPLOYER, 1000n).fund(OTHER, 1000n)
  let number = 0
  return {
    state,
    view: () => new GovernanceView(state, genesis),
    async block(...txs: ReturnType<typeof bvmTx>[]) {
      number++
      const { outcomes, changes } = await executor.executeBlock(
        state,
        txs.map((tx) => ({ tx, signatureValid: true })),
        { number, timestamp: BigInt(number) },
      )
      state.apply(changes)
      return outcomes
    },
  }
}

test('SetSupportedVersion: a VP binds its node account with its ECert key and gets nodeOfVP; a forged binding, another host or a missing running version is refused', async () => {
  const c = chain()
  const forgedFrom = generateAccount().address.toLowerCase()
  const outcomes = await c.block(
    // an outsider sends node2's (public) ECert with a binding signed by node3's key
    declaration('node2', { from: forgedFrom, signer: 'node3' }),
    // node3's binding for its own account, but node2's certificate
    declaration('node3', { certOf: 'node2' }),
    declaration('node9', { from: OTHER, certOf: 'node1', signer: 'node1' }),
    declaration('node1', { versions: { tx_version: ['4.1'] } }),
    declaration('node1'),
  )
  const [forged, wrongCert, stranger, withoutRunning, good] = outcomes.map(result)
  assert.match(forged.Err, new RegExp(`the binding of ${forgedFrom} to node2 does not verify with the key of node2's certificate`))
  assert.match(wrongCert.Err, /SetSupportedVersion: the certificate is node2's, not node3's/)
  assert.match(stranger.Err, /"node9" is no VP of this chain \(node1, node2, node3, node4\)/)
  assert.match(withoutRunning.Err, /node1 declares tx_version 4\.1, without 3\.6, the version the chain runs/)
  assert.ok(good.Success, good.Err)
  const view = c.view()
  assert.equal(view.supportedBy('node1')?.versions.tx_version, BUILD_SUPPORTED.tx_version)
  assert.is(view.supportedBy('node1')?.account, accounts.get('node1'))
  assert.ok(view.hasRole(accounts.get('node1') as Hex, 'nodeOfVP'))
  assert.not.ok(view.hasRole(forgedFrom, 'nodeOfVP'), 'the forger got nothing')
  assert.is(view.supportedBy('node2'), undefined)
  // a new node account of node1 replaces the old one
  const renewed = generateAccount().address.toLowerCase()
  const [again] = await c.block(declaration('node1', { from: renewed }))
  assert.ok(result(again).Success, result(again).Err)
  assert.ok(c.view().hasRole(renewed, 'nodeOfVP'))
  assert.not.ok(c.view().hasRole(accounts.get('node1') as Hex, 'nodeOfVP'))
})

test('a SYSTEM proposal names the VPs that do not support its target; once all four declared it passes, raises the running tx_version and opens the gate in the same block', async () => {
  const c = chain()
  const newer = bvmTx(BuiltinAddress.hash, 'Set', ['k', 'v'], OTHER, { version: '4.1' })
  const older = bvmTx(BuiltinAddress.hash, 'Set', ['k', 'w'], OTHER, { version: '3.6' })
  const [refusedNewer, acceptedOlder, none] = await c.block(newer, older, systemProposal({ tx_version: '4.1' }))
  assert.ok(!refusedNewer.ok && refusedNewer.invalidMsg === 'INVALID_PERMISSION', JSON.stringify(refusedNewer))
  assert.match(
    !refusedNewer.ok ? refusedNewer.detail : '',
    /this chain runs tx_version 3\.6 \(tx_getTransactionsVersion\); the transaction declares version 4\.1/,
  )
  assert.ok(result(acceptedOlder).Success)
  assert.match(result(none).Err, /tx_version 4\.1 is not supported by node1, node2, node3, node4 \(of the VPs node1, node2, node3, node4\)/)
  const [d1, d2, d3, partly] = await c.block(
    declaration('node1'),
    declaration('node2'),
    declaration('node3'),
    systemProposal({ tx_version: '4.1' }),
  )
  for (const declared of [d1, d2, d3]) assert.ok(result(declared).Success, result(declared).Err)
  assert.match(result(partly).Err, /tx_version 4\.1 is not supported by node4 \(of the VPs/)
  const latest = c.block(bvmTx(BuiltinAddress.version, 'GetLatestVersions', [], OTHER))
  assert.equal(retOf((await latest)[0]).availableVersions, {}, 'node4 lacks it: nothing is available')

  const [d4, down, same, unknown, created, stillRefused, executed, nowAccepted, afterwards] = await c.block(
    declaration('node4'),
    systemProposal({ tx_version: '2.2' }),
    systemProposal({ ...BUILD_RUNNING, tx_version: '3.6', noxbft_version: '' }),
    systemProposal({ tx_versions: '4.1' }),
    systemProposal({ ...BUILD_RUNNING, tx_version: '4.1', noxbft_version: '' }),
    bvmTx(BuiltinAddress.hash, 'Set', ['k', 'x'], OTHER, { version: '4.1' }),
    bvmTx(BuiltinAddress.proposal, 'Execute', ['1']),
    bvmTx(BuiltinAddress.hash, 'Set', ['k', 'y'], OTHER, { version: '4.1' }),
    bvmTx(BuiltinAddress.version, 'GetLatestVersions', [], OTHER),
  )
  assert.ok(result(d4).Success, result(d4).Err)
  assert.match(result(down).Err, /the chain runs tx_version 3\.6; a system upgrade does not go down to 2\.2/)
  assert.match(result(same).Err, /SystemUpgrade changes nothing/)
  assert.match(result(unknown).Err, /"tx_versions" is no version kind/)
  assert.ok(result(created).Success, result(created).Err)
  assert.ok(!stillRefused.ok, 'voted but not yet executed: the gate holds')
  assert.equal(retOf(executed), [{ code: 200, msg: 'the chain runs tx_version 4.1 (was 3.6) from block 4' }])
  assert.ok(result(nowAccepted).Success, 'the next transaction of the block declares 4.1 and runs')
  assert.equal(retOf(afterwards), {
    maxSupportedVersions: Object.fromEntries(HOSTS.map((host) => [host, { ...BUILD_RUNNING, tx_version: '4.1' }])),
    availableVersions: {},
    runningVersions: { ...BUILD_RUNNING, tx_version: '4.1' },
  })
  assert.is(c.view().runningVersions().tx_version, '4.1')
  assert.is(c.view().proposal(1)?.status, 'COMPLETED')
})

test('the running tx_version gates cname before 2.2; an undeclared VP supports what it runs', async () => {
  const executor = createExecutor({ governance: { ...genesis, runningVersions: { ...BUILD_RUNNING, tx_version: '2.1' } } })
  const state = new MapState().fund(DEPLOYER, 1000n)
  const named = mkTx({ kind: 'invoke', to: `0x${'0'.repeat(40)}`, payload: '0x00', signed: { cname: 'counter' } })
  const version = bvmTx(BuiltinAddress.version, 'GetSupportedVersionByHostname', [''], OTHER)
  const { outcomes } = await executor.executeBlock(
    state,
    [named, version].map((tx) => ({ tx, signatureValid: true })),
    { number: 1, timestamp: 1n },
  )
  assert.ok(!outcomes[0].ok && /a contract is named by cname from tx_version 2\.2 on/.test(outcomes[0].detail), JSON.stringify(outcomes[0]))
  // a node that runs alone (no NODE hooks, host name '') answers what it runs
  assert.equal(retOf(outcomes[1]).tx_version, ['2.1'])
})

test("[genesis] runningVersions: over the build's; a kind Hyperchain does not name or a version the build does not support stops the start", () => {
  const of = (runningVersions: Record<string, string>) =>
    genesisGovernanceOf({ genesis: { admins: [DEPLOYER], adminThreshold: 0, proposalTimeoutSeconds: 300, runningVersions } }, [])
  assert.equal(of({}).runningVersions, BUILD_RUNNING)
  assert.equal(of({ tx_version: '2.2' }).runningVersions, { ...BUILD_RUNNING, tx_version: '2.2' })
  assert.throws(
    () => of({ tx_version: '5.0' }),
    /genesis\.runningVersions\.tx_version: "5\.0" is not supported by this build \(2\.1, 2\.2, 3\.6, 4\.1\)/,
  )
  assert.throws(() => of({ txversion: '4.1' }), /genesis\.runningVersions: "txversion" is no version kind/)
  assert.throws(() => of({ noxbft_version: '1' }), /noxbft_version: "1" is not supported by this build \(none\)/)
})

test.run()
