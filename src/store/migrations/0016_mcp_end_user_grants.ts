// End users allow MCP clients themselves (issue 23, build 5): the operator's backend makes a connect
// session that may be spent on an MCP grant (`allow_mcp_grant`), the end user presents it on the
// consent page, and the grant is theirs — given by no person of the workspace, so `person_id`
// becomes nullable and `connect_session_id` names the connect session it was given through.
//
// SQLite cannot drop a column's NOT NULL, so there mcp_grants is rebuilt from its own definition
// (whatever columns it has by now) without it; PostgreSQL drops it in place.
import { type Kysely, SqliteAdapter, sql } from 'kysely'

const PERSON_NOT_NULL = /"person_id"\s+text\s+not\s+null/i

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('connect_sessions')
    .addColumn('allow_mcp_grant', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()

  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    const objects = await sql<{ type: string; name: string; sql: string | null }>`
      SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'mcp_grants'`.execute(db)
    const table = objects.rows.find((o) => o.type === 'table')?.sql
    if (!table || !PERSON_NOT_NULL.test(table))
      throw new Error('mcp_grants: the person_id column was not found as text not null')
    const rebuilt = table
      .replace(/^CREATE TABLE "mcp_grants"/i, 'CREATE TABLE "mcp_grants_rebuilt"')
      .replace(PERSON_NOT_NULL, '"person_id" text')
    const indexes = objects.rows.filter((o) => o.type === 'index' && o.sql).map((o) => o.sql as string)
    await sql.raw(rebuilt).execute(db)
    await sql`INSERT INTO mcp_grants_rebuilt SELECT * FROM mcp_grants`.execute(db)
    await sql`DROP TABLE mcp_grants`.execute(db)
    await sql`ALTER TABLE mcp_grants_rebuilt RENAME TO mcp_grants`.execute(db)
    for (const index of indexes) await sql.raw(index).execute(db)
  } else {
    await db.schema
      .alterTable('mcp_grants')
      .alterColumn('person_id', (c) => c.dropNotNull())
      .execute()
  }
  await db.schema.alterTable('mcp_grants').addColumn('connect_session_id', 'text').execute()
}
