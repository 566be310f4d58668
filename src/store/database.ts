// Opens the store: embedded SQLite in the data directory by default, PostgreSQL when a URL is
// given. Both run the same migrations and the same Kysely queries.
import fs from 'node:fs'
import path from 'node:path'
import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely'
import type pg from 'pg'
import { migrate } from './migrations.ts'
import { nodeSqliteDialect, openSqlite } from './node-sqlite-dialect.ts'
import { preparingPool } from './prepared-statements.ts'
import type { Database } from './schema.ts'
import { checkpointInBackground, checkpointOnStore, TRUNCATE_AT_BYTES } from './sqlite-checkpoints.ts'
import { type Listing, listInBackground } from './sqlite-listing.ts'
import { StoreHealth } from './store-health.ts'

export interface Store {
  db: Kysely<Database>
  kind: 'sqlite' | 'postgres'
  /** On PostgreSQL: the server, the pool and the schema, for what needs its own connection (LISTEN) or pg-boss. */
  postgres: { url: string; pool: pg.Pool; schema: string | null } | null
  /** Whether the store takes work now (the database answers, the disk has room), and why not. */
  health: StoreHealth
  /**
   * SQLite: lists the newest events, deliveries and attempts in their workspace indexes every few seconds
   * (sqlite-listing.ts); null on PostgreSQL, which stores them listed.
   */
  listing: Listing | null
  close(): Promise<void>
}

export interface StoreOptions {
  databaseUrl?: string | null
  /** The most connections of the PostgreSQL pool (default 10). */
  poolSize?: number
  /** PostgreSQL: statements that ask to be prepared (prepared-statements.ts) are, unless false. */
  preparedStatements?: boolean
  dataDir?: string
  /** PostgreSQL schema to use (tests isolate themselves in one). */
  pgSchema?: string
  /** The embedded database: below this many free bytes on its disk, new work is refused (PATCHBAY_MIN_FREE_DISK_MB). */
  minFreeBytes?: number
  /** Where an outage is told (once each) and its end. */
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void }
}

/** How long a query waits for a connection before the database counts as away. */
const CONNECT_TIMEOUT_MS = 5_000

/** Any fixed number of ours: the lock instances take turns on while migrating. */
const MIGRATION_LOCK = 7_254_000

