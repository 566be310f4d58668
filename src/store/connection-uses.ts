// Who uses a connection, by index: a row for each connection an agent names (agent_connections,
// migration 0026) or a tool's steps run through (tool_connections, 0027). The agents and tools
// stores write them here, in the transaction that writes the agent's or the tool's own row.
import type { Kysely } from 'kysely'
import type { Database } from './schema.ts'

/** Each index table, and the column naming what uses the connection. */
const OWNER = { agent_connections: 'agent_id', tool_connections: 'tool_id' } as const
export type ConnectionUses = keyof typeof OWNER

/**
 * Makes the rows of `ownerId` in `table` the connections given (each once): those it had are
 * replaced, unless it is new (`fresh`: it has none yet).
 */
export async function setConnectionUses(
  db: Kysely<Database>,
  table: ConnectionUses,
  workspaceId: string,
  ownerId: string,
  connectionIds: Iterable<string>,
  opts: { fresh: boolean },
): Promise<void> {
  if (!opts.fresh) await removeConnectionUses(db, table, workspaceId, ownerId)
  const ids = [...new Set(connectionIds)]
  if (ids.length === 0) return
  const owner = OWNER[table]
  await db
    .insertInto(table)
    .values(ids.map((connection_id) => ({ [owner]: ownerId, connection_id, workspace_id: workspaceId })))
    .execute()
}

/** Removes the rows of `ownerId` in `table` (the agent or tool is gone). */
export async function removeConnectionUses(
  db: Kysely<Database>,
  table: ConnectionUses,
  workspaceId: string,
  ownerId: string,
): Promise<void> {
  await db
    .deleteFrom(table)
    .where('workspace_id', '=', workspaceId)
    .where(OWNER[table], '=', ownerId)
    .execute()
}
