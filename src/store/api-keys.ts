// Workspaces and the keys that call the API. Keys are random and long, so a plain SHA-256 is
// the right hash: it makes the table useless to a thief and costs nothing per request.
import { createHash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
import type { ApiKeysTable, Database, Role } from './schema.ts'

export type ApiKeyRow = ApiKeysTable

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex')

/** A new key in clear: `pb_ws_…` for a workspace key, `pb_agent_…` for an agent's. */
export function generateKey(kind: 'workspace' | 'agent'): string {
  return `pb_${kind === 'workspace' ? 'ws' : 'agent'}_${randomBytes(24).toString('base64url')}`
}

/** Lists of keys page oldest first: by (created_at, id), ascending. */
const OLDEST_FIRST = byCreated<ApiKeyRow>('', 'asc')

export class ApiKeys {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async firstWorkspace() {
    return this.#db.selectFrom('workspaces').selectAll().orderBy('created_at').limit(1).executeTakeFirst()
  }

  async findWorkspace(id: string) {
    return this.#db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()
  }

  async createWorkspace(name: string) {
    const now = nowIso()
    const row = { id: newId('ws'), name, created_at: now, updated_at: now, settings: '{}' }
    await this.#db.insertInto('workspaces').values(row).execute()
    return row
  }

  /** Stores a key (generated, or given) and returns the row and the key in clear, once. */
  async create(opts: {
    workspaceId: string
    kind: 'workspace' | 'agent'
    name: string
    agentId?: string | null
    /** A workspace key's role (owner when not given); agent keys have none. */
    role?: Role
    /** The person who made it. */
    createdBy?: string | null
    expiresAt?: string | null
    key?: string
  }) {
    const key = opts.key ?? generateKey(opts.kind)
    const row: ApiKeyRow = {
      id: newId('key'),
      workspace_id: opts.workspaceId,
      kind: opts.kind,
      agent_id: opts.agentId ?? null,
      name: opts.name,
      key_prefix: key.slice(0, 12),
      key_hash: hashKey(key),
      created_at: nowIso(),
      last_used_at: null,
      revoked_at: null,
      role: opts.kind === 'workspace' ? (opts.role ?? 'owner') : null,
      created_by: opts.createdBy ?? null,
      expires_at: opts.expiresAt ?? null,
    }
    await this.#db.insertInto('api_keys').values(row).execute()
    return { row, key }
  }

  async findByKey(key: string): Promise<ApiKeyRow | undefined> {
    return this.#db.selectFrom('api_keys').selectAll().where('key_hash', '=', hashKey(key)).executeTakeFirst()
  }

  /** Records when a key was last used (the caller throttles it: not a write per request). */
  async touch(id: string, at: string): Promise<void> {
    await this.#db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute()
  }

  async revoke(id: string): Promise<void> {
    await this.#db.updateTable('api_keys').set({ revoked_at: nowIso() }).where('id', '=', id).execute()
  }

  /** A workspace's keys, oldest first (revoked ones included); agent keys only when asked. */
  async listWorkspace(workspaceId: string, opts: { includeAgentKeys?: boolean } = {}): Promise<ApiKeyRow[]> {
    let q = this.#db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId)
    if (!opts.includeAgentKeys) q = q.where('kind', '=', 'workspace')
    return q.orderBy('created_at').orderBy('id').execute()
  }

  /** The same list, a page at a time. */
  async pageWorkspace(
    workspaceId: string,
    opts: { includeAgentKeys?: boolean },
    page: PageRequest,
  ): Promise<Page<ApiKeyRow>> {
    let q = this.#db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId)
    if (!opts.includeAgentKeys) q = q.where('kind', '=', 'workspace')
    return pageOf(await keyset(q, OLDEST_FIRST, page).execute(), OLDEST_FIRST, page)
  }

  async findInWorkspace(workspaceId: string, id: string): Promise<ApiKeyRow | undefined> {
    return this.#db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  /** An agent's keys, oldest first (revoked ones included, for the record). */
  async listForAgent(workspaceId: string, agentId: string): Promise<ApiKeyRow[]> {
    return this.#db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', 'agent')
      .where('agent_id', '=', agentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
  }

  /** The same list, a page at a time. */
  async pageForAgent(workspaceId: string, agentId: string, page: PageRequest): Promise<Page<ApiKeyRow>> {
    const q = this.#db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', 'agent')
      .where('agent_id', '=', agentId)
    return pageOf(await keyset(q, OLDEST_FIRST, page).execute(), OLDEST_FIRST, page)
  }

  /** Revokes every live key of an agent; returns the ids revoked. */
  async revokeForAgent(workspaceId: string, agentId: string): Promise<string[]> {
    const live = await this.#db
      .selectFrom('api_keys')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .where('revoked_at', 'is', null)
      .execute()
    if (live.length === 0) return []
    const ids = live.map((r) => r.id)
    await this.#db.updateTable('api_keys').set({ revoked_at: nowIso() }).where('id', 'in', ids).execute()
    return ids
  }

  /**
   * Revokes the live workspace keys a person made in a workspace whose role is one of `roles`
   * (their membership ended or their role was lowered); returns the ids revoked.
   */
  async revokeMadeBy(workspaceId: string, personId: string, roles: readonly Role[]): Promise<string[]> {
    if (roles.length === 0) return []
    const live = await this.#db
      .selectFrom('api_keys')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('created_by', '=', personId)
      .where('kind', '=', 'workspace')
      .where('role', 'in', [...roles])
      .where('revoked_at', 'is', null)
      .execute()
    if (live.length === 0) return []
    const ids = live.map((r) => r.id)
    await this.#db.updateTable('api_keys').set({ revoked_at: nowIso() }).where('id', 'in', ids).execute()
    return ids
  }
}
