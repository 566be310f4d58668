// A workspace's newest events and deliveries enter its index in batches (issue 22). Migration
// 0017 left each busy table one workspace-led index; with 1,000 workspaces every event and its
// delivery still wrote one page of each (an index entry lands at its workspace's place, and SQLite
// writes each page a commit touches whole to its write-ahead log), and that was the rest of the
// tenancy benchmark's gap. Now a row is stored unlisted (`listed = 0`, left out of the partial
// workspace indexes) and found by a small `…_unlisted` index in the order rows are made (seq;
// events: received_at, seq), where a commit's rows share the last page. About once a second the
// store lists every unlisted row in one transaction (store/sqlite-listing.ts), so a workspace's
// page is written once for all its rows of that second instead of once for each. Reads take both
// parts in one statement (store/event-log.ts: ofWorkspace).
//
// PostgreSQL logs changes, not whole pages, so there rows are stored listed (the column's default)
// and the unlisted part stays empty: an UPDATE would cost it a new row version and its log.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['events', 'deliveries'])
    await db.schema
      .alterTable(table)
      .addColumn('listed', 'integer', (c) => c.notNull().defaultTo(1))
      .execute()
  await db.schema.dropIndex('events_by_received').execute()
  await db.schema
    .createIndex('events_by_received')
    .on('events')
    .columns(['workspace_id', 'received_at', 'seq'])
    .where(sql.ref('listed'), '=', 1)
    .execute()
  // In the order events are listed (received_at, then seq), so a page merges the two parts as
  // they are read; received_at grows with time, so a commit's rows share this index's last page too.
  await db.schema
    .createIndex('events_unlisted')
    .on('events')
    .columns(['received_at', 'seq'])
    .where(sql.ref('listed'), '=', 0)
    .execute()
  await db.schema.dropIndex('deliveries_by_workspace').execute()
  await db.schema
    .createIndex('deliveries_by_workspace')
    .on('deliveries')
    .columns(['workspace_id', 'seq'])
    .where(sql.ref('listed'), '=', 1)
    .execute()
  await db.schema
    .createIndex('deliveries_unlisted')
    .on('deliveries')
    .column('seq')
    .where(sql.ref('listed'), '=', 0)
    .execute()
}
