// The upstream webhook source. A delivery is verified (a missing or wrong signature is refused
// and stored nowhere), read (sources/webhook-delivery.ts), and its events recorded (recorder.ts)
// before the upstream gets its 200. Concurrent deliveries are recorded together (group commit):
// one write for many requests, each answered once its rows are on disk. A delivery that cannot be
// recorded is kept raw in the inbox (acknowledged: nothing is lost) and drained later, read the
// same way, a bounded number of tries before it is set aside with the reason.

import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { NormalizedEvent } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import { activeContext, inSpan, tracingOn } from '../../../kit/tracing.ts'
import { type HeldListeners, inbox, type NewInboxRow } from '../../../store/event-log.ts'
import { nowIso } from '../../../store/ids.ts'
import type { ParkedInbox } from '../../../store/parked-inbox.ts'
import type { Database } from '../../../store/schema.ts'
import type { SubscriptionRow } from '../../../store/subscriptions.ts'
import type { Changes } from '../../changes/changes.ts'
import type { ConnectionService } from '../../connections/connection-service.ts'
import type { JobQueue } from '../../jobs/job-queue.ts'
import type { Registry } from '../../registry.ts'
import type { ListeningTrigger, TriggerService } from '../../triggers/trigger-service.ts'
import type { Deliverer } from '../deliverer.ts'
import { type EventSource, type Listener, type Recorder, triggerListener } from '../recorder.ts'
import { readDelivery } from './webhook-delivery.ts'

/** Only these headers of a delivery are kept (the rest may carry proxies' noise). */
const KEPT_HEADERS = /^(x-taskboard-|x-codehost-|x-hub-signature|content-type|user-agent)/

/** How long a delivery waits for others to share its commit. */
const LINGER_MS = 2
/**
 * From this share of the backlog limit on, a growing share of the deliveries of upstreams that
 * send them again is refused (none here, all at the limit): senders are slowed a few at a time
 * as the backlog grows instead of all at once when it is full — all of them asleep for a whole
 * Retry-After while the backlog drains, then all back together, left delivery idle half the time.
 */
const EARLY_REFUSALS_FROM = 0.5
/** Inbox rows read at a time by a drain. */
const DRAIN_BATCH = 500
/** Tries of an inbox row that fails to process before it is set aside. */
export const INBOX_MAX_TRIES = 5

export interface IngressResult {
  status: 'accepted' | 'ignored'
  reason?: string
}

/** A verified delivery waiting for its commit; its request is answered when it settles. */
interface PendingDelivery {
  row: NewInboxRow
  sub: SubscriptionRow
  source: EventSource
  events: NormalizedEvent[]
  resolve: () => void
  reject: (e: unknown) => void
}

export class Ingress {
  #db: Kysely<Database>
  #registry: Registry
  #triggers: TriggerService
  #connections: ConnectionService
  #jobs: JobQueue
  #log: FastifyBaseLogger
  /** Each webhook's row and secret, until a change to it (engine changes). */
  #subs = new Map<string, { sub: SubscriptionRow; secret: string }>()
  #pending: PendingDelivery[] = []
  #recorder: Recorder
  #parked: ParkedInbox
  /** Group commits under way, and at most how many at once. */
  #commits = 0
  #maxCommits: number
  #lingering = false
  #deliverer: Pick<Deliverer, 'lag'>
  #backlogLimit: number
  /** Refusals owed by the share of deliveries to refuse at the backlog so far (one is made at each whole one). */
  #refusalsOwed = 0
  /** Whether other instances may change triggers (a shared store): listeners are confirmed at each commit. */
  #confirmListeners: boolean
  #heard: (connectionId: string) => void
  /** The listeners each source was made with (held against the store before its commit). */
  #listenedWith = new WeakMap<EventSource, ListeningTrigger[]>()
  /**
   * The listeners made from a webhook's cached triggers, made once for the cached list (which a
   * change replaces) rather than for each delivery: a webhook heard by ten triggers made ten
   * listeners, each with its own match closure, for every event.
   */
  #listenersOf = new WeakMap<ListeningTrigger[], Listener[]>()

