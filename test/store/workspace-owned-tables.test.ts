// Deleting a workspace removes the rows of every table in OWNED (src/store/workspaces.ts). That list
// is held against the real schema, after every migration, on SQLite and PostgreSQL: every table with
// a workspace_id column is in it, and everything in it has one — so a table added by a new
// migration cannot be forgotten by the workspace deletion.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { sql } from 'kysely'
import { openStore, type Store } from '../../src/store/database.ts'
import { OWNED } from '../../src/store/workspaces.ts'
import { testDatabases } from '../helpers/databases.ts'

const { databases } = await testDatabases()
const stores: Store[] = []
after(async () => {
  for (const s of stores) await s.close()
})

/** The tables of the store's schema that have a workspace_id column, by name. */
async function tablesWithWorkspaceId(store: Store): Promise<string[]> {
  if (store.kind === 'sqlite') {
    const { rows } = await sql<{ name: string }>`
      SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
      WHERE m.type = 'table' AND c.name = 'workspace_id'`.execute(store.db)
    return rows.map((r) => r.name).sort()
  }
  const { rows } = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.columns
    WHERE column_name = 'workspace_id' AND table_schema = current_schema()`.execute(store.db)
  return rows.map((r) => r.name).sort()
}

for (const database of databases)
  test(`every table with a workspace_id column is one a workspace deletion empties (${database.name})`, async () => {
    const store = await openStore(database.fresh())
    stores.push(store)
    const inSchema = await tablesWithWorkspaceId(store)
    assert.ok(inSchema.length > 10, `the schema was read (${inSchema.join(', ')})`)
    const listed = [...OWNED].sort()
    assert.deepEqual(
      inSchema.filter((t) => !listed.includes(t as never)),
      [],
      'tables with a workspace_id that deleting a workspace would leave behind: add them to OWNED',
    )
    assert.deepEqual(
      listed.filter((t) => !inSchema.includes(t)),
      [],
      'tables in OWNED without a workspace_id column',
    )
  })
