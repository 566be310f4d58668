import type { Kysely } from 'kysely'
import { newId, nowIso } from './ids.ts'
import type { Database, TriggersTable } from './schema.ts'

export type TriggerRow = TriggersTable

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
    await this.#db.insertInto('triggers').values(row).execute()
    return row
  }

  async get(workspaceId: string, id: string) {
    return this.#db
      .selectFrom('triggers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async list(workspaceId: string, filter: { agentId?: string } = {}) {
    let q = this.#db.selectFrom('triggers').selectAll().where('workspace_id', '=', workspaceId)
    if (filter.agentId) q = q.where('agent_id', '=', filter.agentId)
    return q.orderBy('created_at').orderBy('id').execute()
  }

  async forSubscription(subscriptionId: string) {
    return this.#db.selectFrom('triggers').selectAll().where('subscription_id', '=', subscriptionId).execute()
  }

  async countForSubscription(subscriptionId: string): Promise<number> {
    const r = await this.#db
      .selectFrom('triggers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('subscription_id', '=', subscriptionId)
      .executeTakeFirst()
    return Number(r?.n ?? 0)
  }

  async polled() {
    return this.#db.selectFrom('triggers').selectAll().where('poll_interval_ms', 'is not', null).execute()
  }

  async forConnection(connectionId: string) {
    return this.#db.selectFrom('triggers').selectAll().where('connection_id', '=', connectionId).execute()
  }

  async updatePoll(
    id: string,
    values: Pick<TriggerRow, 'poll_cursor' | 'last_poll_at' | 'next_poll_at' | 'last_poll_error'>,
  ) {
    await this.#db.updateTable('triggers').set(values).where('id', '=', id).execute()
  }

  async delete(id: string) {
    await this.#db.deleteFrom('triggers').where('id', '=', id).execute()
  }
}
