// The tools that use a connection, found by index: a row for each connection a tool's steps run
// through. Deleting or disconnecting a connection looked for them in the JSON text of every tool of
// the workspace (`steps LIKE …`), as it did for agents until migration 0026.
//
// Tools made before get their rows here, read from their steps.
import type { Kysely } from 'kysely'

/** The columns read and written here, as they are at this migration. */
type Tables = {
  tools: { id: string; workspace_id: string; steps: string }
  tool_connections: { tool_id: string; connection_id: string; workspace_id: string }
}

/** Tools read, and their rows written, this many at a time. */
const CHUNK = 500

export async function up(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped.withTables<Tables>()
  await db.schema
    .createTable('tool_connections')
    .addColumn('tool_id', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('tool_connections_pk', ['tool_id', 'connection_id'])
    .execute()
  await db.schema
    .createIndex('tool_connections_by_connection')
    .on('tool_connections')
    .columns(['workspace_id', 'connection_id'])
    .execute()
  for (let after = ''; ; ) {
    const tools = await db
      .selectFrom('tools')
      .select(['id', 'workspace_id', 'steps'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(CHUNK)
      .execute()
    if (tools.length === 0) break
    after = tools[tools.length - 1].id
    const rows = tools.flatMap((t) => {
      const steps = JSON.parse(t.steps) as Array<{ connectionId?: unknown }>
      const ids = new Set(steps.map((s) => s.connectionId).filter((id) => typeof id === 'string'))
      return [...ids].map((connection_id) => ({ tool_id: t.id, connection_id, workspace_id: t.workspace_id }))
    })
    for (let i = 0; i < rows.length; i += CHUNK)
      await db
        .insertInto('tool_connections')
        .values(rows.slice(i, i + CHUNK))
        .execute()
  }
}
