// Tools as rows: an agent's ordered chain of tool steps, kept as JSON text, read and written here
// only (the engine validates what it writes: tools/tool-input.ts). The connections its steps run
// through are also rows of tool_connections, written here with the steps in one transaction, so
// the tools using a connection are found by index.
import type { Kysely } from 'kysely'
import { removeConnectionUses, setConnectionUses } from './connection-uses.ts'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, oldestFirst, type Page, type PageRequest, pageOf } from './paging.ts'
import type { Database, ToolsTable } from './schema.ts'

/** A tool, its steps and declared inputs read. */
export type ToolRow = Omit<ToolsTable, 'steps' | 'inputs'> & {
  steps: unknown[]
  inputs: Record<string, unknown> | null
}

const read = (row: ToolsTable): ToolRow => ({
  ...row,
  steps: JSON.parse(row.steps),
  inputs: row.inputs === null ? null : JSON.parse(row.inputs),
})

/** Lists of tools page oldest first: by (created_at, id), ascending. */
const OLDEST_FIRST = byCreated<{ created_at: string; id: string }>('', 'asc')

export class Tools {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(
    values: Omit<ToolRow, 'id' | 'created_at' | 'updated_at' | 'inputs'> & { inputs?: ToolRow['inputs'] },
  ): Promise<ToolRow> {
    const now = nowIso()
    const row: ToolRow = { inputs: null, ...values, id: newId('tool'), created_at: now, updated_at: now }
    await this.#db.transaction().execute(async (tx) => {
      await tx
        .insertInto('tools')
        .values({
          ...row,
          steps: JSON.stringify(row.steps),
          inputs: row.inputs === null ? null : JSON.stringify(row.inputs),
        })
        .execute()
      await setConnectionUses(tx, 'tool_connections', row.workspace_id, row.id, stepConnections(row.steps), {
        fresh: true,
      })
    })
    return row
  }

  async get(workspaceId: string, agentId: string, id: string): Promise<ToolRow | undefined> {
    const row = await this.#db
      .selectFrom('tools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .where('id', '=', id)
      .executeTakeFirst()
    return row && read(row)
  }

  async list(workspaceId: string, agentId: string): Promise<ToolRow[]> {
    const rows = await this.#db
      .selectFrom('tools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    return rows.map(read)
  }

  /** The workspace's tools with a step that runs through the connection, oldest first. */
  async usingConnection(workspaceId: string, connectionId: string): Promise<ToolRow[]> {
    // Its rows by index (tool_connections_by_connection), each tool by its key, put in order here
    // (asked for in order, SQLite would read the workspace's tools in that order instead).
    const rows = await this.#db
      .selectFrom('tool_connections')
      .innerJoin('tools', 'tools.id', 'tool_connections.tool_id')
      .selectAll('tools')
      .where('tool_connections.workspace_id', '=', workspaceId)
      .where('tool_connections.connection_id', '=', connectionId)
      .execute()
    return rows.sort(oldestFirst).map(read)
  }

  /** An agent's tools, oldest first (as list), a page at a time. */
  async page(workspaceId: string, agentId: string, page: PageRequest): Promise<Page<ToolRow>> {
    const q = this.#db
      .selectFrom('tools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
    const { items, next } = pageOf(await keyset(q, OLDEST_FIRST, page).execute(), OLDEST_FIRST, page)
    return { items: items.map(read), next }
  }

  async update(
    workspaceId: string,
    agentId: string,
    id: string,
    values: Partial<Pick<ToolRow, 'name' | 'description' | 'steps' | 'inputs'>>,
  ): Promise<boolean> {
    const steps = values.steps
    const update = (db: Kysely<Database>) =>
      db
        .updateTable('tools')
        .set({
          ...values,
          steps: steps && JSON.stringify(steps),
          inputs: values.inputs === undefined ? undefined : values.inputs && JSON.stringify(values.inputs),
          updated_at: nowIso(),
        })
        .where('workspace_id', '=', workspaceId)
        .where('agent_id', '=', agentId)
        .where('id', '=', id)
        .executeTakeFirst()
    if (steps === undefined) return Number((await update(this.#db)).numUpdatedRows) > 0
    return this.#db.transaction().execute(async (tx) => {
      if (Number((await update(tx)).numUpdatedRows) === 0) return false
      await setConnectionUses(tx, 'tool_connections', workspaceId, id, stepConnections(steps), {
        fresh: false,
      })
      return true
    })
  }

  async delete(workspaceId: string, agentId: string, id: string): Promise<boolean> {
    return this.#db.transaction().execute(async (tx) => {
      const r = await tx
        .deleteFrom('tools')
        .where('workspace_id', '=', workspaceId)
        .where('agent_id', '=', agentId)
        .where('id', '=', id)
        .executeTakeFirst()
      if (Number(r.numDeletedRows) === 0) return false
      await removeConnectionUses(tx, 'tool_connections', workspaceId, id)
      return true
    })
  }
}

/** The connections a tool's steps run through (a step whose connection was disconnected names none). */
function stepConnections(steps: readonly unknown[]): string[] {
  return (steps as Array<{ connectionId?: unknown }>).flatMap((s) =>
    typeof s.connectionId === 'string' ? [s.connectionId] : [],
  )
}
