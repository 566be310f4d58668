// Triggers as stored: their JSON columns (configuration, target, poll cursor) are read here once
// and written here, so the rest of the engine only sees typed records.
import { type Kysely, type RawBuilder, sql } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
import { prepared } from './prepared-statements.ts'
import type { Database, TriggersTable } from './schema.ts'
import { type Db, transact } from './transaction.ts'

/** Where a trigger's deliveries go: the agent (its webhook or stream), or one of its tools. */
export type TriggerTarget = { type: 'agent' } | { type: 'tool'; toolId: string }

/** A trigger, its JSON columns read. */
export type TriggerRow = Omit<TriggersTable, 'config' | 'target' | 'poll_cursor'> & {
  config: Record<string, unknown>
  target: TriggerTarget
  /** What the last poll left for the next (the trigger's own cursor shape); null before the first. */
  poll_cursor: unknown
}

type Stored = TriggersTable

function decode(row: Stored): TriggerRow {
  return {
    ...row,
    config: JSON.parse(row.config),
    target: JSON.parse(row.target),
    poll_cursor: row.poll_cursor === null ? null : JSON.parse(row.poll_cursor),
  }
}

const decodeAll = (rows: Stored[]) => rows.map(decode)

/** Lists of triggers page oldest first: by (created_at, id), ascending. */
const OLDEST_FIRST = byCreated<Stored>('', 'asc')

export class Triggers {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(
    values: Pick<
      TriggerRow,
      | 'workspace_id'
      | 'agent_id'
      | 'trigger_key'
      | 'connection_id'
      | 'config'
      | 'target'
      | 'subscription_id'
      | 'poll_interval_ms'
      | 'next_poll_at'
    >,
  ) {
    const now = nowIso()
    const row: TriggerRow = {
      ...values,
      id: newId('trg'),
      poll_cursor: null,
      last_poll_at: null,
      last_poll_error: null,
      paused_at: null,
      paused_reason: null,
      created_at: now,
      updated_at: now,
    }
    await this.#db
      .insertInto('triggers')
      .values({
        ...row,
        config: JSON.stringify(row.config),
        target: JSON.stringify(row.target),
        poll_cursor: null,
      })
      .execute()
    return row
  }

