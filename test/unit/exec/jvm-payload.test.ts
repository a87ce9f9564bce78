/**
 * JVM payloads (src/exec/jvm/payload.ts, docs/jvm.md §2): every deploy form gives the same
 * canonical code; the call forms; refusals name the problem. And the ledger's layout over storage
 * slots (src/exec/jvm/ledger.ts, docs/jvm.md §7).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  jvmCallPayload,
  jvmDeployPayload,
  jvmInvokeArgsPayload,
  jvmInvokeBeanPayload,
  jvmJarDeployPayload,
  jvmTarGzDeployPayload,
  readJar,
  writeJar,
} from '../../../sdk/src/jvm.ts'
import { BlockState, ZERO_WORD } from '../../../src/exec/block-state.ts'
import { jdkTool } from '../../../src/exec/jvm/build.ts'
import type { JvmCode } from '../../../src/exec/jvm/child.ts'
import { headSlot, readValue, writeValue } from '../../../src/exec/jvm/ledger.ts'
import {
  decodeCallPayload,
  decodeDeployPayload,
  encodeClassStream,
  encodeInvokeArgs,
  PayloadError,
  writeTar,
} from '../../../src/exec/jvm/payload.ts'
import { MapState } from './helpers.ts'

const bytes = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex.slice(2), 'hex'))
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)
/** Not real class files: the codecs never look inside them. */
const code: JvmCode = {
  main: 'demo.Main',
  classes: new Map([
    ['demo/Main', utf8('main class bytes')],
    ['demo/Main$Inner', utf8('inner class bytes')],
    ['demo/util/Helper', utf8('helper')],
  ]),
}
const canonical = encodeClassStream(code)
const same = (decoded: JvmCode): void => assert.equal(encodeClassStream(decoded), canonical)

