// Lists a SQLite store's newest events, deliveries and delivery attempts in its workspace indexes,
// in batches (migrations 0018 and 0020). A row is stored unlisted, found by the unlisted index (in
// the order rows are made) whose last page its commit's rows share; every few seconds every
// unlisted row is listed (a statement a table), so each workspace's index page is written once for
// all its rows of those seconds instead of once for each (with 1,000 busy workspaces, a page a row).
// Reads take both parts (event-log.ts ofWorkspace), so a row is found before and after, and a
// listing that fails (a full disk) only leaves the unlisted part longer until the next one passes.
// One process holds a SQLite store, so nothing needs claiming.
import { setTimeout as sleep } from 'node:timers/promises'
import { type Kysely, sql } from 'kysely'
import type { Database } from './schema.ts'

/**
 * How often the unlisted rows are listed. A pass writes a page of each workspace index for each
 * workspace with rows waiting, however few: with 1,000 busy workspaces, about a page for each row
 * listed each second, and the pages, spread over indexes that outgrow the page cache, are read back
 * first and copied into the database file again by the checkpoints. Measured in the tenancy
 * benchmark (bench/events.ts --workspaces 1000, third round, about 330,000 rows): the pass and the
 * checkpoints' share grew to 41 and 55 µs of CPU a delivery, against 6 and 13 with one workspace.
 * Every three seconds a pass lists three times the rows for the same pages. Reads pay for the
 * longer unlisted part: a workspace's read of it tests each waiting row's workspace in the index
 * (migration 0021): a workspace's newest page about as fast as with a second's rows before
 * (bench/unlisted.ts).
 */
export const LIST_EVERY_MS = 3_000

/**
 * The pause between two statements of a pass: long enough for what arrived during a statement to be
 * read, checked and gathered into its commit (the ingress gathers for 2 ms) and to reach the store
 * before the next statement, so it waits for one statement, not for the whole pass.
 */
export const BETWEEN_STATEMENTS_MS = 5

/**
 * A table's unlisted rows up to which a pass lists them in parts of at most WORKSPACES_A_STATEMENT
 * workspaces, a statement each; more are listed in one statement. A statement writes a page of the
 * workspace index for about each workspace it lists and holds the event loop meanwhile: with 1,000
 * workspaces at 500 events a second, 16-37 ms a table in one statement (the many workspaces' p99
 * at 500/s 34-50 ms against 9-13 with one workspace), 5 ms at most in parts. But every part writes
 * the table's newest pages and its unlisted index's again (a workspace's rows lie among all the
 * others', in the order they came), 43-56 % more CPU a pass: affordable at a few hundred events a
 * second, not at thousands (7 µs a delivery at 3,000/s), where one statement is kept
 * (bench/listing-stall.ts).
 */
export const IN_PARTS_UP_TO_ROWS = 5_000
/** The most workspaces whose rows one statement of a pass in parts lists (IN_PARTS_UP_TO_ROWS). */
export const WORKSPACES_A_STATEMENT = 200

/** The tables stored unlisted, listed in this order (a delivery after its event, an attempt after its delivery). */
export const LISTED_TABLES = ['events', 'deliveries', 'delivery_attempts'] as const

export interface Listing {
  /** Lists what is unlisted now (or joins the pass under way): for tests, which stop the timer. */
  listNow(): Promise<void>
  stop(): Promise<void>
}

/**
 * The conditions on `workspace_id` that part a table's unlisted rows (IN_PARTS_UP_TO_ROWS): together
 * they take in every unlisted row, rows stored meanwhile too (the first part has no lower bound, the
 * last no upper one). Read from the unlisted index, which holds the workspace.
 */
async function partsOf(db: Kysely<Database>, table: (typeof LISTED_TABLES)[number]) {
  const whole = [sql``]
  const { rows: counted } = await sql<{ n: number }>`
    SELECT count(*) AS n FROM ${sql.table(table)} WHERE listed = 0`.execute(db)
  if (Number(counted[0].n) > IN_PARTS_UP_TO_ROWS) return whole
  const { rows } = await sql<{ workspace_id: string }>`
    SELECT DISTINCT workspace_id FROM ${sql.table(table)} WHERE listed = 0 ORDER BY workspace_id`.execute(db)
  const bounds: string[] = []
  for (let i = WORKSPACES_A_STATEMENT; i < rows.length; i += WORKSPACES_A_STATEMENT)
    bounds.push(rows[i].workspace_id)
  if (bounds.length === 0) return whole
  return [
    sql` AND workspace_id < ${bounds[0]}`,
    ...bounds.slice(1).map((to, i) => sql` AND workspace_id >= ${bounds[i]} AND workspace_id < ${to}`),
    sql` AND workspace_id >= ${bounds.at(-1)}`,
  ]
}

export function listInBackground(
  db: Kysely<Database>,
  opts: {
    everyMs?: number
    /** The store's health (store-health.ts): no listing while the store is away or full. */
    health?: { readonly available: boolean; failure(err: unknown): unknown }
    log?: { warn(obj: object, msg: string): void }
  } = {},
): Listing {
  let running: Promise<void> | null = null
  let warned = false
  const listNow = (): Promise<void> =>
    (running ??= (async () => {
      // A table at a time, each in its own statement (or, for a few thousand rows, in parts of a few
      // hundred workspaces: IN_PARTS_UP_TO_ROWS), with a pause between for other work: node:sqlite
      // runs a statement on the event loop, so one transaction of all three held every request for
      // the whole pass (with 1,000 busy workspaces, 50-65 ms every pass at 500 events a second). A
      // workspace's rows are listed in one statement, so its index page is written once a pass; a
      // read takes both parts (event-log.ts ofWorkspace), so a row is found whichever tables and
      // parts are listed yet, and a pass cut short leaves the rest to the next.
      // bench/listing-stall.ts: what a commit due during a pass waits.
      let first = true
      for (const table of LISTED_TABLES) {
        for (const part of await partsOf(db, table)) {
          if (!first) await sleep(BETWEEN_STATEMENTS_MS)
          first = false
          await sql`UPDATE ${sql.table(table)} SET listed = 1 WHERE listed = 0${part}`.execute(db)
        }
      }
      warned = false
    })()
      .catch((err: unknown) => {
        // A full disk or a store gone away is the health check's to report; anything else once.
        if (opts.health?.failure(err) || warned) return
        warned = true
        opts.log?.warn(
          { err: String(err) },
          'listing the newest events, deliveries and attempts failed; tried again at the next pass',
        )
      })
      .finally(() => {
        running = null
      }))
  const timer = setInterval(() => {
    if (opts.health?.available !== false) void listNow()
  }, opts.everyMs ?? LIST_EVERY_MS)
  timer.unref()
  return {
    listNow,
    stop: async () => {
      clearInterval(timer)
      await running
    },
  }
}
