import { type Kysely, sql } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
import type { ConnectionsTable, Database } from './schema.ts'
import type { Db } from './transaction.ts'

export type ConnectionRow = ConnectionsTable

/** Lists of connections page oldest first: by (created_at, id), ascending. */
const OLDEST_FIRST = byCreated<ConnectionRow>('', 'asc')

/** Which of a workspace's connections a list holds; every one given must hold. */
export interface ConnectionFilter {
  connector?: string
  /** That end user's connections; null: the workspace's own; absent: all. */
  endUserId?: string | null
  /** Only these (the ones named, or the ones an agent key may see). */
  ids?: readonly string[]
  /** Only those of this account, connected by this method. */
  account?: { authMethod: string; accountId: string }
}

export class Connections {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(
    values: Omit<
      ConnectionRow,
      | 'id'
      | 'created_at'
      | 'updated_at'
      | 'status'
      | 'status_reason'
      | 'end_user_id'
      | 'lapsed_at'
      | 'alive_at'
      | 'next_check_at'
      | 'checked_at'
      | 'check_error'
    > & {
      end_user_id?: string | null
    },
  ) {
    const now = nowIso()
    const row: ConnectionRow = {
      ...values,
      end_user_id: values.end_user_id ?? null,
      id: newId('con'),
      status: 'active',
      status_reason: null,
      created_at: now,
      updated_at: now,
      lapsed_at: null,
      alive_at: now,
      next_check_at: null,
      checked_at: null,
      check_error: null,
    }
    await this.#db.insertInto('connections').values(row).execute()
    return row
  }

  async get(workspaceId: string, id: string) {
    return this.#db
      .selectFrom('connections')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async getById(id: string) {
    return this.#db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /**
   * endUserId: that end user's connections; null: the workspace's own (no end user); absent: all.
   * `ids` (when given) keeps only those connections; `account` only that account's by that method.
   */
  async list(workspaceId: string, filter: ConnectionFilter = {}): Promise<ConnectionRow[]> {
    if (filter.ids?.length === 0) return []
    return this.#filtered(workspaceId, filter).orderBy('created_at').orderBy('id').execute()
  }

  /** The same list, oldest first, a page at a time. */
  async page(workspaceId: string, filter: ConnectionFilter, page: PageRequest): Promise<Page<ConnectionRow>> {
    if (filter.ids?.length === 0) return { items: [], next: null }
    return pageOf(
      await keyset(this.#filtered(workspaceId, filter), OLDEST_FIRST, page).execute(),
      OLDEST_FIRST,
      page,
    )
  }

  #filtered(workspaceId: string, filter: ConnectionFilter) {
    let q = this.#db.selectFrom('connections').selectAll().where('workspace_id', '=', workspaceId)
    if (filter.ids) q = q.where('id', 'in', [...filter.ids])
    if (filter.connector) q = q.where('connector', '=', filter.connector)
    if (filter.endUserId === null) q = q.where('end_user_id', 'is', null)
    else if (filter.endUserId !== undefined) q = q.where('end_user_id', '=', filter.endUserId)
    if (filter.account)
      q = q
        .where('auth_method', '=', filter.account.authMethod)
        .where('account_id', '=', filter.account.accountId)
    return q
  }

  /** Marks it lapsed, only while it is active: true when this call made the change. */
  async lapse(id: string, reason: string, at: string, db: Db = this.#db): Promise<boolean> {
    const r = await db
      .updateTable('connections')
      .set({ status: 'lapsed', status_reason: reason, lapsed_at: at, updated_at: at })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  /**
   * Active connections that have triggers (a paused one counts: it resumes) whose check upstream
   * is due (connections/connection-health.ts).
   */
  async dueChecks(nowIso: string, limit: number) {
    return (
      this.#db
        .selectFrom('connections')
        .select(['id', 'next_check_at'])
        // Written into the statement, so the partial index of due checks serves it (migration 0019).
        .where('status', '=', sql.lit('active'))
        .where((eb) => eb.or([eb('next_check_at', '<=', nowIso), eb('next_check_at', 'is', null)]))
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('triggers')
              .select('triggers.id')
              .whereRef('triggers.connection_id', '=', 'connections.id'),
          ),
        )
        .orderBy('next_check_at')
        .limit(limit)
        .execute()
    )
  }

  /** Claims a due check by moving it to `until`, only if it is still as read: one instance gets it. */
  async claimCheck(due: Pick<ConnectionRow, 'id' | 'next_check_at'>, until: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('connections')
      .set({ next_check_at: until })
      .where('id', '=', due.id)
      .where('next_check_at', due.next_check_at === null ? 'is' : '=', due.next_check_at)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  async markChecked(
    id: string,
    values: Partial<Pick<ConnectionRow, 'next_check_at' | 'checked_at' | 'check_error' | 'alive_at'>>,
  ): Promise<void> {
    await this.#db.updateTable('connections').set(values).where('id', '=', id).execute()
  }

  /**
   * Due checks of connections whose credentials were proved to work at `at` (their webhook's
   * deliveries): the next check moves to `next`, nothing is asked. One statement for all.
   */
  async markHeard(ids: string[], at: string, next: string): Promise<void> {
    if (ids.length === 0) return
    await this.#db
      .updateTable('connections')
      .set({ alive_at: at, next_check_at: next })
      .where('id', 'in', ids)
      .where('status', '=', 'active')
      .execute()
  }

  /** Its credentials worked at `at` (a step's or poll's answer): no check is needed for a while. */
  async markAlive(id: string, at: string): Promise<void> {
    await this.#db
      .updateTable('connections')
      .set({ alive_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('alive_at', '<', at), eb('alive_at', 'is', null)]))
      .execute()
  }

  async replaceSecret(
    id: string,
    values: Pick<ConnectionRow, 'secret' | 'account_name' | 'account_id' | 'auth_method'>,
    db: Db = this.#db,
  ) {
    await db
      .updateTable('connections')
      .set({
        ...values,
        status: 'active',
        status_reason: null,
        lapsed_at: null,
        check_error: null,
        alive_at: nowIso(),
        updated_at: nowIso(),
      })
      .where('id', '=', id)
      .execute()
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('connections')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }
}
