// Event safety: inbox rows count their tries (one that keeps failing is set aside after a few,
// never blocking the rows behind it), and changes Patchbay's own tool runs made are remembered with
// their causation depth, so a tool that triggers itself is stopped (the loop guard).
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('inbox')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()

  // An upstream resource a tool run's step made or changed (a card, a comment), the depth of the
  // change (the depth of the event that started the run, plus one), and until when it counts.
  await db.schema
    .createTable('causations')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('upstream_ref', 'text', (c) => c.notNull())
    .addColumn('depth', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('causations_pk', ['workspace_id', 'connector', 'upstream_ref'])
    .execute()
}
