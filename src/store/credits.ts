// The credit ledger (what a metered upstream charged each step run, per connection and agent)
// and per-agent credit budgets.
import { type Kysely, PostgresAdapter, type SelectQueryBuilder } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, type Page, type PageKey, type PageRequest, pageOf } from './paging.ts'
import type { CreditBudgetsTable, CreditLedgerTable, Database } from './schema.ts'

export type CreditEntryRow = CreditLedgerTable
export type CreditBudgetRow = CreditBudgetsTable

export interface CreditFilter {
  connectionId?: string
  /** An agent id; null selects workspace (admin) callers. */
  agentId?: string | null
  stepId?: string
  /** ISO times: since inclusive, until exclusive. */
  since?: string
  until?: string
}

export interface CreditSummary {
  credits: number
  charges: number
  byConnection: Array<{
    connectionId: string
    credits: number
    charges: number
    lastRemaining: number | null
  }>
  byAgent: Array<{ agentId: string | null; credits: number; charges: number }>
}

const num = (v: unknown) => Number(v ?? 0)
const BY_CREATED = byCreated<CreditEntryRow>()
/** Budgets page by their agent's id (one budget an agent). */
const BUDGETS_BY_AGENT: PageKey<CreditBudgetRow> = {
  columns: [{ ref: 'agent_id' }],
  of: (r) => [r.agent_id],
  order: 'asc',
}

export class CreditLedger {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(values: Omit<CreditEntryRow, 'id' | 'created_at'>): Promise<CreditEntryRow> {
    const row: CreditEntryRow = { ...values, id: newId('crd'), created_at: nowIso() }
    await this.#db.insertInto('credit_ledger').values(row).execute()
    return row
  }

  #filtered(workspaceId: string, f: CreditFilter) {
    let q = this.#db.selectFrom('credit_ledger').where('workspace_id', '=', workspaceId)
    if (f.connectionId) q = q.where('connection_id', '=', f.connectionId)
    if (f.agentId === null) q = q.where('agent_id', 'is', null)
    else if (f.agentId !== undefined) q = q.where('agent_id', '=', f.agentId)
    if (f.stepId) q = q.where('step_id', '=', f.stepId)
    if (f.since) q = q.where('created_at', '>=', f.since)
    if (f.until) q = q.where('created_at', '<', f.until)
    return q
  }

  /** Newest first; `cursor` is the `cursor` of the previous page's last entry. */
  async list(
    workspaceId: string,
    f: CreditFilter,
    page: { limit: number; cursor?: string },
  ): Promise<{ entries: CreditEntryRow[]; next: string | null }> {
    const q: SelectQueryBuilder<Database, 'credit_ledger', CreditEntryRow> = this.#filtered(
      workspaceId,
      f,
    ).selectAll()
    const { items, next } = pageOf(await keyset(q, BY_CREATED, page).execute(), BY_CREATED, page)
    return { entries: items, next }
  }

  async summary(workspaceId: string, f: CreditFilter): Promise<CreditSummary> {
    const totals = await this.#filtered(workspaceId, f)
      .select((eb) => [eb.fn.sum<number>('credits').as('credits'), eb.fn.countAll<number>().as('charges')])
      .executeTakeFirst()
    const byConnection = await this.#filtered(workspaceId, f)
      .select((eb) => [
        'connection_id',
        eb.fn.sum<number>('credits').as('credits'),
        eb.fn.countAll<number>().as('charges'),
      ])
      .groupBy('connection_id')
      .orderBy('connection_id')
      .execute()
    const byAgent = await this.#filtered(workspaceId, f)
      .select((eb) => [
        'agent_id',
        eb.fn.sum<number>('credits').as('credits'),
        eb.fn.countAll<number>().as('charges'),
      ])
      .groupBy('agent_id')
      .orderBy('agent_id')
      .execute()
    const connections = []
    for (const r of byConnection) {
      const last = await this.#db
        .selectFrom('credit_ledger')
        .select('remaining')
        .where('workspace_id', '=', workspaceId)
        .where('connection_id', '=', r.connection_id)
        .where('remaining', 'is not', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst()
      connections.push({
        connectionId: r.connection_id,
        credits: num(r.credits),
        charges: num(r.charges),
        lastRemaining: last?.remaining ?? null,
      })
    }
    return {
      credits: num(totals?.credits),
      charges: num(totals?.charges),
      byConnection: connections,
      byAgent: byAgent.map((r) => ({
        agentId: r.agent_id,
        credits: num(r.credits),
        charges: num(r.charges),
      })),
    }
  }

  /** Credits charged to an agent since a time (all time without one). */
  async spentByAgent(workspaceId: string, agentId: string, since?: string): Promise<number> {
    const r = await this.#filtered(workspaceId, { agentId, since })
      .select((eb) => eb.fn.sum<number>('credits').as('credits'))
      .executeTakeFirst()
    return num(r?.credits)
  }
}

