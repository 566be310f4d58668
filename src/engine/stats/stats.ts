// The numbers behind the overview charts, GET /v1/stats and `patchbay stats`: time series computed
// from the records Patchbay stores (events, delivery attempts, step and tool runs, the credit
// ledger), never from counters one process keeps.
//
// A range is cut into buckets of `step` (aligned to the epoch, so a day is a UTC day). Hours that
// are over (ROLLUP_MARGIN_MS past their end, so late writes of an hour are in) are folded once into
// stat_hours by a periodic roll-up that one instance at a time does (a lease); a query reads those
// rows for the hours before the workspace's roll-up mark and the records themselves after it (and
// for steps under an hour, whose ranges are at most FINE_RANGE_MS). So a month is ~720 rows a
// series and key, whatever the traffic.
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { Clock } from '../../kit/clock.ts'
import type { ConnectorDefinition } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { Budget } from '../../kit/pacer.ts'
import { ofWorkspace } from '../../store/event-log.ts'
import { Leases } from '../../store/leases.ts'
import type { Database } from '../../store/schema.ts'
import { statHours } from '../../store/stat-hours.ts'

export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

/** The steps a range may be cut into, by name. */
export const STEPS: Record<string, number> = {
  '1m': MINUTE,
  '5m': 5 * MINUTE,
  '10m': 10 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1h': HOUR,
  '2h': 2 * HOUR,
  '3h': 3 * HOUR,
  '6h': 6 * HOUR,
  '12h': 12 * HOUR,
  '1d': DAY,
}
export const LIMITS = {
  /** The longest range. */
  maxRangeMs: 31 * DAY,
  /** The most buckets one series has. */
  maxPoints: 1500,
  /** The longest range of a step under an hour (read from the records, not the roll-up). */
  fineRangeMs: 2 * DAY,
} as const

/** Time after an hour's end before it is rolled up (an attempt or run is written when it ends). */
const ROLLUP_MARGIN_MS = 10 * MINUTE
/** How far before a window a delivery made in it may stand in seq order (made, then committed later). */
const CREATED_MARGIN_MS = 10 * MINUTE
/** The hours one read and transaction of the roll-up folds (short, so other work interleaves on SQLite). */
const ROLLUP_CHUNK_HOURS = 6
/** More hours than this to read from the records in one query: they are rolled up first. */
const RAW_HOURS_MAX = 48
/** How long one pass of the roll-up goes on before leaving the rest to the next (a minute later). */
const ROLLUP_PASS_MS = 10_000

export const SERIES = {
  'events.received': { title: 'Events received', unit: 'events', by: 'connector' },
  'deliveries.outcome': { title: 'Delivery attempts by outcome', unit: 'attempts', by: 'outcome' },
  'deliveries.latency': {
    title: 'End-to-end delivery latency (event received → delivered)',
    unit: 'ms',
    by: 'percentile',
  },
  'deliveries.backlog': { title: 'Delivery backlog (deliveries waiting)', unit: 'deliveries', by: 'total' },
  'steps.outcome': { title: 'Step runs by outcome', unit: 'runs', by: 'outcome' },
  'tools.outcome': { title: 'Tool runs by outcome', unit: 'runs', by: 'outcome' },
  'upstream.requests': { title: 'Upstream requests by connection', unit: 'requests', by: 'connection' },
  'upstream.rate_limited': {
    title: 'Upstream 429 answers by connection',
    unit: 'answers',
    by: 'connection',
  },
  'upstream.headroom': {
    title: 'Rate budget headroom by connection (share of the pacing budget left unused)',
    unit: '%',
    by: 'connection',
  },
  'credits.by_connection': { title: 'Contact-data credits by connection', unit: 'credits', by: 'connection' },
  'credits.by_agent': { title: 'Contact-data credits by agent', unit: 'credits', by: 'agent' },
} as const
export type SeriesName = keyof typeof SERIES
export const SERIES_NAMES = Object.keys(SERIES) as SeriesName[]

export interface StatsQuery {
  series: SeriesName[]
  /** ISO times; `to` defaults to now, `from` to a day before `to`. */
  from?: string
  to?: string
  /** A name of STEPS; chosen for about 60–200 points when left out. */
  step?: string
}

export interface StatsLine {
  key: string
  label: string
  /** One value a bucket; null where the series has none (no delivery in a bucket has no latency). */
  values: Array<number | null>
  /** The sum over the range (counts), the largest value (latency), the last value (backlog, headroom). */
  total: number | null
  /** A credit budget of the agent, where one is set. */
  budget?: { limit: number; period: 'total' | 'month' | 'day' }
}

