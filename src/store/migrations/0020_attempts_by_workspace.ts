// A workspace's delivery attempts, found by workspace (issue 22). The statistics read the hours not
// rolled up yet (the last hour or so) from the attempts themselves; attempts carried no workspace,
// so that read took every workspace's attempts of those hours by time and kept its own through
// their deliveries. With 300,000 deliveries an hour across 1,000 workspaces, GET /v1/stats of one
// workspace with 300 of them took 0.85 s, and on SQLite the process waits for every statement.
//
// Attempts now carry their delivery's workspace, and a workspace-led index of them
// (`delivery_attempts_by_workspace`, workspace and time) serves that read. Like events and
// deliveries (migration 0018), SQLite stores an attempt unlisted, found by
// `delivery_attempts_unlisted` (in time order, where a commit's attempts share the last page),
// and lists it with the others about once a second (store/sqlite-listing.ts): a workspace's page
// is written once for its attempts of that second, not once for each. PostgreSQL stores them
// listed. Attempts stored before are given their delivery's workspace here.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('delivery_attempts').addColumn('workspace_id', 'text').execute()
  await db.schema
    .alterTable('delivery_attempts')
    .addColumn('listed', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
  await sql`UPDATE delivery_attempts SET workspace_id =
    (SELECT d.workspace_id FROM deliveries d WHERE d.id = delivery_attempts.delivery_id)`.execute(db)
  await db.schema
    .createIndex('delivery_attempts_by_workspace')
    .on('delivery_attempts')
    .columns(['workspace_id', 'at'])
    .where(sql.ref('listed'), '=', 1)
    .execute()
  await db.schema
    .createIndex('delivery_attempts_unlisted')
    .on('delivery_attempts')
    .column('at')
    .where(sql.ref('listed'), '=', 0)
    .execute()
}
