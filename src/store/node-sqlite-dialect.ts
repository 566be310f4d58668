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

export function openSqlite(file: string): DatabaseSync {
  const db = new DatabaseSync(file)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  // A larger page cache (64 MiB): the event pipeline writes a lot.
  db.exec('PRAGMA cache_size = -65536')
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec('PRAGMA foreign_keys = ON')
  // Checkpoints run in the background (sqlite-checkpoints.ts), never inside a commit; after one,
  // the log is cut back to 64 MiB at most.
  db.exec('PRAGMA wal_autocheckpoint = 0')
  db.exec('PRAGMA journal_size_limit = 67108864')
  return db
}

export function nodeSqliteDialect(db: DatabaseSync): SqliteDialect {
  const cache = new Map<string, NodeSqliteStatement>()
  const adapter: SqliteDatabase = {
    close: () => db.close(),
    prepare: (sql: string) => {
      let stmt = cache.get(sql)
      if (!stmt) {
        stmt = new NodeSqliteStatement(db.prepare(sql))
        if (cache.size > 500) cache.clear()
        cache.set(sql, stmt)
      }
      return stmt
    },
  }
  return new SqliteDialect({ database: adapter })
}
