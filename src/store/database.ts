// Opens the store: embedded SQLite in the data directory by default, PostgreSQL when a URL is
// given. Both run the same migrations and the same Kysely queries.
import fs from 'node:fs'
import path from 'node:path'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { migrate } from './migrations.ts'
import { nodeSqliteDialect, openSqlite } from './node-sqlite-dialect.ts'
import type { Database } from './schema.ts'
import { checkpointInBackground } from './sqlite-checkpoints.ts'

export interface Store {
  db: Kysely<Database>
  kind: 'sqlite' | 'postgres'
  /** On PostgreSQL: the server, the pool and the schema, for what needs its own connection (LISTEN) or pg-boss. */
  postgres: { url: string; pool: pg.Pool; schema: string | null } | null
  close(): Promise<void>
}

export interface StoreOptions {
  databaseUrl?: string | null
  dataDir?: string
  /** PostgreSQL schema to use (tests isolate themselves in one). */
  pgSchema?: string
}

/** Any fixed number of ours: the lock instances take turns on while migrating. */
const MIGRATION_LOCK = 7_254_000

export async function openStore(opts: StoreOptions): Promise<Store> {
  let db: Kysely<Database>
  let kind: Store['kind']
  let postgres: Store['postgres'] = null
  if (opts.databaseUrl) {
    kind = 'postgres'
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: 10,
      options: opts.pgSchema ? `-c search_path=${opts.pgSchema}` : undefined,
    })
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    postgres = { url: opts.databaseUrl, pool, schema: opts.pgSchema ?? null }
    // Instances started together take turns creating the schema and migrating it (a session lock
    // held on a connection of its own while the migrations run on others).
    const lock = await pool.connect()
    try {
      await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
      if (opts.pgSchema) await lock.query(`CREATE SCHEMA IF NOT EXISTS "${opts.pgSchema.replace(/"/g, '')}"`)
      await migrate(db, opts.pgSchema)
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {})
      lock.release()
    }
    return { db, kind, postgres, close: () => db.destroy() }
  } else {
    kind = 'sqlite'
    const dir = opts.dataDir ?? './data'
    fs.mkdirSync(dir, { recursive: true })
    const file = path.join(dir, 'patchbay.db')
    db = new Kysely<Database>({ dialect: nodeSqliteDialect(openSqlite(file)) })
    const checkpoints = checkpointInBackground(file)
    await migrate(db)
    return {
      db,
      kind,
      postgres,
      close: async () => {
        // The checkpointer's connection first, so closing the last one folds the log into the file.
        await checkpoints.stop()
        await db.destroy()
      },
    }
  }
}
