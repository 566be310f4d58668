// Credits of metered upstreams (the contact-data service): the ledger of what each lookup was
// charged, per-agent budgets, and per-connection rate limits (the account plan's limit).
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('credit_ledger')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('caller_key_id', 'text', (c) => c.notNull())
    .addColumn('step_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('credits', 'integer', (c) => c.notNull())
    .addColumn('remaining', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('credit_ledger_by_connection')
    .on('credit_ledger')
    .columns(['workspace_id', 'connection_id', 'created_at'])
    .execute()
  await db.schema
    .createIndex('credit_ledger_by_agent')
    .on('credit_ledger')
    .columns(['workspace_id', 'agent_id', 'created_at'])
    .execute()
  await db.schema
    .createIndex('credit_ledger_by_time')
    .on('credit_ledger')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute()

  await db.schema
    .createTable('credit_budgets')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('credit_limit', 'integer', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('credit_budgets_pk', ['workspace_id', 'agent_id'])
    .execute()

  await db.schema
    .createTable('connection_rate_limits')
    .addColumn('connection_id', 'text', (c) =>
      c.primaryKey().references('connections.id').onDelete('cascade'),
    )
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('requests', 'integer', (c) => c.notNull())
    .addColumn('per_ms', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
}
