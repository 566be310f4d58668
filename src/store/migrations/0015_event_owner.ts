// An event's identity includes its owner (issue 23): the end user whose connection heard it, or
// the workspace itself. Events were stored once per (workspace, connector, upstream id), so when two
// end users connected the same upstream account, the change seen through the second one's webhook
// was recorded as the event stored through the first one's connection. Now each owner has its own
// row: `owner` is the connection's end user id, '' for the workspace's own connections (not null,
// so the unique index treats the workspace's events as one owner on SQLite and PostgreSQL alike).
// Two connections of the *same* owner watching one board or repository still store it once.
//
// SQLite cannot drop a table's unique constraint, so there the table is rebuilt from its own
// definition (whatever columns it has by now) without it; PostgreSQL drops the constraint.
import { type Kysely, SqliteAdapter, sql } from 'kysely'

const OLD_UNIQUE = /,\s*constraint\s+"events_upstream"\s+unique\s*\([^)]*\)/i

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    const objects = await sql<{ type: string; name: string; sql: string | null }>`
      SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'events'`.execute(db)
    const table = objects.rows.find((o) => o.type === 'table')?.sql
    if (!table || !OLD_UNIQUE.test(table))
      throw new Error('events: the events_upstream constraint was not found')
    const rebuilt = table
      .replace(/^CREATE TABLE "events"/i, 'CREATE TABLE "events_rebuilt"')
      .replace(OLD_UNIQUE, '')
    const indexes = objects.rows.filter((o) => o.type === 'index' && o.sql).map((o) => o.sql as string)
    const sequence = await sql<{ seq: number }>`
      SELECT seq FROM sqlite_sequence WHERE name = 'events'`.execute(db)
    await sql.raw(rebuilt).execute(db)
    await sql`INSERT INTO events_rebuilt SELECT * FROM events`.execute(db)
    await sql`DROP TABLE events`.execute(db)
    await sql`ALTER TABLE events_rebuilt RENAME TO events`.execute(db)
    // The seqs handed out stay handed out (AUTOINCREMENT never reuses one).
    const last = sequence.rows[0]?.seq
    if (last !== undefined) {
      await sql`DELETE FROM sqlite_sequence WHERE name = 'events'`.execute(db)
      await sql`INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ${last})`.execute(db)
    }
    for (const index of indexes) await sql.raw(index).execute(db)
  } else {
    await db.schema.alterTable('events').dropConstraint('events_upstream').execute()
  }
  await db.schema
    .alterTable('events')
    .addColumn('owner', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
  await sql`
    UPDATE events SET owner = (
      SELECT c.end_user_id FROM connections c WHERE c.id = events.connection_id
    )
    WHERE EXISTS (
      SELECT 1 FROM connections c WHERE c.id = events.connection_id AND c.end_user_id IS NOT NULL
    )`.execute(db)
  await db.schema
    .createIndex('events_owner_upstream')
    .unique()
    .on('events')
    .columns(['workspace_id', 'connector', 'owner', 'upstream_id'])
    .execute()
}
