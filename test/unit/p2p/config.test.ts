/** peerconfig.toml / hosts.toml / addr.toml: Hyperchain's samples parse, and every broken rule says what to write. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  ADDR_FILE,
  HOSTS_FILE,
  loadPeerConfig,
  localNetworkPlan,
  PEERCONFIG_FILE,
  PeerConfigError,
  parsePeerConfig,
  rewriteOneShotFlags,
  writePeerConfigFiles,
} from '../../../src/p2p/config.ts'

// protocol.md §9, as Hyperchain writes the files (the [[nodes]] table repeated for the four VPs)
const samplePeerconfig = `[self]
"N"      = 4                       # number of VPs to connect to (doc spells it n)
id       = 1                       # this node's id (0 for an NVP)
hostname = "node1"
org      = true                    # original member
vp       = true
rec      = false                   # reconnecting after restart
new      = false                   # (optional) joining node
caconf   = "config/namespace.toml"
[[nodes]]
id = 1
hostname = "node1"
static = true
[[nodes]]
id = 2
hostname = "node2"
static = true
[[nodes]]
id = 3
hostname = "node3"
static = true
[[nodes]]
id = 4
hostname = "node4"
static = true
`
const sampleHosts = 'hosts = [ "node1 127.0.0.1:50011", "node2 127.0.0.1:50012", "node3 127.0.0.1:50013", "node4 127.0.0.1:50014" ]\n'
const sampleAddr =
  'domain = "domain1"\naddrs = [ "domain1 127.0.0.1:50011", "domain2 127.0.0.1:50011", "domain3 127.0.0.1:50011", "domain4 127.0.0.1:50011" ]\n'

const nvpPeerconfig = `[self]
n = 2
id = 0
hostname = "nvp1"
vp = false
[[nodes]]
id = 1
hostname = "node1"
[[nodes]]
id = 2
hostname = "node2"
`
const nvpHosts = 'hosts = ["node1 127.0.0.1:50011", "node2 127.0.0.1:50012", "nvp1 127.0.0.1:50015"]'

test('protocol.md §9 samples parse: [self], four VPs, hosts and addr', () => {
  const config = parsePeerConfig({ peerconfig: samplePeerconfig, hosts: sampleHosts, addr: sampleAddr })
  assert.equal(config.self, {
    id: 1,
    hostname: 'node1',
    n: 4,
    new: false,
    org: true,
    rec: false,
    vp: true,
    caconf: 'config/namespace.toml',
  })
  assert.equal(
    config.nodes.map((n) => [n.id, n.hostname, n.static]),
    [
      [1, 'node1', true],
      [2, 'node2', true],
      [3, 'node3', true],
      [4, 'node4', true],
    ],
  )
  assert.equal(config.hosts.get('node3'), { hostname: 'node3', ip: '127.0.0.1', port: 50013 })
  assert.is(config.addr?.domain, 'domain1')
  assert.is(config.addr?.addrs.length, 4)
  assert.equal(config.addr?.addrs[1], { domain: 'domain2', ip: '127.0.0.1', port: 50011 })
})

test('keys are case-insensitive: "N" and n, HOSTNAME, [SELF], [[Nodes]]; optional flags default to false', () => {
  const text = samplePeerconfig.replace('"N"      = 4', 'n = 4').replace('hostname = "node1"\norg', 'HOSTNAME = "node1"\norg')
  assert.is(parsePeerConfig({ peerconfig: text, hosts: sampleHosts }).self.n, 4)
  const upper = '[SELF]\nN = 1\nID = 1\nHostName = "node1"\nVP = true\n[[Nodes]]\nID = 1\nHOSTNAME = "node1"\n'
  const config = parsePeerConfig({ peerconfig: upper, hosts: 'HOSTS = ["node1 10.0.0.1:50011"]' })
  assert.equal([config.self.id, config.self.hostname, config.self.new, config.self.org, config.self.rec], [1, 'node1', false, false, false])
  assert.is(config.nodes[0].static, true)
  assert.is(config.addr, undefined, 'addr.toml is optional')
})

test('an NVP: id 0, vp = false, n VPs to connect to; it may list itself with id 0', () => {
  const config = parsePeerConfig({ peerconfig: nvpPeerconfig, hosts: nvpHosts })
  assert.equal([config.self.id, config.self.vp, config.self.n], [0, false, 2])
  assert.equal(
    config.nodes.map((n) => n.hostname),
    ['node1', 'node2'],
  )
  const listed = parsePeerConfig({ peerconfig: `${nvpPeerconfig}[[nodes]]\nid = 0\nhostname = "nvp1"\n`, hosts: nvpHosts })
  assert.equal(
    listed.nodes.map((n) => n.hostname),
    ['node1', 'node2'],
    'its own entry is not a VP',
  )
})

test('IPv6 and DNS names in hosts.toml', () => {
  const config = parsePeerConfig({
    peerconfig: '[self]\nn = 2\nid = 1\nhostname = "a"\nvp = true\n[[nodes]]\nid = 1\nhostname = "a"\n[[nodes]]\nid = 2\nhostname = "b"\n',
    hosts: 'hosts = ["a [::1]:50011", "b vp2.example.org:50012"]',
  })
  assert.equal(config.hosts.get('a'), { hostname: 'a', ip: '::1', port: 50011 })
  assert.equal(config.hosts.get('b'), { hostname: 'b', ip: 'vp2.example.org', port: 50012 })
})

function refused(
  files: { peerconfig?: string; hosts?: string; addr?: string },
  expect: { file: string; key: string; message: RegExp },
  label = expect.message.source,
): void {
  try {
    parsePeerConfig({ peerconfig: files.peerconfig ?? samplePeerconfig, hosts: files.hosts ?? sampleHosts, addr: files.addr })
  } catch (error) {
    assert.instance(error, PeerConfigError, label)
    const e = error as PeerConfigError
    assert.is(e.file, expect.file, `${label}: file`)
    assert.is(e.key, expect.key, `${label}: key`)
    assert.match(e.message, expect.message, label)
    assert.ok(e.message.startsWith(`${expect.file}: `), `${label}: message names the file`)
    return
  }
  assert.unreachable(`${label}: accepted`)
}

const P = PEERCONFIG_FILE
const H = HOSTS_FILE
const A = ADDR_FILE

test('an NVP has id 0 and vp = false', () => {
  refused(
    { peerconfig: nvpPeerconfig.replace('id = 0', 'id = 3'), hosts: nvpHosts },
    { file: P, key: '[self] id', message: /an NVP has id = 0/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('id       = 1', 'id = 0') },
    { file: P, key: '[self] id', message: /is 0 but vp = true: a VP has id 1..N \(or set vp = false for an NVP\)/ },
  )
  refused(
    { peerconfig: `${nvpPeerconfig}[[nodes]]\nid = 5\nhostname = "nvp1"\n`, hosts: nvpHosts },
    { file: P, key: '[[nodes]] #3 id', message: /for this NVP \(nvp1\); write id = 0/ },
  )
})

test('VP ids unique and 1..N; N agrees with the VPs listed', () => {
  refused(
    { peerconfig: samplePeerconfig.replace('id = 3', 'id = 2') },
    { file: P, key: '[[nodes]] #3 id', message: /2 is used by both node2 and node3; every VP needs its own id/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('id = 4', 'id = 5') },
    { file: P, key: '[[nodes]] #4 id', message: /VP ids run 1..N with "N" = 4/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('id = 4', 'id = 0') },
    { file: P, key: '[[nodes]] #4 id', message: /is 0 \(node4\): VP ids run 1..N/ },
  )
  refused({ peerconfig: samplePeerconfig.replace('id       = 1', 'id = 7') }, { file: P, key: '[self] id', message: /is 7 but "N" = 4/ })
  refused(
    { peerconfig: samplePeerconfig.replace('"N"      = 4', '"N" = 5') },
    { file: P, key: '[self] n', message: /is 5 but 4 VPs are listed in \[\[nodes\]\].*write "N" = 4/ },
  )
  refused(
    { peerconfig: nvpPeerconfig.replace('n = 2', 'n = 3'), hosts: nvpHosts },
    { file: P, key: '[self] n', message: /only 2 VPs are listed/ },
  )
  refused({ peerconfig: samplePeerconfig.replace('"N"      = 4', 'n = 0') }, { file: P, key: '[self] n', message: /at least 1/ })
  refused(
    { peerconfig: samplePeerconfig.replace('hostname = "node4"', 'hostname = "node3"') },
    { file: P, key: '[[nodes]] #4 hostname', message: /listed twice/ },
  )
})

test('self listed (with the same id) on a VP', () => {
  const withoutSelf = samplePeerconfig
    .replace('[[nodes]]\nid = 1\nhostname = "node1"\nstatic = true\n', '')
    .replace('"N"      = 4', 'n = 3')
  refused(
    { peerconfig: withoutSelf.replace('id = 2', 'id = 1').replace('id = 3', 'id = 2').replace('id = 4', 'id = 3') },
    { file: P, key: '[[nodes]]', message: /this node \(node1\) is not listed; add \[\[nodes\]\] with id = 1, hostname = "node1"/ },
  )
  const swapped = samplePeerconfig
    .replace('id = 1\nhostname = "node1"', 'id = 2\nhostname = "node1"')
    .replace('id = 2\nhostname = "node2"', 'id = 1\nhostname = "node2"')
  refused({ peerconfig: swapped }, { file: P, key: '[[nodes]] id', message: /node1 has id 2 in \[\[nodes\]\] but 1 in \[self\]/ })
  refused(
    { peerconfig: '[self]\nn = 1\nid = 0\nhostname = "nvp1"\nvp = false\n[[nodes]]\nid = 0\nhostname = "nvp1"\n', hosts: nvpHosts },
    {
      file: P,
      key: '[[nodes]]',
      message: /lists no VP/,
    },
  )
})

test('every host name of peerconfig.toml resolves through hosts.toml', () => {
  refused(
    { hosts: 'hosts = [ "node1 127.0.0.1:50011", "node2 127.0.0.1:50012", "node4 127.0.0.1:50014" ]' },
    { file: H, key: 'hosts', message: /has no line for node3; add "node3 <ip>:<port>"/ },
  )
  refused(
    { peerconfig: nvpPeerconfig, hosts: 'hosts = ["node1 127.0.0.1:1", "node2 127.0.0.1:2"]' },
    { file: H, key: 'hosts', message: /no line for nvp1/ },
  )
})

test('malformed values name the key and show what to write', () => {
  refused(
    { peerconfig: samplePeerconfig.replace('vp       = true', 'vp = "true"') },
    { file: P, key: '[self] vp', message: /true or false without quotes/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('vp       = true\n', '') },
    { file: P, key: '[self] vp', message: /is missing; write vp = true or vp = false/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('id       = 1', 'id = "1"') },
    { file: P, key: '[self] id', message: /integer without quotes/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('id       = 1', 'id = -1') },
    { file: P, key: '[self] id', message: /non-negative integer/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('hostname = "node1"\norg', 'hostname = "node 1"\norg') },
    { file: P, key: '[self] hostname', message: /letters, digits/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('"N"      = 4', '"N" = 4\nn = 4') },
    { file: P, key: '[self] n', message: /given twice \(keys are case-insensitive\)/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('rec      = false', 'recc = false') },
    { file: P, key: '[self] recc', message: /unknown key; check the spelling/ },
  )
  refused(
    { peerconfig: samplePeerconfig.replace('static = true\n[[nodes]]\nid = 2', 'statik = true\n[[nodes]]\nid = 2') },
    {
      file: P,
      key: '[[nodes]] #1 statik',
      message: /unknown key/,
    },
  )
  refused({ peerconfig: samplePeerconfig.replace('[self]', '[me]') }, { file: P, key: 'me', message: /only \[self\] and \[\[nodes\]\]/ })
  refused(
    { peerconfig: samplePeerconfig.replace(/\[self\][^[]*/, '') },
    { file: P, key: '[self]', message: /is missing; add a \[self\] table/ },
  )
  refused({ peerconfig: samplePeerconfig.replace(/\[\[nodes\]\][\s\S]*/, '') }, { file: P, key: '[[nodes]]', message: /is missing/ })
  refused(
    { peerconfig: samplePeerconfig.replace('[[nodes]]', '[nodes]').split('[[nodes]]')[0] },
    { file: P, key: '[[nodes]]', message: /double brackets/ },
  )
  refused({ peerconfig: 'id = = 1' }, { file: P, key: '', message: /is not valid TOML/ })
  refused(
    { hosts: 'hosts = [ "node1 127.0.0.1" ]' },
    { file: H, key: 'hosts', message: /is not "<hostname> <ip>:<port>"; write e.g. "node1 127.0.0.1:50011"/ },
  )
  refused({ hosts: 'hosts = [ "node1 127.0.0.1:70000" ]' }, { file: H, key: 'hosts', message: /port 70000 is outside 1..65535/ })
  refused({ hosts: 'hosts = [ "node1 [1:2:3]:1" ]' }, { file: H, key: 'hosts', message: /not an IPv6 address/ })
  refused({ hosts: 'hosts = [ 1 ]' }, { file: H, key: 'hosts', message: /quoted string/ })
  refused({ hosts: 'hosts = "node1 127.0.0.1:1"' }, { file: H, key: 'hosts', message: /must be an array of strings/ })
  refused({ hosts: 'host = []' }, { file: H, key: 'host', message: /unknown key/ })
  refused(
    { hosts: sampleHosts.replace('node2 127.0.0.1:50012', 'node1 127.0.0.1:50012') },
    { file: H, key: 'hosts', message: /node1 is listed twice/ },
  )
  refused({ addr: 'addrs = ["domain1 127.0.0.1:50011"]' }, { file: A, key: 'domain', message: /domain = "domain1"/ })
  refused(
    { addr: 'domain = "domain1"\naddrs = ["domain2 127.0.0.1:50011"]' },
    { file: A, key: 'addrs', message: /no line for this node's own domain domain1/ },
  )
  refused(
    { addr: 'domain = "d"\naddrs = ["d 127.0.0.1:1", "d 127.0.0.1:2"]' },
    { file: A, key: 'addrs', message: /domain d is listed twice/ },
  )
  refused(
    { addr: 'domain = "d"\naddrs = ["d 127.0.0.1"]' },
    { file: A, key: 'addrs', message: /"<domain> <ip>:<port>"; write e.g. "domain1 127.0.0.1:50011"/ },
  )
})

