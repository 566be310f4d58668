// Deliveries on their way to agents. Push deliveries are signed (Standard Webhooks) POSTs,
// retried on a schedule and dead-lettered after the last attempt; pull deliveries go to the
// agent's event stream; tool deliveries start the agent's tool with the event.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { type Dispatcher, request } from 'undici'
import { PatchbayError } from '../../kit/errors.ts'
import { type DeliveryRow, deliveries } from '../../store/event-log.ts'
import { nowIso } from '../../store/ids.ts'
import type { Database, DeliveryAttemptsTable } from '../../store/schema.ts'
import type { JobQueue } from '../jobs/job-queue.ts'
import type { AgentDirectory, ToolRunner } from '../triggers/directories.ts'
import type { LoopGuard } from './loop-guard.ts'
import { signDelivery } from './standard-webhooks.ts'
import type { StreamHub } from './stream-hub.ts'

/** Like the well-known webhook services': 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE_MS = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
]

export interface DelivererOptions {
  db: Kysely<Database>
  jobs: JobQueue
  hub: StreamHub
  dispatcher: Dispatcher
  log: FastifyBaseLogger
  agents: AgentDirectory
  tools: ToolRunner
  retryScheduleMs?: number[]
  timeoutMs?: number
  loopGuard: LoopGuard
  scanIntervalMs?: number
}

type Joined = DeliveryRow & {
  e_type: string
  e_upstream_id: string
  e_occurred_at: string
  e_refs: string
  e_data: string
  e_connector: string
  t_key: string | null
}

export class Deliverer {
  readonly retryScheduleMs: number[]
  #o: DelivererOptions
  #inFlight = new Set<string>()
  #scanner: NodeJS.Timeout | null = null
  #urls = new Map<string, { url: string | null; secret: string; at: number }>()
  /** Rows just created and read by dispatchNew, so the send does not read them again. */
  #fresh = new Map<string, Joined>()

  constructor(opts: DelivererOptions) {
    this.#o = opts
    this.retryScheduleMs = opts.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS
    opts.jobs.work<string>('deliver', { batchSize: 128, concurrency: 16, lingerMs: 2 }, (ids) =>
      this.#sendBatch(ids),
    )
    opts.jobs.work<string>('tool-run', { batchSize: 1, concurrency: 4 }, ([id]) => this.#runTool(id))
  }

  get maxAttempts(): number {
    return this.retryScheduleMs.length + 1
  }

  /** Hands freshly created deliveries on. */
  async dispatchNew(ids: string[]): Promise<void> {
    const rows = await this.#joined(ids)
    for (const row of rows) {
      const target = JSON.parse(row.target)
      if (target.type === 'stream') this.#o.hub.publish(row.agent_id, { seq: row.seq, body: this.body(row) })
      else {
        if (this.#fresh.size < 50_000) this.#fresh.set(row.id, row)
        this.#enqueue(row.id, target.type)
      }
    }
  }

  /** On start and then periodically: pending deliveries whose next attempt is due. */
  async scanDue(): Promise<number> {
    const due = await deliveries.due(this.#o.db, nowIso(), 1000)
    let n = 0
    for (const row of due) {
      if (this.#inFlight.has(row.id)) continue
      this.#enqueue(row.id, JSON.parse(row.target).type)
      n++
    }
    return n
  }

  start(): void {
    const every = this.#o.scanIntervalMs ?? 1000
    this.#scanner = setInterval(() => {
      this.scanDue().catch((err) => this.#o.log.error({ err }, 'delivery scan failed'))
    }, every)
    this.#scanner.unref?.()
  }

  stop(): void {
    if (this.#scanner) clearInterval(this.#scanner)
  }

  /** Sends a delivery again, with the same id (receivers deduplicate by webhook-id). */
  async replay(workspaceId: string, id: string): Promise<DeliveryRow> {
    const row = await deliveries.get(this.#o.db, workspaceId, id)
    if (!row)
      throw new PatchbayError('DELIVERY_NOT_FOUND', `There is no delivery "${id}".`, {
        hint: 'List deliveries with GET /v1/deliveries.',
      })
    const target = JSON.parse(row.target)
    if (target.type === 'stream') {
      const [joined] = await this.#joined([id])
      this.#o.hub.publish(row.agent_id, { seq: row.seq, body: this.body(joined) })
      return row
    }
    await deliveries.update(this.#o.db, id, {
      status: 'pending',
      next_attempt_at: nowIso(),
      last_error: null,
    })
    this.#enqueue(id, target.type)
    return { ...row, status: 'pending' }
  }

  /** The JSON an agent receives, the same pushed, streamed or replayed. */
  body(row: Joined): string {
    // The event's refs and data are stored as JSON already; they are spliced in as they are
    // rather than parsed and written again for every delivery.
    const j = JSON.stringify
    return (
      `{"id":${j(row.id)},"type":${j(row.t_key ?? 'event')},"timestamp":${j(row.created_at)},` +
      `"data":{"agentId":${j(row.agent_id)},"triggerId":${j(row.trigger_id)},"trigger":${j(row.t_key)},` +
      `"event":{"id":${j(row.event_id)},"connector":${j(row.e_connector)},"type":${j(row.e_type)},` +
      `"upstreamId":${j(row.e_upstream_id)},"occurredAt":${j(row.e_occurred_at)},` +
      `"refs":${row.e_refs},"data":${row.e_data}}}}`
    )
  }

  async joined(ids: string[]): Promise<Joined[]> {
    return this.#joined(ids)
  }

  #enqueue(id: string, type: string): void {
    if (this.#inFlight.has(id)) return
    this.#inFlight.add(id)
    this.#o.jobs.send(type === 'tool' ? 'tool-run' : 'deliver', id)
  }

  async #joined(ids: string[]): Promise<Joined[]> {
    if (ids.length === 0) return []
    return (await this.#o.db
      .selectFrom('deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .leftJoin('triggers as t', 't.id', 'd.trigger_id')
      .selectAll('d')
      .select([
        'e.type as e_type',
        'e.upstream_id as e_upstream_id',
        'e.occurred_at as e_occurred_at',
        'e.refs as e_refs',
        'e.data as e_data',
        'e.connector as e_connector',
        't.trigger_key as t_key',
      ])
      .where('d.id', 'in', ids)
      .execute()) as Joined[]
  }

  async #target(row: DeliveryRow): Promise<{ url: string | null; secret: string }> {
    const cached = this.#urls.get(row.agent_id)
    if (cached && Date.now() - cached.at < 5_000) return cached
    const agent = await this.#o.agents.get(row.workspace_id, row.agent_id)
    const entry = {
      url: agent.delivery.type === 'webhook' ? agent.delivery.url : null,
      secret: await this.#o.agents.signingSecret(row.agent_id),
      at: Date.now(),
    }
    this.#urls.set(row.agent_id, entry)
    return entry
  }

  async #sendBatch(ids: string[]): Promise<void> {
    try {
      const known: Joined[] = []
      const unknown: string[] = []
      for (const id of ids) {
        const row = this.#fresh.get(id)
        if (row) {
          known.push(row)
          this.#fresh.delete(id)
        } else unknown.push(id)
      }
      const rows = [...known, ...(await this.#joined(unknown))].filter((r) => r.status === 'pending')
      const outcomes = await Promise.all(rows.map((r) => this.#sendOne(r)))
      await this.#o.db.transaction().execute(async (trx) => {
        // Successes of a batch share one statement; failures each carry their own schedule.
        const delivered = new Map<string, string[]>()
        for (const o of outcomes) {
          if (o.update.status === 'delivered') {
            const key = `${o.update.last_status}|${o.update.attempts}`
            delivered.set(key, [...(delivered.get(key) ?? []), o.id])
          } else await deliveries.update(trx, o.id, o.update)
        }
        const at = nowIso()
        for (const [key, group] of delivered) {
          const [status, attempts] = key.split('|').map(Number)
          await trx
            .updateTable('deliveries')
            .set({
              status: 'delivered',
              attempts,
              last_status: status,
              last_error: null,
              delivered_at: at,
              next_attempt_at: null,
            })
            .where('id', 'in', group)
            .execute()
        }
        await deliveries.addAttempts(
          trx,
          outcomes.map((o) => o.attempt),
        )
      })
    } finally {
      for (const id of ids) this.#inFlight.delete(id)
    }
  }

  async #sendOne(row: Joined) {
    const attemptNo = row.attempts + 1
    const started = performance.now()
    let status: number | null = null
    let error: string | null = null
    try {
      const { url, secret } = await this.#target(row)
      if (!url) throw new Error('the agent has no webhook URL (its delivery target changed)')
      const body = this.body(row)
      const headers = signDelivery(secret, row.id, Math.floor(Date.now() / 1000), body)
      const res = await request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Patchbay-Webhooks/1' },
        body,
        dispatcher: this.#o.dispatcher,
        headersTimeout: this.#o.timeoutMs ?? 10_000,
        bodyTimeout: this.#o.timeoutMs ?? 10_000,
      })
      status = res.statusCode
      await res.body.dump()
      if (status < 200 || status >= 300) error = `the agent endpoint answered ${status}`
    } catch (err) {
      error = (err as Error).message
    }
    const durationMs = Math.round(performance.now() - started)
    const at = nowIso()
    const attempt: DeliveryAttemptsTable = {
      delivery_id: row.id,
      attempt: attemptNo,
      at,
      status,
      error,
      duration_ms: durationMs,
    }
    if (!error)
      return {
        id: row.id,
        attempt,
        update: {
          status: 'delivered' as const,
          attempts: attemptNo,
          last_status: status,
          last_error: null,
          delivered_at: at,
          next_attempt_at: null,
        },
      }
    const delay = this.retryScheduleMs[attemptNo - 1]
    if (delay === undefined)
      return {
        id: row.id,
        attempt,
        update: {
          status: 'dead' as const,
          attempts: attemptNo,
          last_status: status,
          last_error: error,
          next_attempt_at: null,
        },
      }
    return {
      id: row.id,
      attempt,
      update: {
        status: 'pending' as const,
        attempts: attemptNo,
        last_status: status,
        last_error: error,
        next_attempt_at: new Date(Date.now() + delay).toISOString(),
      },
    }
  }

  async #runTool(id: string): Promise<void> {
    try {
      const [row] = await this.#joined([id])
      if (row?.status !== 'pending') return
      const target = JSON.parse(row.target)
      const event = JSON.parse(this.body(row)).data.event
      const started = performance.now()
      // A run that cannot start (the tool was deleted, its input is refused) fails the delivery
      // with the reason, instead of leaving it pending to be picked up again and again.
      // A tool answering its own changes is stopped at the loop guard's limit (engine/events/loop-guard.ts).
      const guard = await this.#o.loopGuard.check({
        workspaceId: row.workspace_id,
        agentId: row.agent_id,
        connector: row.e_connector,
        upstreamId: row.e_upstream_id,
        refs: JSON.parse(row.e_refs),
      })
      const run = guard.refused
        ? { id: null, status: 'failed', errorCode: 'LOOP_DETECTED', errorMessage: guard.refused }
        : await this.#o.tools
            .run(row.workspace_id, row.agent_id, target.toolId, {
              input: event.data,
              event,
              triggerId: row.trigger_id,
              eventId: row.event_id,
              causationDepth: guard.depth,
            })
            .catch((err: Error & { code?: string }) => ({
              id: null as string | null,
              status: 'failed',
              errorCode: err.code ?? 'INTERNAL',
              errorMessage: err.message,
            }))
      if (guard.refused)
        this.#o.log.warn({ delivery: id, depth: guard.depth }, 'loop guard refused a tool run')
      const ok = run.status === 'succeeded'
      const at = nowIso()
      await this.#o.db.transaction().execute(async (trx) => {
        // A tool run is not retried automatically: its steps may have acted upstream. Replay runs it again.
        await deliveries.update(trx, id, {
          status: ok ? 'delivered' : 'failed',
          attempts: row.attempts + 1,
          tool_run_id: run.id,
          last_error: ok
            ? null
            : `${run.errorCode ?? 'FAILED'}: ${run.errorMessage ?? 'the tool run failed'}`,
          delivered_at: ok ? at : null,
          next_attempt_at: null,
        })
        await deliveries.addAttempts(trx, [
          {
            delivery_id: id,
            attempt: row.attempts + 1,
            at,
            status: null,
            error: ok ? null : (run.errorMessage ?? 'failed'),
            duration_ms: Math.round(performance.now() - started),
          },
        ])
      })
    } finally {
      this.#inFlight.delete(id)
    }
  }
}
