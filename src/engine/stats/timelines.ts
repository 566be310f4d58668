// A run's timeline (the dashboard's waterfall), from what Patchbay stores itself, so it works
// without a tracing backend: the upstream change and its receipt (events), the match (a delivery
// made), each attempt to push it or the tool run it started, the tool's steps (step runs) and each
// step's upstream requests with their rate-budget and pacing waits (step_runs.requests).
import type { Kysely } from 'kysely'
import { PatchbayError } from '../../kit/errors.ts'
import { deliveries, ofWorkspace } from '../../store/event-log.ts'
import type { Database } from '../../store/schema.ts'
import { type StepRunTimings, stepRunTimings } from '../../store/step-runs.ts'
import { ToolRuns } from '../../store/tool-runs.ts'

export type SpanKind = 'upstream' | 'event' | 'delivery' | 'attempt' | 'tool_run' | 'step' | 'request'

export interface TimelineSpan {
  id: string
  parentId: string | null
  /** Nesting: 0 for the outermost. */
  depth: number
  kind: SpanKind
  label: string
  start: string
  /** From the timeline's start. */
  offsetMs: number
  durationMs: number
  status: string | null
  /** A request's waits before it was sent, inside its duration. */
  waits?: { budgetMs: number; pacingMs: number }
}

export interface Timeline {
  id: string
  kind: 'event' | 'delivery' | 'tool_run' | 'step_run'
  start: string
  end: string
  durationMs: number
  spans: TimelineSpan[]
}

type Draft = Omit<TimelineSpan, 'depth' | 'offsetMs' | 'start'> & { startMs: number }

const ms = (iso: string) => Date.parse(iso)

export class Timelines {
  #db: Kysely<Database>
  #toolRuns: ToolRuns
  /** Writes the step run records this instance still holds (they are written in batches). */
  #flushRuns: () => Promise<void>

  constructor(opts: { db: Kysely<Database>; flushRuns: () => Promise<void> }) {
    this.#db = opts.db
    this.#toolRuns = new ToolRuns(opts.db)
    this.#flushRuns = opts.flushRuns
  }

  /** The timeline of an event (evt_…), a delivery (dlv_…), a tool run (trun_…) or a step run (run_…). */
  async get(workspaceId: string, id: string): Promise<Timeline> {
    await this.#flushRuns()
    const spans: Draft[] = []
    let kind: Timeline['kind']
    if (id.startsWith('evt_')) {
      kind = 'event'
      const event = await this.#event(workspaceId, id, null, spans)
      if (!event) throw new PatchbayError('EVENT_NOT_FOUND', `There is no event ${id} in this workspace.`)
      const made = await this.#db
        .selectFrom('deliveries')
        .select('id')
        .where('event_id', '=', id)
        .where('workspace_id', '=', workspaceId)
        .orderBy('seq')
        .execute()
      for (const d of made) await this.#delivery(workspaceId, d.id, id, spans)
    } else if (id.startsWith('dlv_')) {
      kind = 'delivery'
      const row = await this.#db
        .selectFrom('deliveries')
        .select('event_id')
        .where('id', '=', id)
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst()
      if (!row) throw new PatchbayError('DELIVERY_NOT_FOUND', `There is no delivery ${id} in this workspace.`)
      await this.#event(workspaceId, row.event_id, null, spans)
      await this.#delivery(workspaceId, id, row.event_id, spans)
    } else if (id.startsWith('trun_')) {
      kind = 'tool_run'
      const started = await this.#db
        .selectFrom(ofWorkspace(this.#db, 'deliveries', workspaceId, ['id', 'event_id', 'tool_run_id']))
        .select(['id', 'event_id'])
        .where('tool_run_id', '=', id)
        .executeTakeFirst()
      if (started) {
        await this.#event(workspaceId, started.event_id, null, spans)
        await this.#delivery(workspaceId, started.id, started.event_id, spans)
      } else if (!(await this.#toolRun(workspaceId, id, null, spans)))
        throw new PatchbayError('TOOL_RUN_NOT_FOUND', `There is no tool run ${id} in this workspace.`)
    } else if (id.startsWith('run_')) {
      kind = 'step_run'
      const runs = await this.#stepRuns(workspaceId, [id])
      const run = runs.get(id)
      if (!run) throw new PatchbayError('RUN_NOT_FOUND', `There is no step run ${id} in this workspace.`)
      this.#step(run, run.step_id, null, spans)
    } else
      throw new PatchbayError(
        'VALIDATION_FAILED',
        `"${id}" is not the id of an event, delivery, tool run or step run.`,
        {
          hint: 'Give an id that starts with evt_, dlv_, trun_ or run_.',
        },
      )
    return layOut(id, kind, spans)
  }

  async #event(ws: string, id: string, parentId: string | null, spans: Draft[]) {
    const e = await this.#db
      .selectFrom('events')
      .select(['id', 'connector', 'type', 'occurred_at', 'received_at', 'matched'])
      .where('id', '=', id)
      .where('workspace_id', '=', ws)
      .executeTakeFirst()
    if (!e) return null
    const received = ms(e.received_at)
    const occurred = ms(e.occurred_at)
    // The upstream's own time of the change, when it is before the receipt (the upstream's delay).
    if (Number.isFinite(occurred) && occurred < received && received - occurred < 86_400_000)
      spans.push({
        id: `${id}:upstream`,
        parentId,
        kind: 'upstream',
        label: `${e.connector}: the change (${e.type}) until Patchbay received it`,
        startMs: occurred,
        durationMs: received - occurred,
        status: null,
      })
    spans.push({
      id,
      parentId,
      kind: 'event',
      label: `received ${e.type}, matched ${e.matched} trigger${e.matched === 1 ? '' : 's'}`,
      startMs: received,
      durationMs: 0,
      status: null,
    })
    return e
  }

  async #delivery(ws: string, id: string, eventId: string, spans: Draft[]) {
    const d = await deliveries.get(this.#db, ws, id)
    if (!d) return
    const attempts = await this.#db
      .selectFrom('delivery_attempts')
      .select(['attempt', 'at', 'status', 'error', 'duration_ms'])
      .where('delivery_id', '=', id)
      .orderBy('attempt')
      .execute()
    const target = d.target
    const created = ms(d.created_at)
    const lastEnd = attempts.length > 0 ? ms(attempts[attempts.length - 1].at) : null
    const end = d.delivered_at ? ms(d.delivered_at) : (lastEnd ?? created)
    spans.push({
      id,
      parentId: eventId,
      kind: 'delivery',
      label: `matched → ${target.type === 'tool' ? 'tool run' : target.type === 'stream' ? 'the agent’s stream' : 'pushed to the agent'}`,
      startMs: created,
      durationMs: Math.max(0, end - created),
      status: d.status,
    })
    for (const a of attempts) {
      const attemptEnd = ms(a.at)
      const attemptId = `${id}:${a.attempt}`
      spans.push({
        id: attemptId,
        parentId: id,
        kind: 'attempt',
        label:
          target.type === 'tool'
            ? `attempt ${a.attempt}: the tool run`
            : `attempt ${a.attempt}: push${a.status !== null ? ` → ${a.status}` : ''}${a.error ? ` (${a.error})` : ''}`,
        startMs: attemptEnd - a.duration_ms,
        durationMs: a.duration_ms,
        status: a.error ? 'failed' : 'delivered',
      })
    }
    if (d.tool_run_id)
      await this.#toolRun(
        ws,
        d.tool_run_id,
        attempts.length > 0 ? `${id}:${attempts.at(-1)!.attempt}` : id,
        spans,
      )
  }

  async #toolRun(ws: string, id: string, parentId: string | null, spans: Draft[]) {
    const r = await this.#toolRuns.get(ws, id)
    if (!r) return null
    const tool = await this.#db
      .selectFrom('tools')
      .select('name')
      .where('id', '=', r.tool_id)
      .executeTakeFirst()
    const start = ms(r.created_at)
    spans.push({
      id,
      parentId,
      kind: 'tool_run',
      label: `tool run${tool ? ` of ${tool.name}` : ''}`,
      startMs: start,
      durationMs: r.finished_at ? Math.max(0, ms(r.finished_at) - start) : 0,
      status: r.status,
    })
    const steps = r.steps as Array<{
      index: number
      name: string | null
      stepId: string
      status: string
      runId: string | null
    }>
    const runs = await this.#stepRuns(
      ws,
      steps.map((s) => s.runId).filter((x): x is string => x !== null),
    )
    for (const s of steps) {
      const run = s.runId ? runs.get(s.runId) : undefined
      if (run) this.#step(run, `step ${s.index + 1}${s.name ? ` (${s.name})` : ''}: ${s.stepId}`, id, spans)
    }
    return r
  }

