// Agents as rows. Scope, connection ids and the delivery target are JSON text (one schema for
// SQLite and PostgreSQL), read and written here only; the signing secret is vault ciphertext,
// sealed by the engine. The connections an agent names are also rows of agent_connections, written
// here with the agent in one transaction, so the agents using a connection are found by index.
import type { Kysely } from 'kysely'
import { removeConnectionUses, setConnectionUses } from './connection-uses.ts'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, oldestFirst, type Page, type PageRequest, pageOf } from './paging.ts'
import type { AgentsTable, Database } from './schema.ts'

/** The places an agent may touch, by kind (`boards`, `repositories` …): identifiers of each. */
export type AgentScopeColumn = Record<string, string[]>
/** Where an agent's events go: its webhook (pushed) or its stream (pulled). */
export type AgentDelivery = { type: 'webhook'; url: string } | { type: 'stream' }

/** A connection the agent used until it was disconnected (engine/connections/connection-bindings.ts). */
export interface ConnectionNeededColumn {
  connectionId: string
  connector: string
  accountName: string
  accountId: string
  disconnectedAt: string
}
/** Which of its callables an agent lists (engine/agents/agent-input.ts ToolSelectionInput). */
export interface ToolSelectionColumn {
  steps?: string[]
  tools?: string[]
  discovery: boolean
}

/** An agent, its JSON columns read. */
export type AgentRow = Omit<
  AgentsTable,
  'scope' | 'connection_ids' | 'delivery' | 'connections_needed' | 'tool_selection'
> & {
  scope: AgentScopeColumn
  connection_ids: string[]
  delivery: AgentDelivery
  connections_needed: ConnectionNeededColumn[]
  tool_selection: ToolSelectionColumn | null
}

/** Lists of agents page oldest first: by (created_at, id), ascending. */
const OLDEST_FIRST = byCreated<{ created_at: string; id: string }>('', 'asc')

export type NewAgentRow = Omit<
  AgentRow,
  | 'id'
  | 'created_at'
  | 'updated_at'
  | 'tool_selection'
  | 'end_user_id'
  | 'connections_needed'
  | 'previous_signing_secret'
  | 'previous_secret_expires_at'
> & {
  tool_selection?: ToolSelectionColumn | null
  end_user_id?: string | null
}

type JsonColumns = Partial<
  Pick<AgentRow, 'scope' | 'connection_ids' | 'delivery' | 'connections_needed' | 'tool_selection'>
>

const read = (row: AgentsTable): AgentRow => ({
  ...row,
  scope: JSON.parse(row.scope),
  connection_ids: JSON.parse(row.connection_ids),
  delivery: JSON.parse(row.delivery),
  connections_needed: JSON.parse(row.connections_needed ?? '[]'),
  tool_selection: row.tool_selection ? JSON.parse(row.tool_selection) : null,
})
// A column left undefined is not changed; tool_selection null is written as null.
const write = <T extends JsonColumns>(values: T) => ({
  ...values,
  scope: values.scope && JSON.stringify(values.scope),
  connection_ids: values.connection_ids && JSON.stringify(values.connection_ids),
  delivery: values.delivery && JSON.stringify(values.delivery),
  connections_needed: values.connections_needed && JSON.stringify(values.connections_needed),
  tool_selection: values.tool_selection && JSON.stringify(values.tool_selection),
})

