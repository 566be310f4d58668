// Disconnected connections and what used them (migration 0011): kept so that connecting the same
// upstream account again can restore its triggers, its agents' use of it and its tools' steps.
import type { Kysely } from 'kysely'
import { nowIso } from './ids.ts'
import type { Database, DisconnectionsTable } from './schema.ts'
import type { TriggerTarget } from './triggers.ts'

/** What used a connection when it was disconnected (the engine's Dependants). */
export interface DisconnectionBindings {
  agents: Array<{ id: string; name: string }>
  triggers: Array<{
    id: string
    agentId: string
    trigger: string
    config: unknown
    target: TriggerTarget
    pollIntervalMs: number | null
  }>
  tools: Array<{ agentId: string; toolId: string; name: string; steps: number[] }>
}

/** A disconnection, its bindings read (the column is JSON text, read and written here only). */
export type DisconnectionRow = Omit<DisconnectionsTable, 'bindings'> & { bindings: DisconnectionBindings }

const read = (row: DisconnectionsTable): DisconnectionRow => ({ ...row, bindings: JSON.parse(row.bindings) })

/** Accounts asked for in one statement of openFor. */
const ACCOUNTS_A_STATEMENT = 100

export class Disconnections {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(values: Omit<DisconnectionRow, 'restored_to' | 'restored_at'>): Promise<void> {
    await this.#db
      .insertInto('disconnections')
      .values({ ...values, bindings: JSON.stringify(values.bindings), restored_to: null, restored_at: null })
      .execute()
  }

  /**
   * The disconnections not restored yet of these accounts' connections, each of its owner (an end
   * user, or null: the workspace's own), newest first: what a page of connections may restore, read
   * by index whatever else the workspace's disconnections hold.
   */
  async openFor(
    workspaceId: string,
    accounts: ReadonlyArray<{ connector: string; accountId: string; endUserId: string | null }>,
  ): Promise<DisconnectionRow[]> {
    const distinct = [...new Map(accounts.map((a) => [JSON.stringify(a), a])).values()]
    const rows: DisconnectionsTable[] = []
    // A statement per ACCOUNTS_A_STATEMENT accounts: SQLite refuses an expression deeper than 1,000
    // terms, and a list of a workspace's connections may ask for thousands.
    for (let at = 0; at < distinct.length; at += ACCOUNTS_A_STATEMENT) {
      const part = distinct.slice(at, at + ACCOUNTS_A_STATEMENT)
      rows.push(
        ...(await this.#db
          .selectFrom('disconnections')
          .selectAll()
          .where('restored_to', 'is', null)
          // The workspace in each term, not outside them: SQLite then reads each account's rows by the
          // index (MULTI-INDEX OR), instead of every row of the workspace.
          .where((eb) =>
            eb.or(
              part.map((a) =>
                eb.and([
                  eb('workspace_id', '=', workspaceId),
                  eb('connector', '=', a.connector),
                  eb('account_id', '=', a.accountId),
                  a.endUserId === null ? eb('end_user_id', 'is', null) : eb('end_user_id', '=', a.endUserId),
                ]),
              ),
            ),
          )
          .execute()),
      )
    }
    return rows
      .sort((x, y) =>
        x.disconnected_at < y.disconnected_at ? 1 : x.disconnected_at > y.disconnected_at ? -1 : 0,
      )
      .map(read)
  }

  /** Marks it restored into `connectionId`; false when another request restored it first. */
  async markRestored(id: string, connectionId: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('disconnections')
      .set({ restored_to: connectionId, restored_at: nowIso() })
      .where('id', '=', id)
      .where('restored_to', 'is', null)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }
}
