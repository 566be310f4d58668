// A workspace's settings: one JSON document in workspaces.settings (migration 0010), read whole
// and changed by merging the given keys into it (keys this code does not know are kept).
import type { Kysely } from 'kysely'
import { nowIso } from './ids.ts'
import type { Database } from './schema.ts'

export class WorkspaceSettingsRows {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async get(workspaceId: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.#db
      .selectFrom('workspaces')
      .select('settings')
      .where('id', '=', workspaceId)
      .executeTakeFirst()
    return row ? (JSON.parse(row.settings || '{}') as Record<string, unknown>) : undefined
  }

  /** Merges `changes` into the document in one transaction; the merged document, or undefined. */
  async merge(
    workspaceId: string,
    changes: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    return this.#db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('workspaces')
        .select('settings')
        .where('id', '=', workspaceId)
        .executeTakeFirst()
      if (!row) return undefined
      const merged = { ...(JSON.parse(row.settings || '{}') as Record<string, unknown>), ...changes }
      await tx
        .updateTable('workspaces')
        .set({ settings: JSON.stringify(merged), updated_at: nowIso() })
        .where('id', '=', workspaceId)
        .execute()
      return merged
    })
  }
}
