// A store's database opened bare and migrated up to a given migration, for tests of what a
// migration does to rows made before it.
import fs from 'node:fs'
import path from 'node:path'
import { Kysely, type Migration, Migrator } from 'kysely'
import pg from 'pg'
import { OneSchemaPostgresDialect } from '../../src/store/database.ts'
import { nodeSqliteDialect, openSqlite } from '../../src/store/node-sqlite-dialect.ts'
import type { TestDatabase } from './databases.ts'

const folder = path.join(import.meta.dirname, '../../src/store/migrations')

/** A fresh database of `database`, with no migration run; `close` drops what it made. */
export async function bareDatabase(
  database: TestDatabase,
): Promise<{ db: Kysely<any>; schema: string | undefined; close(): Promise<void> }> {
  const location = database.fresh()
  if (!location.databaseUrl) {
    const db = new Kysely<any>({ dialect: nodeSqliteDialect(openSqlite(`${location.dataDir}/patchbay.db`)) })
    return { db, schema: undefined, close: () => db.destroy() }
  }
  const pool = new pg.Pool({
    connectionString: location.databaseUrl,
    options: `-c search_path=${location.pgSchema}`,
  })
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${location.pgSchema}"`)
  const db = new Kysely<any>({ dialect: new OneSchemaPostgresDialect({ pool }, location.pgSchema ?? null) })
  return {
    db,
    schema: location.pgSchema,
    close: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${location.pgSchema}" CASCADE`).catch(() => {})
      await db.destroy()
    },
  }
}

/** Runs every migration of the store's folder, or (`before`) those that come before that one. */
export async function migrate(db: Kysely<any>, schema: string | undefined, before?: string): Promise<void> {
  const migrations: Record<string, Migration> = {}
  for (const file of fs.readdirSync(folder).sort()) {
    const name = file.replace(/\.ts$/, '')
    if (before && name >= before) continue
    migrations[name] = await import(path.join(folder, file))
  }
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
    allowUnorderedMigrations: true,
  }).migrateToLatest()
  if (error) throw error
}
