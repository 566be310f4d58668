// A disconnection remembers whose connection it was: an end user's (their id) or the workspace's
// own (null). Connecting the same upstream account again offers what the earlier connection bound,
// and restoring puts it on the new connection; both only for a connection of the same owner, or an
// end user's agents would come to use the workspace's connection (or another end user's), and the
// workspace's agents an end user's.
//
// Rows made before: their owner is read from the agents they name (an agent bound to an end user
// uses only that end user's connections); where none of those agents is left, the row stays the
// workspace's own, and a restore still refuses each agent of another owner.
import type { Kysely } from 'kysely'

/** The columns read and written here, as they are at this migration. */
type Tables = {
  disconnections: { id: string; workspace_id: string; bindings: string; end_user_id: string | null }
  agents: { id: string; workspace_id: string; end_user_id: string | null }
}

export async function up(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped.withTables<Tables>()
  await db.schema.alterTable('disconnections').addColumn('end_user_id', 'text').execute()
  // What a connection may restore is read by account and owner (a page of connections at a time).
  await db.schema.dropIndex('disconnections_account').execute()
  await db.schema
    .createIndex('disconnections_of_account')
    .on('disconnections')
    .columns(['workspace_id', 'connector', 'account_id', 'end_user_id'])
    .execute()
  const rows = await db.selectFrom('disconnections').select(['id', 'workspace_id', 'bindings']).execute()
  for (const row of rows) {
    const b = JSON.parse(row.bindings) as {
      agents?: Array<{ id: string }>
      triggers?: Array<{ agentId: string }>
      tools?: Array<{ agentId: string }>
    }
    const agentIds = [
      ...(b.agents ?? []).map((a) => a.id),
      ...(b.triggers ?? []).map((t) => t.agentId),
      ...(b.tools ?? []).map((t) => t.agentId),
    ]
    if (agentIds.length === 0) continue
    const owner = await db
      .selectFrom('agents')
      .select('end_user_id')
      .where('workspace_id', '=', row.workspace_id)
      .where('id', 'in', agentIds)
      .where('end_user_id', 'is not', null)
      .executeTakeFirst()
    if (owner)
      await db
        .updateTable('disconnections')
        .set({ end_user_id: owner.end_user_id })
        .where('id', '=', row.id)
        .execute()
  }
}
