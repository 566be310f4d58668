// GET /v1/stats over a busy month on the embedded SQLite store: 1,000,000 events (three
// connectors), a delivery each with its attempts, 300,000 step runs over four connections, 100,000
// tool runs and 20,000 credit charges, spread over the last 30 days. Measures, through the API,
// every series over 30 days in hourly and daily buckets: the first query (which finds the month not
// rolled up and rolls it up first, once) and then the median of 5 (from the roll-up), and the last
// hour in minutes (from the records).
//
//   node bench/stats.ts            (BENCH_EVENTS=… for another size)
import { sql } from 'kysely'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { median, report, round, target } from './_stats.ts'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000)
const DAY = 86_400_000
const adminKey = `pb_admin_bench_${Math.random().toString(36).slice(2)}`
const service = await startService(
  { ...loadConfig({}), port: 0, dataDir: tempDir('patchbay-bench-stats-'), adminKey },
  { baseUrls: {}, logging: false },
)
// The roll-up is run by hand below, once the month is stored (its timer would fold hours whose
// records are still being written: a backfill, which live traffic never is).
await service.engine.stats.close()
const db = service.engine.store.db
const ws = service.workspaceId
const now = Date.now()
const start = (now - 30 * DAY) / 1000
const span = (30 * DAY) / 1000

const filled = performance.now()
const times = (n: number, offset = 0) =>
  sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${start} + (i * ${span / n}) + ${offset}, 'unixepoch')`
const series = (n: number) =>
  sql`with recursive c(i) as (select 0 union all select i + 1 from c where i < ${n - 1}) select i from c`
await sql`insert into events (id, workspace_id, connector, subscription_id, connection_id, model, upstream_id, type, refs, data, occurred_at, received_at, matched)
  select 'evt_b_' || i, ${ws}, case i % 3 when 0 then 'taskboard' when 1 then 'codehost' else 'contactdata' end,
    'sub_b', 'con_b_' || (i % 4), 'm', 'u' || i, 'card.moved', '{}', '{}', ${times(EVENTS)}, ${times(EVENTS)}, 1
  from (${series(EVENTS)})`.execute(db)
await sql`insert into deliveries (id, workspace_id, agent_id, event_id, trigger_id, target, status, attempts, next_attempt_at, last_status, last_error, tool_run_id, created_at, delivered_at, claimed_until)
  select 'dlv_b_' || i, ${ws}, 'agt_b_' || (i % 5), 'evt_b_' || i, 'trg_b', '{"type":"webhook"}',
    case when i % 50 = 0 then 'dead' else 'delivered' end, case when i % 50 = 0 then 2 else 1 end, null, 200, null, null,
    ${times(EVENTS, 0.01)}, case when i % 50 = 0 then null else ${times(EVENTS, 0.05)} end, null
  from (${series(EVENTS)})`.execute(db)
await sql`insert into delivery_attempts (delivery_id, workspace_id, attempt, at, status, error, duration_ms)
  select 'dlv_b_' || i, ${ws}, 1, ${times(EVENTS, 0.05)}, case when i % 50 = 0 then 500 else 200 end,
    case when i % 50 = 0 then 'the agent endpoint answered 500' else null end, 20
  from (${series(EVENTS)})`.execute(db)
await sql`insert into delivery_attempts (delivery_id, workspace_id, attempt, at, status, error, duration_ms)
  select 'dlv_b_' || i, ${ws}, 2, ${times(EVENTS, 1.05)}, 500, 'the agent endpoint answered 500', 20
  from (${series(EVENTS)}) where i % 50 = 0`.execute(db)
const RUNS = Math.round(EVENTS * 0.3)
await sql`insert into step_runs (id, workspace_id, step_id, connection_id, caller_key_id, status, error_code, duration_ms, attempts, created_at, rate_limited)
  select 'run_b_' || i, ${ws}, 'taskboard.create_card', 'con_b_' || (i % 4), 'key_b',
    case when i % 20 = 0 then 'failed' else 'succeeded' end, null, 40, 1 + (i % 100 = 0), ${times(RUNS)}, i % 100 = 0
  from (${series(RUNS)})`.execute(db)
const TOOL_RUNS = Math.round(EVENTS * 0.1)
await sql`insert into tool_runs (id, workspace_id, agent_id, tool_id, trigger_id, event_id, status, input, steps, error_code, error_message, created_at, finished_at)
  select 'trn_b_' || i, ${ws}, 'agt_b_' || (i % 5), 'tol_b', null, null,
    case when i % 25 = 0 then 'failed' else 'succeeded' end, '{}', '[]', null, null, ${times(TOOL_RUNS)}, ${times(TOOL_RUNS, 0.2)}
  from (${series(TOOL_RUNS)})`.execute(db)
const CHARGES = Math.round(EVENTS * 0.02)
await sql`insert into credit_ledger (id, workspace_id, connection_id, connector, agent_id, caller_key_id, step_id, run_id, credits, remaining, created_at)
  select 'crd_b_' || i, ${ws}, 'con_b_' || (i % 2), 'contactdata', 'agt_b_' || (i % 5), 'key_b', 'contactdata.enrich_contacts', 'run_b', 1 + i % 3, null, ${times(CHARGES)}
  from (${series(CHARGES)})`.execute(db)
await sql`analyze`.execute(db)
const fillMs = performance.now() - filled

const ask = async (query: string) => {
  const t0 = performance.now()
  const res = await fetch(`${service.url}/v1/stats?${query}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  })
  const body = (await res.json()) as {
    series: Array<{ name: string; lines: Array<{ total: number | null }> }>
  }
  if (res.status !== 200) throw new Error(JSON.stringify(body))
  return { ms: performance.now() - t0, body }
}
const month = (step: string) =>
  `from=${new Date(now - 30 * DAY).toISOString()}&to=${new Date(now).toISOString()}&step=${step}`
const times5 = async (query: string) => {
  const ms: number[] = []
  for (let i = 0; i < 5; i++) ms.push((await ask(query)).ms)
  return round(median(ms), 1)
}

// The first month's query finds the month not rolled up, and rolls it up first (once).
const firstStarted = performance.now()
await ask(month('1h'))
const firstQueryMs = round(performance.now() - firstStarted, 0)
const hours = Number(
  (await sql<{ n: number }>`select count(distinct hour) as n from stat_hours`.execute(db)).rows[0]?.n ?? 0,
)
const rolled = { hourMs: await times5(month('1h')), dayMs: await times5(month('1d')) }
const lastHourMs = await times5(`from=${new Date(now - 3_600_000).toISOString()}&step=1m`)
const check = await ask(month('1d'))
const events = check.body.series.find((s) => s.name === 'events.received')!
const counted = events.lines.reduce((a, l) => a + (l.total ?? 0), 0)
await service.close()

report(
  {
    bench: 'stats',
    machine: 'shared (other engineers’ tests and builds ran meanwhile)',
    events: EVENTS,
    countedEvents: counted,
    fillSeconds: round(fillMs / 1000, 1),
    firstQueryWithRollUp: { ms: firstQueryMs, hoursRolledUp: hours },
    allSeries30dRolledUp: rolled,
    allSeriesLastHourPerMinuteMs: lastHourMs,
  },
  [
    target('allSeries30dRolledUp.hourMs', rolled.hourMs, '<=', 1000),
    target('allSeries30dRolledUp.dayMs', rolled.dayMs, '<=', 1000),
    target('countedEvents', counted, '>=', EVENTS),
  ],
)
process.exit(0)
