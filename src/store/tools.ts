// Tools as rows: an agent's ordered chain of tool steps, kept as JSON text.
import type { Kysely } from 'kysely'
import { newId, nowIso } from './ids.ts'
import type { Database, ToolsTable } from './schema.ts'

export type ToolRow = ToolsTable

export class Tools {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(
    values: Omit<ToolRow, 'id' | 'created_at' | 'updated_at' | 'inputs'> & { inputs?: string | null },
  ): Promise<ToolRow> {
    const now = nowIso()
    const row: ToolRow = { inputs: null, ...values, id: newId('tool'), created_at: now, updated_at: now }
    await this.#db.insertInto('tools').values(row).execute()
    return row
  }

  async get(workspaceId: string, agentId: string, id: string): Promise<ToolRow | undefined> {
    return this.#db
      .selectFrom('tools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async list(workspaceId: string, agentId: string): Promise<ToolRow[]> {
    return this.#db
      .selectFrom('tools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
  }

  async update(
    workspaceId: string,
    agentId: string,
    id: string,
    values: Partial<Pick<ToolRow, 'name' | 'description' | 'steps' | 'inputs'>>,
  ): Promise<boolean> {
    const r = await this.#db
      .updateTable('tools')
      .set({ ...values, updated_at: nowIso() })
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
