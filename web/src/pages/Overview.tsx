// Overview: the workspace at a glance, charted with uPlot from GET /v1/stats (the same numbers
// `patchbay stats` prints). Each chart has its legend with totals, the API's text summary, and its
// numbers in a table, so nothing is only in the picture.
import { useEffect, useId, useRef, useState } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { get } from '../api.ts'
import { ErrorBox, Loading, useInterval, useLoad } from '../components.tsx'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** The ranges offered, each with the step its charts are drawn in. */
export const RANGES = [
  { id: '1h', label: 'Last hour', ms: HOUR, step: '1m' },
  { id: '6h', label: '6 hours', ms: 6 * HOUR, step: '5m' },
  { id: '24h', label: '24 hours', ms: DAY, step: '15m' },
  { id: '7d', label: '7 days', ms: 7 * DAY, step: '1h' },
  { id: '30d', label: '30 days', ms: 30 * DAY, step: '6h' },
] as const
const REFRESH_MS = 30_000

interface Line {
  key: string
  label: string
  values: Array<number | null>
  total: number | null
  budget?: { limit: number; period: string }
}
interface Series {
  name: string
  title: string
  unit: string
  empty: boolean
  summary: string
  lines: Line[]
}
export interface Stats {
  from: string
  to: string
  step: string
  stepMs: number
  times: string[]
  series: Series[]
}

const COLORS: Record<string, string> = {
  delivered: '#14632e',
  succeeded: '#14632e',
  retrying: '#b45309',
  dead: '#a0191b',
  failed: '#a0191b',
  p50: '#1f4e8c',
  p95: '#b45309',
  p99: '#a0191b',
  waiting: '#1f4e8c',
}
const PALETTE = ['#1f4e8c', '#c2410c', '#14632e', '#7c3aed', '#0e7490', '#be185d', '#7a4b00', '#475569']
const colorOf = (key: string, i: number) => COLORS[key] ?? PALETTE[i % PALETTE.length]

/** 1,500 → 1.5k, for axis labels. */
const compact = (v: number) =>
  Math.abs(v) >= 1_000_000 ? `${v / 1_000_000}M` : Math.abs(v) >= 1000 ? `${v / 1000}k` : `${v}`

const stepWords: Record<string, string> = {
  '1m': 'per minute',
  '5m': 'per 5 minutes',
  '15m': 'per 15 minutes',
  '1h': 'per hour',
  '6h': 'per 6 hours',
  '1d': 'per day',
}

