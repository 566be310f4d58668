// Workspaces (their rows; keys and memberships have their own repositories), the claim of a
// workspace no one owns, and the removal of everything a workspace owns.
import { type Kysely, type Selectable, sql } from 'kysely'
import { ofWorkspace } from './event-log.ts'
import { newId, nowIso } from './ids.ts'
import { keyset, type Page, type PageKey, type PageRequest, pageOf } from './paging.ts'
import type { Database, Role, WorkspacesTable } from './schema.ts'

/** Any fixed number of ours: claims of a workspace's ownership take turns on it (PostgreSQL). */
const OWNER_CLAIM_LOCK = 7_254_003

/** A workspace's settings document (admins' settings, `endUsers`, the claimed `emailDomain` …). */
export type WorkspaceSettingsDocument = Record<string, unknown>
/** A workspace, its settings document read (the column is JSON text, read and written here only). */
export type WorkspaceRow = Omit<Selectable<WorkspacesTable>, 'settings'> & {
  settings: WorkspaceSettingsDocument
}

const readSettings = (text: string | null | undefined): WorkspaceSettingsDocument => JSON.parse(text || '{}')
const read = <R extends { settings: string }>(
  r: R,
): Omit<R, 'settings'> & { settings: WorkspaceSettingsDocument } => ({
  ...r,
  settings: readSettings(r.settings),
})

/** A workspace's name and settings document, read with the database or a transaction. */
export async function workspaceDocument(
  db: Kysely<Database>,
  workspaceId: string,
): Promise<{ name: string; settings: WorkspaceSettingsDocument } | undefined> {
  const row = await db
    .selectFrom('workspaces')
    .select(['settings', 'name'])
    .where('id', '=', workspaceId)
    .executeTakeFirst()
  return row && read(row)
}

/** Replaces a workspace's settings document, with the database or a transaction. */
export async function putWorkspaceSettings(
  db: Kysely<Database>,
  workspaceId: string,
  settings: WorkspaceSettingsDocument,
): Promise<void> {
  await db
    .updateTable('workspaces')
    .set({ settings: JSON.stringify(settings), updated_at: nowIso() })
    .where('id', '=', workspaceId)
    .execute()
}

/**
 * The tables whose rows belong to one workspace (a workspace_id column): deleting the workspace
 * empties each. test/store/workspace-owned-tables.test.ts holds this list against the schema.
 */
export const OWNED = [
  'api_keys',
  'memberships',
  'invitations',
  'connections',
  'disconnections',
  'connection_rate_limits',
  'agent_connections',
  'agents',
  'tool_connections',
  'tools',
  'tool_runs',
  'triggers',
  'subscriptions',
  'events',
  // Before their deliveries, by which they are found (migration 0020 gave them a workspace).
  'delivery_attempts',
  'deliveries',
  'causations',
  'step_runs',
  'credit_ledger',
  'credit_budgets',
  'credit_holds',
  'audit_log',
  'end_users',
  'connect_sessions',
  'operator_notices',
  'stat_hours',
  'stat_rollups',
  'mcp_grants',
  'jobs',
] as const satisfies readonly (keyof Database)[]

export type OwnedTable = (typeof OWNED)[number] | 'inbox'

/** A person's workspace with when they joined it. */
type Joined = Selectable<WorkspacesTable> & { role: Role; joined_at: string }

/** A person's workspaces page in the order they joined them: by (joined, workspace id). */
const BY_JOINING: PageKey<Joined> = {
  columns: [{ ref: 'memberships.created_at' }, { ref: 'workspaces.id' }],
  of: (w) => [w.joined_at, w.id],
  order: 'asc',
}

export class Workspaces {
  #db: Kysely<Database>
  #postgres: boolean
  constructor(db: Kysely<Database>, kind: 'sqlite' | 'postgres') {
    this.#db = db
    this.#postgres = kind === 'postgres'
  }

  async get(id: string): Promise<WorkspaceRow | undefined> {
    const row = await this.#db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()
    return row && read(row)
  }

