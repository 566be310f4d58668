// One index per workspace on each of the event log's busy tables (issue 22). A row is written into
// an index at the place its key sorts: keys led by a time-ordered id or seq go at the index's end,
// where a commit's rows share a page or two, but keys led by an agent, webhook or workspace put each
// row of a commit that spans many of them on a page of its own, and SQLite writes every page a
// commit touches whole to its write-ahead log. With 1,000 workspaces of 10 agents each, an event
// and its delivery were written at five such places; one workspace's at none. Measured: dropping
// four of them took the tenancy benchmark's delivered/s from 0.74 to 1.0 of one workspace's (c256).
//
// Now each table keeps one workspace-led index, serving every read by workspace:
// - events: (workspace_id, received_at, seq) — lists newest first (received_at, then seq) and
//   counts a time window for the statistics; a filter by webhook reads it (was events_by_subscription).
// - deliveries: (workspace_id, seq) — lists newest first, an agent's stream after a seq, a replay's
//   scan; a filter by agent reads it (was deliveries_by_agent, agent_id then seq). The statistics'
//   count by creation time finds where its window starts in the time-ordered (created_at), which
//   every row enters at the end (was deliveries_by_created, workspace_id then created_at).
// - The event identity's unique index leads with the upstream id (the same columns): upstream ids
//   that grow with time (the task-board's do) enter near its end instead of at each workspace's place.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const name of [
    'events_by_subscription',
    'events_by_received',
    'events_owner_upstream',
    'deliveries_by_agent',
    'deliveries_by_created',
  ])
    await db.schema.dropIndex(name).execute()
  await db.schema
    .createIndex('events_by_received')
    .on('events')
    .columns(['workspace_id', 'received_at', 'seq'])
    .execute()
  await db.schema
    .createIndex('events_owner_upstream')
    .unique()
    .on('events')
    .columns(['upstream_id', 'connector', 'owner', 'workspace_id'])
    .execute()
  await db.schema
    .createIndex('deliveries_by_workspace')
    .on('deliveries')
    .columns(['workspace_id', 'seq'])
    .execute()
  await db.schema.createIndex('deliveries_by_time').on('deliveries').columns(['created_at']).execute()
}