export function OverviewPage() {
  const [rangeId, setRangeId] = useState<(typeof RANGES)[number]['id']>('24h')
  const [auto, setAuto] = useState(true)
  const range = RANGES.find((r) => r.id === rangeId) ?? RANGES[2]
  const stats = useLoad(
    (signal) =>
      get<Stats>(
        '/v1/stats',
        {
          series:
            'events.received,deliveries.outcome,deliveries.latency,deliveries.backlog,steps.outcome,tools.outcome,upstream.requests,upstream.rate_limited,upstream.headroom',
          from: new Date(Date.now() - range.ms).toISOString(),
          step: range.step,
        },
        signal,
      ),
    [range.id],
  )
  // Credits are charted per day, over at least the last week.
  const credits = useLoad(
    (signal) =>
      get<Stats>(
        '/v1/stats',
        {
          series: 'credits.by_connection,credits.by_agent',
          from: new Date(Date.now() - Math.max(range.ms, 7 * DAY)).toISOString(),
          step: '1d',
        },
        signal,
      ),
    [range.id],
  )
  useInterval(
    () => {
      void stats.reload()
      void credits.reload()
    },
    auto ? REFRESH_MS : null,
  )
  const [updated, setUpdated] = useState<Date | null>(null)
  useEffect(() => {
    if (stats.data) setUpdated(new Date())
  }, [stats.data])
  const ids = { auto: useId() }
  const s = stats.data
  const c = credits.data
  return (
    <section aria-labelledby="overview-title" className="overview">
      <h1 id="overview-title" tabIndex={-1}>
        Overview
      </h1>
      <div className="row wrap overview-controls">
        <fieldset className="ranges">
          <legend>Range</legend>
          {RANGES.map((r) => (
            <button
              key={r.id}
              type="button"
              aria-pressed={r.id === rangeId}
              className={r.id === rangeId ? 'primary' : undefined}
              onClick={() => setRangeId(r.id)}
            >
              {r.label}
            </button>
          ))}
        </fieldset>
        <label htmlFor={ids.auto} className="check">
          <input id={ids.auto} type="checkbox" checked={auto} onChange={(e) => setAuto(e.target.checked)} />
          Refresh every 30 s
        </label>
        <button
          type="button"
          onClick={() => {
            void stats.reload()
            void credits.reload()
          }}
        >
          Refresh now
        </button>
        <span className="hint" data-testid="updated">
          {stats.loading ? 'Updating…' : updated ? `Updated ${updated.toLocaleTimeString()}` : ''}
        </span>
      </div>
      <ErrorBox error={stats.error} title="The numbers could not be loaded" />
      {!s ? (
        stats.error ? null : (
          <Loading what="Counting" />
        )
      ) : (
        <div className="charts">
          <Chart id="events" title="Events received" stats={s} parts={[{ series: 'events.received' }]} bars />
          <Chart
            id="deliveries"
            title="Deliveries by outcome"
            stats={s}
            parts={[{ series: 'deliveries.outcome' }]}
            bars
          />
          <Chart
            id="latency"
            title="End-to-end latency (event received → delivered)"
            stats={s}
            parts={[{ series: 'deliveries.latency' }]}
            unit="ms"
          />
          <Chart id="backlog" title="Delivery backlog" stats={s} parts={[{ series: 'deliveries.backlog' }]} />
          <Chart
            id="steps"
            title="Step runs by outcome"
            stats={s}
            parts={[{ series: 'steps.outcome' }]}
            bars
          />
          <Chart
            id="tools"
            title="Tool runs by outcome"
            stats={s}
            parts={[{ series: 'tools.outcome' }]}
            bars
          />
          <Chart
            id="upstream"
            title="Upstream requests and 429s by connection"
            stats={s}
            parts={[
              { series: 'upstream.requests', suffix: 'requests' },
              { series: 'upstream.rate_limited', suffix: '429s', dash: true },
            ]}
          />
          <Chart
            id="headroom"
            title="Rate budget headroom by connection"
            stats={s}
            parts={[{ series: 'upstream.headroom' }]}
            unit="%"
          />
        </div>
      )}
      <ErrorBox error={credits.error} title="The credits could not be loaded" />
      {c ? (
        <div className="charts">
          <Chart
            id="credits-connections"
            title="Contact-data credits per day by connection"
            stats={c}
            parts={[{ series: 'credits.by_connection' }]}
            bars
          />
          <Chart
            id="credits-agents"
            title="Contact-data credits per day by agent, against daily budgets"
            stats={c}
            parts={[{ series: 'credits.by_agent' }]}
            bars
            budgets
          />
        </div>
      ) : null}
    </section>
  )
}

interface Part {
  series: string
  /** Added to each line's label when a chart shows several series. */
  suffix?: string
  dash?: boolean
}

