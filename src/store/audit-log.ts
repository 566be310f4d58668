// The audit log (migration 0010): rows are inserted, never updated; a workspace's rows go with it.
import type { Kysely } from 'kysely'
import { byCreated, keyset, pageOf } from './paging.ts'
import type { AuditLogTable, Database } from './schema.ts'

/** An audit entry, its detail read (the column is JSON text, read and written here only). */
export type AuditRow = Omit<AuditLogTable, 'detail'> & { detail: Record<string, unknown> | null }

const read = (r: AuditLogTable): AuditRow => ({ ...r, detail: r.detail ? JSON.parse(r.detail) : null })

export interface AuditQuery {
  /** A person or key id. */
  actor?: string
  /** An object id. */
  object?: string
  /** An action (`key.created`), or every action of a kind with a trailing dot (`key.`). */
  action?: string
  /** ISO times, from inclusive, to exclusive. */
  from?: string
  to?: string
  cursor?: string
  limit: number
}

export class AuditLogRows {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(row: AuditRow): Promise<void> {
    await this.insertMany([row])
  }

  async insertMany(rows: AuditRow[]): Promise<void> {
    if (rows.length === 0) return
    await this.#db
      .insertInto('audit_log')
      .values(rows.map((row) => ({ ...row, detail: row.detail && JSON.stringify(row.detail) })))
      .execute()
  }

  /** A workspace's entries, newest first, a page at a time (keyset on created_at, id). */
  async list(workspaceId: string, q: AuditQuery): Promise<{ entries: AuditRow[]; next: string | null }> {
    let s = this.#db.selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId)
    if (q.actor) s = s.where('actor_id', '=', q.actor)
    if (q.object) s = s.where('object_id', '=', q.object)
    if (q.action)
      s = q.action.endsWith('.')
        ? s.where('action', '>=', q.action).where('action', '<', `${q.action.slice(0, -1)}/`)
        : s.where('action', '=', q.action)
    if (q.from) s = s.where('created_at', '>=', q.from)
    if (q.to) s = s.where('created_at', '<', q.to)
    const { items, next } = pageOf(await keyset(s, BY_CREATED, q).execute(), BY_CREATED, q)
    return { entries: items.map(read), next }
  }
}

const BY_CREATED = byCreated<AuditLogTable>()
