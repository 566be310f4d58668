// Triggers, the upstream webhooks they share, and the event pipeline's durable tables: the
// inbox (raw deliveries, committed before the upstream gets its 200), events (stored once) and
// deliveries (one event on its way to one agent).
import { type ColumnDefinitionBuilder, type Kysely, SqliteAdapter } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter
  // A monotonic sequence: the order events and deliveries are streamed in (SSE Last-Event-ID).
  const seq = (c: ColumnDefinitionBuilder) =>
    sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity()
  const seqType = sqlite ? 'integer' : 'bigint'

  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('upstream_hook_id', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('subscriptions_connection_model', ['connection_id', 'model'])
    .execute()

  await db.schema
    .createTable('triggers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('trigger_key', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text')
    .addColumn('poll_interval_ms', 'integer')
    .addColumn('poll_cursor', 'text')
    .addColumn('last_poll_at', 'text')
    .addColumn('next_poll_at', 'text')
    .addColumn('last_poll_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('triggers_by_agent').on('triggers').columns(['agent_id']).execute()
  await db.schema
    .createIndex('triggers_by_subscription')
    .on('triggers')
    .columns(['subscription_id'])
    .execute()

  await db.schema
    .createTable('inbox')
    .addColumn('seq', seqType, seq)
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('inbox_subscription_delivery', ['subscription_id', 'delivery_id'])
    .execute()
  await db.schema.createIndex('inbox_pending').on('inbox').columns(['status', 'seq']).execute()

  await db.schema
    .createTable('events')
    .addColumn('seq', seqType, seq)
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('upstream_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('refs', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('matched', 'integer', (c) => c.notNull())
    .addUniqueConstraint('events_upstream', ['workspace_id', 'connector', 'upstream_id'])
    .execute()
  await db.schema
    .createIndex('events_by_subscription')
    .on('events')
    .columns(['subscription_id', 'seq'])
    .execute()

  await db.schema
    .createTable('deliveries')
    .addColumn('seq', seqType, seq)
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('trigger_id', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('tool_run_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .addUniqueConstraint('deliveries_event_trigger', ['event_id', 'trigger_id'])
    .execute()
  await db.schema
    .createIndex('deliveries_by_status')
    .on('deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute()
  await db.schema.createIndex('deliveries_by_agent').on('deliveries').columns(['agent_id', 'seq']).execute()

  await db.schema
    .createTable('delivery_attempts')
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('delivery_attempts_pk', ['delivery_id', 'attempt'])
    .execute()
}
