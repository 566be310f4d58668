// PostgreSQL: the event path's statements as named prepared statements, parsed and planned once per
// connection instead of at every call.
//
// node-postgres sends a query with parameters as an unnamed statement, which the server parses,
// analyses and plans anew each time; a query config with a `name` is parsed once per connection and,
// after a few runs, kept with a generic plan. Kysely's PostgreSQL driver always sends the text
// alone, so the pool handed to Kysely names the statements that ask for it. Only statements whose
// text is the same at every call may ask (their rows go in arrays, `unnest(…)`, never in a list of
// values): each name holds memory on the server for as long as its connection lives. A statement
// whose generic plan is worse than the ones made for each call's values should not ask: the send
// batches' outcomes (deliveries.settleMany) asked and took 4.7 ms a statement instead of 0.5.
import type { PostgresPool, PostgresPoolClient } from 'kysely'
import { sql } from 'kysely'
import type pg from 'pg'

const MARK = '/* prepared */'

/**
 * Begins a statement (`sql\`${PREPARED} …\``) that is prepared once per connection on PostgreSQL
 * (a comment elsewhere). Measured with the event benchmark at a steady 500 events/s: planning alone
 * was half of PostgreSQL's execution time of the group commits and webhook listener checks.
 */
export const PREPARED = sql.raw(`${MARK} `)

/** A pool for Kysely whose clients send statements that begin with PREPARED by name. */
export function preparingPool(pool: pg.Pool): PostgresPool {
  /** One name per statement text (as many as the code has such statements). */
  const names = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined) {
      name = `patchbay_${names.size + 1}`
      names.set(text, name)
    }
    return name
  }
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  // A cursor (Kysely's streaming) goes through as it came.
  const query = (client: pg.PoolClient, text: string, values?: unknown[]) =>
    text.startsWith(MARK) ? client.query({ name: nameOf(text), text, values }) : client.query(text, values)
  const wrap = (client: pg.PoolClient): PostgresPoolClient => ({
    query: ((text: unknown, values?: unknown[]) =>
      typeof text === 'string'
        ? query(client, text, values)
        : client.query(text as pg.Submittable)) as unknown as PostgresPoolClient['query'],
    release: () => client.release(),
  })
  return {
    async connect() {
      const client = await pool.connect()
      let wrapped = clients.get(client)
      if (!wrapped) {
        wrapped = wrap(client)
        clients.set(client, wrapped)
      }
      return wrapped
    },
    end: () => pool.end(),
  }
}
