// What the engine lends a step run besides ctx.http: the connection's result cache and batcher,
// credit metering (the ledger reads each response's charge through the connector's `metering`)
// and budgets, and the connection's own rate limit. Connectors only declare; this file runs it.

import { type BatchCaller, Batcher } from '../../kit/batcher.ts'
import type { ConnectorDefinition, Credentials, StepContext, StepCredits } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { Budget } from '../../kit/pacer.ts'
import { ResultCache, type SharedResults } from '../../kit/result-cache.ts'
import type { ConnectionRateLimits } from '../../store/connection-rate-limits.ts'
import type { Caller } from '../access/caller.ts'
import type { CreditService } from '../access/credits.ts'
import type { Changes } from '../changes/changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'

/** Per-connector overrides of a connector's `lookups` defaults (from the configuration). */
export interface LookupTuning {
  cacheTtlMs?: number
  cacheMaxEntries?: number
  coalesceWindowMs?: number
}

export interface RunServices {
  /** The connection's own rate limit, when it has one. */
  pacing?: Budget
  /** For the run's ctx.http: books what each response was charged. */
  onResponse?: (status: number, headers: Record<string, string>) => void
  context: Pick<StepContext, 'cache' | 'batch' | 'credits'>
  /**
   * Resolves once every charge of the run is in the ledger and its credit holds are released;
   * undefined when the run charged and held nothing (most runs): nothing to wait for.
   */
  settle(): Promise<void> | undefined
}

export interface RateLimitView {
  connectionId: string
  requests: number | null
  perMs: number | null
  /** connection: set on this connection; default: the configuration's or the connector's pacing; none: unpaced. */
  source: 'connection' | 'default' | 'none'
}

const LIMIT_CACHE_MS = 5_000

/** The run StepServices.prepare lends to. */
interface RunToServe {
  caller: Caller
  stepId: string
  runId: string
  connector: ConnectorDefinition
  connectionId: string | null
  credentials: Credentials
}

export class StepServices {
  #clients: UpstreamClients
  #connections: ConnectionService
  #credits: CreditService
  #limits: ConnectionRateLimits
  #tuning: Record<string, LookupTuning>
  /** Each connector's lookups with the configuration's overrides, worked out once. */
  #tunings = new WeakMap<ConnectorDefinition, Required<LookupTuning>>()
  #registry: Registry
  #caches = new Map<string, ResultCache>()
  #batchers = new Map<string, Batcher>()
  #limitCache = new Map<string, { budget: Budget | null; at: number }>()
  #shared: { results: SharedResults; onError: (err: unknown) => void } | undefined

  constructor(deps: {
    clients: UpstreamClients
    connections: ConnectionService
    credits: CreditService
    limits: ConnectionRateLimits
    registry: Registry
    changes: Changes
    tuning?: Record<string, LookupTuning>
    /** Lookup results shared by every instance (Redis when configured). */
    sharedResults?: { results: SharedResults; onError: (err: unknown) => void }
  }) {
    this.#shared = deps.sharedResults
    // A connection deleted or replaced on any instance: this process forgets its results (those
    // shared in Redis are keyed by the connection and end with their time to live).
    deps.changes.subscribe('connections', (ids) => {
      if (ids.length === 0) this.#caches.clear()
      for (const id of ids) this.#caches.delete(id)
    })
    this.#registry = deps.registry
    this.#clients = deps.clients
    this.#connections = deps.connections
    this.#credits = deps.credits
    this.#limits = deps.limits
    this.#tuning = deps.tuning ?? {}
  }

  /** The run's services: at once when the connection's rate limit is known (most runs), else once it is read. */
  prepare(run: RunToServe): RunServices | Promise<RunServices> {
    if (!run.connectionId) return this.#services(run, undefined)
    const known = this.#knownRateLimit(run.connectionId)
    if (known !== undefined) return this.#services(run, known ?? undefined)
    return this.#rateLimit(run.connectionId).then((budget) => this.#services(run, budget ?? undefined))
  }

  #services(run: RunToServe, pacing: Budget | undefined): RunServices {
    const { caller, connector, connectionId } = run

