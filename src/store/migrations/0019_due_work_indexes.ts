// The sweeps' questions read only the rows they can answer with (issue 22).
// - Due polls: the sweep asks, each second, for polled triggers whose next poll is due "or never
//   scheduled" (next_poll_at null); a webhook trigger has no next poll either, so
//   `triggers_due_polls` on (next_poll_at) answered the "never scheduled" half with every webhook
//   trigger of every workspace, each then read to be left out (10,000 in the tenancy benchmark's
//   mode). The index now holds polled triggers only.
// - Due connection checks: active connections were read whole, every one, for their next check.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('triggers_due_polls').execute()
  await db.schema
    .createIndex('triggers_due_polls')
    .on('triggers')
    .column('next_poll_at')
    .where(sql.ref('poll_interval_ms'), 'is not', null)
    .execute()
  await db.schema
    .createIndex('connections_due_checks')
    .on('connections')
    .column('next_check_at')
    .where(sql.ref('status'), '=', sql.lit('active'))
    .execute()
}
