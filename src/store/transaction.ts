// One repository style: every repository method that may be part of a larger commit takes the
// database or a transaction (its last parameter, `db`, defaulting to the repository's own; the
// event log's functions take it first). A service composes several repositories in one commit
// with `transact`, and a repository method that needs a transaction of its own joins the one it
// is given instead of opening a second.
import type { Kysely } from 'kysely'
import type { Database } from './schema.ts'

/** The database, or a transaction on it (a Kysely Transaction is one). */
export type Db = Kysely<Database>

/** Runs `work` in a transaction: `db`'s own when it already is one, else a new one, committed at the end. */
export function transact<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work)
}
