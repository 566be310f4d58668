// The statistics' roll-up over many workspaces on the embedded SQLite store (issue 22): a day of
// deliveries and their attempts spread over W workspaces (and the same over one workspace, in the
// same run), then the roll-up passes that fold the day, timed until there is nothing left to fold.
// A pass reads an hour's attempts by time, every workspace's at once (a pass that read each
// workspace's hours on its own read every workspace's attempts once per workspace).
//
//   node bench/stats-rollup.ts   (BENCH_WORKSPACES=… default 200, BENCH_DELIVERIES=… default 100000)
import { sql } from 'kysely'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/service.ts'
import { Workspaces } from '../src/store/workspaces.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { report, round, target } from './_stats.ts'

const WORKSPACES = Number(process.env.BENCH_WORKSPACES ?? 200)
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 100_000)
const DAY = 86_400_000

async function rollUpMs(workspaceCount: number) {
  const service = await startService(
    {
      ...loadConfig({}),
      port: 0,
      dataDir: tempDir('patchbay-bench-rollup-'),
      adminKey: `pb_admin_bench_${workspaceCount}`,
    },
    { baseUrls: {}, logging: false },
  )
  // Passes are run below, when the day is stored.
  await service.engine.stats.close()
  const db = service.engine.store.db
  const workspaces = new Workspaces(db, service.engine.store.kind)
  const ids = [service.workspaceId]
  while (ids.length < workspaceCount) ids.push((await workspaces.insert(`bench ${ids.length}`)).id)
  await sql`create temporary table bench_ws (n integer primary key, id text)`.execute(db)
  for (const [n, id] of ids.entries()) await sql`insert into bench_ws values (${n}, ${id})`.execute(db)
  // A day, ending three hours ago (so every hour of it is over and may be folded).
  const start = (Date.now() - 3 * 3_600_000 - DAY) / 1000
  const at = (offset: number) =>
    sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${start} + (i * ${DAY / 1000 / DELIVERIES}) + ${offset}, 'unixepoch')`
  const series = sql`with recursive c(i) as (select 0 union all select i + 1 from c where i < ${DELIVERIES - 1}) select i from c`
  const whose = sql`(select id from bench_ws where n = i % ${workspaceCount})`
  await sql`insert into events (id, workspace_id, connector, subscription_id, connection_id, model, upstream_id, type, refs, data, occurred_at, received_at, matched)
    select 'evt_r_' || i, ${whose}, 'taskboard', 'sub_r', 'con_r', 'm', 'u' || i, 'card.moved', '{}', '{}', ${at(0)}, ${at(0)}, 1
    from (${series})`.execute(db)
  await sql`insert into deliveries (id, workspace_id, agent_id, event_id, trigger_id, target, status, attempts, next_attempt_at, last_status, last_error, tool_run_id, created_at, delivered_at, claimed_until)
    select 'dlv_r_' || i, ${whose}, 'agt_r', 'evt_r_' || i, 'trg_r', '{"type":"webhook"}', 'delivered', 1, null, 200, null, null,
      ${at(0.01)}, ${at(0.05)}, null
    from (${series})`.execute(db)
  await sql`insert into delivery_attempts (delivery_id, workspace_id, attempt, at, status, error, duration_ms)
    select 'dlv_r_' || i, ${whose}, 1, ${at(0.05)}, 200, null, 20 from (${series})`.execute(db)
  await sql`analyze`.execute(db)
  const started = performance.now()
  let passes = 0
  let hours = 0
  for (;;) {
    const folded = await service.engine.stats.rollUp()
    if (folded === 0) break
    hours += folded
    passes++
  }
  const ms = performance.now() - started
  await service.close()
  return { workspaces: workspaceCount, deliveries: DELIVERIES, passes, hoursFolded: hours, ms: round(ms, 0) }
}

const one = await rollUpMs(1)
const many = await rollUpMs(WORKSPACES)
const perWorkspaceHourVsOne = round(many.ms / many.hoursFolded / (one.ms / one.hoursFolded), 2)
const totalVsOne = round(many.ms / one.ms, 2)
report({ bench: 'stats-rollup', one, many, totalVsOne, perWorkspaceHourVsOne }, [
  target('totalVsOne', totalVsOne, '<=', 10),
])
