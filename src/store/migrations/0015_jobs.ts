// Long work as jobs (issue 27, build 5): a bulk enrichment, a replay of many deliveries. One row
// per job, claimed by one instance with a lease (holder, lease_until) like a delivery; its
// progress (done of total, errors) and its result are written as it goes, so a restart resumes it
// from `done` and nothing already done is lost.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    // queued → running → succeeded | failed | cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    // JSON: who started it (engine/access/caller.ts: ids and a role, never a key or secret).
    .addColumn('caller', 'text', (c) => c.notNull())
    // JSON: what to do (the kind's input; never credentials).
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('errors', 'integer', (c) => c.notNull().defaultTo(0))
    // JSON: the kind's result so far.
    .addColumn('result', 'text')
    // JSON { code, message }: why it failed or was cancelled.
    .addColumn('error', 'text')
    .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('holder', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute()
  await db.schema.createIndex('jobs_by_created').on('jobs').columns(['workspace_id', 'created_at']).execute()
  // The sweep reads unfinished jobs only.
  await db.schema.createIndex('jobs_by_status').on('jobs').columns(['status', 'lease_until']).execute()
}