export class CreditBudgets {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async get(workspaceId: string, agentId: string): Promise<CreditBudgetRow | undefined> {
    return this.#db
      .selectFrom('credit_budgets')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .executeTakeFirst()
  }

  async list(workspaceId: string): Promise<CreditBudgetRow[]> {
    return this.#db
      .selectFrom('credit_budgets')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('agent_id')
      .execute()
  }

  /** The same list, by agent id, a page at a time. */
  async page(workspaceId: string, page: PageRequest): Promise<Page<CreditBudgetRow>> {
    const q = this.#db.selectFrom('credit_budgets').selectAll().where('workspace_id', '=', workspaceId)
    return pageOf(await keyset(q, BUDGETS_BY_AGENT, page).execute(), BUDGETS_BY_AGENT, page)
  }

  async put(
    workspaceId: string,
    agentId: string,
    values: { limit: number; period: CreditBudgetRow['period'] },
  ): Promise<CreditBudgetRow> {
    const now = nowIso()
    await this.#db
      .insertInto('credit_budgets')
      .values({
        workspace_id: workspaceId,
        agent_id: agentId,
        credit_limit: values.limit,
        period: values.period,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc
          .columns(['workspace_id', 'agent_id'])
          .doUpdateSet({ credit_limit: values.limit, period: values.period, updated_at: now }),
      )
      .execute()
    return (await this.get(workspaceId, agentId))!
  }

  async delete(workspaceId: string, agentId: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('credit_budgets')
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }
}

export type HoldOutcome =
  | { budget: null }
  | { budget: CreditBudgetRow; spent: number; held: number; holdId: string | null }

/**
 * Worst-case credits held by lookups under way, in the store, so that every instance counts
 * every other's. Taking a hold is one transaction that locks the agent's budget row (PostgreSQL;
 * SQLite has one writer): what the ledger says was spent, what others hold and the new amount are
 * checked against the limit together, so concurrent lookups on any instances never spend more
 * than the budget. A hold whose process died ends at its expiry.
 */
export class CreditHolds {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Holds `amount` when it fits (holdId set), or says what was spent and held (holdId null). */
  async take(h: {
    workspaceId: string
    agentId: string
    amount: number
    now: Date
    holdMs: number
    /** Where the budget's period starts (undefined: all time). */
    periodStart: (budget: CreditBudgetRow) => string | undefined
  }): Promise<HoldOutcome> {
    return this.#db.transaction().execute(async (trx) => {
      let q = trx
        .selectFrom('credit_budgets')
        .selectAll()
        .where('workspace_id', '=', h.workspaceId)
        .where('agent_id', '=', h.agentId)
      if (trx.getExecutor().adapter instanceof PostgresAdapter) q = q.forUpdate()
      const budget = await q.executeTakeFirst()
      if (!budget) return { budget: null }
      const now = h.now.toISOString()
      const holds = trx
        .selectFrom('credit_holds')
        .where('workspace_id', '=', h.workspaceId)
        .where('agent_id', '=', h.agentId)
      await trx
        .deleteFrom('credit_holds')
        .where('workspace_id', '=', h.workspaceId)
        .where('agent_id', '=', h.agentId)
        .where('expires_at', '<=', now)
        .execute()
      const heldRow = await holds.select((eb) => eb.fn.sum<number>('amount').as('n')).executeTakeFirst()
      const held = num(heldRow?.n)
      const spent = await new CreditLedger(trx).spentByAgent(h.workspaceId, h.agentId, h.periodStart(budget))
      if (spent + held + h.amount > budget.credit_limit) return { budget, spent, held, holdId: null }
      const holdId = newId('hold')
      await trx
        .insertInto('credit_holds')
        .values({
          id: holdId,
          workspace_id: h.workspaceId,
          agent_id: h.agentId,
          amount: h.amount,
          expires_at: new Date(h.now.getTime() + h.holdMs).toISOString(),
        })
        .execute()
      return { budget, spent, held, holdId }
    })
  }

  async release(holdId: string): Promise<void> {
    await this.#db.deleteFrom('credit_holds').where('id', '=', holdId).execute()
  }
}