  constructor(deps: {
    db: Kysely<Database>
    registry: Registry
    triggers: TriggerService
    connections: ConnectionService
    jobs: JobQueue
    recorder: Recorder
    /** Raw deliveries set aside in the inbox (put back in line by `retryParked`). */
    parked: ParkedInbox
    changes: Changes
    log: FastifyBaseLogger
    /** How far delivery lags (the backlog the ingress holds back on). */
    deliverer: Pick<Deliverer, 'lag'>
    /** Deliveries waiting on this instance at which upstreams that redeliver are asked to wait. */
    backlogLimit: number
    /**
     * Group commits that may be under way at once (default 1). On PostgreSQL a commit waits on the
     * server rather than on this process, so the next group is stored meanwhile.
     */
    concurrentCommits?: number
    /**
     * Several instances share the store (PostgreSQL): a trigger made or removed through another
     * instance may not have reached this one's cache yet, so each group commit first holds the
     * cached listeners against the store (TriggerService.dropStaleListeners). On SQLite there is
     * one process, whose cache changes before the request that changed it answers.
     */
    sharedStore?: boolean
    /** Told of each verified delivery whose connector's webhooks prove its credentials (provesCredentials). */
    heard?: (connectionId: string) => void
  }) {
    this.#heard = deps.heard ?? (() => {})
    this.#maxCommits = Math.max(1, deps.concurrentCommits ?? 1)
    this.#confirmListeners = deps.sharedStore ?? false
    this.#deliverer = deps.deliverer
    this.#backlogLimit = deps.backlogLimit
    // A webhook removed or re-registered on any instance is read again here.
    deps.changes.subscribe('triggers', (ids) => {
      if (ids.length === 0) this.#subs.clear()
      for (const id of ids) this.#subs.delete(id)
    })
    this.#recorder = deps.recorder
    this.#parked = deps.parked
    this.#db = deps.db
    this.#registry = deps.registry
    this.#triggers = deps.triggers
    this.#connections = deps.connections
    this.#jobs = deps.jobs
    this.#log = deps.log
    this.#jobs.work('inbox', { batchSize: 1, concurrency: 1 }, async () => {
      // Rows that failed a try are tried again a little later (each a bounded number of times).
      const { retryLater } = await this.drain()
      if (retryLater) this.#jobs.send('inbox', {}, { singletonKey: 'inbox-retry', delayMs: 5_000 })
    })
  }

  receive(
    connectorId: string,
    hookId: string,
    headers: Record<string, string>,
    rawBody: string,
  ): Promise<IngressResult> {
    if (!tracingOn()) return this.#receive(connectorId, hookId, headers, rawBody)
    return inSpan(
      `ingress ${connectorId}`,
      { 'patchbay.connector': connectorId, 'patchbay.subscription.id': hookId },
      async (span) => {
        const result = await this.#receive(connectorId, hookId, headers, rawBody)
        span?.set({ 'patchbay.ingress.status': result.status })
        return result
      },
    )
  }

  async #receive(
    connectorId: string,
    hookId: string,
    headers: Record<string, string>,
    rawBody: string,
  ): Promise<IngressResult> {
    const known = await this.#subscription(connectorId, hookId)
    const connector = this.#registry.connector(connectorId)!
    if (connector.webhooks!.redelivers) this.#holdBack()
    const connection = await this.#connections.load(known.sub.workspace_id, known.sub.connection_id)
    const credentials = connection.credentials
    const delivery = { headers, rawBody, callbackUrl: this.#triggers.callbackUrl(connectorId, hookId) }
    if (!connector.webhooks!.verify(delivery, { secret: known.secret, credentials })) {
      this.#log.warn(
        { connector: connectorId, hook: hookId },
        'refused a webhook delivery with a missing or wrong signature',
      )
      throw new PatchbayError('SIGNATURE_INVALID', 'The delivery signature is missing or does not match.', {
        hint: 'Deliveries must be signed by the upstream with the secret of this webhook.',
      })
    }
    if (connector.webhooks!.provesCredentials) this.#heard(known.sub.connection_id)
    const read = readDelivery(connector.webhooks!, delivery)
    if (read.kind === 'ignored') return { status: 'ignored', reason: read.reason }
    if (read.kind === 'unreadable')
      throw new PatchbayError('MALFORMED_DELIVERY', 'The delivery body could not be read.', {
        hint: "Send the upstream's JSON delivery body unchanged.",
      })
    if (read.kind === 'unstorable') {
      this.#log.warn(
        { connector: connectorId, hook: hookId, problem: read.problem },
        'refused a hostile webhook delivery',
      )
      throw new PatchbayError('MALFORMED_DELIVERY', `The delivery cannot be stored: ${read.problem}.`, {
        hint: "Send the upstream's delivery body unchanged; this one's structure is not one the upstream sends.",
      })
    }
    const kept: Record<string, string> = {}
    for (const [k, v] of Object.entries(headers)) if (KEPT_HEADERS.test(k)) kept[k] = v
    const receivedAt = nowIso()
    const source = await this.sourceOf(known.sub, receivedAt)
    source.owner = connection.row.end_user_id ?? ''
    // With tracing on, the events are recorded in this request's trace.
    if (tracingOn()) source.trace = activeContext()
    await this.#commit(known.sub, source, read.events, {
      subscription_id: hookId,
      delivery_id: read.deliveryId,
      headers: JSON.stringify(kept),
      body: rawBody,
      status: 'pending',
      error: null,
      received_at: receivedAt,
    })
    return { status: 'accepted' }
  }

  /**
   * Where a webhook's events come from: the webhook, heard by the triggers listening on it (read
   * from the store when `fresh`, else as cached).
   */
  async sourceOf(sub: SubscriptionRow, receivedAt: string, fresh = false): Promise<EventSource> {
    const listening = await this.#triggers.listeningOn(sub.id, { fresh })
    const source: EventSource = {
      workspaceId: sub.workspace_id,
      connector: sub.connector,
      connectionId: sub.connection_id,
      subscriptionId: sub.id,
      model: sub.model,
      receivedAt,
      listeners: this.#listeners(listening),
      keepUnheard: true,
    }
    // Kept only where the listeners are held against a shared store (#held, #confirm).
    if (this.#confirmListeners) this.#listenedWith.set(source, listening)
    return source
  }

  #listeners(listening: ListeningTrigger[]): Listener[] {
    let listeners = this.#listenersOf.get(listening)
    if (!listeners) {
      listeners = listening.map((t) => triggerListener(t.row, t.def, t.target, t.config, 'when-matched'))
      this.#listenersOf.set(listening, listeners)
    }
    return listeners
  }

  /**
   * Processes inbox rows left pending, oldest first: each read as the ingress reads a delivery,
   * and recorded together with the row marked done in the same commit. When that commit fails,
   * each goes through on its own, so one row that cannot be processed blocks none behind it: it
   * is tried again on a later drain and set aside (`failed`, with the reason) after
   * INBOX_MAX_TRIES. A row that cannot be read at all is set aside at once.
   */
  async drain(): Promise<{ retryLater: boolean }> {
    let after = 0
    let retryLater = false
    for (;;) {
      const rows = await inbox.pending(this.#db, DRAIN_BATCH, after)
      if (rows.length === 0) break
      after = Number(rows[rows.length - 1].seq)
      const items: Array<{
        seq: number
        sub: SubscriptionRow
        source: EventSource
        events: NormalizedEvent[]
      }> = []
      const ignored: number[] = []
      const unreadable: Array<{ seq: number; error: string }> = []
      for (const row of rows) {
        const sub = await this.#triggers.subscription(row.subscription_id)
        const hooks = sub && this.#registry.connector(sub.connector)?.webhooks
        if (!sub || !hooks) {
          unreadable.push({ seq: row.seq, error: 'its webhook was removed before it was processed' })
          continue
        }
        if (row.headers === null) {
          unreadable.push({ seq: row.seq, error: `could not be read: ${row.unreadable}` })
          continue
        }
        const read = readDelivery(hooks, { headers: row.headers, rawBody: row.body, callbackUrl: '' })
        if (read.kind === 'ignored') ignored.push(row.seq)
        else if (read.kind === 'unreadable')
          unreadable.push({ seq: row.seq, error: `could not be read: ${read.reason}` })
        else if (read.kind === 'unstorable')
          unreadable.push({ seq: row.seq, error: `cannot be stored: ${read.problem}` })
        else
          items.push({
            seq: row.seq,
            sub,
            source: await this.sourceOf(sub, row.received_at),
            events: read.events,
          })
      }
      await this.#db.transaction().execute(async (trx) => {
        await inbox.mark(trx, ignored, 'done')
        for (const f of unreadable) await inbox.mark(trx, [f.seq], 'failed', f.error)
      })
      for (const f of unreadable) this.#log.warn({ inbox: f.seq, reason: f.error }, 'inbox row set aside')
      try {
        await this.#confirm(items)
        await this.#recordRows(items)
      } catch (err) {
        this.#log.warn({ err }, 'inbox rows failed together; processing them one by one')
        for (const item of items) {
          try {
            await this.#recordRows([item])
          } catch (e) {
            const reason = `could not be processed: ${(e as Error).message}`
            const outcome = await inbox.failedTry(this.#db, item.seq, reason, INBOX_MAX_TRIES)
            this.#log.error({ inbox: item.seq, err: e, outcome }, 'an inbox row could not be processed')
            if (outcome === 'retry') retryLater = true
          }
        }
      }
      if (rows.length < DRAIN_BATCH) break
    }
    return { retryLater }
  }

  /** Records the rows' events and marks the rows done, in one commit. */
  async #recordRows(items: Array<{ seq: number; source: EventSource; events: NormalizedEvent[] }>) {
    if (items.length === 0) return
    await this.#recorder.recordMany(items, {
      inCommit: (trx) =>
        inbox.mark(
          trx,
          items.map((i) => i.seq),
          'done',
        ),
    })
  }

  /** Puts an upstream delivery set aside in the inbox back in line, and processes it now. */
  async retryParked(workspaceId: string, seq: number): Promise<void> {
    if (!(await this.#parked.retry(workspaceId, seq)))
      throw new PatchbayError(
        'INBOX_ROW_NOT_FOUND',
        `No upstream delivery #${seq} is set aside in the inbox.`,
        {
          hint: 'List those set aside with GET /v1/inbox.',
        },
      )
    this.#jobs.send('inbox', {}, { singletonKey: 'inbox' })
  }

  /** Inbox rows left pending (by an older process, or a failure): the drain is started. */
  async sweep(): Promise<void> {
    if ((await inbox.pending(this.#db, 1)).length > 0) this.#jobs.send('inbox', {}, { singletonKey: 'inbox' })
  }

  /** How far delivery lags on this instance, against the limit the ingress holds back at. */
  backlog(): { backlog: number; oldestAgeMs: number; limit: number; holdingBack: boolean } {
    const lag = this.#deliverer.lag()
    return { ...lag, limit: this.#backlogLimit, holdingBack: lag.backlog >= this.#backlogLimit }
  }

  /**
   * Backpressure: while the deliveries waiting to be sent (or running) on this instance are past
   * EARLY_REFUSALS_FROM of the limit, a share of the deliveries from upstreams that send them again
   * is refused with 503 and Retry-After, before any work is done for them — a share growing with
   * the backlog, every one at the limit — instead of letting the backlog and the latency grow.
   * The share is kept exactly, not drawn at random: at 60 % of the way, 3 of every 5 are refused.
   */
  #holdBack(): void {
    const lag = this.#deliverer.lag()
    const from = this.#backlogLimit * EARLY_REFUSALS_FROM
    if (lag.backlog < from) {
      this.#refusalsOwed = 0
      return
    }
    this.#refusalsOwed += Math.min(1, (lag.backlog - from) / (this.#backlogLimit - from))
    if (this.#refusalsOwed < 1) return
    this.#refusalsOwed -= 1
    throw new PatchbayError(
      'DELIVERY_BACKLOG_FULL',
      `${lag.backlog} deliveries are waiting to be sent (the limit is ${this.#backlogLimit}); send this one again later.`,
      { retryAfterMs: Math.min(30_000, Math.max(1_000, Math.ceil(lag.oldestAgeMs / 1000) * 1000)) },
    )
  }

  /** The webhook a callback address names; unknown ones answer 410 so the upstream drops them. */
  async #subscription(connectorId: string, hookId: string) {
    const cached = this.#subs.get(hookId)
    // A known hook id under another connector's address is as unknown as any other.
    if (cached && cached.sub.connector === connectorId) return cached
    const sub = await this.#triggers.subscription(hookId)
    if (!sub || sub.connector !== connectorId || !this.#registry.connector(connectorId)?.webhooks) {
      this.#subs.delete(hookId)
      throw new PatchbayError('UNKNOWN_HOOK', `No webhook ${hookId} is registered for ${connectorId}.`, {
        hint: 'The webhook was removed; the upstream should stop sending to this address.',
      })
    }
    const entry = { sub, secret: this.#triggers.subscriptionSecret(sub) }
    this.#subs.set(hookId, entry)
    return entry
  }

  #commit(
    sub: SubscriptionRow,
    source: EventSource,
    events: NormalizedEvent[],
    row: NewInboxRow,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ row, sub, source, events, resolve, reject })
      if (this.#lingering || this.#commits >= this.#maxCommits) return
      this.#lingering = true
      // A few milliseconds of lingering gathers concurrent deliveries into one commit.
      setTimeout(() => {
        this.#lingering = false
        void this.#flush()
      }, LINGER_MS)
    })
  }

  /**
   * With a shared store: the listeners the deliveries were matched with, held against the store
   * (read after each delivery arrived, so after any change whose request answered before it);
   * those that changed are read again.
   */
  async #confirm(batch: Array<{ sub: SubscriptionRow; source: EventSource }>): Promise<void> {
    if (!this.#confirmListeners || batch.length === 0) return
    const current = await this.#triggers.listenersNow([...new Set(batch.map((b) => b.sub.id))])
    const isCurrent = (sub: string, source: EventSource) => {
      const list = this.#listenedWith.get(source)
      return list !== undefined && current(sub, list)
    }
    for (const b of batch) {
      if (isCurrent(b.sub.id, b.source)) continue
      // As cached now (another delivery of this group may have read them again), else read again
      // from the store: the cache may hold the same listeners, or others read before the change.
      let fresh = await this.sourceOf(b.sub, b.source.receivedAt)
      if (!isCurrent(b.sub.id, fresh)) fresh = await this.sourceOf(b.sub, b.source.receivedAt, true)
      fresh.trace = b.source.trace
      fresh.owner = b.source.owner
      b.source = fresh
    }
  }

  /** The listeners a group's deliveries were matched with (null: check them first). */
  #held(batch: Array<{ sub: SubscriptionRow; source: EventSource }>): HeldListeners | null {
    const read: Array<{ subscriptionId: string; list: ListeningTrigger[] }> = []
    for (const b of batch) {
      const list = this.#listenedWith.get(b.source)
      if (!list) return null
      read.push({ subscriptionId: b.sub.id, list })
    }
    return this.#triggers.heldListeners(read)
  }

  /**
   * One delivery on its own commit; if even that fails, its raw row is kept in the inbox (it is
   * acknowledged: nothing is lost) for the drain, which retries it a bounded number of times and
   * then sets it aside with the reason. Only when the raw row cannot be written either is the
   * upstream told to send it again.
   */
  async #commitAlone(b: PendingDelivery): Promise<void> {
    try {
      await this.#recorder.record(b.source, b.events)
      b.resolve()
    } catch (err) {
      this.#log.error(
        { err, hook: b.row.subscription_id, delivery: b.row.delivery_id },
        'a webhook delivery could not be processed; keeping it in the inbox',
      )
      try {
        await inbox.insertMany(this.#db, [{ ...b.row, error: (err as Error).message }])
        b.resolve()
        this.#jobs.send('inbox', {}, { singletonKey: 'inbox', delayMs: 1000 })
      } catch (e) {
        b.reject(e)
      }
    }
  }

  /** Commits waiting deliveries, a group at a time, while it has a turn (#maxCommits at once). */
  async #flush(): Promise<void> {
    this.#commits++
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, 500)
      try {
        // Their events and deliveries in one commit; where instances share the store, only if
        // the listeners they were matched with are those in it then (checked in the same
        // statement). Else the listeners are checked first and those that changed read again.
        const held = this.#confirmListeners ? this.#held(batch) : null
        const recorded = held && (await this.#recorder.recordMany(batch, { listenersHeld: held }))
        if (!recorded || recorded.stale) {
          await this.#confirm(batch)
          await this.#recorder.recordMany(batch)
        }
        for (const b of batch) b.resolve()
      } catch (err) {
        // One bad delivery must not take its neighbours down: each is tried on its own commit.
        this.#log.warn({ err }, 'a group commit of webhook deliveries failed; committing them one by one')
        await Promise.all(batch.map((b) => this.#commitAlone(b)))
      }
    }
    this.#commits--
  }
}
