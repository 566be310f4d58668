// Failed sign-ins, counted per account and per address in the store, so every instance sharing the
// database applies one limit (issue 22): a key (`account:<email>` or `address:<ip>`), the start of
// its current window and the failures in it.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sign_in_attempts')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_started_at', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .execute()
}
