// Credits of metered upstreams: the ledger of what each step run was charged (per connection and
// per agent) and per-agent budgets, which refuse a lookup before it is sent when its worst-case
// cost does not fit in what is left.
//
// A budget check counts what the ledger holds plus the worst-case amounts held by lookups under
// way on every instance (holds are rows in the store, taken atomically with the check), so
// several instances sharing one database never spend more than the budget between them.
import type { FastifyBaseLogger } from 'fastify'
import { PatchbayError } from '../../kit/errors.ts'
import type { CreditBudgetRow, CreditBudgets, CreditHolds, CreditLedger } from '../../store/credits.ts'
import type { PageRequest } from '../../store/paging.ts'
import type { Changes } from '../changes/changes.ts'
import { type Caller, callerId } from './caller.ts'

export type BudgetPeriod = CreditBudgetRow['period']

export interface BudgetView {
  agentId: string
  limit: number
  period: BudgetPeriod
  /** Start of the current period (null for `total`). */
  periodStart: string | null
  spent: number
  remaining: number
  updatedAt: string
}

export interface Charge {
  caller: Caller
  connectionId: string
  connector: string
  stepId: string
  runId: string
  credits: number
  remaining: number | undefined
}

const BUDGET_CACHE_MS = 5_000

export function periodStart(period: BudgetPeriod, now = new Date()): string | undefined {
  if (period === 'day')
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString()
  if (period === 'month') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString()
  return undefined
}

/**
 * How long a hold outlives a process that died holding it. A lookup's hold normally ends when
 * its charges are in the ledger; one that takes longer than this (pacing waits included) stops
 * counting against the budget then.
 */
export const CREDIT_HOLD_MS = 10 * 60_000

export class CreditService {
  readonly ledger: CreditLedger
  readonly budgets: CreditBudgets
  #holds: CreditHolds
  #log: FastifyBaseLogger
  /** Per agent: charges being written to the ledger by this process. */
  #writing = new Map<string, Set<Promise<void>>>()
  #budgetCache = new Map<string, { row: CreditBudgetRow | null; at: number }>()
  #changes: Changes

