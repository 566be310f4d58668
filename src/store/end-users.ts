// End users (the operator's own customers), their connect sessions and the lifecycle notices
// posted to the workspace's notification URL, as rows (migration 0014).
import { type Kysely, sql } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { keyset, type Page, type PageKey, type PageRequest, pageOf } from './paging.ts'
import type { ConnectSessionsTable, Database, EndUsersTable, OperatorNoticesTable } from './schema.ts'

export type EndUserRow = EndUsersTable
/** A connect session, its allowed connectors and auth methods read (null: any). */
export type ConnectSessionRow = Omit<ConnectSessionsTable, 'connectors' | 'auth_methods'> & {
  connectors: string[] | null
  auth_methods: string[] | null
}
/**
 * An operator notice. Its payload stays JSON text: it is the body signed and POSTed as it is;
 * noticeBody reads it where an object is wanted (GET /v1/notices).
 */
export type OperatorNoticeRow = OperatorNoticesTable
/** A notice's body, read from its payload. */
export const noticeBody = (row: OperatorNoticeRow): unknown => JSON.parse(row.payload)

const readSession = (r: ConnectSessionsTable): ConnectSessionRow => ({
  ...r,
  connectors: r.connectors ? JSON.parse(r.connectors) : null,
  auth_methods: r.auth_methods ? JSON.parse(r.auth_methods) : null,
})

const END_USERS_BY_ID: PageKey<EndUserRow> = { columns: [{ ref: 'id' }], of: (r) => [r.id], order: 'asc' }
const NOTICES_BY_ID: PageKey<OperatorNoticeRow> = { columns: [{ ref: 'id' }], of: (r) => [r.id] }

export class EndUsers {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Adds the end user, or updates the name and email given (null/undefined keeps them). */
  async put(
    workspaceId: string,
    id: string,
    values: { displayName?: string | null; email?: string | null },
  ): Promise<EndUserRow> {
    const now = nowIso()
    const existing = await this.get(workspaceId, id)
    if (!existing) {
      const row: EndUserRow = {
        workspace_id: workspaceId,
        id,
        display_name: values.displayName ?? null,
        email: values.email ?? null,
        created_at: now,
        updated_at: now,
      }
      await this.#db
        .insertInto('end_users')
        .values(row)
        .onConflict((oc) => oc.columns(['workspace_id', 'id']).doNothing())
        .execute()
      return (await this.get(workspaceId, id)) ?? row
    }
    const set: Partial<EndUserRow> = {}
    if (values.displayName != null) set.display_name = values.displayName
    if (values.email != null) set.email = values.email
    if (Object.keys(set).length === 0) return existing
    await this.#db
      .updateTable('end_users')
      .set({ ...set, updated_at: now })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .execute()
    return { ...existing, ...set, updated_at: now }
  }

  async get(workspaceId: string, id: string): Promise<EndUserRow | undefined> {
    return this.#db
      .selectFrom('end_users')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  /** A page in id order, after `after`. */
  /** The workspace's end users by id, a page at a time. */
  async page(workspaceId: string, page: PageRequest): Promise<Page<EndUserRow>> {
    const q = this.#db.selectFrom('end_users').selectAll().where('workspace_id', '=', workspaceId)
    return pageOf(await keyset(q, END_USERS_BY_ID, page).execute(), END_USERS_BY_ID, page)
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('end_users')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }
}

export class ConnectSessions {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(values: Omit<ConnectSessionRow, 'id' | 'created_at' | 'used_at' | 'connection_id'>) {
    const row: ConnectSessionRow = {
      ...values,
      id: newId('cs'),
      created_at: nowIso(),
      used_at: null,
      connection_id: null,
    }
    await this.#db
      .insertInto('connect_sessions')
      .values({
        ...row,
        connectors: row.connectors && JSON.stringify(row.connectors),
        auth_methods: row.auth_methods && JSON.stringify(row.auth_methods),
      })
      .execute()
    return row
  }

  async byTokenHash(hash: string): Promise<ConnectSessionRow | undefined> {
    const row = await this.#db
      .selectFrom('connect_sessions')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst()
    return row && readSession(row)
  }

