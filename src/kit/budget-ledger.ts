// What is left of an upstream's request budget, per credential and resource, counted so that
// requests on their way are spent before the upstream answers: a ready-made request reserves one
// request of the budget before it is sent, and an answer can only lower what is left within the
// same window (the upstream counts the requests it has seen; reservations it has not seen yet are
// already taken off). An answer of another window (another reset time: the window turned, or the
// upstream changed the limit) replaces the count. In memory for one
// instance; kit/redis-budgets.ts keeps the same counts in Redis for every instance sharing a
// credential, so N instances spend one budget between them instead of each its own.

/** The budget as an upstream reports it (limit, what is left, when the window resets). */
export interface BudgetCount {
  limit: number
  remaining: number
  /** Epoch milliseconds. */
  resetAt: number
}

/** The ledger's answer to a reservation: granted, or the spent budget's window (wait or refuse). */
export type Reservation = { granted: true } | { granted: false; limit: number; resetAt: number }

export interface BudgetLedger {
  /**
   * Takes one request of the budget. Granted when nothing is known yet, while requests are left,
   * or once the spent window's reset (plus `marginMs`) has passed (the new window starts full).
   */
  reserve(key: string, nowMs: number, marginMs: number): Reservation | Promise<Reservation>
  /** What an answer reported. */
  observe(key: string, count: BudgetCount, nowMs: number): void | Promise<void>
}

const GRANTED: Reservation = { granted: true }

/**
 * When a spent window has turned, the new window's reset is not known until an answer tells it:
 * until then the ledger takes it to be this far away, so requests reserved before any answer came
 * back cannot start the window over and over.
 */
export const PROVISIONAL_WINDOW_MS = 1_000

/** The ledger of one process. */
export function createMemoryBudgetLedger(): BudgetLedger {
  const counts = new Map<string, BudgetCount>()
  return {
    reserve(key, nowMs, marginMs) {
      const c = counts.get(key)
      if (!c) return GRANTED
      if (c.remaining > 0) {
        c.remaining--
        return GRANTED
      }
      if (nowMs >= c.resetAt + marginMs) {
        // The window has turned: trust the upstream again, this request the first of the new one.
        c.remaining = c.limit - 1
        c.resetAt = nowMs + PROVISIONAL_WINDOW_MS
        return GRANTED
      }
      return { granted: false, limit: c.limit, resetAt: c.resetAt }
    },
    observe(key, count) {
      const c = counts.get(key)
      if (c && count.resetAt === c.resetAt) {
        c.remaining = Math.min(c.remaining, count.remaining)
        c.limit = count.limit
        return
      }
      if (counts.size > 50_000) counts.clear()
      counts.set(key, { ...count })
    },
  }
}
