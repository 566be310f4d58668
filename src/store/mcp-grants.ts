// What the OAuth authorization server of MCP clients keeps (migration 0015), shared by every
// instance through the store:
// - ProviderRecords: oidc-provider's storage adapter. Records are keyed by sha256(model:id) — an
//   opaque token's id is the token itself, so no usable token is ever stored — and their payloads
//   are sealed by the vault (a payload names its own id). Expired records are found no more and
//   are swept now and then.
// - ProviderKeys: its signing and cookie keys, sealed; the first instance to start makes them,
//   every other reads the same.
// - McpGrantRows: what a person (or an end user, through a connect session) granted: one agent of
//   one workspace, listed and revocable.
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import { byCreated, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
import type { Database, McpGrantsTable } from './schema.ts'
import type { Vault } from './vault.ts'

const sha256 = (s: string) => createHash('sha256').update(s).digest('base64url')

/** A record's payload as oidc-provider hands it over (its adapter interface). */
export type ProviderPayload = Record<string, unknown> & {
  grantId?: string
  uid?: string
  consumed?: unknown
}

/** How often expired records are swept at most (per process). */
const SWEEP_EVERY_MS = 60_000

export class ProviderRecords {
  #db: Kysely<Database>
  #vault: Vault
  #sweptAt = 0

  constructor(db: Kysely<Database>, vault: Vault) {
    this.#db = db
    this.#vault = vault
  }

  /** The storage adapter of one model (oidc-provider's `adapter` option: `(name) => adapter`). */
  adapter(model: string) {
    const key = (id: string) => sha256(`${model}:${id}`)
    return {
      upsert: async (id: string, payload: ProviderPayload, expiresIn?: number): Promise<void> => {
        const row = {
          key: key(id),
          model,
          payload: this.#vault.seal(payload),
          grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
          uid_hash: typeof payload.uid === 'string' ? sha256(`${model}:uid:${payload.uid}`) : null,
          expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null,
          consumed_at: null,
        }
        await this.#db
          .insertInto('oauth_provider_records')
          .values(row)
          .onConflict((oc) =>
            oc.column('key').doUpdateSet({
              payload: row.payload,
              grant_id: row.grant_id,
              uid_hash: row.uid_hash,
              expires_at: row.expires_at,
            }),
          )
          .execute()
        await this.#sweep()
      },
      find: (id: string) => this.#findBy('key', key(id)),
      findByUid: (uid: string) => this.#findBy('uid_hash', sha256(`${model}:uid:${uid}`)),
      // No device flow: there are no user codes.
      findByUserCode: async (_userCode: string) => undefined,
      consume: async (id: string): Promise<void> => {
        await this.#db
          .updateTable('oauth_provider_records')
          .set({ consumed_at: new Date().toISOString() })
          .where('key', '=', key(id))
          .execute()
      },
      destroy: async (id: string): Promise<void> => {
        await this.#db.deleteFrom('oauth_provider_records').where('key', '=', key(id)).execute()
      },
      revokeByGrantId: async (grantId: string): Promise<void> => {
        await this.#db
          .deleteFrom('oauth_provider_records')
          .where('grant_id', '=', grantId)
          .where('model', '=', model)
          .execute()
      },
    }
  }

  /** Every record of a grant (its codes, tokens and the grant itself), whatever the model. */
  async deleteGrant(grantId: string): Promise<number> {
    const r = await this.#db
      .deleteFrom('oauth_provider_records')
      .where('grant_id', '=', grantId)
      .executeTakeFirst()
    return Number(r.numDeletedRows)
  }

  async #findBy(column: 'key' | 'uid_hash', value: string): Promise<ProviderPayload | undefined> {
    const row = await this.#db
      .selectFrom('oauth_provider_records')
      .select(['payload', 'expires_at', 'consumed_at'])
      .where(column, '=', value)
      .executeTakeFirst()
    if (!row) return undefined
    if (row.expires_at && row.expires_at <= new Date().toISOString()) return undefined
    const payload = this.#vault.open<ProviderPayload>(row.payload)
    if (row.consumed_at) payload.consumed = Math.floor(Date.parse(row.consumed_at) / 1000)
    return payload
  }

  async #sweep(): Promise<void> {
    const now = Date.now()
    if (now - this.#sweptAt < SWEEP_EVERY_MS) return
    this.#sweptAt = now
    await this.#db
      .deleteFrom('oauth_provider_records')
      .where('expires_at', '<', new Date(now).toISOString())
      .execute()
  }
}

export class ProviderKeys {
  #db: Kysely<Database>
  #vault: Vault

  constructor(db: Kysely<Database>, vault: Vault) {
    this.#db = db
    this.#vault = vault
  }

  /** The value kept under `name`; made by `make` and kept when there is none (the first writer wins). */
  async getOrCreate<T>(name: string, make: () => T | Promise<T>): Promise<T> {
    const read = () =>
      this.#db.selectFrom('oauth_provider_keys').select('sealed').where('name', '=', name).executeTakeFirst()
    const found = await read()
    if (found) return this.#vault.open<T>(found.sealed)
    const made = await make()
    await this.#db
      .insertInto('oauth_provider_keys')
      .values({ name, sealed: this.#vault.seal(made), created_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
    // Another instance may have written first: everyone uses what is stored.
    return this.#vault.open<T>((await read())!.sealed)
  }
}

export type McpGrantRow = McpGrantsTable

/** Lists of grants page newest first: by (created_at, id), descending. */
const NEWEST_FIRST = byCreated<McpGrantRow>()

export class McpGrantRows {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(row: McpGrantRow): Promise<void> {
    await this.#db.insertInto('mcp_grants').values(row).execute()
  }

  /** A grant by id (any workspace: the caller checks). */
  async get(id: string): Promise<McpGrantRow | undefined> {
    return this.#db.selectFrom('mcp_grants').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** The live grants, newest first, a page at a time. */
  async page(workspaceId: string, page: PageRequest): Promise<Page<McpGrantRow>> {
    const q = this.#db
      .selectFrom('mcp_grants')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('revoked_at', 'is', null)
    return pageOf(await keyset(q, NEWEST_FIRST, page).execute(), NEWEST_FIRST, page)
  }

  /** Marks a grant revoked; false when it was not there (or revoked already). */
  async revoke(workspaceId: string, id: string, by: string | null): Promise<boolean> {
    const r = await this.#db
      .updateTable('mcp_grants')
      .set({ revoked_at: new Date().toISOString(), revoked_by: by })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  /** Revokes every live grant of an agent (the agent was deleted); their ids. */
  async revokeForAgent(workspaceId: string, agentId: string): Promise<string[]> {
    const rows = await this.#db
      .updateTable('mcp_grants')
      .set({ revoked_at: new Date().toISOString(), revoked_by: null })
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute()
    return rows.map((r) => r.id)
  }

  /** Revokes every live grant an end user gave through a connect session (the end user was deleted); their ids. */
  async revokeForEndUser(workspaceId: string, endUserId: string): Promise<string[]> {
    const rows = await this.#db
      .updateTable('mcp_grants')
      .set({ revoked_at: new Date().toISOString(), revoked_by: null })
      .where('workspace_id', '=', workspaceId)
      .where('end_user_id', '=', endUserId)
      .where('connect_session_id', 'is not', null)
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute()
    return rows.map((r) => r.id)
  }

  async touch(id: string, at: string): Promise<void> {
    await this.#db.updateTable('mcp_grants').set({ last_used_at: at }).where('id', '=', id).execute()
  }
}
