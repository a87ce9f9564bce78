/**
 * Waiting for a transaction's receipt: tx_getTransactionReceipt answers -32001 (DATA_NOT_FOUND)
 * until the transaction is committed, then the receipt (code 0) or the reason it failed (its own
 * code: -32002 out of balance, -32003 bad signature, -32004/-32005 the contract failed, …).
 *
 * ```ts
 * const hash = await client.tx_sendTransaction(signTransfer(account, to, 100))
 * const receipt = await waitForReceipt(client, hash)            // or throws RpcError / ReceiptTimeoutError
 * ```
 */
import { type KeelClient, RpcError } from './client.ts'
import { ErrorCode } from './generated/errors.ts'
import type { Receipt } from './generated/types.ts'

export interface WaitForReceiptOptions {
  /** how long to keep asking; default 30 s */
  timeoutMs?: number
  /** the longest pause between two questions (they start at 50 ms and grow); default 500 ms */
  intervalMs?: number
  /** stops waiting (rejecting with the signal's reason) */
  signal?: AbortSignal
}

/** No receipt within the time allowed: the transaction may still commit; ask again later. */
export class ReceiptTimeoutError extends Error {
  override name = 'ReceiptTimeoutError'
  constructor(
    readonly hash: string,
    readonly timeoutMs: number,
  ) {
    super(`no receipt for ${hash} within ${timeoutMs} ms: it may still be committed, ask again with tx_getTransactionReceipt`)
  }
}

/**
 * Polls tx_getTransactionReceipt while it answers -32001, up to `timeoutMs`. Resolves with the
 * receipt; rejects with the node's RpcError when the transaction failed, ReceiptTimeoutError when
 * the time is up.
 */
export async function waitForReceipt(
  client: Pick<KeelClient, 'tx_getTransactionReceipt'>,
  hash: string,
  options: WaitForReceiptOptions = {},
): Promise<Receipt> {
  const timeoutMs = options.timeoutMs ?? 30_000
  const maxInterval = options.intervalMs ?? 500
  const deadline = Date.now() + timeoutMs
  let interval = Math.min(50, maxInterval)
  for (;;) {
    options.signal?.throwIfAborted()
    try {
      return await client.tx_getTransactionReceipt(hash)
    } catch (error) {
      if (!(error instanceof RpcError) || error.code !== ErrorCode.DATA_NOT_FOUND) throw error
    }
    const left = deadline - Date.now()
    if (left <= 0) throw new ReceiptTimeoutError(hash, timeoutMs)
    await pause(Math.min(interval, left), options.signal)
    interval = Math.min(interval * 2, maxInterval)
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms)
    function done(): void {
      signal?.removeEventListener('abort', aborted)
      resolve()
    }
    function aborted(): void {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', aborted, { once: true })
  })
}
