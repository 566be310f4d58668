// SQLite's listing pass and the unlisted part it leaves (store/sqlite-listing.ts, migrations 0018
// and 0021), with the store's own functions on a file database: what a pass costs a row with one
// workspace and with many, for a second's and for LIST_EVERY_MS's rows at --rate; and what a
// workspace's newest page (events.page, which reads the unlisted part through) costs while that
// many rows of every workspace wait unlisted, with the unlisted index as it is (ending with the
// workspace) and as it was before migration 0021 (each row read to see its workspace).
//
//   node bench/unlisted.ts [--rows 100000] [--rate 3000] [--workspaces 1000]
import { parseArgs } from 'node:util'
import { type Kysely, sql } from 'kysely'
import { events } from '../src/store/event-log.ts'
import type { Database } from '../src/store/schema.ts'
import { LIST_EVERY_MS } from '../src/store/sqlite-listing.ts'
import { cardCreated, scratchStore, workspaceIdsOf } from './_rows.ts'
import { median, report, round } from './_stats.ts'

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    rate: { type: 'string', default: '3000' },
    workspaces: { type: 'string', default: '1000' },
  },
})
/** Events stored (and listed) before anything is measured: tables past the page cache. */
const ROWS = Number(flags.rows)
/** Events a second: a pass lists a second's of them, or LIST_EVERY_MS's. */
const RATE = Number(flags.rate)
const WORKSPACES = Number(flags.workspaces)
const PASSES = 6
const READS = 50

/** Stores `count` events spread at random over `workspaceIds`, 500 a commit (stored unlisted). */
async function store(db: Kysely<Database>, workspaceIds: string[], count: number) {
  for (let done = 0; done < count; done += 500) {
    const now = new Date().toISOString()
    const rows = Array.from({ length: Math.min(500, count - done) }, () =>
      cardCreated(workspaceIds[Math.floor(Math.random() * workspaceIds.length)], now),
    )
    await db.transaction().execute((tx) => events.upsertMany(tx, rows))
  }
}

/** µs a row of a listing pass of `perPass` rows, the median of PASSES passes. */
async function listingCost(workspaceCount: number, perPass: number) {
  const s = await scratchStore('unlisted')
  const ids = workspaceIdsOf(workspaceCount)
  await store(s.db, ids, ROWS)
  await s.listing.listNow()
  const us: number[] = []
  for (let p = 0; p < PASSES; p++) {
    await store(s.db, ids, perPass)
    const t0 = performance.now()
    await s.listing.listNow()
    us.push(((performance.now() - t0) * 1000) / perPass)
  }
  await s.close()
  return round(median(us), 2)
}

/** ms of a workspace's newest page of 50 while `waiting` rows of every workspace are unlisted. */
async function readCost(waiting: number, index: 'with workspace' | 'before 0021') {
  const s = await scratchStore('unlisted')
  const ids = workspaceIdsOf(WORKSPACES)
  await store(s.db, ids, ROWS)
  await s.listing.listNow()
  if (index === 'before 0021') {
    await sql`DROP INDEX events_unlisted`.execute(s.db)
    await sql`CREATE INDEX events_unlisted ON events (received_at, seq) WHERE listed = 0`.execute(s.db)
  }
  await store(s.db, ids, waiting)
  const ms: number[] = []
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now()
    await events.page(s.db, ids[i % ids.length], { limit: 50 })
    ms.push(performance.now() - t0)
  }
  await s.close()
  return round(median(ms), 2)
}

const perSecond = RATE
const perPass = Math.round((RATE * LIST_EVERY_MS) / 1000)
const listing = {
  oneWorkspace: { perSecond: await listingCost(1, perSecond), perPass: await listingCost(1, perPass) },
  manyWorkspaces: {
    perSecond: await listingCost(WORKSPACES, perSecond),
    perPass: await listingCost(WORKSPACES, perPass),
  },
}
const reads = {
  perSecondBefore0021: await readCost(perSecond, 'before 0021'),
  perPassBefore0021: await readCost(perPass, 'before 0021'),
  perPass: await readCost(perPass, 'with workspace'),
}
report(
  {
    bench: 'unlisted',
    date: new Date().toISOString(),
    rows: ROWS,
    rate: RATE,
    workspaces: WORKSPACES,
    rowsPerSecond: perSecond,
    rowsPerPass: perPass,
    listingUsPerRow: listing,
    newestPageMs: reads,
    // The longer unlisted part with the workspace in its index, against a second's without.
    newestPageVsOneSecondBefore0021: round(reads.perPass / reads.perSecondBefore0021, 2),
  },
  // No target: what the listing interval trades (issue 22's figures are bench/events.ts's).
  [],
)
