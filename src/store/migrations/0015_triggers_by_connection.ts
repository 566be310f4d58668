// The triggers of a connection, by index (issue 22): the connection-health sweep asks, for every
// connection due a check, whether it has a trigger, and disconnecting reads a connection's
// triggers. Without it SQLite built a temporary index over every trigger at each sweep, a cost that
// grew with the number of triggers of all workspaces (10,000 in the tenancy benchmark).
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('triggers_by_connection').on('triggers').columns(['connection_id']).execute()
}
