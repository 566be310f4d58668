// Request budgets that upstreams report on every response (the code-host's x-ratelimit-*
// headers): tracked per credential and resource, so ready-made steps wait for the reset instead
// of spending a request on a refusal — or, when the reset is further away than the cap, are
// refused at once with RATE_LIMITED and retryAfterMs, nothing sent. API Call steps are only
// tracked (the caller paces them; an upstream refusal still comes back as RATE_LIMITED).

import { type Clock, systemClock } from '../../kit/clock.ts'
import type { ConnectorDefinition, RateBudgetState } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'

export interface TrackedBudget extends RateBudgetState {
  /** When this was last read from a response. */
  observedAt: number
}

/** Margin after the announced reset (whole seconds upstream) before the budget is trusted again. */
const RESET_MARGIN_MS = 250

export class RateBudgets {
  #lanes = new Map<string, Map<string, TrackedBudget>>()
  /** Ready-made requests held back for a reset, and refused because the reset was too far (for tests and diagnosis). */
  readonly stats = { waits: 0, refusals: 0 }
  #clock: Clock

  constructor(clock: Clock = systemClock) {
    this.#clock = clock
  }

  /** Reads a response's headers into the credential's lane. */
  record(connector: ConnectorDefinition, key: string, headers: Record<string, string>): void {
    const read = connector.rateBudget?.read(headers)
    if (!read) return
    let lane = this.#lanes.get(key)
    if (!lane) {
      if (this.#lanes.size > 50_000) this.#lanes.clear()
      lane = new Map()
      this.#lanes.set(key, lane)
    }
    const { resource, ...state } = read
    lane.set(resource, { ...state, observedAt: this.#clock.now() })
  }

  /**
   * Before a ready-made request: resolves at once while the budget lasts, after the reset when it
   * is spent and the reset is within `maxWaitMs`; otherwise refuses without sending anything.
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
    const b = this.#lanes.get(key)?.get(resource)
    if (!b || b.remaining > 0) return
    const waitMs = b.resetAt + RESET_MARGIN_MS - this.#clock.now()
    if (waitMs <= 0) return
    if (waitMs > maxWaitMs) {
      this.stats.refusals++
      throw new PatchbayError(
        'RATE_LIMITED',
        `The ${connector.name} ${resource} rate limit of this connection is spent (${b.limit} requests per window); it resets at ${new Date(b.resetAt).toISOString()}. Nothing was sent.`,
        {
          hint: 'Retry after retryAfterMs, or spread the work over more time (GET /v1/connections/{id}/rate-limit-status shows the budget).',
          retryAfterMs: Math.ceil(waitMs),
        },
      )
    }
    this.stats.waits++
    await this.#clock.sleep(waitMs)
    // The window has turned: trust the upstream again until its next answer says otherwise.
    const now = this.#lanes.get(key)?.get(resource)
    if (now === b) this.#lanes.get(key)!.set(resource, { ...b, remaining: b.limit, used: 0 })
  }

  /** What was last seen for a credential, per resource. */
  tracked(key: string): Record<string, TrackedBudget> {
    const lane = this.#lanes.get(key)
    return lane ? Object.fromEntries(lane) : {}
  }
}
