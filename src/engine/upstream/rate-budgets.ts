// Request budgets that upstreams report on every response (the code-host's x-ratelimit-*
// headers): tracked per credential and resource, so ready-made steps wait for the reset instead
// of spending a request on a refusal — or, when the reset is further away than the cap, are
// refused at once with RATE_LIMITED and retryAfterMs, nothing sent. API Call steps are only
// tracked (the caller paces them; an upstream refusal still comes back as RATE_LIMITED).

import {
  type BudgetCount,
  type BudgetLedger,
  createMemoryBudgetLedger,
  type Reservation,
} from '../../kit/budget-ledger.ts'
import { type Clock, systemClock } from '../../kit/clock.ts'
import type { ConnectorDefinition, RateBudgetState } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'

export interface TrackedBudget extends RateBudgetState {
  /** When this was last read from a response. */
  observedAt: number
}

/** Margin after the announced reset (whole seconds upstream) before the budget is trusted again. */
const RESET_MARGIN_MS = 250

/** The ledger lane of a credential's wait after a secondary limit (retry-after), over every resource. */
const HOLD = '!hold'

export class RateBudgets {
  /** What this instance last read, per credential and resource (shown by rate-limit-status). */
  #lanes = new Map<string, Map<string, TrackedBudget>>()
  /** What is left of each budget: this process's, or shared by every instance (Redis). */
  #ledger: BudgetLedger
  /** Ready-made requests held back for a reset, and refused because the reset was too far (for tests and diagnosis). */
  readonly stats = { waits: 0, refusals: 0 }
  #clock: Clock
  #onError: (err: unknown) => void

  constructor(opts: { clock?: Clock; ledger?: BudgetLedger; onError?: (err: unknown) => void } = {}) {
    this.#clock = opts.clock ?? systemClock
    this.#ledger = opts.ledger ?? createMemoryBudgetLedger()
    this.#onError = opts.onError ?? (() => {})
  }

  /** Reads a response's headers into the credential's lane (and a secondary limit's retry-after into its hold). */
  record(connector: ConnectorDefinition, key: string, headers: Record<string, string>, status = 200): void {
    const now = this.#clock.now()
    if ((status === 403 || status === 429) && headers['retry-after']) {
      const seconds = Number(headers['retry-after'])
      if (Number.isFinite(seconds) && seconds > 0)
        this.#observe(`${key}|${HOLD}`, { limit: 0, remaining: 0, resetAt: now + seconds * 1000 }, now)
    }
    const read = connector.rateBudget?.read(headers)
    if (!read) return
    let lane = this.#lanes.get(key)
    if (!lane) {
      if (this.#lanes.size > 50_000) this.#lanes.clear()
      lane = new Map()
      this.#lanes.set(key, lane)
    }
    const { resource, ...state } = read
    lane.set(resource, { ...state, observedAt: now })
    this.#observe(`${key}|${resource}`, state, now)
  }

  #observe(lane: string, count: BudgetCount, now: number): void {
    const done = this.#ledger.observe(lane, count, now)
    if (done) done.catch(this.#onError)
  }

  /**
   * Before a ready-made request: takes one request of the budget while it lasts; when it is spent,
   * resolves after the reset if that is within `maxWaitMs`, else refuses without sending anything.
   * A secondary limit's retry-after holds every request of the credential the same way.
   */
  async gate(
    connector: ConnectorDefinition,
    key: string,
    req: { method: string; path: string },
    maxWaitMs: number,
  ): Promise<void> {
    const support = connector.rateBudget
    if (!support) return
    const resource = support.resourceOf(req)
    for (const lane of [`${key}|${HOLD}`, `${key}|${resource}`]) {
      for (;;) {
        const now = this.#clock.now()
        const r = await this.#reserve(lane, now)
        if (r.granted) break
        const waitMs = r.resetAt + RESET_MARGIN_MS - now
        if (waitMs > maxWaitMs) {
          this.stats.refusals++
          const what = lane.endsWith(HOLD)
            ? `${connector.name} asked this connection to wait after a secondary rate limit`
            : `The ${connector.name} ${resource} rate limit of this connection is spent (${r.limit} requests per window)`
          throw new PatchbayError(
            'RATE_LIMITED',
            `${what}; it resets at ${new Date(r.resetAt).toISOString()}. Nothing was sent.`,
            {
              hint: 'Retry after retryAfterMs, or spread the work over more time (GET /v1/connections/{id}/rate-limit-status shows the budget).',
              retryAfterMs: Math.ceil(waitMs),
            },
          )
        }
        this.stats.waits++
        await this.#clock.sleep(Math.max(waitMs, 1))
      }
    }
  }

  /** A reservation; a ledger that does not answer (Redis away) lets the request go, as with no budget known. */
  async #reserve(lane: string, now: number): Promise<Reservation> {
    try {
      return await this.#ledger.reserve(lane, now, RESET_MARGIN_MS)
    } catch (err) {
      this.#onError(err)
      return { granted: true }
    }
  }

  /** What was last seen for a credential, per resource. */
  tracked(key: string): Record<string, TrackedBudget> {
    const lane = this.#lanes.get(key)
    return lane ? Object.fromEntries(lane) : {}
  }
}
