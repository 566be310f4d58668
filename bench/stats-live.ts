// GET /v1/stats of the last hour, by minute, for one workspace on the embedded SQLite store (issue
// 22): the hours not rolled up yet are read from the records. Measured first with only that
// workspace's records (300 deliveries in the hour, each with its event and attempt), then, in the
// same run, with 999 other workspaces' records of the same hour added (299,700 more deliveries: a
// service of 1,000 workspaces at 83 deliveries a second). A workspace's read should not grow with
// the others' traffic; on SQLite the process waits for every statement, so a read that did held up
// every workspace's deliveries for as long.
//
//   node bench/stats-live.ts   (BENCH_DELIVERIES=… default 300000, BENCH_WORKSPACES=… default 1000)
import { sql } from 'kysely'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { median, report, round, target } from './_stats.ts'

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 300_000)
const WORKSPACES = Number(process.env.BENCH_WORKSPACES ?? 1000)
const adminKey = `pb_admin_bench_${Math.random().toString(36).slice(2)}`
const service = await startService(
  { ...loadConfig({}), port: 0, dataDir: tempDir('patchbay-bench-stats-live-'), adminKey },
  { baseUrls: {}, logging: false },
)
await service.engine.stats.close()
const db = service.engine.store.db
const ws = service.workspaceId
const now = Date.now()
const start = (now - 3_600_000) / 1000

/** The hour's records of workspaces numbered `which` (0 is the measured one), every WORKSPACES-th delivery each. */
async function store(which: 'measured' | 'others') {
  const at = (offset: number) =>
    sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${start} + (i * ${3600 / DELIVERIES}) + ${offset}, 'unixepoch')`
  const whose = sql`case when i % ${WORKSPACES} = 0 then ${ws} else 'ws_bench_' || (i % ${WORKSPACES}) end`
  const rows = sql`with recursive c(i) as (select 0 union all select i + 1 from c where i < ${DELIVERIES - 1})
    select i from c where ${which === 'measured' ? sql`i % ${WORKSPACES} = 0` : sql`i % ${WORKSPACES} <> 0`}`
  await sql`insert into events (id, workspace_id, connector, subscription_id, connection_id, model, upstream_id, type, refs, data, occurred_at, received_at, matched)
    select 'evt_l_' || i, ${whose}, 'taskboard', 'sub_l', 'con_l', 'm', 'u' || i, 'createCard', '{}', '{}', ${at(0)}, ${at(0)}, 1
    from (${rows})`.execute(db)
  await sql`insert into deliveries (id, workspace_id, agent_id, event_id, trigger_id, target, status, attempts, next_attempt_at, last_status, last_error, tool_run_id, created_at, delivered_at, claimed_until)
    select 'dlv_l_' || i, ${whose}, 'agt_l', 'evt_l_' || i, 'trg_l', '{"type":"webhook"}', 'delivered', 1, null, 200, null, null, ${at(0.01)}, ${at(0.05)}, null
    from (${rows})`.execute(db)
  await sql`insert into delivery_attempts (delivery_id, workspace_id, attempt, at, status, error, duration_ms)
    select 'dlv_l_' || i, ${whose}, 1, ${at(0.05)}, 200, null, 20 from (${rows})`.execute(db)
  await sql`analyze`.execute(db)
}

/** The median time of five reads of every series, the last hour by minute; and what they counted. */
async function lastHour() {
  const ms: number[] = []
  let delivered = 0
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now()
    const res = await fetch(
      `${service.url}/v1/stats?from=${new Date(now - 3_600_000).toISOString()}&step=1m`,
      {
        headers: { authorization: `Bearer ${adminKey}` },
      },
    )
    const body = (await res.json()) as {
      series: Array<{ name: string; lines: Array<{ key: string; total: number | null }> }>
    }
    if (res.status !== 200) throw new Error(JSON.stringify(body))
    ms.push(performance.now() - t0)
    delivered =
      body.series.find((s) => s.name === 'deliveries.outcome')?.lines.find((l) => l.key === 'delivered')
        ?.total ?? 0
  }
  return { ms: round(median(ms), 1), delivered }
}

await store('measured')
const alone = await lastHour()
await store('others')
const among = await lastHour()
await service.close()
const vsAlone = round(among.ms / alone.ms, 2)
report(
  {
    bench: 'stats-live',
    deliveriesInTheHour: DELIVERIES,
    workspaces: WORKSPACES,
    alone: { deliveries: alone.delivered, ms: alone.ms },
    amongOthers: { deliveries: among.delivered, ms: among.ms },
    vsAlone,
  },
  [
    target('vsAlone', vsAlone, '<=', 2),
    // The workspace's own deliveries, counted the same among the others.
    target('amongOthers.sameCount', among.delivered === alone.delivered ? 1 : 0, '>=', 1),
  ],
)
process.exit(0)
