// Inbox rows set aside (`failed`): an acknowledged upstream delivery that could not be processed
// after a few tries, or could not be read at all, kept with its reason. Listed per workspace (by
// the webhook the row came in on) and put back in line (`pending`, tries reset) on request.
import type { Kysely } from 'kysely'
import { bySeq, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
import type { Database } from './schema.ts'

export interface ParkedInboxRow {
  seq: number
  subscription_id: string
  connector: string
  delivery_id: string
  received_at: string
  attempts: number
  error: string | null
}

const BY_SEQ = bySeq<{ seq: number | string }>('i.seq')

export class ParkedInbox {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /**
   * Newest first, a page at a time (keyset on seq); `beforeSeq` (the rows received earlier) is the
   * deprecated way to page, kept for one release.
   */
  async list(workspaceId: string, page: PageRequest & { beforeSeq?: number }): Promise<Page<ParkedInboxRow>> {
    let q = this.#db
      .selectFrom('inbox as i')
      .innerJoin('subscriptions as s', 's.id', 'i.subscription_id')
      .select([
        'i.seq',
        'i.subscription_id',
        's.connector',
        'i.delivery_id',
        'i.received_at',
        'i.attempts',
        'i.error',
      ])
      .where('s.workspace_id', '=', workspaceId)
      .where('i.status', '=', 'failed')
    if (page.beforeSeq) q = q.where('i.seq', '<', page.beforeSeq)
    const { items, next } = pageOf(await keyset(q, BY_SEQ, page).execute(), BY_SEQ, page)
    return { items: items.map((r) => ({ ...r, seq: Number(r.seq), attempts: Number(r.attempts) })), next }
  }

  /** Puts a set-aside row of the workspace back in line; false when there is none. */
  async retry(workspaceId: string, seq: number): Promise<boolean> {
    const r = await this.#db
      .updateTable('inbox')
      .set({ status: 'pending', attempts: 0, error: null })
      .where('seq', '=', seq)
      .where('status', '=', 'failed')
      .where('subscription_id', 'in', (eb) =>
        eb.selectFrom('subscriptions').select('id').where('workspace_id', '=', workspaceId),
      )
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }
}
