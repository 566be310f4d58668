// Pages SQLite writes to its write-ahead log per delivery, with the event log's tables spread over
// one workspace and over many (issue 22): the cost behind the tenancy mode of bench/events.ts,
// counted instead of timed, so it does not move with the machine's load. The store's own functions
// write what the event path writes — events and their deliveries in group commits, each delivery's
// push outcome and attempt after it — on a fresh store with automatic checkpoints off (as the store
// runs), and once per the rows of LIST_EVERY_MS at --rate the store's listing pass
// (store/sqlite-listing.ts) runs. Ids are made as the product makes them (time-ordered), upstream
// ids shaped like the task-board's ObjectIds. The log's frames are counted from its size.
//
//   node bench/page-writes.ts [--deliveries 20000] [--per-commit 17] [--rate 2500] [--workspaces 1,1000]
import fs from 'node:fs'
import { parseArgs } from 'node:util'
import { deliveries, events, type NewDelivery, type NewEvent } from '../src/store/event-log.ts'
import { newId } from '../src/store/ids.ts'
import { LIST_EVERY_MS } from '../src/store/sqlite-listing.ts'
import { cardCreated, scratchStore, workspaceIdsOf } from './_rows.ts'
import { report, target } from './_stats.ts'

const { values: flags } = parseArgs({
  options: {
    deliveries: { type: 'string', default: '20000' },
    'per-commit': { type: 'string', default: '17' },
    rate: { type: 'string', default: '2500' },
    workspaces: { type: 'string', default: '1,1000' },
  },
})
const TOTAL = Number(flags.deliveries)
const PER_COMMIT = Number(flags['per-commit'])
/** Deliveries a second: the listing pass runs once per the rows of LIST_EVERY_MS at this rate. */
const RATE = Number(flags.rate)
const ROWS_PER_LISTING = Math.round((RATE * LIST_EVERY_MS) / 1000)
const PAGE = 4096
const FRAME = PAGE + 24

async function run(workspaceCount: number) {
  const { db, sqlite, file, listing, close } = await scratchStore('page-writes')
  const workspaceIds = workspaceIdsOf(workspaceCount)
  const walFrames = () => {
    try {
      return Math.max(0, (fs.statSync(`${file}-wal`).size - 32) / FRAME)
    } catch {
      return 0
    }
  }
  sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  const before = walFrames()
  let commits = 0
  let sinceListing = 0
  let listings = 0
  let listingMs = 0
  for (let done = 0; done < TOTAL; done += PER_COMMIT) {
    const now = new Date().toISOString()
    const rows: NewEvent[] = []
    const made: NewDelivery[] = []
    for (let i = 0; i < PER_COMMIT; i++) {
      const ws = workspaceIds[Math.floor(Math.random() * workspaceIds.length)]
      const event = cardCreated(ws, now)
      rows.push(event)
      made.push({
        id: newId('dlv'),
        workspace_id: ws,
        agent_id: `agt_${ws}_${i % 10}`,
        event_id: event.id,
        trigger_id: `trigger_${ws}_${i % 10}`,
        target: { type: 'webhook' },
        status: 'pending',
        attempts: 1,
        next_attempt_at: null,
        last_status: null,
        last_error: null,
        tool_run_id: null,
        created_at: now,
        delivered_at: null,
        claimed_until: now,
      })
    }
    // The ingress's group commit, then the send batch's outcomes and attempts (their own commit).
    await db.transaction().execute(async (tx) => {
      await events.upsertMany(tx, rows)
      await deliveries.insertRows(tx, made)
    })
    await deliveries.settleMany(
      db,
      made.map((d) => ({
        id: d.id,
        attempt: {
          delivery_id: d.id,
          workspace_id: d.workspace_id,
          attempt: 1,
          at: now,
          status: 200,
          error: null,
          duration_ms: 3,
        },
        update: {
          status: 'delivered',
          last_status: 200,
          last_error: null,
          delivered_at: now,
          next_attempt_at: null,
        },
      })),
    )
    commits += 2
    sinceListing += PER_COMMIT
    if (sinceListing >= ROWS_PER_LISTING) {
      const t = performance.now()
      await listing.listNow()
      listingMs += performance.now() - t
      listings++
      commits++
      sinceListing = 0
    }
  }
  const pages = walFrames() - before
  await close()
  return {
    workspaces: workspaceCount,
    deliveries: TOTAL,
    commits,
    pagesPerDelivery: Math.round((pages / TOTAL) * 100) / 100,
    listingPasses: listings,
    listingMsPerPass: listings ? Math.round((listingMs / listings) * 10) / 10 : null,
  }
}

const results = []
for (const n of flags.workspaces.split(',').map(Number)) results.push(await run(n))
const [one, ...many] = results
const vsOne = Object.fromEntries(
  many.map((r) => [r.workspaces, Math.round((r.pagesPerDelivery / one.pagesPerDelivery) * 100) / 100]),
)
// Issue 22: tenancy costs nothing measurable; in pages, within 10 % of one workspace's.
const targets = Object.entries(vsOne).map(([n, value]) =>
  target(`pagesPerDeliveryVsOne.${n}`, value, '<=', 1.1),
)
report(
  {
    bench: 'page-writes',
    date: new Date().toISOString(),
    perCommit: PER_COMMIT,
    listEvery: ROWS_PER_LISTING,
    results,
    pagesPerDeliveryVsOne: vsOne,
  },
  targets,
)