export async function openStore(opts: StoreOptions): Promise<Store> {
  let db: Kysely<Database>
  let kind: Store['kind']
  let postgres: Store['postgres'] = null
  if (opts.databaseUrl) {
    kind = 'postgres'
    // The driver is loaded only for PostgreSQL: an embedded start does not pay for it.
    const { Pool } = (await import('pg')).default
    const pool = new Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      options: opts.pgSchema ? `-c search_path=${opts.pgSchema}` : undefined,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    })
    db = new Kysely<Database>({
      dialect: new OneSchemaPostgresDialect(
        { pool: opts.preparedStatements === false ? pool : preparingPool(pool) },
        opts.pgSchema ?? null,
      ),
    })
    postgres = { url: opts.databaseUrl, pool, schema: opts.pgSchema ?? null }
    const health = new StoreHealth({
      probe: async () => {
        await pool.query('select 1')
      },
      log: opts.log,
    })
    // A server that stops or restarts ends every connection with an error event: on an idle
    // connection the pool re-emits it, on one lent out the client itself does. Unheard, either
    // would end the process; heard, it marks the store away until the probe finds it back.
    pool.on('error', (err) => health.failure(err))
    pool.on('connect', (client) => client.on('error', (err) => health.failure(err)))
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
    return {
      db,
      kind,
      postgres,
      health,
      listing: null,
      close: async () => {
        health.close()
        await db.destroy()
      },
    }
  } else {
    kind = 'sqlite'
    const dir = opts.dataDir ?? './data'
    fs.mkdirSync(dir, { recursive: true })
    const file = path.join(dir, 'patchbay.db')
    const sqlite = openSqlite(file)
    db = new Kysely<Database>({ dialect: nodeSqliteDialect(sqlite) })
    /** At most one checkpoint of each mode at a time; one that fails (the disk refuses even this) is tried again at the next look. */
    const underWay = new Map<'TRUNCATE' | 'RESTART', Promise<void>>()
    const checkpointInTurn = (mode: 'TRUNCATE' | 'RESTART'): Promise<void> => {
      let running = underWay.get(mode)
      if (!running) {
        running = checkpointOnStore(db, mode)
          .then(
            () => {},
            () => {},
          )
          .finally(() => underWay.delete(mode))
        underWay.set(mode, running)
      }
      return running
    }
    // One that waits its turn for longer than a second is left to the next look.
    const truncateLog = (): Promise<void> =>
      Promise.race([checkpointInTurn('TRUNCATE'), new Promise<void>((r) => setTimeout(r, 1_000).unref())])
    const restartLog = (): Promise<void> => checkpointInTurn('RESTART')
    const health = new StoreHealth({
      // Back when the disk has room again (read before the probe) and a checkpoint and a query pass.
      probe: async () => {
        await truncateLog()
        sqlite.exec('select 1')
      },
      freeBytes: () => {
        const s = fs.statfsSync(dir)
        return Number(s.bavail) * Number(s.bsize)
      },
      minFreeBytes: opts.minFreeBytes ?? 0,
      onPressure: () => void truncateLog(),
      log: opts.log,
    })
    // The log is cut back before it could take a quarter of the room left (on a small disk, long
    // before its 1 GiB limit; the room as the health check last read it, every second): a log
    // that fills the disk cannot be folded back, since folding it grows the database file.
    const checkpoints = checkpointInBackground(file, {
      truncateAtBytes: () =>
        Math.min(
          TRUNCATE_AT_BYTES,
          Math.max(1024 * 1024, (health.lastFreeBytes ?? Number.POSITIVE_INFINITY) / 4),
        ),
      truncate: truncateLog,
      restart: restartLog,
    })
    await migrate(db)
    const listing = listInBackground(db, { health, log: opts.log })
    return {
      db,
      kind,
      postgres,
      health,
      listing,
      close: async () => {
        health.close()
        await listing.stop()
        // The checkpointer's connection first, so closing the last one folds the log into the file.
        await checkpoints.stop()
        await db.destroy()
      },
    }
  }
}

/**
 * Kysely's PostgreSQL introspection (which the migrator uses to find its own tables) reads every
 * schema's tables through functions that look each schema up by name, so a schema dropped
 * meanwhile by another client (another deployment's, or a test's) fails it with "schema … does
 * not exist" — the flake of store tests run in parallel. Patchbay only ever asks about its own
 * schema: this dialect's introspection reads that schema alone, by the catalog's ids.
 */
export class OneSchemaPostgresDialect extends PostgresDialect {
  #schema: string | null
  constructor(config: PostgresDialectConfig, schema: string | null) {
    super(config)
    this.#schema = schema
  }
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OneSchemaIntrospector(db, this.#schema)
  }
}

class OneSchemaIntrospector implements DatabaseIntrospector {
  #db: Kysely<unknown>
  #schema: string | null
  constructor(db: Kysely<unknown>, schema: string | null) {
    this.#db = db
    this.#schema = schema
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(
      this.#db,
    )
    return rows.map((r) => ({ name: r.name }))
  }

  /** The tables and views of this store's schema (the first of the search path without one). */
  async getTables(): Promise<TableMetadata[]> {
    const schema = this.#schema === null ? sql`current_schema()` : sql`${this.#schema}`
    const { rows } = await sql<{ schema: string; name: string; kind: string }>`
      select n.nspname as schema, c.relname as name, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm')`.execute(this.#db)
    return rows.map((r) => ({
      schema: r.schema,
      name: r.name,
      isView: r.kind === 'v' || r.kind === 'm',
      columns: [],
    }))
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() }
  }
}
