// GET /v1/stats: the series are what the stored records say, whether an hour is read from the
// records or from the roll-up; bad ranges are refused with the limits; a workspace with nothing
// says so.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { deliveries } from '../../src/store/event-log.ts'
import { statHours } from '../../src/store/stat-hours.ts'
import { Workspaces } from '../../src/store/workspaces.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
before(async () => {
  t = await startTestService({ contactdata: true })
  // The roll-up runs when these tests say (its timer would fold hours whenever a minute is up).
  await t.service.engine.stats.close()
})
after(() => t?.close())

const HOUR = 3_600_000
const DAY = 24 * HOUR
const iso = (ms: number) => new Date(ms).toISOString()
const stats = (query: string) => t.api('GET', `/v1/stats?${query}`)
const series = (body: any, name: string) => body.series.find((s: any) => s.name === name)
const line = (body: any, name: string, key: string) =>
  series(body, name).lines.find((l: any) => l.key === key)

/**
 * An event as stored, its delivery and the delivery's attempts: delivered at its first attempt
 * (100 ms after the event), or dead after two.
 */
function stored(ws: string, key: string, at: number, connector: string, outcome: 'delivered' | 'dead') {
  const dead = outcome === 'dead'
  return {
    event: {
      id: `evt_${key}`,
      workspace_id: ws,
      connector,
      subscription_id: 'sub_x',
      connection_id: 'con_x',
      model: 'm',
      upstream_id: `u_${key}`,
      type: 't',
      refs: '{}',
      data: '{}',
      occurred_at: iso(at),
      received_at: iso(at),
      matched: 1,
      owner: '',
    },
    delivery: {
      id: `dlv_${key}`,
      workspace_id: ws,
      agent_id: 'agt_x',
      event_id: `evt_${key}`,
      trigger_id: 'trg_x',
      target: '{"type":"webhook","url":"http://x"}',
      status: outcome,
      attempts: dead ? 2 : 1,
      next_attempt_at: null,
      last_status: dead ? 500 : 200,
      last_error: dead ? 'the agent endpoint answered 500' : null,
      tool_run_id: null,
      created_at: iso(at + 10),
      delivered_at: dead ? null : iso(at + 100),
      claimed_until: null,
    },
    attempts: Array.from({ length: dead ? 2 : 1 }, (_, k) => ({
      delivery_id: `dlv_${key}`,
      workspace_id: ws,
      attempt: k + 1,
      at: iso(at + 100 * (k + 1)),
      status: dead ? 500 : 200,
      error: dead ? 'x' : null,
      duration_ms: 5,
    })),
  }
}

test('a workspace with no records: every series is empty and says so', async () => {
  const res = await stats('')
  assert.equal(res.status, 200, JSON.stringify(res.body))
  // A day by default, in 10-minute buckets (the step is chosen for at most 200 points).
  assert.equal(res.body.step, '10m')
  assert.ok(res.body.times.length >= 144 && res.body.times.length <= 145)
  assert.equal(res.body.series.length, 11)
  for (const s of res.body.series) {
    assert.equal(s.empty, true, s.name)
    assert.match(s.summary, /none from/, s.name)
  }
})

test('ranges of years, unknown steps and a minute step over a month are refused with the limits', async () => {
  const now = Date.now()
  const years = await stats(`from=${iso(now - 3 * 365 * DAY)}&to=${iso(now)}&step=1d`)
  assert.equal(years.status, 400)
  assert.equal(years.body.error.code, 'STATS_RANGE_INVALID')
  assert.match(years.body.error.message, /the longest is 31 days/)
  assert.equal(years.body.error.details.maxRangeDays, 31)
  const millisecond = await stats(`step=1ms`)
  assert.equal(millisecond.status, 400)
  assert.match(millisecond.body.error.message, /"1ms" is not one of 1m, 5m/)
  const fine = await stats(`from=${iso(now - 30 * DAY)}&step=1m`)
  assert.equal(fine.status, 400)
  assert.match(fine.body.error.message, /under an hour \(1m\) covers at most 2 days/)
  assert.match(fine.body.error.hint, /at most 1500 points/)
  const backwards = await stats(`from=${iso(now)}&to=${iso(now - HOUR)}`)
  assert.equal(backwards.status, 400)
  const unknown = await stats('series=events.received,nonsense')
  assert.equal(unknown.status, 400)
  assert.match(unknown.body.error.message, /Unknown series: nonsense/)
})