  constructor(deps: {
    ledger: CreditLedger
    budgets: CreditBudgets
    holds: CreditHolds
    changes: Changes
    log: FastifyBaseLogger
  }) {
    this.ledger = deps.ledger
    this.budgets = deps.budgets
    this.#holds = deps.holds
    this.#log = deps.log
    this.#changes = deps.changes
    // A budget set or removed on any instance is read again here.
    deps.changes.subscribe('credits', (agentIds) => {
      if (agentIds.length === 0) this.#budgetCache.clear()
      for (const key of this.#budgetCache.keys())
        if (agentIds.includes(key.split('\u0000')[1])) this.#budgetCache.delete(key)
    })
  }

  /**
   * Holds `amount` credits of the caller's budget until the returned function is called; refuses
   * with CREDIT_BUDGET_EXCEEDED when they do not fit. Callers without a budget pass freely. The
   * hold is a row in the store (CreditHolds), so lookups on every instance count each other's.
   */
  async reserve(caller: Caller, amount: number): Promise<() => Promise<void>> {
    const agentId = caller.agentId
    const free = async () => {}
    if (!agentId || amount <= 0) return free
    const { workspaceId } = caller
    if (!(await this.#budget(workspaceId, agentId))) return free
    const now = new Date()
    const taken = await this.#holds.take({
      workspaceId,
      agentId,
      amount,
      now,
      holdMs: CREDIT_HOLD_MS,
      periodStart: (b) => periodStart(b.period, now),
    })
    if (!taken.budget) return free
    if (!taken.holdId) throw budgetExceeded(taken.budget, taken.spent, taken.held, amount)
    const holdId = taken.holdId
    const key = agentKey(workspaceId, agentId)
    let released: Promise<void> | null = null
    // The hold ends once the charges being written are in the ledger: until then it stands for
    // them (counted twice meanwhile, so a lookup may be refused a little early, never let past).
    return () => {
      released ??= Promise.all([...(this.#writing.get(key) ?? [])])
        .then(() => this.#holds.release(holdId))
        .catch((err) =>
          this.#log.error({ err, holdId }, 'could not release a credit hold; it ends at its expiry'),
        )
      return released
    }
  }

  /** Writes a charge to the ledger; the holds of its agent stay until it is written. */
  async record(c: Charge): Promise<void> {
    const key = c.caller.agentId ? agentKey(c.caller.workspaceId, c.caller.agentId) : null
    const write = this.ledger
      .insert({
        workspace_id: c.caller.workspaceId,
        connection_id: c.connectionId,
        connector: c.connector,
        agent_id: c.caller.agentId,
        caller_key_id: callerId(c.caller),
        step_id: c.stepId,
        run_id: c.runId,
        credits: c.credits,
        remaining: c.remaining ?? null,
      })
      .then(
        () => {},
        (err) =>
          this.#log.error({ err, runId: c.runId, credits: c.credits }, 'could not write a credit charge'),
      )
    if (!key) return write
    let set = this.#writing.get(key)
    if (!set) {
      set = new Set()
      this.#writing.set(key, set)
    }
    set.add(write)
    try {
      await write
    } finally {
      set.delete(write)
      if (set.size === 0 && this.#writing.get(key) === set) this.#writing.delete(key)
    }
  }

  async budgetView(workspaceId: string, agentId: string): Promise<BudgetView | null> {
    const row = await this.budgets.get(workspaceId, agentId)
    return row ? this.#view(row) : null
  }

  /** The budgets by agent id, a page at a time (GET /v1/credits/budgets). */
  async pageBudgets(
    workspaceId: string,
    page: PageRequest,
  ): Promise<{ budgets: BudgetView[]; next: string | null }> {
    const { items, next } = await this.budgets.page(workspaceId, page)
    return { budgets: await Promise.all(items.map((r) => this.#view(r))), next }
  }

  async putBudget(
    workspaceId: string,
    agentId: string,
    values: { limit: number; period: BudgetPeriod },
  ): Promise<BudgetView> {
    const row = await this.budgets.put(workspaceId, agentId, values)
    this.#budgetCache.delete(agentKey(workspaceId, agentId))
    this.#changes.publish('credits', [agentId])
    return this.#view(row)
  }

  async deleteBudget(workspaceId: string, agentId: string): Promise<boolean> {
    const deleted = await this.budgets.delete(workspaceId, agentId)
    this.#budgetCache.delete(agentKey(workspaceId, agentId))
    this.#changes.publish('credits', [agentId])
    return deleted
  }

  async #view(row: CreditBudgetRow): Promise<BudgetView> {
    const since = periodStart(row.period)
    const spent = await this.ledger.spentByAgent(row.workspace_id, row.agent_id, since)
    return {
      agentId: row.agent_id,
      limit: row.credit_limit,
      period: row.period,
      periodStart: since ?? null,
      spent,
      remaining: Math.max(0, row.credit_limit - spent),
      updatedAt: row.updated_at,
    }
  }

  async #budget(workspaceId: string, agentId: string): Promise<CreditBudgetRow | null> {
    const key = agentKey(workspaceId, agentId)
    const hit = this.#budgetCache.get(key)
    if (hit && Date.now() - hit.at < BUDGET_CACHE_MS) return hit.row
    const row = (await this.budgets.get(workspaceId, agentId)) ?? null
    if (this.#budgetCache.size > 10_000) this.#budgetCache.clear()
    this.#budgetCache.set(key, { row, at: Date.now() })
    return row
  }
}

const agentKey = (workspaceId: string, agentId: string) => `${workspaceId}\u0000${agentId}`

function budgetExceeded(budget: CreditBudgetRow, spent: number, held: number, requested: number) {
  const period =
    budget.period === 'total' ? 'in total' : budget.period === 'month' ? 'this month (UTC)' : 'today (UTC)'
  const heldText = held > 0 ? `, ${held} more are held by lookups under way` : ''
  return new PatchbayError(
    'CREDIT_BUDGET_EXCEEDED',
    `Agent ${budget.agent_id} may spend ${budget.credit_limit} credits ${period}; ${spent} are spent${heldText}, and this request could cost up to ${requested}. Nothing was sent upstream.`,
    {
      hint: `Look up fewer records (results still in the cache are free), wait for the budget period to start again, or raise the budget with PUT /v1/credits/budgets/${budget.agent_id}.`,
      details: {
        agentId: budget.agent_id,
        limit: budget.credit_limit,
        period: budget.period,
        spent,
        held,
        requested,
      },
    },
  )
}