/** One chart: a figure with its title, the plot, a legend with totals, the summary and a table. */
export function Chart({
  id,
  title,
  stats,
  parts,
  bars = false,
  unit,
  budgets = false,
}: {
  id: string
  title: string
  stats: Stats
  parts: Part[]
  bars?: boolean
  unit?: string
  budgets?: boolean
}) {
  const titleId = useId()
  const found = parts
    .map((p) => ({ part: p, series: stats.series.find((s) => s.name === p.series) }))
    .filter((x): x is { part: Part; series: Series } => x.series !== undefined)
  const lines = found.flatMap(({ part, series }) =>
    series.lines.map((l) => ({
      ...l,
      name: part.suffix ? `${l.label} ${part.suffix}` : l.label,
      dash: part.dash ?? false,
      series: series.name,
    })),
  )
  // A daily budget is drawn as a flat dashed line at its limit.
  const budgetLines = budgets
    ? lines
        .filter((l) => l.budget?.period === 'day')
        .map((l) => ({
          key: `${l.key}-budget`,
          name: `${l.label} daily budget`,
          values: stats.times.map(() => l.budget!.limit),
          dash: true,
          total: null as number | null,
          series: 'budget',
        }))
    : []
  const empty = found.every(({ series }) => series.empty)
  const drawn = [...lines, ...budgetLines]
  const colors = drawn.map((l, i) => colorOf(l.key, i))
  const summary = found.map(({ series }) => series.summary).join(' ')
  const totalWord = (l: { series: string; total: number | null }) =>
    l.total === null
      ? '–'
      : `${l.total.toLocaleString('en-US')}${unit ? ` ${unit}` : ''}${l.series === 'deliveries.backlog' ? ' now' : ''}`
  return (
    <figure className="chart panel" aria-labelledby={titleId} data-chart={id} data-empty={empty}>
      <figcaption id={titleId}>
        <h2>{title}</h2>
        <span className="hint">{stepWords[stats.step] ?? `per ${stats.step}`}</span>
      </figcaption>
      {empty ? (
        <p className="chart-empty">Nothing in this range.</p>
      ) : (
        <Plot
          label={summary}
          times={stats.times}
          lines={drawn.map((l, i) => ({ name: l.name, values: l.values, color: colors[i], dash: l.dash }))}
          bars={bars}
          unit={unit}
        />
      )}
      {empty ? null : (
        <ul className="legend" aria-label={`${title}: totals`}>
          {drawn.map((l, i) => (
            <li key={`${l.series}:${l.key}`} data-key={l.key} data-series={l.series}>
              <span
                className={l.dash ? 'swatch dashed' : 'swatch'}
                style={{ borderColor: colors[i] }}
                aria-hidden="true"
              />
              <span className="legend-label">{l.name}</span>{' '}
              {l.series === 'budget' ? null : <strong className="legend-total">{totalWord(l)}</strong>}
            </li>
          ))}
        </ul>
      )}
      <p className="chart-summary">{summary}</p>
      {empty ? null : (
        <details>
          <summary>The numbers</summary>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">From</th>
                  {lines.map((l) => (
                    <th scope="col" key={`${l.series}:${l.key}`}>
                      {l.name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {stats.times.map((t, i) => (
                  <tr key={t}>
                    <th scope="row">
                      <time dateTime={t}>{new Date(t).toLocaleString()}</time>
                    </th>
                    {lines.map((l) => (
                      <td key={`${l.series}:${l.key}`} data-series={l.series} data-key={l.key}>
                        {l.values[i] === null ? '' : l.values[i]}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      )}
    </figure>
  )
}

/** The uPlot canvas, as wide as its box (resized with it). */
function Plot({
  label,
  times,
  lines,
  bars,
  unit,
}: {
  label: string
  times: string[]
  lines: Array<{ name: string; values: Array<number | null>; color: string; dash: boolean }>
  bars: boolean
  unit?: string
}) {
  const box = useRef<HTMLDivElement>(null)
  const key = JSON.stringify([times, lines])
  // biome-ignore lint/correctness/useExhaustiveDependencies: drawn again when the numbers change (key)
  useEffect(() => {
    const el = box.current
    if (!el) return
    const data: uPlot.AlignedData = [times.map((t) => Date.parse(t) / 1000), ...lines.map((l) => l.values)]
    const width = Math.max(240, el.clientWidth)
    const solo = lines.filter((l) => !l.dash).length === 1
    const plot = new uPlot(
      {
        width,
        height: 200,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { y: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max * 1.05)] } },
        axes: [
          { stroke: '#555d66', grid: { stroke: '#e5e8ec' } },
          {
            stroke: '#555d66',
            grid: { stroke: '#e5e8ec' },
            size: 64,
            values: (_u, ticks) => ticks.map((v) => `${compact(v)}${unit ? ` ${unit}` : ''}`),
          },
        ],
        series: [
          {},
          ...lines.map((l) => ({
            label: l.name,
            stroke: l.color,
            width: 2,
            dash: l.dash ? [6, 4] : undefined,
            fill: bars && !l.dash && solo ? `${l.color}33` : undefined,
            // One line: bars; several: steps, which do not hide each other.
            paths:
              bars && !l.dash
                ? solo
                  ? uPlot.paths.bars?.({ size: [0.8, 40] })
                  : uPlot.paths.stepped?.({ align: 1 })
                : undefined,
            spanGaps: false,
          })),
        ],
      },
      data,
      el,
    )
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(240, el.clientWidth), height: 200 }),
    )
    resize.observe(el)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [key, bars, unit])
  return <div ref={box} className="plot" role="img" aria-label={label} />
}
