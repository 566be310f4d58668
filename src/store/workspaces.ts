// Workspaces (their rows; keys and memberships have their own repositories) and the removal of
// everything a workspace owns.
import type { Kysely } from 'kysely'
import { newId, nowIso } from './ids.ts'
import type { Database, Role, WorkspacesTable } from './schema.ts'

export type WorkspaceRow = Omit<WorkspacesTable, 'settings'> & { settings: string }

/** The tables whose rows belong to one workspace (a workspace_id column). */
const OWNED = [
  'api_keys',
  'memberships',
  'invitations',
  'connections',
  'connection_rate_limits',
  'agents',
  'tools',
  'tool_runs',
  'triggers',
  'subscriptions',
  'events',
  'deliveries',
  'causations',
  'step_runs',
  'credit_ledger',
  'credit_budgets',
  'credit_holds',
  'audit_log',
] as const satisfies readonly (keyof Database)[]

export type OwnedTable = (typeof OWNED)[number] | 'inbox' | 'delivery_attempts'

export class Workspaces {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async get(id: string): Promise<WorkspaceRow | undefined> {
    return (await this.#db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()) as
      | WorkspaceRow
      | undefined
  }

  /** A person's workspaces with their role, oldest membership first. */
  async ofPerson(personId: string): Promise<(WorkspaceRow & { role: Role })[]> {
    return (await this.#db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .selectAll('workspaces')
      .select('memberships.role')
      .where('memberships.person_id', '=', personId)
      .orderBy('memberships.created_at')
      .orderBy('workspaces.id')
      .execute()) as (WorkspaceRow & { role: Role })[]
  }

  async insert(name: string): Promise<WorkspaceRow> {
    const now = nowIso()
    const row = { id: newId('ws'), name, created_at: now, updated_at: now, settings: '{}' }
    await this.#db.insertInto('workspaces').values(row).execute()
    return row
  }

  async update(id: string, changes: { name?: string; settings?: string }): Promise<void> {
    await this.#db
      .updateTable('workspaces')
      .set({ ...changes, updated_at: nowIso() })
      .where('id', '=', id)
      .execute()
  }

  /**
   * Removes the workspace and every row it owns, in one transaction; returns how many rows of
   * each table went.
   */
  async deleteEverything(id: string): Promise<Record<OwnedTable, number>> {
    return this.#db.transaction().execute(async (trx) => {
      const removed = {} as Record<OwnedTable, number>
      const count = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows)
      removed.delivery_attempts = count(
        await trx
          .deleteFrom('delivery_attempts')
          .where(
            'delivery_id',
            'in',
            trx.selectFrom('deliveries').select('id').where('workspace_id', '=', id),
          )
          .executeTakeFirst(),
      )
      removed.inbox = count(
        await trx
          .deleteFrom('inbox')
          .where(
            'subscription_id',
            'in',
            trx.selectFrom('subscriptions').select('id').where('workspace_id', '=', id),
          )
          .executeTakeFirst(),
      )
      for (const table of OWNED)
        removed[table] = count(
          await trx
            .deleteFrom(table)
            .where('workspace_id' as never, '=', id as never)
            .executeTakeFirst(),
        )
      await trx.deleteFrom('workspaces').where('id', '=', id).execute()
      return removed
    })
  }
}
