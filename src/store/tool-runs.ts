// Tool run records: each step's status, output and error. Inputs of the steps are not kept
// (they may be rendered from anything); the tool's own input is.
import type { Kysely } from 'kysely'
import { byCreated, keyset, pageOf } from './paging.ts'
import type { Database, ToolRunsTable } from './schema.ts'

const BY_CREATED = byCreated<ToolRunsTable>()

/** A tool run, its input and step records read (written and read here only). */
export type ToolRunRow = Omit<ToolRunsTable, 'input' | 'steps'> & { input: unknown; steps: unknown[] }

const read = (row: ToolRunsTable): ToolRunRow => ({
  ...row,
  input: JSON.parse(row.input),
  steps: JSON.parse(row.steps),
})

export class ToolRuns {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(row: ToolRunRow): Promise<void> {
    await this.#db
      .insertInto('tool_runs')
      .values({ ...row, input: JSON.stringify(row.input), steps: JSON.stringify(row.steps) })
      .execute()
  }

  async finish(
    id: string,
    values: Pick<ToolRunRow, 'status' | 'steps' | 'error_code' | 'error_message' | 'finished_at'>,
  ): Promise<void> {
    await this.#db
      .updateTable('tool_runs')
      .set({ ...values, steps: JSON.stringify(values.steps) })
      .where('id', '=', id)
      .execute()
  }

  /** How many of the agent's tool runs are under way (those started since `since`, when given). */
  async running(workspaceId: string, agentId: string, since?: string): Promise<number> {
    let q = this.#db
      .selectFrom('tool_runs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .where('status', '=', 'running')
    if (since) q = q.where('created_at', '>=', since)
    const row = await q.executeTakeFirst()
    return Number(row?.n ?? 0)
  }

  async get(workspaceId: string, id: string): Promise<ToolRunRow | undefined> {
    const row = await this.#db
      .selectFrom('tool_runs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return row && read(row)
  }

  /** An agent's runs, newest first; `cursor` is the `next` of the previous page. */
  async list(
    workspaceId: string,
    agentId: string,
    page: { limit: number; cursor?: string; toolId?: string },
  ): Promise<{ runs: ToolRunRow[]; next: string | null }> {
    let q = this.#db
      .selectFrom('tool_runs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
    if (page.toolId) q = q.where('tool_id', '=', page.toolId)
    const { items, next } = pageOf(await keyset(q, BY_CREATED, page).execute(), BY_CREATED, page)
    return { runs: items.map(read), next }
  }
}
