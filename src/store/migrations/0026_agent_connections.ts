// The agents that use a connection, found by index: a row for each connection an agent names.
// Deleting or disconnecting a connection, or a connection lapsing, looked for the agents naming it
// in the JSON text of every agent of the workspace (`connection_ids LIKE …`): with 1,000 end users
// and 10,000 agents, deleting a connection took 4.5 times what it takes with 10 end users
// (bench/workspace-size.ts). The agent's `connection_ids` stays what its connections are, in order.
//
// Agents made before get their rows here, read from their `connection_ids`.
import type { Kysely } from 'kysely'

/** The columns read and written here, as they are at this migration. */
type Tables = {
  agents: { id: string; workspace_id: string; connection_ids: string }
  agent_connections: { agent_id: string; connection_id: string; workspace_id: string }
}

/** Agents read, and their rows written, this many at a time. */
const CHUNK = 500

export async function up(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped.withTables<Tables>()
  await db.schema
    .createTable('agent_connections')
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_connections_pk', ['agent_id', 'connection_id'])
    .execute()
  await db.schema
    .createIndex('agent_connections_by_connection')
    .on('agent_connections')
    .columns(['workspace_id', 'connection_id'])
    .execute()
  for (let after = ''; ; ) {
    const agents = await db
      .selectFrom('agents')
      .select(['id', 'workspace_id', 'connection_ids'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(CHUNK)
      .execute()
    if (agents.length === 0) break
    after = agents[agents.length - 1].id
    const rows = agents.flatMap((a) =>
      [...new Set(JSON.parse(a.connection_ids) as string[])].map((connection_id) => ({
        agent_id: a.id,
        connection_id,
        workspace_id: a.workspace_id,
      })),
    )
    for (let i = 0; i < rows.length; i += CHUNK)
      await db
        .insertInto('agent_connections')
        .values(rows.slice(i, i + CHUNK))
        .execute()
  }
}
