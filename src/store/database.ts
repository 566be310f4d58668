// Opens the store: embedded SQLite in the data directory by default, PostgreSQL when a URL is
// given. Both run the same migrations and the same Kysely queries.
import fs from 'node:fs'
import path from 'node:path'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { migrate } from './migrations.ts'
import { nodeSqliteDialect, openSqlite } from './node-sqlite-dialect.ts'
import type { Database } from './schema.ts'

export interface Store {
  db: Kysely<Database>
  kind: 'sqlite' | 'postgres'
  /** The PostgreSQL schema the store lives in, when not the default. */
  schema?: string
  close(): Promise<void>
}

export interface StoreOptions {
  databaseUrl?: string | null
  dataDir?: string
  /** PostgreSQL schema to use (tests isolate themselves in one). */
  pgSchema?: string
}

export async function openStore(opts: StoreOptions): Promise<Store> {
  let db: Kysely<Database>
  let kind: Store['kind']
  if (opts.databaseUrl) {
    kind = 'postgres'
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: 10,
      options: opts.pgSchema ? `-c search_path=${opts.pgSchema}` : undefined,
    })
    if (opts.pgSchema) {
      const client = await pool.connect()
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${opts.pgSchema.replace(/"/g, '')}"`)
      } finally {
        client.release()
      }
    }
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  } else {
    kind = 'sqlite'
    const dir = opts.dataDir ?? './data'
    fs.mkdirSync(dir, { recursive: true })
    db = new Kysely<Database>({ dialect: nodeSqliteDialect(openSqlite(path.join(dir, 'patchbay.db'))) })
  }
  await migrate(db, opts.databaseUrl ? opts.pgSchema : undefined)
  return { db, kind, schema: opts.databaseUrl ? opts.pgSchema : undefined, close: () => db.destroy() }
}
