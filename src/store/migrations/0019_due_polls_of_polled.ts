// Due polls are found among the polled triggers alone (issue 22). The sweep asks, each second, for
// polled triggers whose next poll is due "or never scheduled" (next_poll_at null); a webhook
// trigger has no next poll either, so `triggers_due_polls` on (next_poll_at) answered the "never
// scheduled" half with every webhook trigger of every workspace, each then read to be left out
// (10,000 in the tenancy benchmark's mode, every second). The index now holds polled triggers only.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('triggers_due_polls').execute()
  await db.schema
    .createIndex('triggers_due_polls')
    .on('triggers')
    .column('next_poll_at')
    .where(sql.ref('poll_interval_ms'), 'is not', null)
    .execute()
}
