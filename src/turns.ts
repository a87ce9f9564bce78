/**
 * Long work cut into short turns (ARCHITECTURE.md decision 11): a thread that commits a block or
 * builds its records gives the event loop back about every millisecond, so the admissions, replies
 * and messages queued meanwhile are served between the pieces instead of after the whole.
 *
 *   const turn = turnBudget()
 *   for (const item of items) { work(item); await turn() }
 */

/** A turn's budget, ms: above it, the next `await turn()` yields to the event loop. */
export const TURN_BUDGET_MS = 1

/** `turn()` resolves at once while the budget lasts, else after the event loop had a turn (setImmediate). */
export function turnBudget(budgetMs = TURN_BUDGET_MS): () => Promise<void> | undefined {
  let since = performance.now()
  return () => {
    if (performance.now() - since < budgetMs) return undefined
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now()
        resolve()
      }),
    )
  }
}
