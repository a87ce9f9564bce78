/**
 * front/admission-job.ts: a submission admitted on the verify pool answers what admitting it in the
 * request thread answered (chain/admission.ts + the signature verdict), in this thread and on real
 * worker threads, across a batch split over two workers.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { signString2017, type TxFields } from '../../../src/crypto/sign-string.ts'
import { signSecp256k1 } from '../../../src/crypto/signature.ts'
import { createVerifyPool, type VerifyPool } from '../../../src/crypto/verify-pool.ts'
import { InvalidParams } from '../../../src/errors.ts'
import { ADMIT_JOB, admissionAnswer, admissionRequest, admitHere, jobs } from '../../../src/front/admission-job.ts'
import { decodeAdmitted } from '../../../src/wire/tx-codec.ts'
import { SDK_PRIVATE_KEY } from '../crypto/vectors.ts'
import { NOW_NS, transfer } from './transfers.ts'

const run = (params: Record<string, unknown>[]) =>
  jobs[ADMIT_JOB](
    params.map((p) => admissionRequest('transfer', p)),
    { nowNs: NOW_NS },
    { nodeVersion: undefined },
  ).map(admissionAnswer)

/** `params` admitted through a real pool's runJob */
async function runOnPool(pool: VerifyPool, params: Record<string, unknown>[]) {
  const answers = await pool.runJob(
    ADMIT_JOB,
    params.map((p) => admissionRequest('transfer', p)),
    { nowNs: NOW_NS },
  )
  return answers.map(admissionAnswer)
}

const jobModule = { workerFile: new URL('../../../src/front/admission-worker.ts', import.meta.url), handlers: jobs }

test('a valid transfer: the hash and the record admitting it in the request thread gave', () => {
  const params = transfer(1)
  const [answer] = run([params])
  if (!('hash' in answer)) throw new Error(`refused: ${JSON.stringify(answer)}`)
  const local = admitTransaction('transfer', params, { nowNs: () => NOW_NS })
  assert.is(answer.hash, local.hash)
  const record = decodeAdmitted(answer.record)
  assert.is(record.signatureValid, true)
  assert.is(record.tx.hash, local.hash)
  assert.is(record.tx.signHash, local.signHash)
  assert.equal(record.tx.value, local.value)
})

test('a signature over other content is admitted as signature-invalid (the chain records SIGFAILED)', () => {
  const [answer] = run([transfer(2, {}, { value: 999 })])
  if (!('record' in answer)) throw new Error(`refused: ${JSON.stringify(answer)}`)
  assert.is(decodeAdmitted(answer.record).signatureValid, false)
})

test('refusals keep their codes and words: time window, missing signature, uncovered field', () => {
  const [future, unsigned, uncovered] = run([
    transfer(3, { timestamp: NOW_NS + 10n * 60n * 1_000_000_000n }),
    { ...transfer(4), signature: '' },
    // signed over the 2017 string, which leaves `extra` out, and sent with it
    {
      ...transfer(5),
      signature: signSecp256k1(signString2017(transfer(5) as unknown as TxFields), SDK_PRIVATE_KEY).slice(2),
      extra: 'not signed',
    },
  ])
  for (const [answer, words] of [
    [future, '`timestamp` is invalid'],
    [unsigned, 'missing params `signature`'],
  ] as const) {
    if (!('refusal' in answer)) throw new Error(`not refused: ${JSON.stringify(answer)}`)
    assert.is(answer.refusal.code, InvalidParams.code)
    assert.is(answer.refusal.message, words)
  }
  if (!('refusal' in uncovered)) throw new Error(`not refused: ${JSON.stringify(uncovered)}`)
  assert.is(uncovered.refusal.code, InvalidParams.code)
  assert.match(uncovered.refusal.message, /^extra is not covered by the 2017 sign string this signature verifies under/)
})

test('bytes that are no request: an unexpected failure, not a crash', () => {
  const [answer] = jobs[ADMIT_JOB]([Uint8Array.of(0xc1)], { nowNs: NOW_NS }, { nodeVersion: undefined }).map(admissionAnswer)
  assert.ok('unexpected' in answer)
})

test('admitted in the request thread itself (a quiet turn, or no verify worker): the same hash and record bytes, the same refusals', () => {
  const params = [transfer(50), transfer(51, {}, { value: 999 }), transfer(52, { timestamp: NOW_NS + 10n * 60n * 1_000_000_000n })]
  const viaJob = run(params)
  for (const [i, p] of params.entries()) {
    const expected = viaJob[i]
    let here: ReturnType<typeof admitHere> | undefined
    let refusal: unknown
    try {
      here = admitHere('transfer', p, NOW_NS, undefined)
    } catch (error) {
      refusal = error
    }
    if ('hash' in expected) {
      assert.is(here?.hash, expected.hash)
      assert.equal(here?.record, expected.record)
    } else {
      if (!('refusal' in expected) || !(refusal instanceof InvalidParams))
        throw new Error(`expected a refusal: ${JSON.stringify({ expected, refusal })}`)
      assert.is(refusal.message, expected.refusal.message)
    }
  }
  assert.is(decodeAdmitted(admitHere('transfer', params[1], NOW_NS, undefined).record).signatureValid, false)
})

test('on two worker threads: every answer in input order, as in this thread', async () => {
  const pool = await createVerifyPool({ workers: 2, jobs: jobModule })
  try {
    assert.is(pool.mode, 'workers')
    const params = Array.from({ length: 37 }, (_, i) => (i % 5 === 4 ? transfer(i, {}, { value: 1 }) : transfer(i)))
    const answers = await runOnPool(pool, params)
    assert.equal(answers, run(params))
    assert.is(answers.filter((a) => 'record' in a && decodeAdmitted(a.record).signatureValid === false).length, 7)
  } finally {
    await pool.close()
  }
})

test('with no worker (the in-thread fallback): the pool runs the job from the table it was given', async () => {
  const pool = await createVerifyPool({ workers: 0, jobs: jobModule })
  try {
    assert.is(pool.mode, 'in-thread')
    const params = [transfer(40), transfer(41, { timestamp: NOW_NS + 10n * 60n * 1_000_000_000n })]
    const answers = await runOnPool(pool, params)
    assert.equal(answers, run(params))
    assert.ok('hash' in answers[0] && 'refusal' in answers[1])
  } finally {
    await pool.close()
  }
})

test.run()
