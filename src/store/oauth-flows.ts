// Sign-ins under way, shared by every instance: what a flow keeps between its start and its
// callback (sealed), keyed by the state's nonce, and taken exactly once (the row is deleted as it
// is read, so a second callback with the same state finds nothing, on any instance).
import type { Kysely } from 'kysely'
import type { Database } from './schema.ts'

export class OAuthFlowRows {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(row: { state: string; connector: string; data: string; expires_at: string }): Promise<void> {
    await this.#db.deleteFrom('oauth_flows').where('expires_at', '<', new Date().toISOString()).execute()
    await this.#db.insertInto('oauth_flows').values(row).execute()
  }

  /** The flow's data, once: null when it was taken already (or never started here). */
  async take(state: string): Promise<{ connector: string; data: string; expires_at: string } | null> {
    const row = await this.#db
      .deleteFrom('oauth_flows')
      .where('state', '=', state)
      .returning(['connector', 'data', 'expires_at'])
      .executeTakeFirst()
    return row ?? null
  }
}
