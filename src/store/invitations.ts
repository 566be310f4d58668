// Invitations to a workspace (migration 0010): an email, a role and a single-use link whose token
// is stored hashed. Accepting takes it once, in one statement, however many instances race.
import type { Kysely } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
import { hashToken, newToken } from './person-sessions.ts'
import type { Database, InvitationsTable, Role } from './schema.ts'

export type InvitationRow = InvitationsTable

/** Lists of invitations page newest first: by (created_at, id), descending. */
const NEWEST_FIRST = byCreated<InvitationRow>()

export class Invitations {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Stores an invitation; returns it and the link's token in clear (once). */
  async create(opts: {
    workspaceId: string
    email: string
    role: Role
    invitedBy: string
    ttlMs: number
  }): Promise<{ row: InvitationRow; token: string }> {
    const token = newToken('pbi')
    const now = Date.now()
    const row: InvitationRow = {
      id: newId('inv'),
      workspace_id: opts.workspaceId,
      email: opts.email,
      role: opts.role,
      token_hash: hashToken(token),
      invited_by: opts.invitedBy,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + opts.ttlMs).toISOString(),
      accepted_at: null,
      accepted_by: null,
      revoked_at: null,
    }
    await this.#db.insertInto('invitations').values(row).execute()
    return { row, token }
  }

  async byToken(token: string): Promise<InvitationRow | undefined> {
    return this.#db
      .selectFrom('invitations')
      .selectAll()
      .where('token_hash', '=', hashToken(token))
      .executeTakeFirst()
  }

  /** A workspace's invitations, newest first (accepted, revoked and expired ones included). */
  /** A workspace's invitations, newest first, a page at a time. */
  async page(workspaceId: string, page: PageRequest): Promise<Page<InvitationRow>> {
    const q = this.#db.selectFrom('invitations').selectAll().where('workspace_id', '=', workspaceId)
    return pageOf(await keyset(q, NEWEST_FIRST, page).execute(), NEWEST_FIRST, page)
  }

  async forWorkspace(workspaceId: string): Promise<InvitationRow[]> {
    return this.#db
      .selectFrom('invitations')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(500)
      .execute()
  }

  /** Pending invitations of an email (not accepted, revoked or expired), oldest first. */
  async pendingFor(email: string): Promise<InvitationRow[]> {
    return this.#db
      .selectFrom('invitations')
      .selectAll()
      .where('email', '=', email)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', nowIso())
      .orderBy('created_at')
      .execute()
  }

  /** Revokes a pending invitation; returns whether one was. */
  async revoke(workspaceId: string, id: string): Promise<boolean> {
    const row = await this.#db
      .updateTable('invitations')
      .set({ revoked_at: nowIso() })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .returning('id')
      .executeTakeFirst()
    return row !== undefined
  }

  /** Marks it accepted if it still can be (single use); returns whether this call took it. */
  async take(id: string, personId: string): Promise<boolean> {
    const now = nowIso()
    const row = await this.#db
      .updateTable('invitations')
      .set({ accepted_at: now, accepted_by: personId })
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('id')
      .executeTakeFirst()
    return row !== undefined
  }
}
