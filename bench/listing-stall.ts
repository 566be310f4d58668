// What SQLite's listing pass (store/sqlite-listing.ts) makes the store's other work wait. node:sqlite
// runs a statement on the event loop, so while a pass runs nothing else does. A file database of
// --rows events, each with its delivery and an attempt, spread over --workspaces workspaces; then,
// in turn, a pass's worth of new rows (LIST_EVERY_MS at --rate) is listed as the store lists them
// (a table at a time, a pause between, a table of a few thousand rows in parts of
// WORKSPACES_A_STATEMENT workspaces), with one statement a table (how it was until 2026-11-27), and
// as one transaction of the three tables (until 2026-11-26), while a one-event commit is due every
// millisecond. A commit's wait counts from when it was due (a blocked event loop delays the timer
// too), to when it was stored. The CPU is that of listing another pass's rows with nothing else under
// way.
//
//   node bench/listing-stall.ts [--rows 100000] [--rate 500] [--workspaces 1000] [--passes 6]
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import { deliveries, events, type NewEvent } from '../src/store/event-log.ts'
import { newId } from '../src/store/ids.ts'
import {
  BETWEEN_STATEMENTS_MS,
  IN_PARTS_UP_TO_ROWS,
  LIST_EVERY_MS,
  LISTED_TABLES,
  WORKSPACES_A_STATEMENT,
} from '../src/store/sqlite-listing.ts'
import { cardCreated, scratchStore, workspaceIdsOf } from './_rows.ts'
import { median, percentile, report, round } from './_stats.ts'

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    rate: { type: 'string', default: '500' },
    workspaces: { type: 'string', default: '1000' },
    passes: { type: 'string', default: '6' },
  },
})
const ROWS = Number(flags.rows)
const RATE = Number(flags.rate)
const WORKSPACES = Number(flags.workspaces)
const PASSES = Number(flags.passes)
const PER_PASS = Math.round((RATE * LIST_EVERY_MS) / 1000)
const workspaceIds = workspaceIdsOf(WORKSPACES)
const anyWorkspace = () => workspaceIds[Math.floor(Math.random() * workspaceIds.length)]

const { db, listing, close } = await scratchStore('listing-stall')

/** Stores events with a delivery and an attempt each (stored unlisted), 500 a commit. */
async function store(count: number) {
  for (let done = 0; done < count; done += 500) {
    const now = new Date().toISOString()
    const rows = Array.from({ length: Math.min(500, count - done) }, () => cardCreated(anyWorkspace(), now))
    await db.transaction().execute(async (tx) => {
      await events.upsertMany(tx, rows)
      await deliveries.insertRows(tx, rows.map(deliveryOf))
      await deliveries.addAttempts(
        tx,
        rows.map((e, i) => ({
          delivery_id: `dlv_${e.id.slice(4)}`,
          attempt: 1,
          at: now,
          status: 200,
          error: null,
          duration_ms: 3 + (i % 5),
          workspace_id: e.workspace_id,
        })),
      )
    })
  }
}
const deliveryOf = (e: NewEvent) => ({
  id: `dlv_${e.id.slice(4)}`,
  workspace_id: e.workspace_id,
  event_id: e.id,
  agent_id: `agt_${e.workspace_id}`,
  trigger_id: `trigger_${e.workspace_id}`,
  target: { type: 'stream' as const },
  status: 'delivered' as const,
  attempts: 1,
  next_attempt_at: null,
  last_status: 200,
  last_error: null,
  tool_run_id: null,
  created_at: e.received_at,
  delivered_at: e.received_at,
  claimed_until: null,
})

/** Every unlisted row listed with one statement a table, a pause between, as the store did until 2026-11-27. */
const statementATable = async () => {
  for (const [i, table] of LISTED_TABLES.entries()) {
    if (i > 0) await sleep(BETWEEN_STATEMENTS_MS)
    await sql`UPDATE ${sql.table(table)} SET listed = 1 WHERE listed = 0`.execute(db)
  }
}

/** Every unlisted row listed in one transaction, as the store did until 2026-11-26. */
const oneTransaction = () =>
  db.transaction().execute(async (tx) => {
    for (const table of LISTED_TABLES)
      await sql`UPDATE ${sql.table(table)} SET listed = 1 WHERE listed = 0`.execute(tx)
  })

/** A pass's rows stored, then listed by `list` while a one-event commit is due every ms. */
async function measure(list: () => Promise<void>) {
  await store(PER_PASS)
  const waits: number[] = []
  let passing = true
  const started = performance.now()
  const pass = list().then(() => {
    passing = false
    return performance.now() - started
  })
  const commits: Promise<void>[] = []
  for (let k = 0; passing; k++) {
    const due = started + k
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const row = cardCreated(anyWorkspace(), new Date().toISOString())
    commits.push(
      events
        .upsertMany(db, [{ ...row, id: newId('evt') }])
        .then(() => void waits.push(performance.now() - due)),
    )
  }
  const passMs = await pass
  await Promise.all(commits)
  waits.sort((a, b) => a - b)
  return {
    passMs,
    cpuMs: await cpuAlone(list),
    maxWaitMs: waits.at(-1) ?? 0,
    p99WaitMs: percentile(waits, 99),
    commits: waits.length,
  }
}

/** The CPU (ms) of listing a pass's rows, stored first, with nothing else under way. */
async function cpuAlone(list: () => Promise<void>) {
  await store(PER_PASS)
  const cpu = process.cpuUsage()
  await list()
  const used = process.cpuUsage(cpu)
  return (used.user + used.system) / 1000
}

await store(ROWS)
await listing.listNow()
const rows = {
  asStored: [] as Awaited<ReturnType<typeof measure>>[],
  statementATable: [] as Awaited<ReturnType<typeof measure>>[],
  oneTransaction: [] as Awaited<ReturnType<typeof measure>>[],
}
for (let p = 0; p < PASSES; p++) {
  rows.asStored.push(await measure(() => listing.listNow()))
  rows.statementATable.push(await measure(statementATable))
  rows.oneTransaction.push(await measure(oneTransaction))
}
await close()

const med = (rs: Awaited<ReturnType<typeof measure>>[]) => ({
  passMs: round(median(rs.map((r) => r.passMs)), 1),
  cpuMs: round(median(rs.map((r) => r.cpuMs)), 1),
  maxWaitMs: round(median(rs.map((r) => r.maxWaitMs)), 1),
  p99WaitMs: round(median(rs.map((r) => r.p99WaitMs)), 1),
  commitsDuringPass: Math.round(median(rs.map((r) => r.commits))),
})
const asStored = med(rows.asStored)
const statementATableFigures = med(rows.statementATable)
const before = med(rows.oneTransaction)
report(
  {
    bench: 'listing-stall',
    date: new Date().toISOString(),
    rows: ROWS,
    rate: RATE,
    workspaces: WORKSPACES,
    rowsPerPass: PER_PASS,
    passes: PASSES,
    inPartsUpToRows: IN_PARTS_UP_TO_ROWS,
    workspacesAStatement: WORKSPACES_A_STATEMENT,
    asStored,
    statementATable: statementATableFigures,
    oneTransaction: before,
    maxWaitVsStatementATable: round(asStored.maxWaitMs / statementATableFigures.maxWaitMs, 2),
    cpuVsStatementATable: round(asStored.cpuMs / statementATableFigures.cpuMs, 2),
    maxWaitVsOneTransaction: round(asStored.maxWaitMs / before.maxWaitMs, 2),
  },
  // No target: what a pass makes other work wait (issue 22's tenancy figures are bench/events.ts's).
  [],
)