    let charged = 0
    const writes: Promise<void>[] = []
    /** Credit holds being released (each once the run's charges are written). */
    const releasing: Promise<void>[] = []
    const charge = (credits: number, remaining: number | undefined) => {
      if (credits <= 0 || !connectionId) return
      charged += credits
      writes.push(
        this.#credits.record({
          caller,
          connectionId,
          connector: connector.id,
          stepId: run.stepId,
          runId: run.runId,
          credits,
          remaining,
        }),
      )
    }
    const credits: StepCredits = {
      reserve: async (worstCase) => {
        const release = await this.#credits.reserve(caller, worstCase)
        return () => {
          releasing.push(release())
        }
      },
      get charged() {
        return charged
      },
    }
    const metering = connector.metering
    const services: RunServices = {
      pacing,
      onResponse: metering
        ? (_status, headers) => {
            const m = metering.read(headers)
            if (m) charge(m.charged, m.remaining)
          }
        : undefined,
      context: { credits },
      // Most runs charge nothing and hold nothing: nothing to wait for.
      settle: () =>
        writes.length > 0 || releasing.length > 0
          ? Promise.all(writes).then(() => Promise.all(releasing).then(() => {}))
          : undefined,
    }

    const tuning = this.#tuningOf(connector)
    if (connectionId && tuning) {
      services.context.cache = this.#cacheFor(connectionId, tuning)
      const batcher = this.#batcherFor(connectionId, connector, tuning)
      const batchCaller: BatchCaller = {
        // Bulk calls are paced like the step's own requests but not metered by the run's hook:
        // the batcher splits their charge among the runs that shared them.
        http: () =>
          this.#connections.client(connectionId, connector, run.credentials, { paced: true, pacing }),
        charge,
      }
      services.context.batch = (spec, queries) => batcher.add(spec, queries, batchCaller)
    }
    return services
  }

  async rateLimit(workspaceId: string, connectionId: string): Promise<RateLimitView> {
    const view = await this.#connections.get(workspaceId, connectionId)
    const own = await this.#rateLimit(connectionId)
    if (own) return { connectionId, requests: own.points, perMs: own.durationMs, source: 'connection' }
    const connector = this.#registry.connector(view.connector)
    const d = connector ? this.#clients.defaultPacing(connector) : undefined
    return d
      ? { connectionId, requests: d.points, perMs: d.durationMs, source: 'default' }
      : { connectionId, requests: null, perMs: null, source: 'none' }
  }

  async setRateLimit(
    workspaceId: string,
    connectionId: string,
    limit: { requests: number; perMs: number },
  ): Promise<RateLimitView> {
    await this.#connections.get(workspaceId, connectionId)
    await this.#limits.put(workspaceId, connectionId, limit)
    this.#limitCache.set(connectionId, {
      budget: { points: limit.requests, durationMs: limit.perMs },
      at: Date.now(),
    })
    return { connectionId, requests: limit.requests, perMs: limit.perMs, source: 'connection' }
  }

  async clearRateLimit(workspaceId: string, connectionId: string): Promise<void> {
    await this.#connections.get(workspaceId, connectionId)
    const deleted = await this.#limits.delete(connectionId)
    this.#limitCache.delete(connectionId)
    if (!deleted)
      throw new PatchbayError(
        'RATE_LIMIT_NOT_SET',
        `Connection ${connectionId} has no rate limit of its own.`,
        {
          hint: 'It is paced by the connector default; GET /v1/connections/{id}/rate-limit shows it.',
        },
      )
  }

  #tuningOf(connector: ConnectorDefinition): Required<LookupTuning> | null {
    if (!connector.lookups) return null
    let tuning = this.#tunings.get(connector)
    if (!tuning) {
      tuning = { ...connector.lookups, ...definedOnly(this.#tuning[connector.id]) }
      this.#tunings.set(connector, tuning)
    }
    return tuning
  }

  #cacheFor(connectionId: string, tuning: Required<LookupTuning>): ResultCache {
    let c = this.#caches.get(connectionId)
    if (!c) {
      c = new ResultCache({
        ttlMs: tuning.cacheTtlMs,
        maxEntries: tuning.cacheMaxEntries,
        shared: this.#shared && { ...this.#shared, namespace: connectionId },
      })
      this.#caches.set(connectionId, c)
    }
    return c
  }

  #batcherFor(connectionId: string, connector: ConnectorDefinition, tuning: Required<LookupTuning>): Batcher {
    const key = `${connectionId}:${connector.id}`
    let b = this.#batchers.get(key)
    if (!b) {
      b = new Batcher({ windowMs: tuning.coalesceWindowMs, metering: connector.metering })
      this.#batchers.set(key, b)
    }
    return b
  }

  /** The connection's rate limit when cached and fresh (null: it has none); undefined when it must be read. */
  #knownRateLimit(connectionId: string): Budget | null | undefined {
    const hit = this.#limitCache.get(connectionId)
    return hit && Date.now() - hit.at < LIMIT_CACHE_MS ? hit.budget : undefined
  }

  async #rateLimit(connectionId: string): Promise<Budget | null> {
    const known = this.#knownRateLimit(connectionId)
    if (known !== undefined) return known
    const row = await this.#limits.get(connectionId)
    const budget = row ? { points: row.requests, durationMs: row.per_ms } : null
    if (this.#limitCache.size > 10_000) this.#limitCache.clear()
    this.#limitCache.set(connectionId, { budget, at: Date.now() })
    return budget
  }
}

function definedOnly<T extends object>(o: T | undefined): Partial<T> {
  const out: Partial<T> = {}
  if (o) for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v
  return out
}