test('step runs and their upstream requests, per connection, from real runs', async () => {
  const con = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
  })
  assert.equal(con.status, 201)
  for (let i = 0; i < 3; i++) {
    const run = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
      connectionId: con.body.id,
      input: { idList: t.taskboard.demo.listIds[0], name: `card ${i}` },
    })
    assert.equal(run.status, 200)
  }
  const missing = await t.api('POST', '/v1/steps/taskboard.get_card/run', {
    connectionId: con.body.id,
    input: { idCard: 'f'.repeat(24) },
  })
  assert.equal(missing.status, 404)
  await t.api('GET', '/v1/runs?limit=1') // written through
  const res = await stats(
    'from=' + iso(Date.now() - HOUR) + '&step=1m&series=steps.outcome,upstream.requests,upstream.headroom',
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(line(res.body, 'steps.outcome', 'succeeded').total, 3)
  assert.equal(line(res.body, 'steps.outcome', 'failed').total, 1)
  const requests = line(res.body, 'upstream.requests', con.body.id)
  assert.equal(requests.total, 4)
  assert.match(requests.label, /\(taskboard\)/)
  // The task-board's default pacing: 100 requests in 10 s, 600 a minute; 4 requests leave 99.3 %.
  const headroom = line(res.body, 'upstream.headroom', con.body.id)
  assert.ok(headroom.values.some((v: number | null) => v !== null && v < 100 && v > 99))
  assert.match(series(res.body, 'steps.outcome').summary, /4 runs in all; failed 1 .*succeeded 3/)
})

