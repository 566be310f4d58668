// Deliveries on their way to agents. Push deliveries are signed (Standard Webhooks) POSTs,
// retried on a schedule and dead-lettered after the last attempt; pull deliveries go to the
// agent's event stream; tool deliveries start the agent's tool with the event.
//
// Every attempt is claimed in the delivery's row first (deliveries.claim): the claim takes the
// attempt number and a lease, and only the claim holder writes the attempt's outcome. The
// instance that stored a delivery sends it at once, and claims a push's first attempt in the same
// insert (claimedAtInsert) rather than with a statement of its own; retries, and deliveries whose holder stopped
// (an expired lease), are found by the sweep (one instance at a time, jobs/sweeps.ts). A push
// whose holder stopped is sent again with the same webhook-id (at least once); a tool run whose
// holder stopped is never started again by itself (its steps may have acted upstream): it fails
// with the reason, and a replay runs it again.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { type Dispatcher, request } from 'undici'
import { type Clock, systemClock } from '../../kit/clock.ts'
import { egressRefused, findEgressRefusal } from '../../kit/egress.ts'
import { PatchbayError } from '../../kit/errors.ts'
import {
  injectHeaders,
  type OpenSpan,
  openSpan,
  type TraceContext,
  tracingOn,
  withContext,
} from '../../kit/tracing.ts'
import {
  type DeliveryRow,
  deliveries,
  type NewAttempt,
  type NewDelivery,
  type SendableDelivery,
  type SettledAttempt,
  sendableEvent,
} from '../../store/event-log.ts'
import { isoAt } from '../../store/ids.ts'
import type { Database } from '../../store/schema.ts'
import type { Triggers } from '../../store/triggers.ts'
import type { AgentService } from '../agents/agent-service.ts'
import type { Changes } from '../changes/changes.ts'
import type { JobQueue } from '../jobs/job-queue.ts'
import type { Registry } from '../registry.ts'
import type { ToolService } from '../tools/tool-service.ts'
import { eventOutsideScope } from './event-scope.ts'
import type { LoopGuard } from './loop-guard.ts'
import { NOTICE_CONNECTOR } from './notices.ts'
import { type DeliveryPayload, deliveryBody, type PayloadFields } from './payload.ts'
import { signDelivery } from './standard-webhooks.ts'

/** Like the well-known webhook services': 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE_MS = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
]

export interface DelivererOptions {
  db: Kysely<Database>
  jobs: JobQueue
  changes: Changes
  dispatcher: Dispatcher
  log: FastifyBaseLogger
  /** Each agent's delivery address now, and its signing secret. */
  agents: Pick<AgentService, 'get' | 'signingSecrets'>
  /** Tool deliveries start the agent's tool. */
  tools: Pick<ToolService, 'run'>
  /** The trigger definitions, for the scope a retry is checked against. */
  registry: Registry
  /** A retried delivery's trigger (its connection, for the scope check). */
  triggers: Pick<Triggers, 'byId'>
  clock?: Clock
  retryScheduleMs?: number[]
  timeoutMs?: number
  /** How long a tool run may take before another instance reports it interrupted. */
  toolLeaseMs?: number
  loopGuard: LoopGuard
  /**
   * How long a batch's push outcomes wait for other batches' to share one write (default 0: each
   * batch writes its own at once). On PostgreSQL each write is a transaction on the server: with
   * several instances each sends small batches, and the writes were one for every few deliveries
   * (issue 29). On SQLite a batch's write is a local commit, and waiting measured slower.
   */
  outcomeLingerMs?: number
}

/**
 * Pushes in flight at once to one agent endpoint (their own pool; upstream calls have 128). A push
 * waiting for a connection counts in the backlog the ingress holds back on, so with 128 the
 * connections, not the CPU, capped delivery once the endpoint took ~30 ms to answer: the backlog
 * sat where backpressure refuses, and at 256 senders it refused ~2,500 deliveries in 15 s where
 * with 256 connections it refused tens to a few hundred (issue 17).
 */
