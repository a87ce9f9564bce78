import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createLogger } from '../../src/log.ts'

test('json format: one object per line with time, level, module, msg, and fields or the stack', () => {
  const lines: string[] = []
  const log = createLogger({ level: 'info', format: 'json', write: (line) => lines.push(line) }).child('chain')
  log.debug('not written below the level')
  log.info('block 7 committed', { txs: 3, size: 10n })
  log.error('commit failed', new Error('disk full'))
  assert.is(lines.length, 2)
  const [info, error] = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  assert.equal(
    { ...info, time: undefined },
    { time: undefined, level: 'info', module: 'keel:chain', msg: 'block 7 committed', fields: { txs: 3, size: '10' } },
  )
  assert.ok(!Number.isNaN(Date.parse(info.time as string)))
  assert.is(error.level, 'error')
  assert.match(error.stack as string, /^Error: disk full\n/)
  assert.not.ok(
    lines.some((line) => line.includes('\n')),
    'a stack stays on its line',
  )
})

test('text format: the time, level, module and message on one line; an error stack after it', () => {
  const lines: string[] = []
  const log = createLogger({ level: 'debug', write: (line) => lines.push(line) }, 'keel')
  log.warn('slow consumer', { id: 1 })
  assert.match(lines[0], /^\d{4}-\d\d-\d\dT[\d:.]+Z WARN {2}\[keel\] slow consumer {"id":1}$/)
})

test.run()
