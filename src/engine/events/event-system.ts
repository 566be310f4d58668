// The event side of the engine in one place: triggers and their upstream webhooks, the ingress,
// the inbox pipeline, deliveries, the agents' streams and the pollers, over one job queue and
// one sweep for due work (jobs/sweeps.ts).
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Dispatcher } from 'undici'
import type { Clock } from '../../kit/clock.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { SharedResults } from '../../kit/result-cache.ts'
import type { Causations } from '../../store/causations.ts'
import { inbox } from '../../store/event-log.ts'
import { Leases } from '../../store/leases.ts'
import { ParkedInbox } from '../../store/parked-inbox.ts'
import type { Database } from '../../store/schema.ts'
import { Subscriptions } from '../../store/subscriptions.ts'
import { Triggers } from '../../store/triggers.ts'
import type { Vault } from '../../store/vault.ts'
import type { PlacementChanges } from '../access/placement-changes.ts'
import type { Changes } from '../changes/changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import { InProcessJobQueue } from '../jobs/job-queue.ts'
import type { Sweeps } from '../jobs/sweeps.ts'
import type { Registry } from '../registry.ts'
import { diagnoseTrigger } from '../triggers/diagnose.ts'
import type { AgentDirectory, ToolRunner } from '../triggers/directories.ts'
import { Poller } from '../triggers/poller.ts'
import { TriggerService } from '../triggers/trigger-service.ts'
import { WebhookSubscriptions } from '../triggers/webhook-subscriptions.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'
import type { UpstreamPages } from '../upstream/upstream-pages.ts'
import { type AttributionOptions, EventAttributor } from './attribution.ts'
import { Deliverer } from './deliverer.ts'
import { DeliveryStreams } from './delivery-streams.ts'
import { EventHistory } from './history.ts'
import { Ingress } from './ingress.ts'
import { LoopGuard } from './loop-guard.ts'
import { Pipeline } from './pipeline.ts'

export interface EventOptions {
  /** Waits between push attempts; the last one dead-letters. */
  retryScheduleMs?: number[]
  deliveryTimeoutMs?: number
  minPollIntervalMs?: number
  /** How often due work (retries, polls, leftovers) is looked for. */
  sweepIntervalMs?: number
  /** Causation depth at which a tool run is refused (the loop guard); default 3. */
  loopDepthLimit?: number
  /** How often upstream webhooks are reconciled (one instance at a time); default 15 minutes. */
  reconcileIntervalMs?: number
  /** Deliveries waiting on an instance at which its ingress asks upstreams to wait (backpressure). */
  deliveryBacklogLimit?: number
  /** Group commits of the ingress under way at once (the engine gives 3 on PostgreSQL, 1 on SQLite). */
  concurrentCommits?: number
  /** Reading the place of events whose delivery does not name it (events/attribution.ts). */
  attribution?: AttributionOptions
}

export const DEFAULT_DELIVERY_BACKLOG_LIMIT = 1_000

const DEFAULT_RECONCILE_INTERVAL_MS = 15 * 60_000

