// Tools as rows: an agent's ordered chain of tool steps, kept as JSON text, read and written here
// only (the engine validates what it writes: tools/tool-input.ts).
import type { Kysely } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
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
    await this.#db
      .insertInto('tools')
      .values({
        ...row,
        steps: JSON.stringify(row.steps),
        inputs: row.inputs === null ? null : JSON.stringify(row.inputs),
      })
      .execute()
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
    const rows = await this.#db
      .selectFrom('tools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      // Sifted in the database by the id's JSON text; exactly below (LIKE's `_` matches any character).
      .where('steps', 'like', `%${JSON.stringify(connectionId)}%`)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    return rows
      .map(read)
      .filter((t) =>
        (t.steps as Array<{ connectionId?: unknown }>).some((s) => s.connectionId === connectionId),
      )
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
    const r = await this.#db
      .updateTable('tools')
      .set({
        ...values,
        steps: values.steps && JSON.stringify(values.steps),
        inputs: values.inputs === undefined ? undefined : values.inputs && JSON.stringify(values.inputs),
        updated_at: nowIso(),
      })
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  async delete(workspaceId: string, agentId: string, id: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('tools')
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }
}