  async getById(id: string): Promise<ConnectSessionRow | undefined> {
    const row = await this.#db
      .selectFrom('connect_sessions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst()
    return row && readSession(row)
  }

  /** Records the connection made with a spent session. */
  async settle(id: string, connectionId: string): Promise<void> {
    await this.#db
      .updateTable('connect_sessions')
      .set({ connection_id: connectionId })
      .where('id', '=', id)
      .execute()
  }

  /** Gives a spent session back when nothing was connected with it (wrong credentials: try again). */
  async giveBack(id: string): Promise<void> {
    await this.#db
      .updateTable('connect_sessions')
      .set({ used_at: null, connection_id: null })
      .where('id', '=', id)
      .where('connection_id', '=', 'pending')
      .execute()
  }

  /** Gives back a session spent on an MCP grant that could not be recorded. */
  async giveBackUnsettled(id: string): Promise<void> {
    await this.#db
      .updateTable('connect_sessions')
      .set({ used_at: null })
      .where('id', '=', id)
      .where('connection_id', 'is', null)
      .execute()
  }

  /**
   * Spends the session for `connectionId` (null: on an MCP grant, which names the session itself):
   * true for the one caller that did (single use).
   */
  async spend(id: string, connectionId: string | null): Promise<boolean> {
    const r = await this.#db
      .updateTable('connect_sessions')
      .set({ used_at: nowIso(), connection_id: connectionId })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  async deleteForEndUser(workspaceId: string, endUserId: string): Promise<number> {
    const r = await this.#db
      .deleteFrom('connect_sessions')
      .where('workspace_id', '=', workspaceId)
      .where('end_user_id', '=', endUserId)
      .executeTakeFirst()
    return Number(r.numDeletedRows)
  }

  async listForEndUser(workspaceId: string, endUserId: string): Promise<ConnectSessionRow[]> {
    const rows = await this.#db
      .selectFrom('connect_sessions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('end_user_id', '=', endUserId)
      .orderBy('created_at', 'desc')
      .limit(50)
      .execute()
    return rows.map(readSession)
  }
}

export class OperatorNoticeRows {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(values: Pick<OperatorNoticeRow, 'workspace_id' | 'type' | 'payload'> & { id: string }) {
    const row: OperatorNoticeRow = {
      ...values,
      status: 'pending',
      attempts: 0,
      next_attempt_at: nowIso(),
      last_status: null,
      last_error: null,
      created_at: nowIso(),
      delivered_at: null,
    }
    await this.#db.insertInto('operator_notices').values(row).execute()
    return row
  }

  async get(workspaceId: string, id: string): Promise<OperatorNoticeRow | undefined> {
    return this.#db
      .selectFrom('operator_notices')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  /** Newest first (their ids are time-ordered), a page at a time. */
  async page(
    workspaceId: string,
    page: PageRequest,
    filter: { type?: string; status?: string } = {},
  ): Promise<Page<OperatorNoticeRow>> {
    let q = this.#db.selectFrom('operator_notices').selectAll().where('workspace_id', '=', workspaceId)
    if (filter.type) q = q.where('type', '=', filter.type)
    if (filter.status) q = q.where('status', '=', filter.status as OperatorNoticeRow['status'])
    return pageOf(await keyset(q, NOTICES_BY_ID, page).execute(), NOTICES_BY_ID, page)
  }

  /**
   * Claims a due notice: moves its next attempt `leaseMs` ahead, so no other instance sends it
   * meanwhile; true for the one caller that claimed it.
   */
  async claim(id: string, dueBy: string, leaseUntil: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('operator_notices')
      .set({ next_attempt_at: leaseUntil })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', dueBy)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  async due(now: string, limit: number): Promise<OperatorNoticeRow[]> {
    return this.#db
      .selectFrom('operator_notices')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute()
  }

  async settle(
    id: string,
    values: Pick<OperatorNoticeRow, 'status' | 'next_attempt_at' | 'last_status' | 'last_error'> & {
      delivered_at?: string | null
    },
  ): Promise<void> {
    await this.#db
      .updateTable('operator_notices')
      .set({ ...values, attempts: sql`attempts + 1` })
      .where('id', '=', id)
      .execute()
  }

  /** Sends it again from the start (a replay): pending, due now. */
  async requeue(workspaceId: string, id: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('operator_notices')
      // A replay starts the retry schedule over.
      .set({ status: 'pending', next_attempt_at: nowIso(), last_error: null, attempts: 0 })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }
}