export class EventSystem {
  /** This process's workers (claimed items are handed to them). */
  readonly jobs = new InProcessJobQueue()
  readonly streams: DeliveryStreams
  /** What was received and delivered, as the API, MCP and streams read it. */
  readonly history: EventHistory
  readonly triggers: TriggerService
  readonly deliverer: Deliverer
  readonly pipeline: Pipeline
  readonly ingress: Ingress
  readonly poller: Poller
  #deps: {
    db: Kysely<Database>
    registry: Registry
    connections: ConnectionService
    clients: UpstreamClients
  }
  #sweeps: Sweeps
  #log: FastifyBaseLogger
  #leases: Leases
  #parked: ParkedInbox
  #instanceId = `instance_${randomUUID()}`
  #reconcileIntervalMs: number
  #reconciler: NodeJS.Timeout | null = null
  #reconciling: Promise<void> | null = null

  constructor(deps: {
    db: Kysely<Database>
    registry: Registry
    connections: ConnectionService
    clients: UpstreamClients
    vault: Vault
    log: FastifyBaseLogger
    dispatcher: Dispatcher
    agents: AgentDirectory
    /** Tool runs, also for the loop guard (what they are running and what they changed). */
    tools: ToolRunner
    pages: UpstreamPages
    changes: Changes
    /** Who looks for due work (one instance at a time). */
    sweeps: Sweeps
    clock?: Clock
    /** Where stored events' cards and lists are announced (the scope guard forgets their places). */
    placements: PlacementChanges
    causations: Causations
    /** Lookup results shared by every instance (Redis when configured). */
    sharedResults?: SharedResults
    options?: EventOptions
  }) {
    const { db, registry, connections, clients, log, agents, tools, changes, clock } = deps
    this.#leases = new Leases(db)
    this.#reconcileIntervalMs = deps.options?.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS
    this.#deps = deps
    this.#log = log
    this.#sweeps = deps.sweeps
    this.jobs.onError = (name, err) => log.error({ err, job: name }, 'background job failed')
    const triggerRows = new Triggers(db)
    this.triggers = new TriggerService({
      webhooks: new WebhookSubscriptions({
        subscriptions: new Subscriptions(db),
        triggers: triggerRows,
        registry,
        connections,
        clients,
        vault: deps.vault,
        changes,
        log,
      }),
      triggers: triggerRows,
      registry,
      connections,
      agents,
      tools,
      pages: deps.pages,
      changes,
    })
    if (deps.options?.minPollIntervalMs !== undefined)
      this.triggers.minPollIntervalMs = deps.options.minPollIntervalMs
    this.deliverer = new Deliverer({
      db,
      jobs: this.jobs,
      changes,
      dispatcher: deps.dispatcher,
      agents,
      tools,
      registry,
      clock,
      log,
      retryScheduleMs: deps.options?.retryScheduleMs,
      timeoutMs: deps.options?.deliveryTimeoutMs,
      loopGuard: new LoopGuard({
        causations: deps.causations,
        tools: deps.tools,
        limit: deps.options?.loopDepthLimit,
      }),
    })
    this.#parked = new ParkedInbox(db)
    this.history = new EventHistory({ db, deliverer: this.deliverer, parked: this.#parked })
    this.streams = new DeliveryStreams({
      history: this.history,
      changes,
      onError: (err) => log.error({ err }, 'reading an event stream failed'),
    })
    this.pipeline = new Pipeline({
      db,
      registry,
      triggers: this.triggers,
      deliverer: this.deliverer,
      agents,
      log,
      placements: deps.placements,
      attributor: new EventAttributor({
        registry,
        connections,
        log,
        sharedResults: deps.sharedResults,
        options: deps.options?.attribution,
      }),
    })
    this.jobs.work('inbox', { batchSize: 1, concurrency: 1 }, async () => {
      // Rows that failed a try are tried again a little later (each a bounded number of times).
      const { retryLater } = await this.pipeline.drain()
      if (retryLater) this.jobs.send('inbox', {}, { singletonKey: 'inbox-retry', delayMs: 5_000 })
    })
    this.ingress = new Ingress({
      db,
      registry,
      triggers: this.triggers,
      connections,
      jobs: this.jobs,
      pipeline: this.pipeline,
      changes,
      log,
      deliverer: this.deliverer,
      backlogLimit: deps.options?.deliveryBacklogLimit ?? DEFAULT_DELIVERY_BACKLOG_LIMIT,
      concurrentCommits: deps.options?.concurrentCommits,
    })
    this.poller = new Poller({
      db,
      triggers: triggerRows,
      registry,
      connections,
      deliverer: this.deliverer,
      jobs: this.jobs,
      agents,
      clock,
      log,
      placements: deps.placements,
    })
  }

  /** Once the server listens: sweep for due work, and keep webhooks in step upstream. */
  async start(publicUrl: string): Promise<void> {
    this.triggers.webhooks.publicUrl = publicUrl.replace(/\/$/, '')
    await this.#sweeps.start(() => this.sweep())
    this.triggers.webhooks
      .reconcile()
      .then((r) => this.#log.info(r, 'webhooks reconciled'))
      .catch((err) => this.#log.error({ err }, 'webhook reconcile failed'))
    // Then periodically, by one instance at a time (a lease in the store): webhooks the upstream
    // removed are registered again, and a connection the upstream now refuses is marked lapsed.
    const every = this.#reconcileIntervalMs
    this.#reconciler = setInterval(() => {
      if (this.#reconciling) return
      this.#reconciling = this.#leases
        .take('webhook-reconcile', this.#instanceId, every * 2)
        .then(async (mine) => {
          if (mine) this.#log.debug(await this.triggers.webhooks.reconcile(), 'webhooks reconciled')
        })
        .catch((err) => this.#log.error({ err }, 'webhook reconcile failed'))
        .finally(() => {
          this.#reconciling = null
        })
    }, every)
    this.#reconciler.unref?.()
  }

  /**
   * One look for due work (run by one instance at a time): inbox rows left pending, deliveries
   * to retry or whose holder stopped, polls whose time came. Each item is claimed in its row.
   */
  async sweep(): Promise<void> {
    if ((await inbox.pending(this.#deps.db, 1)).length > 0)
      this.jobs.send('inbox', {}, { singletonKey: 'inbox' })
    await this.deliverer.sweep()
    await this.poller.sweep()
  }

  /** Stops sweeping and ends the streams; claimed work under way finishes within `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.streams.closeAll()
    if (this.#reconciler) clearInterval(this.#reconciler)
    await this.#reconciling
    await this.#sweeps.stop()
    await this.jobs.stop(graceMs)
    // Pushes claimed when they were stored and not started: the other instances send them now.
    await this.deliverer
      .releaseUnsent()
      .catch((err) => this.#log.error({ err }, 'giving back unsent pushes failed'))
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
    this.jobs.send('inbox', {}, { singletonKey: 'inbox' })
  }

  async diagnose(workspaceId: string, triggerId: string) {
    const row = await this.triggers.requireRow(workspaceId, triggerId)
    return diagnoseTrigger({ ...this.#deps, triggers: this.triggers }, row)
  }
}
