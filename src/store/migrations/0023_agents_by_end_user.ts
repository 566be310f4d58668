// The agents bound to an end user, by index: an end user's page (GET /v1/end-users/{id}) and the
// MCP consent page an end user is shown list the agents bound to them. They read every agent of
// the workspace before, and a workspace acting for its customers holds thousands (10,000 in
// bench/workspace-size.ts). With `created_at` too, so the list comes in its order from the index:
// without it SQLite chose agents_by_workspace for the order and read every agent of the workspace.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('agents_by_end_user')
    .on('agents')
    .columns(['workspace_id', 'end_user_id', 'created_at'])
    .execute()
}
