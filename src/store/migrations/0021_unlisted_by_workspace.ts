// The unlisted part of events, deliveries and delivery attempts (migrations 0018 and 0020) carries
// the workspace at the end of its index (issue 22). SQLite now lists rows every few seconds, not
// every second (store/sqlite-listing.ts), so the unlisted part holds more rows, of every workspace,
// and a workspace's read of it (event-log.ts: ofWorkspace) goes through all of them. With the
// workspace in the index, each entry is tested there; before, each row was read from the table to
// see its workspace. bench/unlisted.ts, a workspace's newest page with 9,000 rows of 1,000
// workspaces unlisted (three seconds at 3,000 a second): 1.0–1.5 ms, against 3.2–4.8 ms without the
// workspace in the index, and 1.1–1.2 ms for the 3,000 the one-second listing left. The indexes
// keep their order, so a commit's rows still share their last page.
//
// PostgreSQL stores every row listed: its unlisted indexes stay empty. They are changed alike, to
// keep one schema; building each reads its table once.
import { type Kysely, sql } from 'kysely'

const UNLISTED = [
  { table: 'events', columns: ['received_at', 'seq'] },
  { table: 'deliveries', columns: ['seq'] },
  { table: 'delivery_attempts', columns: ['at'] },
]

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const { table, columns } of UNLISTED) {
    await db.schema.dropIndex(`${table}_unlisted`).execute()
    await db.schema
      .createIndex(`${table}_unlisted`)
      .on(table)
      .columns([...columns, 'workspace_id'])
      .where(sql.ref('listed'), '=', 0)
      .execute()
  }
}
