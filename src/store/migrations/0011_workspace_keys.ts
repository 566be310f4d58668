// Workspace keys are named for what they are (issue 22): the first-start key of kind `admin` is a
// workspace key (kind `workspace`) with the role `owner` (set by 0010); the first workspace of an
// older database is called "Default". Keys are listed by workspace and by who made them.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE api_keys SET kind = 'workspace', role = COALESCE(role, 'owner') WHERE kind = 'admin'`.execute(
    db,
  )
  await sql`UPDATE workspaces SET name = 'Default' WHERE name = 'Default workspace'`.execute(db)
  await db.schema
    .createIndex('api_keys_by_workspace')
    .on('api_keys')
    .columns(['workspace_id', 'kind', 'created_at'])
    .execute()
  await db.schema.createIndex('api_keys_by_maker').on('api_keys').columns(['created_by']).execute()
}
