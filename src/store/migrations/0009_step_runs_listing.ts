// GET /v1/runs lists a workspace's step runs newest first (optionally one caller key's), paged by
// created_at: an index in that order, so the listing reads one page instead of the whole table.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('step_runs_by_workspace')
    .on('step_runs')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute()
}
