import type { Kysely } from 'kysely'
import { newId, nowIso } from './ids.ts'
import type { ConnectionsTable, Database } from './schema.ts'

export type ConnectionRow = ConnectionsTable

export class Connections {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(
    values: Omit<
      ConnectionRow,
      'id' | 'created_at' | 'updated_at' | 'status' | 'status_reason' | 'end_user_id'
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
   */
  async list(workspaceId: string, filter: { connector?: string; endUserId?: string | null } = {}) {
    let q = this.#db.selectFrom('connections').selectAll().where('workspace_id', '=', workspaceId)
    if (filter.connector) q = q.where('connector', '=', filter.connector)
    if (filter.endUserId === null) q = q.where('end_user_id', 'is', null)
    else if (filter.endUserId !== undefined) q = q.where('end_user_id', '=', filter.endUserId)
    return q.orderBy('created_at').orderBy('id').execute()
  }

  async setStatus(id: string, status: ConnectionRow['status'], reason: string | null) {
    await this.#db
      .updateTable('connections')
      .set({ status, status_reason: reason, updated_at: nowIso() })
      .where('id', '=', id)
      .execute()
  }

  async replaceSecret(
    id: string,
    values: Pick<ConnectionRow, 'secret' | 'account_name' | 'account_id' | 'auth_method'>,
  ) {
    await this.#db
      .updateTable('connections')
      .set({ ...values, status: 'active', status_reason: null, updated_at: nowIso() })
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
