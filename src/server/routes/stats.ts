// GET /v1/stats: the time series behind the dashboard's Overview and `patchbay stats`, computed
// from the stored records (engine/stats/stats.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { LIMITS, SERIES_NAMES, type SeriesName, STEPS } from '../../engine/stats/stats.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { errorResponses } from '../schemas.ts'

const Line = z.object({
  key: z.string().describe('A connector, an outcome, a connection id, an agent id, p50/p95/p99 …'),
  label: z.string().describe('What the key names, for people (a connection’s account, an agent’s name).'),
  values: z.array(z.number().nullable()).describe('One value a bucket of `times`; null where there is none.'),
  total: z
    .number()
    .nullable()
    .describe(
      'Counts: the sum over the range; latency: the percentile over the range; backlog: waiting now; headroom: the last bucket.',
    ),
  budget: z
    .object({ limit: z.number(), period: z.enum(['total', 'month', 'day']) })
    .optional()
    .describe('The agent’s credit budget (credits.by_agent), where one is set.'),
})

const Series = z.object({
  name: z.enum(SERIES_NAMES as [SeriesName, ...SeriesName[]]),
  title: z.string(),
  unit: z.string(),
  by: z.string().describe('What a line is: connector, outcome, connection, agent, percentile, total.'),
  empty: z.boolean().describe('True when no record fell in the range (the chart says so).'),
  summary: z
    .string()
    .describe('The series in words: totals, the busiest bucket (for screen readers and the CLI).'),
  lines: z.array(Line),
})

export const StatsAnswer = z
  .object({
    from: z.string().describe('The first bucket’s start (the range’s start, aligned to the step).'),
    to: z.string().describe('The last bucket’s end.'),
    step: z.string(),
    stepMs: z.number(),
    times: z.array(z.string()).describe('Each bucket’s start (ISO 8601, UTC).'),
    series: z.array(Series),
  })
  .meta({ id: 'Stats' })

const Span = z.object({
  id: z.string(),
  parentId: z.string().nullable(),
  depth: z.number().describe('Nesting: 0 for the outermost.'),
  kind: z.enum(['upstream', 'event', 'delivery', 'attempt', 'tool_run', 'step', 'request']),
  label: z.string(),
  start: z.string(),
  offsetMs: z.number().describe('From the timeline’s start.'),
  durationMs: z.number(),
  status: z.string().nullable(),
  waits: z
    .object({ budgetMs: z.number(), pacingMs: z.number() })
    .optional()
    .describe('A request’s waits before it was sent (rate budget, pacing), at the start of its duration.'),
})

export const TimelineAnswer = z
  .object({
    id: z.string(),
    kind: z.enum(['event', 'delivery', 'tool_run', 'step_run']),
    start: z.string(),
    end: z.string(),
    durationMs: z.number(),
    spans: z.array(Span),
  })
  .meta({ id: 'Timeline' })

export const statsRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/stats',
      {
        schema: {
          operationId: 'getStats',
          tags: ['stats'],
          summary:
            'Time series of the workspace: events received, deliveries by outcome, latency percentiles and backlog, step and tool runs, upstream requests, 429s and rate-budget headroom, credits — from the stored records',
          description: `Buckets of \`step\` (${Object.keys(STEPS).join(', ')}) from \`from\` to \`to\`: at most ${LIMITS.maxRangeMs / 86_400_000} days, at most ${LIMITS.maxPoints} points, steps under an hour for ranges up to ${LIMITS.fineRangeMs / 86_400_000} days (STATS_RANGE_INVALID otherwise).`,
          querystring: z.object({
            series: z
              .string()
              .max(1000)
              .optional()
              .describe(`Comma-separated: ${SERIES_NAMES.join(', ')}. All when left out.`),
            from: z.string().max(64).optional().describe('ISO 8601; default a day before `to`.'),
            to: z.string().max(64).optional().describe('ISO 8601; default now.'),
            step: z
              .string()
              .max(8)
              .optional()
              .describe(`One of ${Object.keys(STEPS).join(', ')}; chosen for 60–200 points when left out.`),
          }),
          response: { 200: StatsAnswer, ...errorResponses },
        },
      },
      async (req) => {
        const names = (req.query.series ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
        const unknown = names.filter((n) => !(SERIES_NAMES as string[]).includes(n))
        if (unknown.length > 0)
          throw new PatchbayError('VALIDATION_FAILED', `Unknown series: ${unknown.join(', ')}.`, {
            hint: `Ask for some of ${SERIES_NAMES.join(', ')}.`,
          })
        return engine.stats.query(req.caller.workspaceId, {
          series: names as SeriesName[],
          from: req.query.from,
          to: req.query.to,
          step: req.query.step,
        })
      },
    )

    app.get(
      '/v1/timelines/:id',
      {
        schema: {
          operationId: 'getTimeline',
          tags: ['stats'],
          summary:
            'The timeline of an event, a delivery, a tool run or a step run: received → matched → pushed or run → steps → upstream requests, with durations and waits (the dashboard’s waterfall)',
          params: z.object({
            id: z
              .string()
              .max(200)
              .describe('An event (evt_…), delivery (dlv_…), tool run (trun_…) or step run (run_…).'),
          }),
          response: { 200: TimelineAnswer, ...errorResponses },
        },
      },
      async (req) => {
        return engine.timelines.get(req.caller.workspaceId, req.params.id)
      },
    )
  }
