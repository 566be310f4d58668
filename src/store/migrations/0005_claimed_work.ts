// Work shared by several instances: a delivery or tool run is claimed (its lease in
// `claimed_until`, its attempt number taken at the claim) by exactly one instance; due polls are
// found by `next_poll_at`; sign-in flows and credit holds live here instead of in one process.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('claimed_until', 'text').execute()
  await db.schema.createIndex('triggers_due_polls').on('triggers').columns(['next_poll_at']).execute()

  // A sign-in under way: what its callback needs (sealed), read once and then gone.
  await db.schema
    .createTable('oauth_flows')
    .addColumn('state', 'text', (c) => c.primaryKey())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()

  // Worst-case credits held by lookups under way, counted against the agent's budget.
  await db.schema
    .createTable('credit_holds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('amount', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('credit_holds_by_agent')
    .on('credit_holds')
    .columns(['workspace_id', 'agent_id'])
    .execute()
}