  async get(workspaceId: string, id: string): Promise<TriggerRow | undefined> {
    const row = await this.#db
      .selectFrom('triggers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return row && decode(row)
  }

  async list(workspaceId: string, filter: { agentId?: string } = {}) {
    let q = this.#db.selectFrom('triggers').selectAll().where('workspace_id', '=', workspaceId)
    if (filter.agentId) q = q.where('agent_id', '=', filter.agentId)
    return decodeAll(await q.orderBy('created_at').orderBy('id').execute())
  }

  /** The same list, oldest first, a page at a time. */
  async page(
    workspaceId: string,
    filter: { agentId?: string },
    page: PageRequest,
  ): Promise<Page<TriggerRow>> {
    let q = this.#db.selectFrom('triggers').selectAll().where('workspace_id', '=', workspaceId)
    if (filter.agentId) q = q.where('agent_id', '=', filter.agentId)
    const { items, next } = pageOf(await keyset(q, OLDEST_FIRST, page).execute(), OLDEST_FIRST, page)
    return { items: decodeAll(items), next }
  }

  /**
   * The triggers on a webhook, with its listeners' version (migration 0022) read in the same
   * statement: the version of exactly these rows. Undefined when the webhook is not stored.
   */
  async forSubscription(
    subscriptionId: string,
  ): Promise<{ version: number | undefined; rows: TriggerRow[] }> {
    const found = await this.#db
      .selectFrom('subscriptions as s')
      .leftJoin('triggers as t', 't.subscription_id', 's.id')
      .selectAll('t')
      .select('s.listeners_version as listeners_version_')
      .where('s.id', '=', subscriptionId)
      .execute()
    const rows = found.flatMap(({ listeners_version_: _, ...t }) =>
      t.id === null ? [] : [decode(t as Stored)],
    )
    return { version: found[0] && Number(found[0].listeners_version_), rows }
  }

  /**
   * The version of each webhook's listeners now (listenerVersionsOf); a webhook not stored is left
   * out. PostgreSQL only.
   */
  async listenerVersions(subscriptionIds: string[]): Promise<Map<string, number>> {
    if (subscriptionIds.length === 0) return new Map()
    const { rows } = await sql<{ subscription_id: string; version: number }>`${prepared('listener_versions')}
      ${listenerVersionsOf(sql`${subscriptionIds}::text[]`)}`.execute(this.#db)
    return new Map(rows.map((r) => [r.subscription_id, Number(r.version)]))
  }

  async countForSubscription(subscriptionId: string): Promise<number> {
    const r = await this.#db
      .selectFrom('triggers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('subscription_id', '=', subscriptionId)
      .executeTakeFirst()
    return Number(r?.n ?? 0)
  }

  /** Any workspace's trigger by id (the poller's). */
  async byId(id: string): Promise<TriggerRow | undefined> {
    const row = await this.#db.selectFrom('triggers').selectAll().where('id', '=', id).executeTakeFirst()
    return row && decode(row)
  }

  /** Polled triggers whose next poll is due at `nowIso` (or never scheduled), soonest first. */
  async duePolls(nowIso: string, limit: number) {
    return (
      this.#db
        .selectFrom('triggers')
        .select(['id', 'next_poll_at'])
        .where('poll_interval_ms', 'is not', null)
        // A paused trigger (its connection lapsed) waits for the reconnect.
        .where('paused_at', 'is', null)
        .where((eb) => eb.or([eb('next_poll_at', '<=', nowIso), eb('next_poll_at', 'is', null)]))
        .orderBy('next_poll_at')
        .limit(limit)
        .execute()
    )
  }

  /**
   * Claims a due poll by moving its next poll to `until` (a lease), only if it is still as it was
   * read: of several instances claiming it at once, one gets it. Answers whether this one did.
   */
  async claimPoll(due: Pick<TriggerRow, 'id' | 'next_poll_at'>, until: string): Promise<boolean> {
    const claimed = await this.#db
      .updateTable('triggers')
      .set({ next_poll_at: until })
      .where('id', '=', due.id)
      .where('next_poll_at', due.next_poll_at === null ? 'is' : '=', due.next_poll_at)
      .executeTakeFirst()
    return Number(claimed.numUpdatedRows) > 0
  }

  async polled() {
    return decodeAll(
      await this.#db.selectFrom('triggers').selectAll().where('poll_interval_ms', 'is not', null).execute(),
    )
  }

  /**
   * Pauses the connection's triggers that run (its connection lapsed); answers those paused. In
   * `db` when it is a transaction (ConnectionService.markLapsed: in the commit that lapses it).
   */
  async pauseForConnection(
    connectionId: string,
    reason: string,
    at: string,
    db: Db = this.#db,
  ): Promise<TriggerRow[]> {
    return transact(db, async (tx) => {
      const rows = await tx
        .selectFrom('triggers')
        .selectAll()
        .where('connection_id', '=', connectionId)
        .where('paused_at', 'is', null)
        .execute()
      if (rows.length === 0) return []
      await tx
        .updateTable('triggers')
        .set({ paused_at: at, paused_reason: reason, updated_at: at })
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute()
      return decodeAll(rows.map((r) => ({ ...r, paused_at: at, paused_reason: reason, updated_at: at })))
    })
  }

  /**
   * Resumes the connection's paused triggers (a polled one polls at once); answers those resumed.
   * In `db` when it is a transaction (ConnectionService: in the commit that reconnects it).
   */
  async resumeForConnection(connectionId: string, db: Db = this.#db): Promise<TriggerRow[]> {
    return transact(db, async (tx) => {
      const rows = await tx
        .selectFrom('triggers')
        .selectAll()
        .where('connection_id', '=', connectionId)
        .where('paused_at', 'is not', null)
        .execute()
      if (rows.length === 0) return []
      const now = new Date().toISOString()
      await tx
        .updateTable('triggers')
        .set({ paused_at: null, paused_reason: null, updated_at: now })
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute()
      await tx
        .updateTable('triggers')
        .set({ next_poll_at: now, last_poll_error: null })
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .where('poll_interval_ms', 'is not', null)
        .execute()
      return decodeAll(rows)
    })
  }

  async forConnection(connectionId: string) {
    return decodeAll(
      await this.#db.selectFrom('triggers').selectAll().where('connection_id', '=', connectionId).execute(),
    )
  }

  /** A poll's outcome; in `db` when it is written in the same commit as what the poll found. */
  async updatePoll(
    id: string,
    values: Pick<TriggerRow, 'poll_cursor' | 'last_poll_at' | 'next_poll_at' | 'last_poll_error'>,
    db: Kysely<Database> = this.#db,
  ) {
    await db
      .updateTable('triggers')
      .set({
        ...values,
        poll_cursor: values.poll_cursor === null ? null : JSON.stringify(values.poll_cursor),
      })
      .where('id', '=', id)
      .execute()
  }

  async delete(id: string) {
    await this.#db.deleteFrom('triggers').where('id', '=', id).execute()
  }
}

/**
 * The version of the listeners of webhooks as they are in the store (migration 0022): a row per
 * stored webhook, one row read each. PostgreSQL.
 */
export const listenerVersionsOf = (subscriptionIds: RawBuilder<string[]>) => sql`
  SELECT id AS subscription_id, listeners_version AS version
  FROM subscriptions WHERE id = ANY(${subscriptionIds})`
