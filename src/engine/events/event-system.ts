// The event side of the engine as one running whole: its parts (built by the Engine, in
// constructor order) and their lifecycle — one sweep for due work (inbox rows, deliveries, polls,
// connection checks, long jobs: jobs/sweeps.ts), upstream webhooks reconciled periodically by one
// instance at a time, and a clean stop. The event path itself:
//
//   sources/webhook-ingress.ts (upstream webhooks, and the inbox drain) ┐
//   sources/poller.ts (polled triggers)                                  ├→ recorder.ts → deliverer.ts
//   Patchbay's own notices (Recorder.record with a notice source)        ┘    (attribute, match,
//                                                                              store, dispatch)
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Leases } from '../../store/leases.ts'
import type { Database } from '../../store/schema.ts'
import type { ConnectionHealth } from '../connections/connection-health.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { InProcessJobQueue } from '../jobs/job-queue.ts'
import type { LongJobs } from '../jobs/long-jobs.ts'
import type { Sweeps } from '../jobs/sweeps.ts'
import type { PublicAddress } from '../public-address.ts'
import type { Registry } from '../registry.ts'
import { diagnoseTrigger } from '../triggers/diagnose.ts'
import type { TriggerService } from '../triggers/trigger-service.ts'
import type { AttributionOptions } from './attribution.ts'
import type { Deliverer } from './deliverer.ts'
import type { DeliveryStreams } from './delivery-streams.ts'
import type { EventHistory } from './history.ts'
import type { Recorder } from './recorder.ts'
import type { Poller } from './sources/poller.ts'
import type { Ingress } from './sources/webhook-ingress.ts'

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
  /** How often a connection with triggers is checked upstream (connections/connection-health.ts); default 25 s. */
  connectionCheckMs?: number
  /** Deliveries waiting on an instance at which its ingress asks upstreams to wait (backpressure). */
  deliveryBacklogLimit?: number
  /** Group commits of the ingress under way at once (the engine gives 3 on PostgreSQL, 1 on SQLite). */
  concurrentCommits?: number
  /** Reading the place of events whose delivery does not name it (events/attribution.ts). */
  attribution?: AttributionOptions
}

export const DEFAULT_DELIVERY_BACKLOG_LIMIT = 1_000

export const DEFAULT_RECONCILE_INTERVAL_MS = 15 * 60_000

export class EventSystem {
  /** This process's workers (claimed items are handed to them). */
  readonly jobs: InProcessJobQueue
  readonly streams: DeliveryStreams
  /** What was received and delivered, as the API, MCP and streams read it. */
  readonly history: EventHistory
  readonly triggers: TriggerService
  readonly deliverer: Deliverer
  /** The one recorder every source hands its events to. */
  readonly recorder: Recorder
  /** The upstream webhook source (and its inbox). */
  readonly ingress: Ingress
  /** The polled source. */
  readonly poller: Poller
  #db: Kysely<Database>
  #health: ConnectionHealth
  #registry: Registry
  #connections: ConnectionService
  #sweeps: Sweeps
  #log: FastifyBaseLogger
  #leases: Leases
  #instanceId = `instance_${randomUUID()}`
  #reconcileIntervalMs: number
  #reconciler: NodeJS.Timeout | null = null
  #reconciling: Promise<void> | null = null
  #address: PublicAddress
  /** Long jobs (jobs/long-jobs.ts), whose due work is looked for in the same sweep. */
  #longJobs: LongJobs

  constructor(parts: {
    jobs: InProcessJobQueue
    /** Long jobs: jobs handed on from a stopped instance, looked for in the same sweep. */
    longJobs: LongJobs
    /** Connections with triggers, checked upstream in the sweep (a lapse pauses them). */
    health: ConnectionHealth
    streams: DeliveryStreams
    history: EventHistory
    triggers: TriggerService
    deliverer: Deliverer
    recorder: Recorder
    ingress: Ingress
    poller: Poller
    /** Who looks for due work (one instance at a time). */
    sweeps: Sweeps
    /** Who reconciles upstream webhooks (one instance at a time). */
    leases: Leases
    reconcileIntervalMs?: number
    /** What diagnosing a trigger reads. */
    db: Kysely<Database>
    registry: Registry
    connections: ConnectionService
    log: FastifyBaseLogger
    /** Told where this instance is reached when the server starts (webhook and OAuth callbacks). */
    address: PublicAddress
  }) {
    this.#address = parts.address
    this.jobs = parts.jobs
    this.#longJobs = parts.longJobs
    this.#health = parts.health
    this.streams = parts.streams
    this.history = parts.history
    this.triggers = parts.triggers
    this.deliverer = parts.deliverer
    this.recorder = parts.recorder
    this.ingress = parts.ingress
    this.poller = parts.poller
    this.#sweeps = parts.sweeps
    this.#leases = parts.leases
    this.#reconcileIntervalMs = parts.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS
    this.#db = parts.db
    this.#registry = parts.registry
    this.#connections = parts.connections
    this.#log = parts.log
  }

  /** Once the server listens: sweep for due work, and keep webhooks in step upstream. */
  async start(publicUrl: string): Promise<void> {
    this.#address.set(publicUrl)
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
    await this.ingress.sweep()
    await this.deliverer.sweep()
    await this.poller.sweep()
    await this.#health.sweep()
    await this.#longJobs.sweep()
  }

  /** Stops sweeping and ends the streams; claimed work under way finishes within `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.streams.closeAll()
    if (this.#reconciler) clearInterval(this.#reconciler)
    await this.#reconciling
    await this.#sweeps.stop()
    await this.#health.idle()
    await this.jobs.stop(graceMs)
    // Pushes claimed when they were stored and not started: the other instances send them now.
    await this.deliverer
      .releaseUnsent()
      .catch((err) => this.#log.error({ err }, 'giving back unsent pushes failed'))
  }

  async diagnose(workspaceId: string, triggerId: string) {
    const row = await this.triggers.requireRow(workspaceId, triggerId)
    return diagnoseTrigger(
      { db: this.#db, registry: this.#registry, connections: this.#connections, triggers: this.triggers },
      row,
    )
  }
}
