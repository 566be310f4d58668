// Upstream webhooks Patchbay registered: one per connection and watched model, shared by every
// trigger on it.
import type { Kysely, Selectable } from 'kysely'
import { newId, nowIso } from './ids.ts'
import type { Database, SubscriptionsTable } from './schema.ts'

export type SubscriptionRow = Selectable<SubscriptionsTable>

export class Subscriptions {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async find(connectionId: string, model: string) {
    return this.#db
      .selectFrom('subscriptions')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .where('model', '=', model)
      .executeTakeFirst()
  }

  async get(id: string) {
    return this.#db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst()
  }

  async insert(
    values: Pick<SubscriptionRow, 'workspace_id' | 'connector' | 'connection_id' | 'model' | 'secret'>,
  ) {
    const now = nowIso()
    const row: SubscriptionRow = {
      ...values,
      id: newId('hook'),
      upstream_hook_id: null,
      status: 'active',
      last_error: null,
      created_at: now,
      updated_at: now,
      listeners_version: 0,
    }
    await this.#db.insertInto('subscriptions').values(row).execute()
    return row
  }

  async update(
    id: string,
    values: Partial<Pick<SubscriptionRow, 'upstream_hook_id' | 'status' | 'last_error'>>,
  ) {
    await this.#db
      .updateTable('subscriptions')
      .set({ ...values, updated_at: nowIso() })
      .where('id', '=', id)
      .execute()
  }

  async delete(id: string) {
    await this.#db.deleteFrom('subscriptions').where('id', '=', id).execute()
  }

  async all() {
    return this.#db.selectFrom('subscriptions').selectAll().execute()
  }

  async forConnection(connectionId: string) {
    return this.#db
      .selectFrom('subscriptions')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .execute()
  }
}