export const PUSH_CONNECTIONS_PER_ENDPOINT = 256

/**
 * How long an agent's push target (address, signing secrets) is kept. A change to the agent drops
 * it at once on every instance (the `agents` change); the age limit is a backstop, long enough
 * that thousands of agents sharing the traffic stay cached between their events (issue 22).
 */
const TARGET_CACHE_MS = 10 * 60_000
/** Push targets kept at most. */
const TARGETS_KEPT = 100_000
/** A sweep leaves fresh deliveries this long to the instance that stored them. */
const FRESH_GRACE_MS = 500
/** Fresh rows kept for their send (beyond it, a send reads its rows back). */
const FRESH_KEPT = 50_000
/** Outcomes written at most together (a write is due at once when this many wait; outcomeLingerMs). */
const OUTCOMES_PER_WRITE = 2_000
const INTERRUPTED_PUSH = 'interrupted: the instance sending it stopped before the agent answered'
const INTERRUPTED_TOOL =
  'TOOL_RUN_INTERRUPTED: the instance running the tool stopped before it finished; the run is not started again by itself (its steps may have acted upstream) — replay the delivery to run it again'

/** Where an agent's pushes go and the secrets they are signed with. */
interface PushTarget {
  url: string | null
  secrets: { current: string; previous: { secret: string; until: number } | null }
}

export class Deliverer {
  readonly retryScheduleMs: number[]
  #o: DelivererOptions
  #clock: Clock
  #timeoutMs: number
  /**
   * Each agent's address and signing secret for a few seconds, as the lookup under way: the
   * pushes of a batch that all miss at once share one lookup instead of each reading the agent.
   */
  #urls = new Map<string, { target: Promise<PushTarget>; at: number }>()
  /** Rows just created and handed over by dispatch, so the send does not read them again. */
  #fresh = new Map<string, SendableDelivery>()
  /** Those of the fresh rows whose claim this instance took in their insert (claimedAtInsert). */
  #held = new Set<string>()
  /** With tracing on: the trace each delivery was made in (its event's), for its attempts' spans. */
  #traces = new Map<string, TraceContext>()
  /**
   * Deliveries handed to this instance's lanes and not yet settled, with when they were handed
   * over (in that order): the delivery backlog the ingress holds back on (`lag`).
   */
  #waiting = new Map<string, number>()
  /** Push outcomes waiting for their shared write (outcomeLingerMs), each batch's with its settling. */
  #outcomes: Array<{ outcomes: SettledAttempt[]; written: () => void; failed: (err: unknown) => void }> = []
  #outcomeCount = 0
  #outcomeTimer: ReturnType<typeof setTimeout> | null = null

  constructor(opts: DelivererOptions) {
    this.#o = opts
    this.#clock = opts.clock ?? systemClock
    this.#timeoutMs = opts.timeoutMs ?? 10_000
    this.retryScheduleMs = opts.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS
    opts.jobs.work<string>('deliver', { batchSize: 128, concurrency: 16, lingerMs: 2 }, (ids) =>
      this.#sendBatch(ids).finally(() => this.#settled(ids)),
    )
    opts.jobs.work<string>('tool-run', { batchSize: 1, concurrency: 4 }, ([id]) =>
      this.#runTool(id).finally(() => this.#settled([id])),
    )
    // An agent's delivery address or signing secret changed on any instance.
    opts.changes.subscribe('agents', (ids) => {
      if (ids.length === 0) this.#urls.clear()
      for (const id of ids) this.#urls.delete(id)
    })
  }

  get maxAttempts(): number {
    return this.retryScheduleMs.length + 1
  }