test('deploy forms: HVM stream, tar.gz with or without a top directory, InvokeArgs around it, jar: the same canonical code', () => {
  same(decodeDeployPayload(bytes(jvmDeployPayload(code))).code)
  const wrapped = decodeDeployPayload(bytes(jvmTarGzDeployPayload(code, { initArgs: ['a', ''] })))
  same(wrapped.code)
  assert.equal(wrapped.initArgs, ['a', ''], 'the 1.x deploy args, an empty one kept')

  const flat = new Map<string, Uint8Array>([['contract.properties', utf8('# comment\nmain.class = demo.Main\ncontract.name=x\n')]])
  for (const [name, b] of code.classes) flat.set(`./${name}.class`, b)
  same(decodeDeployPayload(new Uint8Array(gzipSync(writeTar(flat)))).code)

  // a jar made by the JDK's jar tool, its main class in the manifest
  const dir = mkdtempSync(join(tmpdir(), 'keel-jar-'))
  try {
    for (const [name, b] of code.classes) {
      mkdirSync(join(dir, 'classes', name, '..'), { recursive: true })
      writeFileSync(join(dir, 'classes', `${name}.class`), b)
    }
    execFileSync(jdkTool('jar'), ['--create', '--file', join(dir, 'c.jar'), '--main-class', 'demo.Main', '-C', join(dir, 'classes'), '.'])
    same(decodeDeployPayload(new Uint8Array(readFileSync(join(dir, 'c.jar')))).code)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('deploy refusals say why', () => {
  const refused = (payload: Uint8Array, message: RegExp): void => {
    assert.throws(
      () => decodeDeployPayload(payload),
      (e: Error) => e instanceof PayloadError && message.test(e.message),
    )
  }
  refused(new Uint8Array(0), /contract code is empty/)
  refused(bytes('0x6080604052'), /not JVM contract code/)
  refused(canonical.subarray(0, canonical.length - 3), /class stream \(FEFFFBCD…\) is truncated/)
  refused(encodeClassStream({ main: 'demo.Other', classes: code.classes }), /the main class demo\.Other is not among/)
  refused(encodeClassStream({ main: 'demo.Main', classes: new Map([['demo/Main', new Uint8Array(64 * 1024 + 1)]]) }), /at most 65536/)
  const noMain = new Map<string, Uint8Array>([['x/demo/Main.class', utf8('m')]])
  refused(new Uint8Array(gzipSync(writeTar(noMain))), /does not name its main class/)
  refused(new Uint8Array(gzipSync(utf8('not a tar'))), /holds no \.class files/)
  refused(encodeInvokeArgs({ code: utf8('neither'), args: [] }), /InvokeArgs code is neither/)
})

test('call forms: HVM typed arguments, 1.x InvokeArgs with "invoke" or a method name; others refused', () => {
  assert.equal(decodeCallPayload(bytes(jvmCallPayload('add', 'k', 5, true, ['x']))), {
    method: 'add',
    args: {
      form: 'typed',
      args: [
        { type: 'java.lang.String', value: 'k' },
        { type: 'long', value: '5' },
        { type: 'boolean', value: 'true' },
        { type: 'java.util.List', value: '["x"]' },
      ],
    },
  })
  assert.equal(decodeCallPayload(bytes(jvmInvokeArgsPayload('add', 'k', '5'))), {
    method: 'add',
    args: { form: 'strings', args: ['k', '5'] },
  })
  assert.equal(decodeCallPayload(encodeInvokeArgs({ methodName: 'get', args: [utf8('k')] })), {
    method: 'get',
    args: { form: 'strings', args: ['k'] },
  })
  assert.throws(() => decodeCallPayload(bytes('0x12345678')), /not a JVM call/)
  assert.throws(() => decodeCallPayload(encodeInvokeArgs({ methodName: 'invoke', args: [] })), /needs the function name/)
  assert.throws(() => decodeCallPayload(encodeInvokeArgs({ code: utf8('x'), methodName: 'f', args: [] })), /not a JVM call/)
})

test('HVM InvokeBean: class, name and fields decoded; a damaged one refused; jars: writeJar/readJar keep classes and Main-Class, the node reads the same', () => {
  const classFile = new Uint8Array([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 61, 1, 2, 3])
  assert.equal(decodeCallPayload(bytes(jvmInvokeBeanPayload('beans.Move', classFile, { to: 'bob', n: 2 }))), {
    method: 'beans.Move',
    args: { form: 'bean', args: ['beans.Move', Buffer.from(classFile).toString('base64'), '{"to":"bob","n":2}'] },
  })
  const named = jvmInvokeBeanPayload('no such name!', classFile)
  assert.throws(() => decodeCallPayload(bytes(named)), /is not a Java class name/)
  const notJson = `${jvmInvokeBeanPayload('a.B', classFile).slice(0, -4)}7b7b`
  assert.throws(() => decodeCallPayload(bytes(notJson)), /fields are not JSON/)

  const jar = writeJar(code)
  assert.equal(readJar(jar), code)
  assert.is(jvmJarDeployPayload(jar), `0x${Buffer.from(canonical).toString('hex')}`)
  same(decodeDeployPayload(jar).code)
})

test('ledger over storage slots: short and long values, overwrite and removal leave no stale slot', () => {
  const base = new MapState()
  const state = new BlockState(base)
  const at = '0x00000000000000000000000000000000000000aa'
  const long = utf8('x'.repeat(100))
  writeValue(state, at, 'a', utf8(''))
  writeValue(state, at, 'b', long)
  assert.equal(readValue(state, at, 'a'), new Uint8Array(0), 'an empty value is not absent')
  assert.equal(readValue(state, at, 'b'), long)
  assert.is(readValue(state, at, 'c'), undefined)
  assert.is(state.changes().storage.get(at)?.size, 2 + 4, 'two heads and four 32-byte chunks')
  base.apply(state.changes())

  const next = new BlockState(base)
  writeValue(next, at, 'b', utf8('short'))
  writeValue(next, at, 'a', null)
  assert.equal(readValue(next, at, 'b'), utf8('short'))
  assert.is(readValue(next, at, 'a'), undefined)
  const changed = next.changes().storage.get(at)
  assert.ok(changed !== undefined)
  const cleared = [...changed.entries()].filter(([, v]) => v === ZERO_WORD).length
  assert.is(cleared, 5, 'the removed head and the four chunks of the old long value')
  base.apply(next.changes())
  assert.is(base.storage.get(at)?.size, 1, 'only the short head is left')
  assert.is.not(base.getStorage(at, headSlot('b')), ZERO_WORD)
})

test.run()