test('loadPeerConfig reads a directory and names the full path; a missing file says so', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-peercfg-'))
  writeFileSync(join(dir, PEERCONFIG_FILE), samplePeerconfig)
  try {
    loadPeerConfig(dir)
    assert.unreachable('hosts.toml is missing')
  } catch (error) {
    assert.is((error as PeerConfigError).file, join(dir, HOSTS_FILE))
    assert.match((error as Error).message, /cannot be read/)
  }
  writeFileSync(join(dir, HOSTS_FILE), sampleHosts.replace('node2 ', 'nodeX '))
  try {
    loadPeerConfig(dir)
    assert.unreachable('node2 has no address')
  } catch (error) {
    assert.ok((error as Error).message.startsWith(`${join(dir, HOSTS_FILE)}: hosts: has no line for node2`), (error as Error).message)
  }
  writeFileSync(join(dir, HOSTS_FILE), sampleHosts)
  writeFileSync(join(dir, ADDR_FILE), sampleAddr)
  assert.is(loadPeerConfig(dir).addr?.domain, 'domain1')
  rmSync(dir, { recursive: true })
})

test('writePeerConfigFiles: a local network plan writes files that load back; nothing invalid is written', () => {
  const plan = localNetworkPlan({ vps: 4, nvps: 1, ports: [1001, 1002, 1003, 1004, 1005] })
  assert.equal([...plan.keys()], ['node1', 'node2', 'node3', 'node4', 'nvp1'])
  for (const [hostname, input] of plan) {
    const dir = mkdtempSync(join(tmpdir(), 'keel-peercfg-'))
    const written = writePeerConfigFiles(dir, input)
    assert.equal(readdirSync(dir).sort(), [ADDR_FILE, HOSTS_FILE, PEERCONFIG_FILE], 'no temporary files left')
    const loaded = loadPeerConfig(dir)
    assert.equal(loaded, written)
    assert.is(loaded.self.hostname, hostname)
    assert.is(loaded.self.vp, hostname.startsWith('node'))
    assert.is(loaded.nodes.length, 4)
    assert.is(loaded.hosts.size, 5)
    assert.match(readFileSync(join(dir, PEERCONFIG_FILE), 'utf8'), /^\[self\]\n"N" = 4\n/)
    rmSync(dir, { recursive: true })
  }
  const dir = mkdtempSync(join(tmpdir(), 'keel-peercfg-'))
  const bad = { ...plan.get('node2')!, self: { id: 2, hostname: 'node2', n: 4, vp: false } }
  assert.throws(() => writePeerConfigFiles(dir, bad), /an NVP has id = 0/)
  assert.equal(readdirSync(dir), [], 'nothing written')
  rmSync(dir, { recursive: true })
})

