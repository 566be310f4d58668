// Many people, many workspaces (issue 22): people who sign in, their memberships with a role,
// their sessions, invitations, single sign-on identities, and the audit log. Workspace keys gain a
// role, the person who made them and an optional expiry; the admin key of an older database
// becomes an owner key of its first workspace (role `owner`), so it keeps working unchanged.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('updated_at', 'text').execute()
  // Settings as one JSON document ({"emailDomain":…,"allowInlineAuth":…}): read with the row.
  await db.schema
    .alterTable('workspaces')
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute()
  await sql`UPDATE workspaces SET updated_at = created_at`.execute(db)

  await db.schema.alterTable('api_keys').addColumn('role', 'text').execute()
  await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute()
  await db.schema.alterTable('api_keys').addColumn('expires_at', 'text').execute()
  await sql`UPDATE api_keys SET role = 'owner' WHERE kind = 'admin'`.execute(db)

  await db.schema
    .createTable('people')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Lower-cased; unique.
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    // scrypt hash (kit/passwords); null for a person who only signs in with single sign-on.
    .addColumn('password_hash', 'text')
    .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('memberships')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['workspace_id', 'person_id'])
    .execute()
  await db.schema.createIndex('memberships_by_person').on('memberships').columns(['person_id']).execute()

  await db.schema
    .createTable('person_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull())
    // SHA-256 of the cookie's random token; the token itself is never stored.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('ended_at', 'text')
    .addColumn('address', 'text')
    .addColumn('user_agent', 'text')
    // How it was made: `password`, `sso`, `invitation`.
    .addColumn('method', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('person_sessions_by_person')
    .on('person_sessions')
    .columns(['person_id'])
    .execute()

  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    // SHA-256 of the link's token.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    // Person id (or key id) of whoever invited.
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'text')
    .addColumn('accepted_by', 'text')
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema
    .createIndex('invitations_by_workspace')
    .on('invitations')
    .columns(['workspace_id', 'created_at'])
    .execute()

  // A person's single sign-on accounts: (issuer, subject) names one upstream identity.
  await db.schema
    .createTable('identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('identities_pk', ['issuer', 'subject'])
    .execute()

  // Append-only: rows are inserted, never updated or deleted (a workspace's rows go with it).
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Null for what happened outside any workspace (a failed sign-in of an unknown address).
    .addColumn('workspace_id', 'text')
    // `person`, `key` (workspace or agent key), `anonymous`, `system`.
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    // What a reader recognises: the person's email or the key's name and prefix.
    .addColumn('actor_label', 'text')
    // `auth.sign_in`, `auth.sign_in_failed`, `member.role_changed`, `key.created`, `connection.deleted` …
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('object_kind', 'text')
    .addColumn('object_id', 'text')
    // `ok` or `refused` (a refused change is audited too, and changed nothing).
    .addColumn('outcome', 'text', (c) => c.notNull())
    // JSON of what changed (never a secret).
    .addColumn('detail', 'text')
    .addColumn('address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('audit_log_by_workspace')
    .on('audit_log')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute()
}
