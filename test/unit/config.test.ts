import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { defaultConfig, namespaceConfig, namespacesOf, readConfigFile, resolveConfig } from '../../src/config.ts'
import { coresPerNode, threadLayout } from '../../src/thread-layout.ts'

test('embedded defaults: port 8081, namespace global', () => {
  const config = resolveConfig()
  assert.is(config.jsonrpc.port, 8081)
  assert.is(config.node.namespace, 'global')
  assert.equal(config, defaultConfig)
})

test('a TOML file overrides, flags override the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-config-'))
  const path = join(dir, 'keel.toml')
  writeFileSync(path, '[jsonrpc]\nport = 9000\nmaxBatchLength = 10\n[node]\nhostname = "vp2"\n')
  const config = resolveConfig(readConfigFile(path), { jsonrpc: { port: 9100 } })
  assert.is(config.jsonrpc.port, 9100)
  assert.is(config.jsonrpc.maxBatchLength, 10)
  assert.is(config.node.hostname, 'vp2')
})

test('unknown sections, keys and wrong types are refused at start', () => {
  assert.throws(() => resolveConfig({ nope: {} } as never), /unknown section \[nope\]/)
  assert.throws(() => resolveConfig({ jsonrpc: { prot: 1 } } as never), /unknown key jsonrpc.prot/)
  assert.throws(() => resolveConfig({ jsonrpc: { port: '80' } } as never), /jsonrpc.port must be a number/)
  assert.throws(() => resolveConfig({ jsonrpc: { port: 70000 } }), /0..65535/)
  assert.throws(() => resolveConfig({ node: { namespace: '../x' } }), /namespace/)
})

test('[node] cores: all the machine has by default; the thread layout follows (src/thread-layout.ts)', () => {
  assert.is(resolveConfig().node.cores, 0)
  assert.throws(() => resolveConfig({ node: { cores: -1 } }), /node.cores must be 0/)
  assert.throws(() => resolveConfig({ node: { cores: 1.5 } }), /node.cores must be 0/)
  // two cores: the chain thread, the request threads (which admit a quiet turn's submissions themselves) and one verify worker; the state hashed on the chain thread. Without a request thread, a verify worker per core and the state hasher
  assert.equal(threadLayout({ cores: 0, requestThreads: 1 }, 2), { cores: 2, requestThreads: 1, verifyWorkers: 1, stateHashWorker: false })
  assert.equal(threadLayout({ cores: 2, requestThreads: 0 }, 2), { cores: 2, requestThreads: 0, verifyWorkers: 2, stateHashWorker: true })
  // three or more: a verify worker per core and the state hasher beside the request threads; one core: the chain thread alone
  assert.equal(threadLayout({ cores: 3, requestThreads: 1 }, 4), { cores: 3, requestThreads: 1, verifyWorkers: 3, stateHashWorker: true })
  assert.equal(threadLayout({ cores: 1, requestThreads: 1 }, 2), { cores: 1, requestThreads: 0, verifyWorkers: 0, stateHashWorker: false })
  // never more than the machine has
  assert.equal(threadLayout({ cores: 8, requestThreads: 2 }, 4), { cores: 4, requestThreads: 2, verifyWorkers: 4, stateHashWorker: true })
  // four VPs and an NVP on two cores: one each; on eight cores with four nodes, two each
  assert.is(coresPerNode(5, 2), 1)
  assert.is(coresPerNode(4, 8), 2)
})

test('[tcert]: off by default with no enrollment CAs; enrollmentCaFiles must be a list of paths', () => {
  assert.equal(resolveConfig().tcert, { check: false, enrollmentCaFiles: [] })
  const dir = mkdtempSync(join(tmpdir(), 'keel-config-'))
  const path = join(dir, 'keel.toml')
  writeFileSync(path, '[tcert]\ncheck = true\nenrollmentCaFiles = ["certs/eca.cert"]\n')
  assert.equal(resolveConfig(readConfigFile(path)).tcert, { check: true, enrollmentCaFiles: ['certs/eca.cert'] })
  assert.throws(() => resolveConfig({ tcert: { enrollmentCaFiles: 'eca.cert' } } as never), /tcert.enrollmentCaFiles must be/)
  assert.throws(() => resolveConfig({ tcert: { enrollmentCaFiles: [1] } } as never), /tcert.enrollmentCaFiles must be a list of file paths/)
  assert.throws(() => resolveConfig({ tcert: { check: 'yes' } } as never), /tcert.check must be a boolean/)
})

