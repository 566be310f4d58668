// A workspace's connections in the order they are listed and paged (created_at, id), by index:
// GET /v1/connections sorted every connection of the workspace to answer its first page (with
// 1,000 end users, 2.3 times what it takes with 10, in bench/workspace-size.ts).
//
// The indexes by connector and by end user end in the same order too. Without it SQLite preferred
// the new index for a filtered list (it gives the order) and read every connection of the
// workspace for one end user's or one connector's.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('connections_by_creation')
    .on('connections')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute()
  for (const [name, column] of [
    ['connections_by_workspace', 'connector'],
    ['connections_by_end_user', 'end_user_id'],
  ] as const) {
    await db.schema.dropIndex(name).execute()
    await db.schema
      .createIndex(name)
      .on('connections')
      .columns(['workspace_id', column, 'created_at', 'id'])
      .execute()
  }
}
