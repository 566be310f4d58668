// Credits of metered upstreams: the ledger of what each step run was charged (per connection and
// per agent) and per-agent budgets, which refuse a lookup before it is sent when its worst-case
// cost does not fit in what is left.
//
// A budget check counts what the ledger holds plus what is still unsettled in this process:
// worst-case amounts held by lookups under way and charges not yet written. Several instances
// sharing one database each see the others' charges once they are written.
import type { FastifyBaseLogger } from 'fastify'
import { PatchbayError } from '../../kit/errors.ts'
import type { CreditBudgetRow, CreditBudgets, CreditLedger } from '../../store/credits.ts'
import type { Caller } from './caller.ts'

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

export class CreditService {
  readonly ledger: CreditLedger
  readonly budgets: CreditBudgets
  #log: FastifyBaseLogger
  /** Per agent: worst-case amounts held plus charges not yet written. */
  #unsettled = new Map<string, number>()
  #locks = new Map<string, Promise<void>>()
  #budgetCache = new Map<string, { row: CreditBudgetRow | null; at: number }>()

  constructor(deps: { ledger: CreditLedger; budgets: CreditBudgets; log: FastifyBaseLogger }) {
    this.ledger = deps.ledger
    this.budgets = deps.budgets
    this.#log = deps.log
  }

  /**
   * Holds `amount` credits of the caller's budget until the returned function is called; refuses
   * with CREDIT_BUDGET_EXCEEDED when they do not fit. Callers without a budget pass freely.
   */
  async reserve(caller: Caller, amount: number): Promise<() => void> {
    const agentId = caller.agentId
    if (!agentId || amount <= 0) return () => {}
    const key = agentKey(caller.workspaceId, agentId)
    return this.#withLock(key, async () => {
      const budget = await this.#budget(caller.workspaceId, agentId)
      if (!budget) return () => {}
      // Read what is unsettled before the ledger: a charge written meanwhile is then counted
      // twice (refusing a little early), never not at all.
      const held = this.#unsettled.get(key) ?? 0
      const spent = await this.ledger.spentByAgent(caller.workspaceId, agentId, periodStart(budget.period))
      if (spent + held + amount > budget.credit_limit) throw budgetExceeded(budget, spent, held, amount)
      this.#adjust(key, amount)
      let released = false
      return () => {
        if (released) return
        released = true
        this.#adjust(key, -amount)
      }
    })
  }

  /** Writes a charge to the ledger; while it is being written it counts against the budget. */
  async record(c: Charge): Promise<void> {
    const key = c.caller.agentId ? agentKey(c.caller.workspaceId, c.caller.agentId) : null
    if (key) this.#adjust(key, c.credits)
    try {
      await this.ledger.insert({
        workspace_id: c.caller.workspaceId,
        connection_id: c.connectionId,
        connector: c.connector,
        agent_id: c.caller.agentId,
        caller_key_id: c.caller.keyId,
        step_id: c.stepId,
        run_id: c.runId,
        credits: c.credits,
        remaining: c.remaining ?? null,
      })
    } catch (err) {
      this.#log.error({ err, runId: c.runId, credits: c.credits }, 'could not write a credit charge')
    } finally {
      if (key) this.#adjust(key, -c.credits)
    }
  }

  async budgetView(workspaceId: string, agentId: string): Promise<BudgetView | null> {
    const row = await this.budgets.get(workspaceId, agentId)
    return row ? this.#view(row) : null
  }

  async listBudgets(workspaceId: string): Promise<BudgetView[]> {
    const rows = await this.budgets.list(workspaceId)
    return Promise.all(rows.map((r) => this.#view(r)))
  }

  async putBudget(
    workspaceId: string,
    agentId: string,
    values: { limit: number; period: BudgetPeriod },
  ): Promise<BudgetView> {
    const row = await this.budgets.put(workspaceId, agentId, values)
    this.#budgetCache.delete(agentKey(workspaceId, agentId))
    return this.#view(row)
  }

  async deleteBudget(workspaceId: string, agentId: string): Promise<boolean> {
    const deleted = await this.budgets.delete(workspaceId, agentId)
    this.#budgetCache.delete(agentKey(workspaceId, agentId))
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

  #adjust(key: string, delta: number): void {
    const v = (this.#unsettled.get(key) ?? 0) + delta
    if (v <= 0) this.#unsettled.delete(key)
    else this.#unsettled.set(key, v)
  }

  async #withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(key) ?? Promise.resolve()
    let done!: () => void
    const mine = new Promise<void>((r) => {
      done = r
    })
    const tail = prev.then(() => mine)
    this.#locks.set(key, tail)
    await prev
    try {
      return await fn()
    } finally {
      done()
      if (this.#locks.get(key) === tail) this.#locks.delete(key)
    }
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
