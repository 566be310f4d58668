// Kysely's SqliteDialect speaks to a better-sqlite3-shaped database; this adapts Node's built-in
// node:sqlite to that shape, so the embedded store needs no native build.
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { type SqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely'

type Param = null | number | bigint | string | NodeJS.ArrayBufferView

function toParams(params: ReadonlyArray<unknown>): Param[] {
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p === undefined ? null : (p as Param)))
}

class NodeSqliteStatement implements SqliteStatement {
  readonly reader: boolean
  #stmt: StatementSync
  constructor(stmt: StatementSync) {
    this.#stmt = stmt
    this.reader = stmt.columns().length > 0
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    return this.#stmt.all(...toParams(parameters))
  }
  run(parameters: ReadonlyArray<unknown>) {
    const r = this.#stmt.run(...toParams(parameters))
    return { changes: r.changes, lastInsertRowid: r.lastInsertRowid }
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    return this.#stmt.iterate(...toParams(parameters)) as IterableIterator<unknown>
  }
}

/** How long a statement waits for a lock another connection holds (a backup's step, say). */
export const BUSY_TIMEOUT_MS = 5_000

export function openSqlite(file: string): DatabaseSync {
  const db = new DatabaseSync(file)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  // A page cache of 16 MiB (SQLite's default is 2): what the event pipeline writes lands at the
  // ends of its tables and time-ordered indexes, which stay in it. 64 MiB filled up under the event
  // benchmark — 48 MiB more of the process's memory — with no measurable gain in CPU per event
  // (issue 17); pages it misses are read from the operating system's cache.
  db.exec('PRAGMA cache_size = -16384')
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  db.exec('PRAGMA foreign_keys = ON')
  // Temporary structures in memory, not in files: every INSERT … RETURNING of the event pipeline's
  // group commits gathers its rows in one, which otherwise opened, wrote and deleted a file of its
  // own each time (measured: a file per commit, and 10–25 % of the store's CPU per delivery, most of
  // it in system calls). What the store sorts or gathers is a page or a group, never a whole table.
  db.exec('PRAGMA temp_store = MEMORY')
  // Checkpoints run in the background (sqlite-checkpoints.ts), never inside a commit; after one,
  // the log is cut back to 64 MiB at most.
  db.exec('PRAGMA wal_autocheckpoint = 0')
  db.exec('PRAGMA journal_size_limit = 67108864')
  return db
}

/** Prepared statements kept for reuse, most recently used last. */
const CACHED_STATEMENTS = 100
/**
 * Longer statements (multi-row inserts, `IN (…)` lists of a batch) are prepared for each use: their
 * shapes rarely repeat, and each holds native memory that V8 does not see, so a cache of them
 * grows the process by hundreds of megabytes before a full collection frees any.
 */
const CACHED_SQL_LENGTH = 1_000

/**
 * Begins a statement kept whatever its length: one of a bounded set of texts, made once and used
 * again (sqlite-row-batches.ts, the event path's multi-row inserts in chunks of fixed sizes).
 */
export const KEPT_STATEMENT = '/* kept */ '

/**
 * SQLite may roll a transaction back by itself when a statement fails with SQLITE_FULL, IOERR,
 * BUSY or NOMEM; the ROLLBACK Kysely then sends fails with "no transaction is active", and that
 * error would replace the one that says why (a full disk, which the store's health must see).
 * SQLite's documentation calls that failed ROLLBACK harmless: here it does nothing.
 */
const rollbackWhenActive = (db: DatabaseSync, stmt: StatementSync): SqliteStatement => ({
  reader: false,
  all: () => [],
  run: () => {
    if (!db.isTransaction) return { changes: 0, lastInsertRowid: 0 }
    const r = stmt.run()
    return { changes: r.changes, lastInsertRowid: r.lastInsertRowid }
  },
  iterate: () => [][Symbol.iterator](),
})

export function nodeSqliteDialect(db: DatabaseSync): SqliteDialect {
  const cache = new Map<string, NodeSqliteStatement>()
  // Kept apart, never pushed out by the others' churn: their set is bounded by what asks.
  const kept = new Map<string, NodeSqliteStatement>()
  const rollback = rollbackWhenActive(db, db.prepare('rollback'))
  const adapter: SqliteDatabase = {
    close: () => db.close(),
    prepare: (sql: string) => {
      if (sql === 'rollback') return rollback
      if (sql.startsWith(KEPT_STATEMENT)) {
        const known = kept.get(sql)
        if (known) return known
        const stmt = new NodeSqliteStatement(db.prepare(sql))
        kept.set(sql, stmt)
        return stmt
      }
      const cached = cache.get(sql)
      if (cached) {
        cache.delete(sql)
        cache.set(sql, cached)
        return cached
      }
      const stmt = new NodeSqliteStatement(db.prepare(sql))
      if (sql.length <= CACHED_SQL_LENGTH) {
        if (cache.size >= CACHED_STATEMENTS) cache.delete(cache.keys().next().value!)
        cache.set(sql, stmt)
      }
      return stmt
    },
  }
  return new SqliteDialect({ database: adapter })
}