  /** The workspaces whose settings claim an email domain (`emailDomain`, any case); an unreadable document claims none. */
  async claiming(domain: string): Promise<string[]> {
    const rows = await this.#db.selectFrom('workspaces').select(['id', 'settings']).execute()
    return rows
      .filter((r) => {
        try {
          const d = readSettings(r.settings).emailDomain
          return typeof d === 'string' && d.toLowerCase() === domain.toLowerCase()
        } catch {
          return false
        }
      })
      .map((r) => r.id)
  }

  /** A person's workspaces with their role, oldest membership first. */
  /** The same, a page at a time. */
  async pageOfPerson(personId: string, page: PageRequest): Promise<Page<WorkspaceRow & { role: Role }>> {
    const q = this.#db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .selectAll('workspaces')
      .select(['memberships.role', 'memberships.created_at as joined_at'])
      .where('memberships.person_id', '=', personId)
    const rows = (await keyset(q, BY_JOINING, page).execute()) as Joined[]
    const { items, next } = pageOf(rows, BY_JOINING, page)
    return { items: items.map(({ joined_at: _joined, ...w }) => read(w)), next }
  }

  async ofPerson(personId: string): Promise<(WorkspaceRow & { role: Role })[]> {
    return (await this.#db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .selectAll('workspaces')
      .select('memberships.role')
      .where('memberships.person_id', '=', personId)
      .orderBy('memberships.created_at')
      .orderBy('workspaces.id')
      .execute()
      .then((rows) => rows.map(read))) as (WorkspaceRow & { role: Role })[]
  }

  async insert(name: string): Promise<WorkspaceRow> {
    const now = nowIso()
    const row = { id: newId('ws'), name, created_at: now, updated_at: now, settings: '{}' }
    await this.#db.insertInto('workspaces').values(row).execute()
    return read(row)
  }

  /**
   * Makes the person the workspace's owner if no one owns it yet; false when someone does (or the
   * workspace is gone). One statement, so two claims at once make one owner.
   */
  async claimOwner(workspaceId: string, personId: string): Promise<boolean> {
    const now = nowIso()
    return this.#db.transaction().execute(async (trx) => {
      if (this.#postgres) await sql`SELECT pg_advisory_xact_lock(${OWNER_CLAIM_LOCK})`.execute(trx)
      const owned = await trx
        .selectFrom('memberships')
        .select('person_id')
        .where('workspace_id', '=', workspaceId)
        .where('role', '=', 'owner')
        .executeTakeFirst()
      const exists = await trx
        .selectFrom('workspaces')
        .select('id')
        .where('id', '=', workspaceId)
        .executeTakeFirst()
      if (owned || !exists) return false
      await trx
        .insertInto('memberships')
        .values({
          workspace_id: workspaceId,
          person_id: personId,
          role: 'owner',
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.columns(['workspace_id', 'person_id']).doUpdateSet({ role: 'owner', updated_at: now }),
        )
        .execute()
      return true
    })
  }

  async update(id: string, changes: { name?: string; settings?: WorkspaceSettingsDocument }): Promise<void> {
    await this.#db
      .updateTable('workspaces')
      .set({
        name: changes.name,
        settings: changes.settings && JSON.stringify(changes.settings),
        updated_at: nowIso(),
      })
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
      // A bare `workspace_id =` cannot use the partial workspace indexes (listed rows only, migrations
      // 0018 and 0020): the event log's rows are found through ofWorkspace.
      const rowsOf = (table: (typeof OWNED)[number]) => {
        if (table === 'events' || table === 'deliveries')
          return trx
            .deleteFrom(table)
            .where(
              'seq',
              'in',
              trx.selectFrom(ofWorkspace(trx, table as 'events', id, ['seq'])).select('seq'),
            )
        // By their key's delivery, before the deliveries go (OWNED lists them first).
        if (table === 'delivery_attempts')
          return trx
            .deleteFrom(table)
            .where(
              'delivery_id',
              'in',
              trx.selectFrom(ofWorkspace(trx, 'deliveries', id, ['id'])).select('id'),
            )
        return trx.deleteFrom(table).where('workspace_id' as never, '=', id as never)
      }
      for (const table of OWNED) removed[table] = count(await rowsOf(table).executeTakeFirst())
      await trx.deleteFrom('workspaces').where('id', '=', id).execute()
      return removed
    })
  }
}
