// Agents that act for end users (issue 23): the operator's own customers (`end_users`, named by the
// operator's id), the connections they make (`connections.end_user_id`), agents bound to one of
// them (`agents.end_user_id`), the single-use connect sessions of the hosted connect page, and the
// lifecycle notices posted to the workspace's notification URL (`operator_notices`).
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('end_users')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    // The operator's own id for the end user (any string up to 256 characters).
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('email', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('end_users_pk', ['workspace_id', 'id'])
    .execute()

  await db.schema.alterTable('connections').addColumn('end_user_id', 'text').execute()
  await db.schema
    .createIndex('connections_by_end_user')
    .on('connections')
    .columns(['workspace_id', 'end_user_id'])
    .execute()
  await db.schema.alterTable('agents').addColumn('end_user_id', 'text').execute()

  await db.schema
    .createTable('connect_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // sha256 of the token (the token itself is shown once, never stored).
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('end_user_id', 'text', (c) => c.notNull())
    // JSON string[] or null (all).
    .addColumn('connectors', 'text')
    .addColumn('auth_methods', 'text')
    .addColumn('return_to', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    // Set when a connection was made with it: it is then spent.
    .addColumn('used_at', 'text')
    .addColumn('connection_id', 'text')
    .execute()

  await db.schema
    .createTable('operator_notices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    // JSON: the body posted (without the signature).
    .addColumn('payload', 'text', (c) => c.notNull())
    // pending | delivered | failed (retries exhausted)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute()
  await db.schema
    .createIndex('operator_notices_due')
    .on('operator_notices')
    .columns(['status', 'next_attempt_at'])
    .execute()
  await db.schema
    .createIndex('operator_notices_by_workspace')
    .on('operator_notices')
    .columns(['workspace_id', 'created_at'])
    .execute()
}