export interface StatsSeries {
  name: SeriesName
  title: string
  unit: string
  by: string
  /** True when no record fell in the range. */
  empty: boolean
  /** The series in a sentence or two: what the chart shows, for screen readers and the CLI. */
  summary: string
  lines: StatsLine[]
}

export interface StatsAnswer {
  from: string
  to: string
  step: string
  stepMs: number
  /** Each bucket's start. */
  times: string[]
  series: StatsSeries[]
}

/** Sources: what one query of the records gives (and what the roll-up stores). */
type Source =
  | 'events'
  | 'attempts'
  | 'latency'
  | 'created'
  | 'settled'
  | 'steps'
  | 'tools'
  | 'upstream'
  | 'credits_connection'
  | 'credits_agent'
const SOURCES: Source[] = [
  'events',
  'attempts',
  'latency',
  'created',
  'settled',
  'steps',
  'tools',
  'upstream',
  'credits_connection',
  'credits_agent',
]

const NEEDS: Record<SeriesName, Source[]> = {
  'events.received': ['events'],
  'deliveries.outcome': ['attempts'],
  'deliveries.latency': ['latency'],
  'deliveries.backlog': ['created', 'settled'],
  'steps.outcome': ['steps'],
  'tools.outcome': ['tools'],
  'upstream.requests': ['upstream'],
  'upstream.rate_limited': ['upstream'],
  'upstream.headroom': ['upstream'],
  'credits.by_connection': ['credits_connection'],
  'credits.by_agent': ['credits_agent'],
}

/** One row of a source: its time prefix (`YYYY-MM-DDTHH` or `YYYY-MM-DDTHH:MM`), key and measures. */
interface SourceRow {
  t: string
  key: string
  n: number
  v: number
  hist?: Histogram
}

/**
 * A roll-up pass's reads of the attempt-based sources for every workspace at once, by source and
 * window: each workspace's rows, by workspace id.
 */
type SharedReads = Map<string, Promise<Map<string, SourceRow[]>>>

// ── Latency histograms: log-spaced buckets (each 25 % wider than the one before) ─────────────
type Histogram = Map<number, number>
type Folded = Map<Source, Map<string, { n: number[]; v: number[]; hist: Histogram[] }>>
interface Labels {
  connection: Map<string, { id: string; connector: string; account_name: string }>
  agent: Map<string, string>
  budget: Map<string, { limit: number; period: 'total' | 'month' | 'day' }>
  limit: Map<string, Budget>
}
const GROWTH = 1.25
const bucketOf = (ms: number) => (ms <= 1 ? 0 : Math.min(120, Math.ceil(Math.log(ms) / Math.log(GROWTH))))
function addHist(into: Histogram, from: Histogram) {
  for (const [b, c] of from) into.set(b, (into.get(b) ?? 0) + c)
}
/** The value at quantile q: the geometric middle of the bucket the rank falls in. */
function quantile(h: Histogram, q: number): number | null {
  let total = 0
  for (const c of h.values()) total += c
  if (total === 0) return null
  const rank = Math.ceil(q * total)
  let seen = 0
  for (const b of [...h.keys()].sort((x, y) => x - y)) {
    seen += h.get(b)!
    if (seen >= rank) return b === 0 ? 1 : Math.round(GROWTH ** (b - 0.5))
  }
  return null
}

const prefixMs = (t: string) => Date.parse(t.length === 13 ? `${t}:00:00.000Z` : `${t}:00.000Z`)
const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13)

export interface StatsOptions {
  db: Kysely<Database>
  clock: Clock
  log: { warn(obj: object, msg: string): void }
  /** A connector by id (the registry's), for headroom against its pacing. */
  connector(id: string): ConnectorDefinition | undefined
  /** The pacing a connector's ready-made steps get when a connection sets none. */
  defaultPacing(connector: ConnectorDefinition): Budget | undefined
  /** Writes the step run records this instance still holds (they are written in batches). */
  flushRuns(): Promise<void>
  /** How often the roll-up runs (default a minute); 0 turns the timer off (tests call rollUp). */
  rollupEveryMs?: number
}

export class Stats {
  #o: StatsOptions
  #leases: Leases
  #holder = `stats-${process.pid}-${Math.random().toString(36).slice(2)}`
  #timer: NodeJS.Timeout | null = null
  #rolling: Promise<unknown> | null = null

