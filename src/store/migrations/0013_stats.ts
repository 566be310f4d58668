// The numbers behind GET /v1/stats (engine/stats/): indexes that read each record kind by its time
// within a workspace, the hourly roll-up those reads are folded into once an hour is over (so a
// month is ~720 rows a series instead of every record), and the 429s a step run met (step_runs
// already counts its upstream requests in `attempts`), and each request's times for the run's
// timeline.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('events_by_received')
    .on('events')
    .columns(['workspace_id', 'received_at'])
    .execute()
  await db.schema
    .createIndex('deliveries_by_created')
    .on('deliveries')
    .columns(['workspace_id', 'created_at'])
    .execute()
  await db.schema.createIndex('delivery_attempts_by_time').on('delivery_attempts').columns(['at']).execute()
  await db.schema
    .createIndex('tool_runs_by_finished')
    .on('tool_runs')
    .columns(['workspace_id', 'finished_at'])
    .execute()
  await db.schema
    .alterTable('step_runs')
    .addColumn('rate_limited', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  // The run's upstream requests for its timeline (JSON: method, route template, waits, duration,
  // status; never a query, header or body).
  await db.schema.alterTable('step_runs').addColumn('requests', 'text').execute()

  // One row per workspace, series, hour and key (a connector, an outcome, a connection …):
  // `n` the count or sum, `v` a second measure where the series has one, `hist` a latency
  // histogram (JSON, log-spaced buckets) where it is one.
  await db.schema
    .createTable('stat_hours')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('series', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addColumn('v', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('hist', 'text')
    .addPrimaryKeyConstraint('stat_hours_pk', ['workspace_id', 'series', 'hour', 'key'])
    .execute()
  // Hours before `rolled_until` are in stat_hours (a missing row is a zero); later ones are read
  // from the records themselves.
  await db.schema
    .createTable('stat_rollups')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('rolled_until', 'text', (c) => c.notNull())
    .execute()
}
