/**
 * front/submitter.ts: a request thread admits the submissions of a quiet turn itself and sends a
 * burst (four or more in one turn) to the verify worker in one message; either way the chain thread
 * gets the same record and the client the same hash or refusal.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { createVerifyPool } from '../../../src/crypto/verify-pool.ts'
import { InvalidParams, RpcError } from '../../../src/errors.ts'
import { jobs } from '../../../src/front/admission-job.ts'
import { type ChainLink, createFrontSubmitter } from '../../../src/front/submitter.ts'
import { decodeAdmitted } from '../../../src/wire/tx-codec.ts'
import { NOW_NS, transfer } from './transfers.ts'

const jobModule = { workerFile: new URL('../../../src/front/admission-worker.ts', import.meta.url), handlers: jobs }
const FUTURE = NOW_NS + 10n * 60n * 1_000_000_000n

test('a lone submission is admitted on the request thread, a burst on the worker; the same hashes, records and refusals', async () => {
  const pool = await createVerifyPool({ workers: 1, jobs: jobModule })
  const sentToWorker: number[] = []
  const runJob = pool.runJob
  pool.runJob = (name, items, data) => {
    sentToWorker.push(items.length)
    return runJob(name, items, data)
  }
  // the chain thread's side of the link: only the records it is handed matter here
  const logged: Uint8Array[] = []
  const link = { admit: async (record: Uint8Array) => void logged.push(record) } as unknown as ChainLink
  const { submitter } = createFrontSubmitter({ link, verifier: pool, nowNs: () => NOW_NS })
  try {
    assert.is(pool.mode, 'workers')
    const alone = transfer(60)
    assert.is(await submitter.submit('transfer', alone), admitTransaction('transfer', alone, { nowNs: () => NOW_NS }).hash)
    assert.equal(sentToWorker, [], 'one submission in a turn: admitted here')

    const three = [transfer(61), transfer(62), transfer(63)]
    await Promise.all(three.map((params) => submitter.submit('transfer', params)))
    assert.equal(sentToWorker, [], 'three in a turn: still here')

    const burst = [transfer(64), transfer(65, {}, { value: 999 }), transfer(66), transfer(67), transfer(68)]
    const hashes = await Promise.all(burst.map((params) => submitter.submit('transfer', params)))
    assert.equal(sentToWorker, [5], 'five in a turn: one message to the worker')
    assert.equal(
      hashes,
      burst.map((params) => admitTransaction('transfer', params, { nowNs: () => NOW_NS }).hash),
    )
    // the records the chain thread got: nine, the signature verdicts as made (one signed over other content)
    assert.is(logged.length, 9)
    assert.equal(
      logged.slice(4).map((record) => decodeAdmitted(record).signatureValid),
      [true, false, true, true, true],
    )

    // a refusal reads alike from either path
    const refusedHere = await submitter.submit('transfer', transfer(70, { timestamp: FUTURE })).catch((error: unknown) => error)
    const inBurst = [transfer(71, { timestamp: FUTURE }), transfer(72), transfer(73), transfer(74)]
    const outcomes = await Promise.allSettled(inBurst.map((params) => submitter.submit('transfer', params)))
    assert.equal(sentToWorker, [5, 4])
    const refusedThere = (outcomes[0] as PromiseRejectedResult).reason
    for (const refusal of [refusedHere, refusedThere]) {
      assert.instance(refusal, RpcError)
      assert.is((refusal as RpcError).code, InvalidParams.code)
      assert.is((refusal as RpcError).message, '`timestamp` is invalid')
    }
    assert.equal(
      outcomes.slice(1).map((outcome) => outcome.status),
      ['fulfilled', 'fulfilled', 'fulfilled'],
    )
  } finally {
    await pool.close()
  }
})

test.run()