export class Agents {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(values: NewAgentRow): Promise<AgentRow> {
    const now = nowIso()
    const row: AgentRow = {
      ...values,
      tool_selection: values.tool_selection ?? null,
      end_user_id: values.end_user_id ?? null,
      id: newId('agt'),
      created_at: now,
      updated_at: now,
      connections_needed: [],
      previous_signing_secret: null,
      previous_secret_expires_at: null,
    }
    await this.#db.transaction().execute(async (tx) => {
      await tx
        .insertInto('agents')
        .values({ ...row, ...write(row) })
        .execute()
      await setConnectionUses(tx, 'agent_connections', row.workspace_id, row.id, row.connection_ids, {
        fresh: true,
      })
    })
    return row
  }

  async get(workspaceId: string, id: string): Promise<AgentRow | undefined> {
    const row = await this.#db
      .selectFrom('agents')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return row && read(row)
  }

  /** By id alone, for the delivery code, which knows the agent but not its workspace. */
  async getById(id: string): Promise<AgentRow | undefined> {
    const row = await this.#db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst()
    return row && read(row)
  }

  /**
   * The workspace's agents, oldest first; `endUserId`: only those bound to that end user;
   * `connectionId`: only those whose connectionIds name it.
   */
  async list(
    workspaceId: string,
    filter: { endUserId?: string; connectionId?: string } = {},
  ): Promise<AgentRow[]> {
    const using = filter.connectionId
    if (using === undefined) {
      let q = this.#db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId)
      if (filter.endUserId !== undefined) q = q.where('end_user_id', '=', filter.endUserId)
      return (await q.orderBy('created_at').orderBy('id').execute()).map(read)
    }
    // The agents naming a connection: its rows by index (agent_connections_by_connection), each
    // agent by its key, put in order here. Asked for as `id IN (…)` or in order, SQLite read every
    // agent of the workspace and looked each up among the connection's (3.6–5.7 ms with 10,000).
    let joined = this.#db
      .selectFrom('agent_connections')
      .innerJoin('agents', 'agents.id', 'agent_connections.agent_id')
      .selectAll('agents')
      .where('agent_connections.workspace_id', '=', workspaceId)
      .where('agent_connections.connection_id', '=', using)
    if (filter.endUserId !== undefined) joined = joined.where('agents.end_user_id', '=', filter.endUserId)
    const rows = await joined.execute()
    return rows.sort(oldestFirst).map(read)
  }

  /** The workspace's agents, oldest first (as list), a page at a time. */
  async page(workspaceId: string, page: PageRequest): Promise<Page<AgentRow>> {
    const q = this.#db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId)
    const { items, next } = pageOf(await keyset(q, OLDEST_FIRST, page).execute(), OLDEST_FIRST, page)
    return { items: items.map(read), next }
  }

  /** Changes the given columns; false when there is no such agent. */
  async update(
    workspaceId: string,
    id: string,
    values: Partial<
      Pick<
        AgentRow,
        | 'name'
        | 'scope'
        | 'connection_ids'
        | 'delivery'
        | 'signing_secret'
        | 'tool_selection'
        | 'connections_needed'
        | 'previous_signing_secret'
        | 'previous_secret_expires_at'
      > & {
        end_user_id: string | null
      }
    >,
  ): Promise<boolean> {
    const connectionIds = values.connection_ids
    const update = (db: Kysely<Database>) =>
      db
        .updateTable('agents')
        .set({ ...write(values), updated_at: nowIso() })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst()
    if (connectionIds === undefined) return Number((await update(this.#db)).numUpdatedRows) > 0
    return this.#db.transaction().execute(async (tx) => {
      if (Number((await update(tx)).numUpdatedRows) === 0) return false
      await setConnectionUses(tx, 'agent_connections', workspaceId, id, connectionIds, { fresh: false })
      return true
    })
  }

  /** Removes the agent with its tools and tool runs; false when there is no such agent. */
  async delete(workspaceId: string, id: string): Promise<boolean> {
    return this.#db.transaction().execute(async (tx) => {
      await tx
        .deleteFrom('tool_runs')
        .where('workspace_id', '=', workspaceId)
        .where('agent_id', '=', id)
        .execute()
      await tx
        .deleteFrom('tool_connections')
        .where('workspace_id', '=', workspaceId)
        .where('tool_id', 'in', (eb) =>
          eb
            .selectFrom('tools')
            .select('id')
            .where('workspace_id', '=', workspaceId)
            .where('agent_id', '=', id),
        )
        .execute()
      await tx
        .deleteFrom('tools')
        .where('workspace_id', '=', workspaceId)
        .where('agent_id', '=', id)
        .execute()
      await removeConnectionUses(tx, 'agent_connections', workspaceId, id)
      const r = await tx
        .deleteFrom('agents')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    })
  }
}