test('[genesis] admins: none by default (the genesis accounts are then the admins); each must be a 20-byte address', () => {
  assert.equal(resolveConfig().genesis, { accounts: [], admins: [], adminThreshold: 0, proposalTimeoutSeconds: 300, runningVersions: {} })
  const admin = '0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc'
  assert.equal(resolveConfig({ genesis: { admins: [admin, admin.slice(2).toUpperCase()] } }).genesis.admins, [
    admin,
    admin.slice(2).toUpperCase(),
  ])
  for (const admins of [['0x1234'], [42], 'nobody'])
    assert.throws(
      () => resolveConfig({ genesis: { admins: admins as string[] } }),
      /genesis\.admins must be a list of 20-byte hex addresses|genesis\.admins must be a object/,
    )
})

test('[log]: text at info by default; a level or format not known is refused', () => {
  assert.equal(resolveConfig().log, { level: 'info', format: 'text' })
  assert.is(resolveConfig({ log: { format: 'json' } }).log.format, 'json')
  assert.throws(() => resolveConfig({ log: { format: 'yaml' } } as never), /log.format must be "text" or "json", got "yaml"/)
  assert.throws(
    () => resolveConfig({ log: { level: 'loud' } } as never),
    /log.level must be debug, info, warn, error or silent, got "loud"/,
  )
})

test('[network]: a single VP by default; timers are "default" or "test"', () => {
  assert.equal(resolveConfig().network, { configDir: '', timers: 'default', genesisVps: [] })
  assert.equal(resolveConfig({ network: { configDir: 'net/node1', timers: 'test' } }).network, {
    configDir: 'net/node1',
    timers: 'test',
    genesisVps: [],
  })
  assert.equal(resolveConfig({ network: { genesisVps: [1, 2, 3, 4] } }).network.genesisVps, [1, 2, 3, 4])
  assert.throws(() => resolveConfig({ network: { genesisVps: [1, 1] } }), /network.genesisVps must be a list of distinct VP ids/)
  assert.throws(() => resolveConfig({ network: { genesisVps: [0] } }), /network.genesisVps/)
  assert.throws(() => resolveConfig({ network: { timers: 'fast' } } as never), /network.timers must be "default" or "test", got "fast"/)
})

test('issue 30: [node] namespaces, the first the default; each namespace but the default has its network files in <configDir>/<namespace>/', () => {
  assert.equal(namespacesOf(resolveConfig()), ['global'])
  const several = resolveConfig({ node: { namespaces: ['ns1', 'ns2'] }, network: { configDir: 'net/node1' } })
  assert.is(several.node.namespace, 'ns1', 'the first is the default')
  assert.equal(namespacesOf(several), ['ns1', 'ns2'])
  assert.equal([namespaceConfig(several, 'ns1').node.namespace, namespaceConfig(several, 'ns1').network.configDir], ['ns1', 'net/node1'])
  assert.equal(
    [namespaceConfig(several, 'ns2').node.namespace, namespaceConfig(several, 'ns2').network.configDir],
    ['ns2', 'net/node1/ns2'],
  )
  const one = resolveConfig()
  assert.is(namespaceConfig(one, 'global'), one, 'one namespace runs with the configuration as it is')
  assert.throws(() => resolveConfig({ node: { namespaces: ['a', 'a'] } }), /node.namespaces must be a list of distinct names/)
  assert.throws(() => resolveConfig({ node: { namespaces: ['A-1'] } }), /node.namespaces/)
})

test.run()