  /** A push attempt's lease: the request's time limit and then some. */
  get #pushLeaseMs(): number {
    return this.#timeoutMs * 2 + 5_000
  }

  /**
   * How far delivery lags on this instance: deliveries handed over and not yet settled, and how
   * long the oldest of them has waited.
   */
  lag(): { backlog: number; oldestAgeMs: number } {
    const oldest = this.#waiting.values().next()
    return {
      backlog: this.#waiting.size,
      oldestAgeMs: oldest.done ? 0 : Math.max(0, this.#clock.now() - oldest.value),
    }
  }

  #settled(ids: string[]): void {
    for (const id of ids) this.#waiting.delete(id)
  }

  #hand(lane: 'deliver' | 'tool-run', id: string): void {
    if (!this.#waiting.has(id)) this.#waiting.set(id, this.#clock.now())
    this.#o.jobs.send(lane, id)
  }

  /** Hands freshly created deliveries on (read from the store by id; claimed when sent). */
  async dispatchNew(ids: string[]): Promise<void> {
    this.#dispatch(await this.#joined(ids), false)
  }

  /**
   * The rows of new deliveries as this instance stores them to send at once: a push's first
   * attempt is claimed in the insert itself (attempt 1 and a lease, as deliveries.claim takes
   * them), so its send needs no claim statement of its own. Hand them to `dispatch` once
   * committed. Tool runs are claimed when they start; streams need no claim.
   */
  claimedAtInsert(rows: NewDelivery[]): NewDelivery[] {
    if (this.#fresh.size >= FRESH_KEPT) return rows
    const leaseUntil = isoAt(this.#clock.now() + this.#pushLeaseMs)
    return rows.map((r) =>
      r.status === 'pending' && r.attempts === 0 && r.target.type === 'webhook'
        ? { ...r, attempts: 1, claimed_until: leaseUntil, next_attempt_at: leaseUntil }
        : r,
    )
  }

  /**
   * Gives back the claims taken at insert of pushes this instance has not started sending (it is
   * stopping): they are due at once for the other instances, as if never claimed.
   */
  async releaseUnsent(): Promise<void> {
    const held = [...this.#held].flatMap((id) => this.#fresh.get(id) ?? [])
    for (const r of held) this.#fresh.delete(r.id)
    this.#held.clear()
    await deliveries.release(
      this.#o.db,
      held.map((r) => ({ id: r.id, attempts: r.attempts, claimedUntil: r.claimed_until! })),
      isoAt(this.#clock.now()),
    )
  }

  /**
   * Hands deliveries this instance just stored on: pushes (claimed in their insert when
   * claimedAtInsert made them so) and tool runs to their lanes, streams woken.
   */
  /** With tracing on: the deliveries made in the trace of `ctx` (their attempts' spans go under it). */
  traceOf(ids: string[], ctx: TraceContext): void {
    for (const id of ids) this.#traces.set(id, ctx)
    // Bounded: the oldest go first (a delivery retried much later starts a trace of its own).
    if (this.#traces.size > 20_000)
      for (const id of [...this.#traces.keys()].slice(0, 5_000)) this.#traces.delete(id)
  }

  async dispatch(rows: SendableDelivery[]): Promise<void> {
    this.#dispatch(rows, true)
  }

  #dispatch(rows: SendableDelivery[], storedHere: boolean): void {
    const streamAgents = new Set<string>()
    for (const row of rows) {
      const target = row.target
      if (target.type === 'stream') streamAgents.add(row.agent_id)
      else {
        // A row claimed at insert is always kept: its claim is used (or given back) from here.
        const held = storedHere && row.claimed_until !== null
        if (held) this.#held.add(row.id)
        if (held || this.#fresh.size < FRESH_KEPT) this.#fresh.set(row.id, row)
        this.#hand(target.type === 'tool' ? 'tool-run' : 'deliver', row.id)
      }
    }
    // Open streams on every instance read their agent's new deliveries from the store.
    this.#o.changes.publish('deliveries', [...streamAgents])
  }

  /**
   * Deliveries whose time came: retries, and claims whose holder stopped. Interrupted tool runs
   * fail with the reason; the rest are claimed and sent here.
   */
  async sweep(): Promise<number> {
    const now = this.#clock.now()
    const due = await deliveries.due(this.#o.db, isoAt(now - FRESH_GRACE_MS), 1000)
    let n = 0
    const interruptedPushes: NewAttempt[] = []
    for (const row of due) {
      const type = row.target.type
      if (row.claimed_until !== null) {
        if (type === 'tool') {
          await this.#settle([row.id], row.attempts, {
            status: 'failed',
            last_error: INTERRUPTED_TOOL,
            next_attempt_at: null,
          })
          continue
        }
        interruptedPushes.push({
          delivery_id: row.id,
          workspace_id: row.workspace_id,
          attempt: row.attempts,
          at: isoAt(now),
          status: null,
          error: INTERRUPTED_PUSH,
          duration_ms: 0,
        })
      }
      this.#hand(type === 'tool' ? 'tool-run' : 'deliver', row.id)
      n++
    }
    await deliveries.addAttempts(this.#o.db, interruptedPushes)
    return n
  }

  /** Sends a delivery again, with the same id (receivers deduplicate by webhook-id). */
  async replay(workspaceId: string, id: string): Promise<DeliveryRow> {
    const row = await deliveries.get(this.#o.db, workspaceId, id)
    if (!row)
      throw new PatchbayError('DELIVERY_NOT_FOUND', `There is no delivery "${id}".`, {
        hint: 'List deliveries with GET /v1/deliveries.',
      })
    const target = row.target
    if (target.type === 'stream') {
      // Streams read the store; a replayed pull delivery is the stored one, seen again by catching up.
      this.#o.changes.publish('deliveries', [row.agent_id])
      return row
    }
    await deliveries.update(this.#o.db, id, {
      status: 'pending',
      next_attempt_at: isoAt(this.#clock.now()),
      claimed_until: null,
      last_error: null,
    })
    // A claim this instance took when storing it is void now: the send claims the replay afresh.
    this.#held.delete(id)
    this.#fresh.delete(id)
    this.#hand(target.type === 'tool' ? 'tool-run' : 'deliver', id)
    return { ...row, status: 'pending' }
  }

  /**
   * The JSON an agent receives, the same pushed, streamed or replayed. Its `type` is the trigger's
   * key, a Patchbay notice's own type (events/notices.ts), or `event` when the trigger is gone.
   */
  body(row: SendableDelivery): string {
    return deliveryBody(this.#fields(row))
  }

  /**
   * The same body as a value, where an object is wanted (the API's and MCP's view of a delivery):
   * the event's refs and data as the store reads them, the rest as body() writes it.
   */
  payload(row: SendableDelivery): DeliveryPayload {
    const { data, ...head } = this.#fields(row)
    const { event, ...rest } = data
    const { refsJson: _refs, dataJson: _data, ...fields } = event
    const e = sendableEvent(row)
    return { ...head, data: { ...rest, event: { ...fields, refs: e.refs, data: e.data } } } as DeliveryPayload
  }

  #fields(row: SendableDelivery): PayloadFields {
    return {
      id: row.id,
      type: row.t_key ?? (row.e_connector === NOTICE_CONNECTOR ? row.e_type : 'event'),
      timestamp: row.created_at,
      data: {
        agentId: row.agent_id,
        triggerId: row.trigger_id,
        trigger: row.t_key,
        event: {
          id: row.event_id,
          connector: row.e_connector,
          type: row.e_type,
          upstreamId: row.e_upstream_id,
          occurredAt: row.e_occurred_at,
          refsJson: row.e_refs,
          dataJson: row.e_data,
        },
      },
    }
  }

  async joined(ids: string[]): Promise<SendableDelivery[]> {
    return this.#joined(ids)
  }

  #joined(ids: string[]): Promise<SendableDelivery[]> {
    return deliveries.sendable(this.#o.db, ids)
  }

  #target(row: DeliveryRow): Promise<PushTarget> {
    const cached = this.#urls.get(row.agent_id)
    if (cached && this.#clock.now() - cached.at < TARGET_CACHE_MS) return cached.target
    const target = (async () => {
      const agent = await this.#o.agents.get(row.workspace_id, row.agent_id)
      return {
        url: agent.delivery.type === 'webhook' ? agent.delivery.url : null,
        secrets: await this.#o.agents.signingSecrets(row.agent_id),
      }
    })()
    // The oldest goes first beyond the limit (an entry re-made moves to the end).
    this.#urls.delete(row.agent_id)
    if (this.#urls.size >= TARGETS_KEPT) this.#urls.delete(this.#urls.keys().next().value!)
    const entry = { target, at: this.#clock.now() }
    this.#urls.set(row.agent_id, entry)
    // A failed lookup is not kept.
    target.catch(() => {
      if (this.#urls.get(row.agent_id) === entry) this.#urls.delete(row.agent_id)
    })
    return target
  }

  /** Writes an attempt's outcome only while the claim is still this attempt's. */
  async #settle(
    ids: string[],
    attempt: number,
    values: Parameters<typeof deliveries.settle>[3],
    attempts: NewAttempt[] = [],
    trx: Kysely<Database> = this.#o.db,
  ): Promise<string[]> {
    const settled = await deliveries.settle(trx, ids, attempt, values)
    const mine = new Set(settled)
    await deliveries.addAttempts(
      trx,
      attempts.filter((a) => mine.has(a.delivery_id)),
    )
    return settled
  }

  async #sendBatch(batch: string[]): Promise<void> {
    // One id can be in a batch twice (handed on when stored, and found by a sweep meanwhile): it
    // is claimed once, so it is sent once.
    const ids = [...new Set(batch)]
    const now = this.#clock.now()
    const leaseUntil = isoAt(now + this.#pushLeaseMs)
    const fresh = new Map<string, SendableDelivery>()
    const attemptOf = new Map<string, number>()
    const toClaim: string[] = []
    const toRenew: Array<{ id: string; attempts: number; claimedUntil: string }> = []
    for (const id of ids) {
      const row = this.#fresh.get(id)
      this.#fresh.delete(id)
      if (row) fresh.set(id, row)
      if (!row?.claimed_until || !this.#held.delete(id)) toClaim.push(id)
      // Claimed at insert: this instance's while the claim still covers a whole request (and
      // then some); renewed first otherwise, unless it was taken over meanwhile.
      else if (Date.parse(row.claimed_until) - now >= this.#timeoutMs + 5_000) attemptOf.set(id, row.attempts)
      else toRenew.push({ id, attempts: row.attempts, claimedUntil: row.claimed_until })
    }
    for (const c of await deliveries.claim(this.#o.db, toClaim, { now: isoAt(now), leaseUntil }))
      attemptOf.set(c.id, c.attempts)
    for (const id of await deliveries.renew(this.#o.db, toRenew, leaseUntil))
      attemptOf.set(id, fresh.get(id)!.attempts)
    const known: SendableDelivery[] = []
    const unknown: string[] = []
    for (const id of ids) {
      if (!attemptOf.has(id)) continue
      const row = fresh.get(id)
      if (row) known.push(row)
      else unknown.push(id)
    }
    const rows = [...known, ...(await this.#joined(unknown))]
    if (rows.length === 0) return
    const outcomes = await Promise.all(rows.map((r) => this.#sendOne(r, attemptOf.get(r.id)!)))
    await this.#writeOutcomes(outcomes)
  }

  /**
   * Stores a batch's push outcomes, together with those of the other batches that finish within
   * outcomeLingerMs, in one write. Resolves when they are stored: the batch holds its lane until
   * then, so an idle lane means every outcome is in the store (readers see a delivery settled up to
   * the linger later; its claim covers that many times over).
   */
  #writeOutcomes(outcomes: SettledAttempt[]): Promise<void> {
    const lingerMs = this.#o.outcomeLingerMs ?? 0
    if (lingerMs <= 0) return deliveries.settleMany(this.#o.db, outcomes)
    if (outcomes.length === 0) return Promise.resolve()
    return new Promise((written, failed) => {
      this.#outcomes.push({ outcomes, written, failed })
      this.#outcomeCount += outcomes.length
      if (this.#outcomeCount >= OUTCOMES_PER_WRITE) this.#flushOutcomes()
      else this.#outcomeTimer ??= setTimeout(() => this.#flushOutcomes(), lingerMs)
    })
  }

  #flushOutcomes(): void {
    if (this.#outcomeTimer) clearTimeout(this.#outcomeTimer)
    this.#outcomeTimer = null
    const waiting = this.#outcomes
    this.#outcomes = []
    this.#outcomeCount = 0
    deliveries
      .settleMany(
        this.#o.db,
        waiting.flatMap((w) => w.outcomes),
      )
      .then(
        () => {
          for (const w of waiting) w.written()
        },
        (err) => {
          for (const w of waiting) w.failed(err)
        },
      )
  }

  async #sendOne(row: SendableDelivery, attemptNo: number) {
    if (!tracingOn()) return this.#sendOnce(row, attemptNo, null)
    const span = openSpan(
      `deliver ${row.t_key ?? 'event'}`,
      {
        'patchbay.delivery.id': row.id,
        'patchbay.delivery.attempt': attemptNo,
        'patchbay.event.id': row.event_id,
        'patchbay.agent.id': row.agent_id,
        'patchbay.trigger.id': row.trigger_id ?? undefined,
      },
      { kind: 'producer', parent: this.#traces.get(row.id) },
    )
    const outcome = await this.#sendOnce(row, attemptNo, span)
    span?.set({
      'http.response.status_code': outcome.attempt.status ?? undefined,
      'patchbay.delivery.outcome': outcome.update.status,
    })
    span?.end(outcome.update.status === 'delivered' ? null : 'DELIVERY_FAILED')
    if (outcome.update.status !== 'pending') this.#traces.delete(row.id)
    return outcome
  }

  async #sendOnce(row: SendableDelivery, attemptNo: number, span: OpenSpan | null) {
    const started = performance.now()
    let status: number | null = null
    let error: string | null = null
    let withdrawn: string | null = null
    try {
      const { url, secrets } = await this.#target(row)
      if (!url) throw new Error('the agent has no webhook URL (its delivery target changed)')
      // A retry or a replay is checked against the agent's scope and connections as they are now:
      // narrowing a scope or taking a connection away also stops what was matched before.
      withdrawn = attemptNo > 1 ? await this.#withdrawn(row) : null
      if (withdrawn)
        throw new Error(`not sent: ${withdrawn} (changed after the event was matched; not retried)`)
      const body = this.body(row)
      // Signed with the previous secret too while a rotation's overlap lasts (checked at each send,
      // so an overlap that ended is never signed with, cached or not).
      const valid =
        secrets.previous && secrets.previous.until > Date.now()
          ? [secrets.current, secrets.previous.secret]
          : secrets.current
      const headers = signDelivery(valid, row.id, Math.floor(this.#clock.now() / 1000), body)
      // The agent's own trace joins this one (W3C traceparent).
      if (span) injectHeaders(headers, span.context)
      const res = await request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Patchbay-Webhooks/1' },
        body,
        dispatcher: this.#o.dispatcher,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      })
      status = res.statusCode
      await res.body.dump()
      if (status < 200 || status >= 300) error = `the agent endpoint answered ${status}`
    } catch (err) {
      // A refused address says so, with the setting that allows it (not "fetch failed").
      const refusal = findEgressRefusal(err)
      const refused = refusal && egressRefused(refusal, 'delivery.url')
      error = refused ? `EGRESS_REFUSED: ${refused.message} ${refused.hint}` : (err as Error).message
    }
    const durationMs = Math.round(performance.now() - started)
    const now = this.#clock.now()
    const at = isoAt(now)
    const attempt: NewAttempt = {
      delivery_id: row.id,
      workspace_id: row.workspace_id,
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
          last_status: status,
          last_error: null,
          delivered_at: at,
          next_attempt_at: null,
        },
      }
    const delay = withdrawn ? undefined : this.retryScheduleMs[attemptNo - 1]
    if (delay === undefined)
      return {
        id: row.id,
        attempt,
        update: {
          status: 'dead' as const,
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
        last_status: status,
        last_error: error,
        next_attempt_at: isoAt(now + delay),
      },
    }
  }

  /** Why the delivery may no longer reach its agent (scope, connections), or null when it may. */
  async #withdrawn(row: SendableDelivery): Promise<string | null> {
    const def = row.t_key ? this.#o.registry.triggers.get(row.t_key)?.trigger : undefined
    if (!def || !row.trigger_id) return null
    const trigger = await this.#o.triggers.byId(row.trigger_id)
    if (!trigger) return null
    const agent = await this.#o.agents.get(row.workspace_id, row.agent_id)
    return eventOutsideScope(
      this.#o.registry.places,
      agent,
      { def, connectionId: trigger.connection_id },
      sendableEvent(row),
    )
  }

  async #runTool(id: string): Promise<void> {
    const now = this.#clock.now()
    // Claimed before it starts, once per attempt: no other instance starts this run.
    const [claim] = await deliveries.claim(this.#o.db, [id], {
      now: isoAt(now),
      leaseUntil: isoAt(now + (this.#o.toolLeaseMs ?? 15 * 60_000)),
      once: true,
    })
    this.#fresh.delete(id)
    this.#held.delete(id)
    if (!claim) return
    const [row] = await this.#joined([id])
    if (!row) return
    const target = row.target
    if (target.type !== 'tool') return
    const event = sendableEvent(row)
    const started = performance.now()
    // A tool answering its own changes is stopped at the loop guard's limit (events/loop-guard.ts).
    const guard = await this.#o.loopGuard.check({
      workspaceId: row.workspace_id,
      agentId: row.agent_id,
      connector: row.e_connector,
      upstreamId: row.e_upstream_id,
      refs: event.refs,
    })
    // A run that cannot start (the tool was deleted, its input is refused) fails the delivery
    // with the reason, instead of leaving it pending to be picked up again and again.
    const span = tracingOn()
      ? openSpan(
          'deliver to tool',
          {
            'patchbay.delivery.id': row.id,
            'patchbay.delivery.attempt': claim.attempts,
            'patchbay.event.id': row.event_id,
            'patchbay.agent.id': row.agent_id,
            'patchbay.tool.id': target.toolId,
          },
          { kind: 'internal', parent: this.#traces.get(row.id) },
        )
      : null
    this.#traces.delete(row.id)
    const run = guard.refused
      ? { id: null, status: 'failed', errorCode: 'LOOP_DETECTED', errorMessage: guard.refused }
      : await withContext(span?.context, () =>
          this.#o.tools
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
            })),
        )
    span?.set({ 'patchbay.tool_run.id': run.id ?? undefined, 'patchbay.tool_run.status': run.status })
    span?.end(run.status === 'succeeded' ? null : (run.errorCode ?? 'FAILED'))
    if (guard.refused) this.#o.log.warn({ delivery: id, depth: guard.depth }, 'loop guard refused a tool run')
    const ok = run.status === 'succeeded'
    const at = isoAt(this.#clock.now())
    await this.#o.db.transaction().execute(async (trx) => {
      // A tool run is not retried automatically: its steps may have acted upstream. Replay runs it again.
      await this.#settle(
        [id],
        claim.attempts,
        {
          status: ok ? 'delivered' : 'failed',
          tool_run_id: run.id,
          last_error: ok
            ? null
            : `${run.errorCode ?? 'FAILED'}: ${run.errorMessage ?? 'the tool run failed'}`,
          delivered_at: ok ? at : null,
          next_attempt_at: null,
        },
        [
          {
            delivery_id: id,
            workspace_id: row.workspace_id,
            attempt: claim.attempts,
            at,
            status: null,
            error: ok ? null : (run.errorMessage ?? 'failed'),
            duration_ms: Math.round(performance.now() - started),
          },
        ],
        trx,
      )
    })
  }
}