  async #stepRuns(ws: string, ids: string[]) {
    return new Map((await stepRunTimings(this.#db, ws, ids)).map((r) => [r.id, r]))
  }

  #step(run: StepRunTimings, label: string, parentId: string | null, spans: Draft[]) {
    // A step run is recorded when it ends: it started its duration before.
    const end = ms(run.created_at)
    spans.push({
      id: run.id,
      parentId,
      kind: 'step',
      label: `${label}${run.error_code ? ` (${run.error_code})` : ''}`,
      startMs: end - run.duration_ms,
      durationMs: run.duration_ms,
      status: run.status,
    })
    run.requests.forEach((q, i) => {
      const waits = q.budgetWaitMs + q.pacingWaitMs
      spans.push({
        id: `${run.id}:${i + 1}`,
        parentId: run.id,
        kind: 'request',
        label: `${q.method} ${q.route}${q.status !== null ? ` → ${q.status}` : ' (no answer)'}`,
        startMs: q.at,
        durationMs: Math.round((waits + q.durationMs) * 10) / 10,
        status: q.status === null ? 'failed' : String(q.status),
        waits: { budgetMs: q.budgetWaitMs, pacingMs: q.pacingWaitMs },
      })
    })
  }
}

/** Depths from the parents, offsets from the earliest start, in the order the spans were found. */
function layOut(id: string, kind: Timeline['kind'], drafts: Draft[]): Timeline {
  const start = Math.min(...drafts.map((d) => d.startMs))
  const end = Math.max(...drafts.map((d) => d.startMs + d.durationMs))
  const depthOf = new Map<string, number>()
  const spans = drafts.map((d) => {
    const depth = d.parentId !== null ? (depthOf.get(d.parentId) ?? -1) + 1 : 0
    depthOf.set(d.id, depth)
    const { startMs, ...rest } = d
    return {
      ...rest,
      depth,
      start: new Date(startMs).toISOString(),
      offsetMs: Math.round((startMs - start) * 10) / 10,
    }
  })
  return {
    id,
    kind,
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    durationMs: Math.round((end - start) * 10) / 10,
    spans,
  }
}