  constructor(opts: StatsOptions) {
    this.#o = opts
    this.#leases = new Leases(opts.db)
    const every = opts.rollupEveryMs ?? MINUTE
    if (every > 0) {
      const tick = () => {
        this.#rolling = this.rollUp()
          .catch((err) => this.#o.log.warn({ err }, 'rolling up the stats failed'))
          .finally(() => {
            this.#rolling = null
            if (this.#timer) this.#timer = setTimeout(tick, every).unref()
          })
      }
      this.#timer = setTimeout(tick, Math.min(every, 5_000)).unref()
    }
  }

  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    await this.#rolling
  }

  /** Checks a query's range and step and makes them exact (aligned buckets); a clear 400 otherwise. */
  plan(q: Pick<StatsQuery, 'from' | 'to' | 'step'>): {
    fromMs: number
    toMs: number
    step: string
    stepMs: number
  } {
    const now = this.#o.clock.now()
    const parse = (s: string | undefined, name: string) => {
      if (s === undefined) return undefined
      const ms = Date.parse(s)
      if (Number.isNaN(ms)) throw rangeError(`${name} "${s}" is not an ISO-8601 time.`)
      return ms
    }
    const to = parse(q.to, 'to') ?? now
    const from = parse(q.from, 'from') ?? to - DAY
    if (from >= to) throw rangeError(`from (${iso(from)}) must be before to (${iso(to)}).`)
    const range = to - from
    if (range > LIMITS.maxRangeMs)
      throw rangeError(`The range is ${describeMs(range)}; the longest is ${describeMs(LIMITS.maxRangeMs)}.`)
    let step = q.step
    if (step === undefined) {
      step = Object.keys(STEPS).find(
        (s) => range / STEPS[s] <= 200 && (STEPS[s] >= HOUR || range <= LIMITS.fineRangeMs),
      )
      step ??= '1d'
    }
    const stepMs = STEPS[step]
    if (stepMs === undefined)
      throw rangeError(`The step "${step}" is not one of ${Object.keys(STEPS).join(', ')}.`)
    if (stepMs < HOUR && range > LIMITS.fineRangeMs)
      throw rangeError(
        `A step under an hour (${step}) covers at most ${describeMs(LIMITS.fineRangeMs)}; the range is ${describeMs(range)}.`,
      )
    const fromMs = Math.floor(from / stepMs) * stepMs
    const toMs = Math.ceil(to / stepMs) * stepMs
    const points = (toMs - fromMs) / stepMs
    if (points > LIMITS.maxPoints)
      throw rangeError(
        `${describeMs(range)} in steps of ${step} is ${points} points; the most is ${LIMITS.maxPoints}.`,
      )
    return { fromMs, toMs, step, stepMs }
  }

  async query(workspaceId: string, q: StatsQuery): Promise<StatsAnswer> {
    const { fromMs, toMs, step, stepMs } = this.plan(q)
    const names = q.series.length > 0 ? [...new Set(q.series)] : SERIES_NAMES
    const sources = new Set(names.flatMap((n) => NEEDS[n]))
    if (sources.has('steps') || sources.has('upstream')) await this.#o.flushRuns()
    const now = this.#o.clock.now()
    // The backlog is counted back from the deliveries waiting now: it needs the buckets up to now.
    const endMs = sources.has('created') ? Math.max(toMs, Math.ceil(now / stepMs) * stepMs) : toMs
    const count = (toMs - fromMs) / stepMs
    const folded = await this.#fold(workspaceId, [...sources], fromMs, endMs, stepMs)
    const times = Array.from({ length: count }, (_, i) => iso(fromMs + i * stepMs))
    const labels = await this.#labels(workspaceId)
    const out: StatsSeries[] = []
    for (const name of names) {
      const lines = await this.#lines(
        workspaceId,
        name,
        folded,
        count,
        stepMs,
        Math.floor((now - fromMs) / stepMs),
        labels,
      )
      // Empty: no record of the series' sources fell in the range (a backlog of zeros is not).
      const empty = NEEDS[name].every((source) =>
        [...(folded.get(source)?.values() ?? [])].every((l) => {
          for (let i = 0; i < count; i++) if (l.n[i] !== 0 || l.v[i] !== 0 || l.hist[i]) return false
          return true
        }),
      )
      const def = SERIES[name]
      out.push({
        name,
        title: def.title,
        unit: def.unit,
        by: def.by,
        empty,
        summary: summarize(name, lines, empty, times, stepMs),
        lines,
      })
    }
    return { from: iso(fromMs), to: iso(toMs), step, stepMs, times, series: out }
  }