test('a month of stored records: the same numbers read from the records and from the roll-up', async () => {
  const db = t.service.engine.store.db
  const ws = t.service.workspaceId
  const now = Date.now()
  const start = Math.floor((now - 20 * DAY) / DAY) * DAY
  // 3 connectors' events over 10 days, a delivery for each: most delivered, some retried once, a
  // few dead; end-to-end 100 ms for the delivered.
  const events: any[] = []
  const deliveries: any[] = []
  const attempts: any[] = []
  for (let i = 0; i < 240; i++) {
    const r = stored(
      ws,
      `stats_${i}`,
      start + i * HOUR + 60_000,
      ['taskboard', 'codehost', 'contactdata'][i % 3],
      i % 10 === 0 ? 'dead' : 'delivered',
    )
    events.push(r.event)
    deliveries.push(r.delivery)
    attempts.push(...r.attempts)
  }
  // Two deliveries still waiting now.
  for (let i = 0; i < 2; i++)
    deliveries.push({
      ...deliveries[0],
      id: `dlv_waiting_${i}`,
      event_id: `evt_stats_${i + 1}`,
      trigger_id: 'trg_y',
      status: 'pending',
      attempts: 0,
      delivered_at: null,
      created_at: iso(now - 5 * 60_000),
    })
  await db.insertInto('events').values(events).execute()
  await db.insertInto('deliveries').values(deliveries).execute()
  await db.insertInto('delivery_attempts').values(attempts).execute()
  await db
    .insertInto('credit_ledger')
    .values([
      {
        id: 'crd_1',
        workspace_id: ws,
        connection_id: 'con_c',
        connector: 'contactdata',
        agent_id: 'agt_c',
        caller_key_id: 'k',
        step_id: 's',
        run_id: 'r1',
        credits: 7,
        remaining: 93,
        created_at: iso(start + 2 * HOUR),
      },
      {
        id: 'crd_2',
        workspace_id: ws,
        connection_id: 'con_c',
        connector: 'contactdata',
        agent_id: null,
        caller_key_id: 'k',
        step_id: 's',
        run_id: 'r2',
        credits: 5,
        remaining: 88,
        created_at: iso(start + DAY + 2 * HOUR),
      },
    ])
    .execute()

  // Two days read from the records (a range this short is not rolled up first).
  const twoDays = `from=${iso(start + 2 * DAY)}&to=${iso(start + 4 * DAY)}&step=1h&series=events.received,deliveries.outcome,deliveries.latency,credits.by_connection`
  const raw = await stats(twoDays)
  assert.equal(raw.status, 200, JSON.stringify(raw.body))
  assert.equal(line(raw.body, 'events.received', 'taskboard').total, 16)
  assert.equal(await db.selectFrom('stat_rollups').selectAll().executeTakeFirst(), undefined)

  // A month: the hours not rolled up yet are rolled up first.
  const query = `from=${iso(now - 30 * DAY)}&to=${iso(now)}&step=1d&series=events.received,deliveries.outcome,deliveries.latency,deliveries.backlog,credits.by_agent,credits.by_connection`
  const month = await stats(query)
  assert.equal(month.status, 200, JSON.stringify(month.body))
  assert.ok(await db.selectFrom('stat_rollups').selectAll().executeTakeFirst())
  assert.equal(line(month.body, 'events.received', 'taskboard').total, 80)
  assert.equal(line(month.body, 'events.received', 'codehost').total, 80)
  const dayIndex = month.body.times.indexOf(iso(start))
  assert.ok(dayIndex >= 0)
  assert.deepEqual(
    line(month.body, 'events.received', 'taskboard').values.slice(dayIndex, dayIndex + 11),
    [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 0],
  )
  assert.equal(line(month.body, 'deliveries.outcome', 'delivered').total, 216)
  assert.equal(line(month.body, 'deliveries.outcome', 'retrying').total, 24)
  assert.equal(line(month.body, 'deliveries.outcome', 'dead').total, 24)
  // 99 ms lands in the histogram bucket whose middle is 98 ms (buckets 25 % wide).
  const p50 = line(month.body, 'deliveries.latency', 'p50')
  assert.ok(p50.total >= 88 && p50.total <= 110, String(p50.total))
  assert.equal(line(month.body, 'deliveries.backlog', 'waiting').total, 2)
  assert.equal(line(month.body, 'deliveries.backlog', 'waiting').values.at(-1), 2)
  assert.equal(line(month.body, 'deliveries.backlog', 'waiting').values[dayIndex + 12], 0)
  assert.equal(line(month.body, 'credits.by_connection', 'con_c').total, 12)
  assert.equal(line(month.body, 'credits.by_agent', 'agt_c').total, 7)
  assert.equal(line(month.body, 'credits.by_agent', '').label, 'workspace keys')

  // The two days again, now from the roll-up: the same answer.
  const rolled = await stats(twoDays)
  assert.deepEqual(rolled.body, raw.body)
  const rows = await db
    .selectFrom('stat_hours')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst()
  assert.ok(Number(rows?.n) > 0)
})

test('patchbay stats prints the same numbers, each series in words with a sparkline a line', async () => {
  const { spawn } = await import('node:child_process')
  const root = new URL('../..', import.meta.url).pathname
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATCHBAY_URL: t.url,
        PATCHBAY_KEY: t.adminKey,
        NO_COLOR: '1',
      }
      delete env.NODE_TEST_CONTEXT
      const child = spawn(process.execPath, ['src/cli/main.ts', ...args], { cwd: root, env })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (c) => (stdout += c))
      child.stderr.on('data', (c) => (stderr += c))
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })
  const api = await stats(`series=steps.outcome&from=${iso(Date.now() - 3_600_000)}`)
  const text = await run(['stats', '--series', 'steps.outcome', '--since', '1h'])
  assert.equal(text.code, 0, text.stderr)
  assert.ok(text.stdout.includes(series(api.body, 'steps.outcome').summary.split(',')[0]))
  const succeeded = line(api.body, 'steps.outcome', 'succeeded').total
  assert.match(text.stdout, new RegExp(`succeeded\\s+[▁-█ ]+\\s+${succeeded}\\n`))
  const json = await run(['stats', '--series', 'steps.outcome,tools.outcome', '--since', '1h', '--json'])
  assert.equal(json.code, 0, json.stderr)
  assert.deepEqual(
    JSON.parse(json.stdout).series.map((s: any) => [s.name, s.lines.map((l: any) => l.total)]),
    [
      ['steps.outcome', [1, succeeded]],
      ['tools.outcome', [0, 0]],
    ],
  )
  const refused = await run(['stats', '--since', '2y'])
  assert.equal(refused.code, 2)
  const years = await run(['stats', '--since', '400d'])
  assert.notEqual(years.code, 0)
  assert.match(years.stderr, /STATS_RANGE_INVALID|the longest is 31 days/)
})

