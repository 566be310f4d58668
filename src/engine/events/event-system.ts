// The event side of the engine in one place: triggers and their upstream webhooks, the ingress,
// the inbox pipeline, deliveries, the agents' streams and the pollers, over one job queue.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Dispatcher } from 'undici'
import type { Causations } from '../../store/causations.ts'
import type { Database } from '../../store/schema.ts'
import { Subscriptions } from '../../store/subscriptions.ts'
import { Triggers } from '../../store/triggers.ts'
import type { Vault } from '../../store/vault.ts'
import type { PlacementChanges } from '../access/placement-changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import { InProcessJobQueue } from '../jobs/job-queue.ts'
import type { Registry } from '../registry.ts'
import { diagnoseTrigger } from '../triggers/diagnose.ts'
import type { AgentDirectory, ToolRunner } from '../triggers/directories.ts'
import { Poller } from '../triggers/poller.ts'
import { TriggerService } from '../triggers/trigger-service.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'
import type { UpstreamPages } from '../upstream/upstream-pages.ts'
import { Deliverer } from './deliverer.ts'
import { Ingress } from './ingress.ts'
import { LoopGuard } from './loop-guard.ts'
import { Pipeline } from './pipeline.ts'
import { StreamHub } from './stream-hub.ts'

export interface EventOptions {
  /** Waits between push attempts; the last one dead-letters. */
  retryScheduleMs?: number[]
  deliveryTimeoutMs?: number
  /** How often due retries are looked for. */
  scanIntervalMs?: number
  minPollIntervalMs?: number
  /** Causation depth at which a tool run is refused (the loop guard); default 3. */
  loopDepthLimit?: number
}

export class EventSystem {
  readonly jobs = new InProcessJobQueue()
  readonly hub = new StreamHub()
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
  #log: FastifyBaseLogger

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
    /** Where stored events' cards and lists are announced (the scope guard forgets their places). */
    placements: PlacementChanges
    causations: Causations
    options?: EventOptions
  }) {
    const { db, registry, connections, clients, log, agents, tools } = deps
    this.#deps = deps
    this.#log = log
    this.jobs.onError = (name, err) => log.error({ err, job: name }, 'background job failed')
    const triggerRows = new Triggers(db)
    this.triggers = new TriggerService({
      subscriptions: new Subscriptions(db),
      triggers: triggerRows,
      registry,
      connections,
      clients,
      vault: deps.vault,
      agents,
      tools,
      pages: deps.pages,
      log,
    })
    if (deps.options?.minPollIntervalMs !== undefined)
      this.triggers.minPollIntervalMs = deps.options.minPollIntervalMs
    this.deliverer = new Deliverer({
      db,
      jobs: this.jobs,
      hub: this.hub,
      dispatcher: deps.dispatcher,
      agents,
      tools,
      log,
      retryScheduleMs: deps.options?.retryScheduleMs,
      timeoutMs: deps.options?.deliveryTimeoutMs,
      scanIntervalMs: deps.options?.scanIntervalMs,
      loopGuard: new LoopGuard({
        causations: deps.causations,
        tools: deps.tools,
        limit: deps.options?.loopDepthLimit,
      }),
    })
    this.pipeline = new Pipeline({
      db,
      registry,
      triggers: this.triggers,
      deliverer: this.deliverer,
      agents,
      log,
      placements: deps.placements,
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
      log,
    })
    this.poller = new Poller({
      db,
      triggers: triggerRows,
      registry,
      connections,
      deliverer: this.deliverer,
      jobs: this.jobs,
      agents,
      log,
      placements: deps.placements,
    })
    this.triggers.onPolledTrigger = (row) => this.poller.schedule(row)
  }

  /** Once the server listens: recover what a crash left, then keep webhooks in step upstream. */
  async start(publicUrl: string): Promise<void> {
    this.triggers.publicUrl = publicUrl.replace(/\/$/, '')
    this.jobs.send('inbox', {}, { singletonKey: 'inbox' })
    await this.deliverer.scanDue()
    this.deliverer.start()
    await this.poller.start()
    this.triggers
      .reconcile()
      .then((r) => this.#log.info(r, 'webhooks reconciled'))
      .catch((err) => this.#log.error({ err }, 'webhook reconcile failed'))
  }

  async stop(): Promise<void> {
    this.deliverer.stop()
    await this.jobs.stop()
  }

  async diagnose(workspaceId: string, triggerId: string) {
    const row = await this.triggers.requireRow(workspaceId, triggerId)
    return diagnoseTrigger({ ...this.#deps, triggers: this.triggers }, row)
  }
}