test('localNetworkPlan: NVPs may be named (node5, as in the conformance examples); a name used twice is refused', () => {
  const plan = localNetworkPlan({ vps: 4, nvps: 1, nvpNames: ['node5'], ports: [1001, 1002, 1003, 1004, 1005] })
  assert.equal([...plan.keys()], ['node1', 'node2', 'node3', 'node4', 'node5'])
  const nvp = plan.get('node5')!
  assert.equal(nvp.self, { id: 0, hostname: 'node5', n: 4, vp: false, org: false })
  assert.equal(
    nvp.hosts.find((host) => host.hostname === 'node5'),
    { hostname: 'node5', ip: '127.0.0.1', port: 1005 },
  )
  assert.equal(
    plan.get('node1')!.nodes.map((node) => node.hostname),
    ['node1', 'node2', 'node3', 'node4'],
    'the NVP is not one of the VPs',
  )
  assert.throws(
    () => localNetworkPlan({ vps: 4, nvps: 1, nvpNames: ['node4'], ports: [1001, 1002, 1003, 1004, 1005] }),
    /host name node4 is used twice/,
  )
})

test('rewriteOneShotFlags: after a start new = false, org = false, rec = true (consensus.md §7); then the file is left alone', () => {
  const input = localNetworkPlan({ vps: 5, ports: [1001, 1002, 1003, 1004, 1005] }).get('node5')!
  const dir = mkdtempSync(join(tmpdir(), 'keel-peercfg-'))
  writePeerConfigFiles(dir, { ...input, self: { ...input.self, new: true, org: false, rec: false } })
  const first = loadPeerConfig(dir)
  assert.equal([first.self.new, first.self.org, first.self.rec], [true, false, false])
  assert.ok(rewriteOneShotFlags(dir, first))
  const after = loadPeerConfig(dir)
  assert.equal([after.self.new, after.self.org, after.self.rec], [false, false, true])
  assert.equal({ ...after, self: first.self }, first, 'only the flags change')
  assert.not.ok(rewriteOneShotFlags(dir, after), 'nothing to rewrite the second time')
  rmSync(dir, { recursive: true })
})

test.run()