test('one roll-up pass folds every workspace’s hours, each with its own attempts', async () => {
  const db = t.service.engine.store.db
  const workspaces = new Workspaces(db, t.service.engine.store.kind)
  const [b, c] = [await workspaces.insert('b'), await workspaces.insert('c')]
  // The same two hours of both, three days ago: a pass reads those hours' attempts once for both.
  const start = Math.floor((Date.now() - 3 * DAY) / HOUR) * HOUR
  const events: any[] = []
  const deliveries: any[] = []
  const attempts: any[] = []
  const make = (ws: string, n: number, dead: number) => {
    for (let i = 0; i < n; i++) {
      const r = stored(
        ws,
        `pass_${ws}_${i}`,
        start + (i % 2) * HOUR + 60_000 + i,
        'taskboard',
        i < dead ? 'dead' : 'delivered',
      )
      events.push(r.event)
      deliveries.push(r.delivery)
      attempts.push(...r.attempts)
    }
  }
  make(b.id, 6, 1)
  make(c.id, 4, 0)
  await db.insertInto('events').values(events).execute()
  await db.insertInto('deliveries').values(deliveries).execute()
  await db.insertInto('delivery_attempts').values(attempts).execute()

  assert.ok((await t.service.engine.stats.rollUp()) > 0)
  const folded = async (ws: string) => {
    const rows = await statHours.read(
      db,
      ws,
      ['attempts', 'settled', 'latency'],
      iso(start).slice(0, 13),
      iso(start + 2 * HOUR).slice(0, 13),
    )
    const sum = (series: string, key = '') =>
      rows.filter((r) => r.series === series && r.key === key).reduce((n, r) => n + r.n, 0)
    return {
      delivered: sum('attempts', 'delivered'),
      retrying: sum('attempts', 'retrying'),
      dead: sum('attempts', 'dead'),
      settled: sum('settled'),
      timed: sum('latency'),
    }
  }
  assert.deepEqual(await folded(b.id), { delivered: 5, retrying: 1, dead: 1, settled: 6, timed: 5 })
  assert.deepEqual(await folded(c.id), { delivered: 4, retrying: 0, dead: 0, settled: 4, timed: 4 })
})

test('the hours not rolled up yet count the workspace’s own attempts, listed or still waiting to be', async () => {
  const db = t.service.engine.store.db
  const mine = t.service.workspaceId
  const other = (await new Workspaces(db, t.service.engine.store.kind).insert('other')).id
  // Minutes ago, in the hour read from the records: 3 of this workspace's (one dead after two
  // attempts) and 5 of another's, among them the same minutes.
  const at = Date.now() - 5 * 60_000
  const made = [
    ...[0, 1, 2].map((i) => stored(mine, `live_${i}`, at + i, 'taskboard', i === 0 ? 'dead' : 'delivered')),
    ...[0, 1, 2, 3, 4].map((i) => stored(other, `live_other_${i}`, at + i, 'taskboard', 'delivered')),
  ]
  await db
    .insertInto('events')
    .values(made.map((r) => r.event))
    .execute()
  await db
    .insertInto('deliveries')
    .values(made.map((r) => r.delivery))
    .execute()
  // Written as the deliverer writes them: on SQLite unlisted until the store lists them.
  const attempts = made.flatMap((r) => r.attempts)
  await t.service.engine.store.listing?.stop()
  await deliveries.addAttempts(db, attempts.slice(0, 3))
  await t.service.engine.store.listing?.listNow()
  await deliveries.addAttempts(db, attempts.slice(3))

  const res = await stats(`from=${iso(at - HOUR / 2)}&step=1m&series=deliveries.outcome,deliveries.latency`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(line(res.body, 'deliveries.outcome', 'delivered').total, 2)
  assert.equal(line(res.body, 'deliveries.outcome', 'retrying').total, 1)
  assert.equal(line(res.body, 'deliveries.outcome', 'dead').total, 1)
  const p50 = line(res.body, 'deliveries.latency', 'p50')
  assert.ok(p50.total >= 88 && p50.total <= 110, String(p50.total))
})