  /** Every source's rows in [from, end), folded into buckets of `stepMs`: source → key → bucket values. */
  async #fold(workspaceId: string, sources: Source[], fromMs: number, endMs: number, stepMs: number) {
    const count = Math.ceil((endMs - fromMs) / stepMs)
    const folded: Folded = new Map()
    const put = (source: Source, r: SourceRow) => {
      const at = prefixMs(r.t)
      const i = Math.floor((at - fromMs) / stepMs)
      if (i < 0 || i >= count) return
      let keys = folded.get(source)
      if (!keys) {
        keys = new Map()
        folded.set(source, keys)
      }
      let line = keys.get(r.key)
      if (!line) {
        line = { n: new Array(count).fill(0), v: new Array(count).fill(0), hist: [] }
        keys.set(r.key, line)
      }
      line.n[i] += r.n
      line.v[i] += r.v
      if (r.hist) {
        line.hist[i] ??= new Map()
        addHist(line.hist[i], r.hist)
      }
    }
    let rawFrom = fromMs
    if (stepMs >= HOUR) {
      let mark = await this.#mark(workspaceId)
      // Many hours not rolled up yet (a first start over old records, a roll-up that fell
      // behind): they are rolled up now, once, instead of read from the records on every query.
      const behind =
        (Math.min(endMs, this.#cutoff()) - Math.max(fromMs, mark ? prefixMs(mark) : fromMs)) / HOUR
      if (behind > RAW_HOURS_MAX && (await this.#leases.take('stats-rollup', this.#holder, 5 * MINUTE))) {
        await this.#rollUpWorkspace(workspaceId, Number.POSITIVE_INFINITY)
        mark = await this.#mark(workspaceId)
      }
      const rolledUntil = mark ? Math.min(prefixMs(mark), endMs) : fromMs
      if (rolledUntil > fromMs) {
        const rows = await statHours.read(
          this.#o.db,
          workspaceId,
          sources,
          hourOf(fromMs),
          hourOf(rolledUntil),
        )
        for (const r of rows) put(r.series as Source, { t: r.hour, key: r.key, n: r.n, v: r.v, hist: r.hist })
        rawFrom = rolledUntil
      }
    }
    if (rawFrom < endMs) {
      const width = stepMs >= HOUR ? 13 : 16
      await Promise.all(
        sources.map(async (s) => {
          for (const r of await this.#read(s, workspaceId, iso(rawFrom), iso(endMs), width)) put(s, r)
        }),
      )
    }
    return folded
  }

  /**
   * One source's rows from the records, grouped by hour (width 13) or minute (16). With `shared`
   * (a roll-up pass's), the sources read from the attempts are read for every workspace at once
   * and kept for the pass: see #attempts.
   */
  async #read(
    source: Source,
    ws: string,
    from: string,
    to: string,
    width: 13 | 16,
    shared?: SharedReads,
  ): Promise<SourceRow[]> {
    if (source === 'attempts' || source === 'settled' || source === 'latency') {
      if (!shared) return (await this.#attempts(source, ws, from, to, width)).get(ws) ?? []
      const key = `${source}|${from}|${to}|${width}`
      let all = shared.get(key)
      if (!all) {
        all = this.#attempts(source, null, from, to, width)
        shared.set(key, all)
      }
      return (await all).get(ws) ?? []
    }
    const db = this.#o.db
    const w = sql.lit(width)
    const rows = (q: ReturnType<typeof sql>) =>
      q.execute(db).then((r) =>
        (r.rows as Array<{ t: string; key: string | null; n: unknown; v?: unknown }>).map((x) => ({
          t: x.t,
          key: x.key ?? '',
          n: Number(x.n),
          v: Number(x.v ?? 0),
        })),
      )
    switch (source) {
      case 'events':
        return rows(sql`select substr(received_at, 1, ${w}) as t, connector as key, count(*) as n
          from ${ofWorkspace(db, 'events', ws, ['received_at', 'connector'])} where received_at >= ${from} and received_at < ${to}
          group by 1, 2`)
      case 'created':
        // Deliveries are read by workspace in seq order (migration 0017); the window starts at the
        // first delivery made since `from` less a margin, found in the time-ordered index. Seqs
        // follow creation times but for the moment between a row's making and its commit.
        return rows(sql`select substr(created_at, 1, ${w}) as t, '' as key, count(*) as n
          from ${ofWorkspace(db, 'deliveries', ws, ['seq', 'created_at'])}
            where seq >= (select seq from deliveries where created_at >= ${iso(Date.parse(from) - CREATED_MARGIN_MS)}
              order by created_at limit 1)
            and created_at >= ${from} and created_at < ${to}
          group by 1`)
      case 'steps':
        return rows(sql`select substr(created_at, 1, ${w}) as t, status as key, count(*) as n
          from step_runs where workspace_id = ${ws} and created_at >= ${from} and created_at < ${to}
          group by 1, 2`)
      case 'tools':
        return rows(sql`select substr(finished_at, 1, ${w}) as t, status as key, count(*) as n
          from tool_runs where workspace_id = ${ws} and finished_at >= ${from} and finished_at < ${to}
          group by 1, 2`)
      case 'upstream':
        return rows(sql`select substr(created_at, 1, ${w}) as t, connection_id as key,
            sum(attempts) as n, sum(rate_limited) as v
          from step_runs where workspace_id = ${ws} and created_at >= ${from} and created_at < ${to}
            and connection_id is not null
          group by 1, 2`)
      case 'credits_connection':
        return rows(sql`select substr(created_at, 1, ${w}) as t, connection_id as key, sum(credits) as n
          from credit_ledger where workspace_id = ${ws} and created_at >= ${from} and created_at < ${to}
          group by 1, 2`)
      case 'credits_agent':
        return rows(sql`select substr(created_at, 1, ${w}) as t, agent_id as key, sum(credits) as n
          from credit_ledger where workspace_id = ${ws} and created_at >= ${from} and created_at < ${to}
          group by 1, 2`)
    }
  }

  /**
   * The sources read from the attempts, for one workspace (its attempts by the workspace index,
   * migration 0020) or (`ws` null) for every workspace at once, by workspace (all attempts of the
   * window by time, their deliveries saying whose). A roll-up pass folds every workspace, so it
   * reads each window once that way instead of once for each workspace.
   */
  async #attempts(
    source: 'attempts' | 'settled' | 'latency',
    ws: string | null,
    from: string,
    to: string,
    width: 13 | 16,
  ): Promise<Map<string, SourceRow[]>> {
    const db = this.#o.db
    const w = sql.lit(width)
    // `a`: the attempts of the window, every workspace's (by time) or the workspace's own.
    const attempts =
      ws === null
        ? sql`delivery_attempts as a`
        : ofWorkspace(db, 'delivery_attempts', ws, ['delivery_id', 'attempt', 'at', 'error'], 'a')
    const out = new Map<string, SourceRow[]>()
    const add = (workspaceId: string, row: SourceRow) => {
      const list = out.get(workspaceId)
      if (list) list.push(row)
      else out.set(workspaceId, [row])
    }
    if (source === 'latency') {
      const r = await sql<{ ws: string; t: string; received_at: string; at: string }>`
        select d.workspace_id as ws, substr(a.at, 1, ${w}) as t, e.received_at, a.at
          from ${attempts} join deliveries d on d.id = a.delivery_id join events e on e.id = d.event_id
          where a.at >= ${from} and a.at < ${to} and a.error is null`.execute(db)
      const hists = new Map<string, Map<string, Histogram>>()
      for (const x of r.rows) {
        let byT = hists.get(x.ws)
        if (!byT) {
          byT = new Map()
          hists.set(x.ws, byT)
        }
        let h = byT.get(x.t)
        if (!h) {
          h = new Map()
          byT.set(x.t, h)
        }
        const b = bucketOf(Math.max(0, Date.parse(x.at) - Date.parse(x.received_at)))
        h.set(b, (h.get(b) ?? 0) + 1)
      }
      for (const [workspaceId, byT] of hists)
        for (const [t, hist] of byT) {
          let n = 0
          for (const c of hist.values()) n += c
          add(workspaceId, { t, key: '', n, v: 0, hist })
        }
      return out
    }
    const r =
      source === 'attempts'
        ? // An attempt is delivered when it had no error; dead (or failed, for a tool) when it was
          // the delivery's last and the delivery gave up; retrying otherwise.
          await sql<{ ws: string; t: string; key: string; n: unknown }>`
            select d.workspace_id as ws, substr(a.at, 1, ${w}) as t,
              case when a.error is null then 'delivered'
                   when d.status in ('dead', 'failed') and a.attempt = d.attempts then d.status
                   else 'retrying' end as key,
              count(*) as n
            from ${attempts} join deliveries d on d.id = a.delivery_id
            where a.at >= ${from} and a.at < ${to}
            group by 1, 2, 3`.execute(db)
        : // A delivery settles at its last attempt, when that ended it (a replay's earlier ones do not).
          await sql<{ ws: string; t: string; key: string; n: unknown }>`
            select d.workspace_id as ws, substr(a.at, 1, ${w}) as t, '' as key, count(*) as n
            from ${attempts} join deliveries d on d.id = a.delivery_id
            where a.at >= ${from} and a.at < ${to}
              and a.attempt = d.attempts and d.status <> 'pending'
            group by 1, 2`.execute(db)
    for (const x of r.rows) add(x.ws, { t: x.t, key: x.key ?? '', n: Number(x.n), v: 0 })
    return out
  }

  async #mark(workspaceId: string): Promise<string | null> {
    const row = await this.#o.db
      .selectFrom('stat_rollups')
      .select('rolled_until')
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst()
    return row?.rolled_until ?? null
  }

  /**
   * Folds the hours that are over into stat_hours, for every workspace, ROLLUP_CHUNK_HOURS a
   * transaction, for up to ROLLUP_PASS_MS; one instance at a time (a lease). Returns the hours folded.
   */
  async rollUp(): Promise<number> {
    if (!(await this.#leases.take('stats-rollup', this.#holder, 5 * MINUTE))) return 0
    let folded = 0
    const deadline = performance.now() + ROLLUP_PASS_MS
    // Workspaces' marks move together (each pass folds every workspace up to the same hour), so
    // the pass reads each window of attempts once for all of them.
    const shared: SharedReads = new Map()
    // Every workspace with its mark, in one read (not a read of its own for each, every minute).
    const marked = await this.#o.db
      .selectFrom('workspaces')
      .leftJoin('stat_rollups', 'stat_rollups.workspace_id', 'workspaces.id')
      .select(['workspaces.id as id', 'stat_rollups.rolled_until as mark'])
      .execute()
    for (const { id, mark } of marked) folded += await this.#rollUpWorkspace(id, deadline, shared, mark)
    return folded
  }

  /**
   * Folds a workspace's hours that are over, ROLLUP_CHUNK_HOURS a transaction, until `deadline`.
   * `known`: its mark as the pass read it (null: none yet), else it is read here.
   */
  async #rollUpWorkspace(
    id: string,
    deadline: number,
    shared?: SharedReads,
    known?: string | null,
  ): Promise<number> {
    const cutoff = this.#cutoff()
    let mark = known !== undefined ? known : await this.#mark(id)
    let start = mark ? prefixMs(mark) : await this.#firstHour(id, cutoff)
    if (start >= cutoff && !mark) await this.#setMark(id, hourOf(cutoff), false)
    let folded = 0
    while (start < cutoff && performance.now() < deadline) {
      const end = Math.min(cutoff, start + ROLLUP_CHUNK_HOURS * HOUR)
      await this.#foldHours(id, start, end, mark !== null, shared)
      folded += (end - start) / HOUR
      mark = hourOf(end)
      start = end
    }
    return folded
  }

  /** The end of the last hour that may be rolled up. */
  #cutoff(): number {
    return Math.floor((this.#o.clock.now() - ROLLUP_MARGIN_MS) / HOUR) * HOUR
  }

  async #foldHours(
    id: string,
    start: number,
    end: number,
    marked: boolean,
    shared?: SharedReads,
  ): Promise<void> {
    const rows = await Promise.all(
      SOURCES.map(async (s) => ({ s, rows: await this.#read(s, id, iso(start), iso(end), 13, shared) })),
    )
    await this.#o.db.transaction().execute(async (trx) => {
      await statHours.replace(
        trx,
        id,
        hourOf(start),
        hourOf(end),
        rows.flatMap(({ s, rows }) =>
          rows.map((r) => ({ series: s, hour: r.t, key: r.key, n: r.n, v: r.v, hist: r.hist })),
        ),
      )
      await this.#setMark(id, hourOf(end), marked, trx)
    })
  }

  async #setMark(workspaceId: string, hour: string, exists: boolean, db: Kysely<Database> = this.#o.db) {
    if (exists)
      await db
        .updateTable('stat_rollups')
        .set({ rolled_until: hour })
        .where('workspace_id', '=', workspaceId)
        .execute()
    else
      await db
        .insertInto('stat_rollups')
        .values({ workspace_id: workspaceId, rolled_until: hour })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ rolled_until: hour }))
        .execute()
  }

  /** The hour of a workspace's oldest record (or `fallback` when it has none). */
  async #firstHour(ws: string, fallback: number): Promise<number> {
    const r = await sql<{ t: string | null }>`select min(t) as t from (
        select min(received_at) as t from ${ofWorkspace(this.#o.db, 'events', ws, ['received_at'])}
        union all select created_at from (select created_at from ${ofWorkspace(this.#o.db, 'deliveries', ws, ['seq', 'created_at'])} order by seq limit 1) as first_delivery
        union all select min(created_at) from step_runs where workspace_id = ${ws}
        union all select min(finished_at) from tool_runs where workspace_id = ${ws}
        union all select min(created_at) from credit_ledger where workspace_id = ${ws}) as firsts`.execute(
      this.#o.db,
    )
    const t = r.rows[0]?.t
    return t ? Math.floor(Date.parse(t) / HOUR) * HOUR : fallback
  }

  async #labels(ws: string): Promise<Labels> {
    const db = this.#o.db
    const [connections, agents, budgets, limits] = await Promise.all([
      db
        .selectFrom('connections')
        .select(['id', 'connector', 'account_name'])
        .where('workspace_id', '=', ws)
        .execute(),
      db.selectFrom('agents').select(['id', 'name']).where('workspace_id', '=', ws).execute(),
      db
        .selectFrom('credit_budgets')
        .select(['agent_id', 'credit_limit', 'period'])
        .where('workspace_id', '=', ws)
        .execute(),
      db
        .selectFrom('connection_rate_limits')
        .select(['connection_id', 'requests', 'per_ms'])
        .where('workspace_id', '=', ws)
        .execute(),
    ])
    return {
      connection: new Map(connections.map((c) => [c.id, c])),
      agent: new Map(agents.map((a) => [a.id, a.name])),
      budget: new Map(budgets.map((b) => [b.agent_id, { limit: Number(b.credit_limit), period: b.period }])),
      limit: new Map(
        limits.map((l) => [l.connection_id, { points: Number(l.requests), durationMs: Number(l.per_ms) }]),
      ),
    }
  }

  async #lines(
    ws: string,
    name: SeriesName,
    folded: Folded,
    count: number,
    stepMs: number,
    nowIndex: number,
    labels: Labels,
  ): Promise<StatsLine[]> {
    const keysOf = (s: Source) => [...(folded.get(s)?.entries() ?? [])].sort(([a], [b]) => a.localeCompare(b))
    const sum = (values: Array<number | null>) => values.reduce<number>((a, v) => a + (v ?? 0), 0)
    const counts = (
      s: Source,
      label: (key: string) => string,
      measure: 'n' | 'v' = 'n',
      fixed: string[] = [],
    ) => {
      const present = new Map(keysOf(s))
      for (const k of fixed)
        if (!present.has(k))
          present.set(k, { n: new Array(count).fill(0), v: new Array(count).fill(0), hist: [] })
      return [...present].map(([key, line]) => {
        const values = line[measure].slice(0, count)
        return { key, label: label(key), values, total: sum(values) }
      })
    }
    const connectionLabel = (id: string) => {
      const c = labels.connection.get(id)
      return c ? `${c.account_name} (${c.connector})` : id
    }
    switch (name) {
      case 'events.received':
        return counts('events', (k) => k)
      case 'deliveries.outcome':
        return counts('attempts', (k) => k, 'n', ['delivered', 'retrying', 'dead'])
      case 'steps.outcome':
        return counts('steps', (k) => k, 'n', ['succeeded', 'failed'])
      case 'tools.outcome':
        return counts('tools', (k) => k, 'n', ['succeeded', 'failed'])
      case 'upstream.requests':
        return counts('upstream', connectionLabel)
      case 'upstream.rate_limited':
        return counts('upstream', connectionLabel, 'v')
      case 'credits.by_connection':
        return counts('credits_connection', connectionLabel)
      case 'credits.by_agent':
        return counts('credits_agent', (k) => (k ? (labels.agent.get(k) ?? k) : 'workspace keys')).map(
          (l) => {
            const budget = labels.budget.get(l.key)
            return budget ? { ...l, budget } : l
          },
        )
      case 'deliveries.latency': {
        const hist = folded.get('latency')?.get('')?.hist ?? []
        return (['p50', 'p95', 'p99'] as const).map((p) => {
          const q = Number(p.slice(1)) / 100
          const values = Array.from({ length: count }, (_, i) => (hist[i] ? quantile(hist[i], q) : null))
          const all = new Map<number, number>()
          for (const h of hist) if (h) addHist(all, h)
          return { key: p, label: p, values, total: quantile(all, q) }
        })
      }
      case 'deliveries.backlog': {
        // Waiting at the end of a bucket = waiting now − (made since) + (settled since).
        const made = folded.get('created')?.get('')?.n ?? []
        const settled = folded.get('settled')?.get('')?.n ?? []
        const settledAt = (i: number) => settled[i] ?? 0
        const waiting = Number(
          (
            await this.#o.db
              .selectFrom(ofWorkspace(this.#o.db, 'deliveries', ws, ['status']))
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('status', '=', 'pending')
              .executeTakeFirst()
          )?.n ?? 0,
        )
        const values: Array<number | null> = new Array(count).fill(null)
        let level = waiting
        for (let i = Math.max(made.length, count) - 1; i >= 0; i--) {
          if (i > nowIndex) continue
          if (i < count) values[i] = Math.max(0, level)
          level -= (made[i] ?? 0) - settledAt(i)
        }
        return [{ key: 'waiting', label: 'waiting', values, total: waiting }]
      }
      case 'upstream.headroom':
        return keysOf('upstream').map(([key, line]) => {
          const c = labels.connection.get(key)
          const def = c ? this.#o.connector(c.connector) : undefined
          const budget = labels.limit.get(key) ?? (def ? this.#o.defaultPacing(def) : undefined)
          const values = line.n
            .slice(0, count)
            .map((n) =>
              budget
                ? Math.max(
                    0,
                    Math.round(1000 * (1 - n / ((budget.points * stepMs) / budget.durationMs))) / 10,
                  )
                : null,
            )
          const last = values.filter((v) => v !== null).at(-1) ?? null
          return { key, label: connectionLabel(key), values, total: last }
        })
    }
  }
}

const iso = (ms: number) => new Date(ms).toISOString()

function describeMs(ms: number): string {
  if (ms >= DAY) return `${Math.round((ms / DAY) * 10) / 10} days`
  if (ms >= HOUR) return `${Math.round((ms / HOUR) * 10) / 10} hours`
  if (ms >= MINUTE) return `${Math.round((ms / MINUTE) * 10) / 10} minutes`
  return `${ms} ms`
}

const STEP_NAMES = Object.keys(STEPS).join(', ')
function rangeError(message: string) {
  return new PatchbayError('STATS_RANGE_INVALID', message, {
    hint: `Ask for at most ${LIMITS.maxRangeMs / DAY} days, in a step of ${STEP_NAMES} (under an hour only for ranges up to ${LIMITS.fineRangeMs / DAY} days), at most ${LIMITS.maxPoints} points.`,
    details: {
      steps: Object.keys(STEPS),
      maxRangeDays: LIMITS.maxRangeMs / DAY,
      fineRangeDays: LIMITS.fineRangeMs / DAY,
      maxPoints: LIMITS.maxPoints,
    },
  })
}

const fmt = (n: number) => n.toLocaleString('en-US')
const stepWord = (stepMs: number) =>
  stepMs === MINUTE
    ? 'minute'
    : stepMs === HOUR
      ? 'hour'
      : stepMs === DAY
        ? 'day'
        : describeMs(stepMs).replace(/s$/, '')

/** What a series shows, in words: totals, the busiest bucket, the last value. */
export function summarize(
  name: SeriesName,
  lines: StatsLine[],
  empty: boolean,
  times: string[],
  stepMs: number,
): string {
  const def = SERIES[name]
  const span =
    times.length > 0
      ? `${times[0].slice(0, 16).replace('T', ' ')} to ${new Date(Date.parse(times.at(-1)!) + stepMs).toISOString().slice(0, 16).replace('T', ' ')} UTC`
      : ''
  if (empty) return `${def.title}: none from ${span}.`
  const per = `per ${stepWord(stepMs)}`
  const peakOf = (l: StatsLine) => {
    let best = -1
    for (let i = 0; i < l.values.length; i++)
      if ((l.values[i] ?? -1) > (best < 0 ? -1 : (l.values[best] ?? -1))) best = i
    return best < 0
      ? ''
      : ` (most ${fmt(l.values[best] ?? 0)} at ${times[best].slice(0, 16).replace('T', ' ')})`
  }
  switch (name) {
    case 'deliveries.latency':
      return `${def.title}, ${per}, ${span}: over the range ${lines.map((l) => `${l.key} ${fmt(l.total ?? 0)} ms`).join(', ')}.`
    case 'deliveries.backlog':
      return `${def.title}, ${span}: ${fmt(lines[0]?.total ?? 0)} waiting now${peakOf(lines[0])}.`
    case 'upstream.headroom':
      return `${def.title}, ${per}, ${span}: ${lines.map((l) => `${l.label} ${l.total === null ? 'no budget known' : `${l.total} % left in the last bucket`}`).join('; ')}.`
    default: {
      const total = lines.reduce((a, l) => a + (l.total ?? 0), 0)
      const parts = lines
        .filter((l) => (l.total ?? 0) > 0)
        .map((l) => {
          const budget = l.budget
            ? `, budget ${fmt(l.budget.limit)} a ${l.budget.period === 'total' ? 'total' : l.budget.period}`
            : ''
          return `${l.label} ${fmt(l.total ?? 0)}${peakOf(l)}${budget}`
        })
      return `${def.title}, ${per}, ${span}: ${fmt(total)} ${def.unit} in all${parts.length > 0 ? `; ${parts.join('; ')}` : ''}.`
    }
  }
}
