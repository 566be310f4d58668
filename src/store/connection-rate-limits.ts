// Per-connection rate limits: the upstream account plan's limit, set by the user, which paces the
// connection's ready-made steps instead of the connector's default.
import type { Kysely } from 'kysely'
import { nowIso } from './ids.ts'
import type { ConnectionRateLimitsTable, Database } from './schema.ts'

export type ConnectionRateLimitRow = ConnectionRateLimitsTable

export class ConnectionRateLimits {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async get(connectionId: string): Promise<ConnectionRateLimitRow | undefined> {
    return this.#db
      .selectFrom('connection_rate_limits')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .executeTakeFirst()
  }

  async put(
    workspaceId: string,
    connectionId: string,
    limit: { requests: number; perMs: number },
  ): Promise<ConnectionRateLimitRow> {
    const row: ConnectionRateLimitRow = {
      connection_id: connectionId,
      workspace_id: workspaceId,
      requests: limit.requests,
      per_ms: limit.perMs,
      updated_at: nowIso(),
    }
    await this.#db
      .insertInto('connection_rate_limits')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('connection_id')
          .doUpdateSet({ requests: row.requests, per_ms: row.per_ms, updated_at: row.updated_at }),
      )
      .execute()
    return row
  }

  async delete(connectionId: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('connection_rate_limits')
      .where('connection_id', '=', connectionId)
      .executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }
}
