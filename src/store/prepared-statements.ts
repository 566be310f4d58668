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

/** The name a statement gives itself: `/* prepared <name> *\/ …` at its start. */
const NAMED = /^\/\* prepared ([a-z_]+) \*\//

/**
 * Begins a statement (`sql\`${prepared('events_with_deliveries')} …\``) that is prepared once per
 * connection on PostgreSQL under this name (a comment elsewhere). The name is read from the text's
 * first characters, so a call costs no lookup of the whole text; node-postgres refuses a name
 * given to two different texts. Measured with the event benchmark at a steady 500 events/s:
 * planning alone was half of PostgreSQL's execution time of the group commits and listener checks.
 */
export function prepared(name: string) {
  if (!/^[a-z_]+$/.test(name))
    throw new Error(`a prepared statement's name is lower case letters and _: ${name}`)
  return sql.raw(`/* prepared ${name} */ `)
}

/** A pool for Kysely whose clients send statements that begin with prepared(name) by that name. */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  // A cursor (Kysely's streaming) goes through as it came.
  const query = (client: pg.PoolClient, text: string, values?: unknown[]) => {
    const name = NAMED.exec(text)?.[1]
    return name ? client.query({ name: `patchbay_${name}`, text, values }) : client.query(text, values)
  }
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
