// Changes Patchbay's own tool runs made upstream, remembered for a while with their causation
// depth: the loop guard reads them to tell how deep in a chain of its own changes an event is.
import type { Kysely } from 'kysely'
import type { Database } from './schema.ts'

/** How long a change counts as Patchbay's: far longer than any upstream takes to report it. */
const KEEP_MS = 60 * 60_000

export class Causations {
  #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Remembers upstream resources a step made or changed, at `depth`. */
  async record(workspaceId: string, connector: string, refs: string[], depth: number): Promise<void> {
    if (refs.length === 0) return
    const now = Date.now()
    const expires = new Date(now + KEEP_MS).toISOString()
    await this.#db
      .insertInto('causations')
      .values(
        [...new Set(refs)].map((upstream_ref) => ({
          workspace_id: workspaceId,
          connector,
          upstream_ref,
          depth,
          expires_at: expires,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'connector', 'upstream_ref']).doUpdateSet((eb) => ({
          depth: eb.ref('excluded.depth'),
          expires_at: eb.ref('excluded.expires_at'),
        })),
      )
      .execute()
    // Expired ones are dropped now and then, by whoever records.
    if (Math.random() < 0.05)
      await this.#db.deleteFrom('causations').where('expires_at', '<', new Date(now).toISOString()).execute()
  }

  /** The deepest depth recorded for any of `refs` (0: none is Patchbay's own change). */
  async depthOf(workspaceId: string, connector: string, refs: string[]): Promise<number> {
    if (refs.length === 0) return 0
    const row = await this.#db
      .selectFrom('causations')
      .select((eb) => eb.fn.max('depth').as('depth'))
      .where('workspace_id', '=', workspaceId)
      .where('connector', '=', connector)
      .where('upstream_ref', 'in', refs)
      .where('expires_at', '>', new Date().toISOString())
      .executeTakeFirst()
    return Number(row?.depth ?? 0)
  }
}
