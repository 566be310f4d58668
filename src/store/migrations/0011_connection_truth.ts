// Connections and triggers that tell the truth (issue 24):
// - a disconnected connection's bindings are remembered (`disconnections`), so connecting the same
//   account again can restore its triggers, its agents' use of it and its tools' steps;
// - an agent says which connections it needs again (`agents.connections_needed`);
// - a connection's health: when it lapsed, when it was last proven alive, when it is next checked
//   upstream (`next_check_at` is also the claim: one instance moves it forward, and checks);
// - a trigger can be paused, with why and since when;
// - an agent's previous signing secret stays valid for an overlap after a rotation.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('disconnections')
    // The former connection's id.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('auth_method', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('account_name', 'text', (c) => c.notNull())
    // JSON: { agents: [...], tools: [...], triggers: [...] } — what used it when it was removed.
    .addColumn('bindings', 'text', (c) => c.notNull())
    .addColumn('disconnected_at', 'text', (c) => c.notNull())
    .addColumn('restored_to', 'text')
    .addColumn('restored_at', 'text')
    .execute()
  await db.schema
    .createIndex('disconnections_account')
    .on('disconnections')
    .columns(['workspace_id', 'connector', 'account_id'])
    .execute()

  await db.schema
    .alterTable('agents')
    .addColumn('connections_needed', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute()
  await db.schema.alterTable('agents').addColumn('previous_signing_secret', 'text').execute()
  await db.schema.alterTable('agents').addColumn('previous_secret_expires_at', 'text').execute()

  await db.schema.alterTable('connections').addColumn('lapsed_at', 'text').execute()
  await db.schema.alterTable('connections').addColumn('alive_at', 'text').execute()
  await db.schema.alterTable('connections').addColumn('next_check_at', 'text').execute()
  // The last check upstream, and why it could not be made (an unreachable upstream is no lapse).
  await db.schema.alterTable('connections').addColumn('checked_at', 'text').execute()
  await db.schema.alterTable('connections').addColumn('check_error', 'text').execute()

  // An event that reached Patchbay through several connections (two webhooks on one repository or
  // board) is stored once; the other connections it came through are listed here (JSON array).
  await db.schema.alterTable('events').addColumn('via', 'text').execute()

  await db.schema.alterTable('triggers').addColumn('paused_at', 'text').execute()
  await db.schema.alterTable('triggers').addColumn('paused_reason', 'text').execute()
}
