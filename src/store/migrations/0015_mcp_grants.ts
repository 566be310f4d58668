// MCP clients that sign in with OAuth (issue 23, build 5). Patchbay is their authorization server
// (oidc-provider, server/mcp/authorization-server.ts); what it keeps lives here, shared by every
// instance:
// - `oauth_provider_records`: the provider's records (registered clients, grants, authorization
//   codes, access and refresh tokens, interactions, sessions), each keyed by a SHA-256 of its model
//   and id (an opaque token's id is the token: it is never stored), its payload sealed by the vault;
// - `oauth_provider_keys`: the provider's signing keys and cookie keys, sealed by the vault;
// - `mcp_grants`: what a person granted an MCP client — one agent (and its end user) of one
//   workspace — listed and revocable; the provider's grant of the same id holds the scopes.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_provider_records')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid_hash', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('consumed_at', 'text')
    .execute()
  await db.schema
    .createIndex('oauth_provider_records_by_grant')
    .on('oauth_provider_records')
    .column('grant_id')
    .execute()
  await db.schema
    .createIndex('oauth_provider_records_by_uid')
    .on('oauth_provider_records')
    .column('uid_hash')
    .execute()
  await db.schema
    .createIndex('oauth_provider_records_by_expiry')
    .on('oauth_provider_records')
    .column('expires_at')
    .execute()

  await db.schema
    .createTable('oauth_provider_keys')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('mcp_grants')
    // The provider's grant id.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('end_user_id', 'text')
    // Who granted it.
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_name', 'text')
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('revoked_by', 'text')
    .execute()
  await db.schema
    .createIndex('mcp_grants_by_workspace')
    .on('mcp_grants')
    .columns(['workspace_id', 'created_at'])
    .execute()
}
