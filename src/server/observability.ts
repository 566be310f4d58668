// Operating Patchbay: request ids, the log line of each request, liveness and readiness probes,
// and Prometheus metrics.
//
// Request ids: taken from X-Request-Id when it is a sane token, generated otherwise, returned in
// the response's X-Request-Id, and carried by every log line written while the request is served
// — the engine's too, through an AsyncLocalStorage that the logger's mixin reads.
import { AsyncLocalStorage } from 'node:async_hooks'
import { randomUUID, timingSafeEqual } from 'node:crypto'
import diagnostics from 'node:diagnostics_channel'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { sql } from 'kysely'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Engine } from '../engine/engine.ts'
import { PatchbayError } from '../kit/errors.ts'
import { contextFromHeaders, type OpenSpan, openSpan, tracingCounts, withContext } from '../kit/tracing.ts'
import { migrationStatus } from '../store/migrations.ts'
import { publicRoute } from './authenticate.ts'

const requestContext = new AsyncLocalStorage<{ reqId: string }>()

/**
 * pino's mixin: the request id of the request being served, on lines written outside the
 * request's own logger (the engine's). Request loggers already carry it as a binding.
 */
export function requestIdMixin(_merge: object, _level: number, logger?: { bindings(): object }): object {
  const store = requestContext.getStore()
  if (!store || (logger && 'reqId' in logger.bindings())) return {}
  return { reqId: store.reqId }
}

/** A caller's X-Request-Id is kept when it is a plain token (letters, digits, `-_.:`), up to 128 characters. */
export function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID()
}

/** Whether a logger writes lines of a level (pino says; any other logger is asked to write them). */
const writes = (log: object, level: string): boolean =>
  (log as { isLevelEnabled?(level: string): boolean }).isLevelEnabled?.(level) ?? true

/** Request ids in responses and logs, and one debug line per request when it is answered. */
export function installRequestLogging(app: FastifyInstance): void {
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id)
    requestContext.run({ reqId: req.id }, done)
  })
  app.addHook('onResponse', (req, reply, done) => {
    // The line is built only when it is written (debug is off by default).
    if (writes(req.log, 'debug'))
      req.log.debug(
        {
          method: req.method,
          url: req.url.split('?')[0],
          statusCode: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      )
    done()
  })
}

const SPAN = Symbol('span')

/**
 * One server span per request when tracing is on (installed only then): its parent is the caller's
 * W3C `traceparent` when it sends one (REST and MCP calls), and everything the request does (a
 * step, its upstream requests; a webhook's ingress) is under it. Named by the route template, never
 * the address (ids, query strings).
 */
export function installTracing(app: FastifyInstance): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched'
    const span = openSpan(
      `${req.method} ${route}`,
      { 'http.request.method': req.method, 'http.route': route, 'patchbay.request_id': req.id },
      { kind: 'server', parent: contextFromHeaders(req.headers) },
    )
    if (!span) return done()
    ;(req as unknown as Record<symbol, OpenSpan>)[SPAN] = span
    withContext(span.context, done)
  })
  app.addHook('onResponse', (req, reply, done) => {
    const span = (req as unknown as Record<symbol, OpenSpan | undefined>)[SPAN]
    if (span) {
      span.set({
        'http.response.status_code': reply.statusCode,
        'patchbay.workspace.id': (req as { caller?: { workspaceId?: string } }).caller?.workspaceId,
      })
      span.end(reply.statusCode >= 500 ? `HTTP_${reply.statusCode}` : null)
    }
    done()
  })
}

/**
 * Whether this start is done: the store opened and migrated, the workspace made, the webhook
 * subscriptions and the public address known. Until then the API, MCP and the webhook ingress
 * answer 503 SERVICE_STARTING with Retry-After (a delivery is never judged — and refused as
 * unsigned — against an address not known yet), and /readyz says what is still starting.
 */
export class Startup {
  #step: string | null
  #stopping = false
  constructor(step: string | null = 'the store') {
    this.#step = step
  }
  get ready(): boolean {
    return this.#step === null && !this.#stopping
  }
  get stopping(): boolean {
    return this.#stopping
  }
  /** A stop began: new requests are refused (503 SERVICE_STOPPING) while those under way finish. */
  stop(): void {
    this.#stopping = true
  }
  /** What is still starting, or null once ready. */
  get step(): string | null {
    return this.#step
  }
  starting(step: string): void {
    this.#step = step
  }
  done(): void {
    this.#step = null
  }
}

/** The routes that need the store and the engine: the API, MCP, sign-in and the webhook ingress. */
const GATED = /^\/(v1\/|hooks\/|mcp(\/|\?|$)|connect\/)/
/** Retry-After while starting. */
const STARTING_RETRY_AFTER_MS = 1_000

/**
 * Answers before any work while the service cannot do it: 503 SERVICE_STARTING while starting,
 * 503 DATABASE_UNAVAILABLE while the database is away, 507 STORAGE_FULL for writes (503 for webhook
 * deliveries, which upstreams send again on a 503) while the disk has no room. Each with
 * Retry-After; nothing is stored, so nothing is acknowledged that was not.
 */
export function installReadinessGate(app: FastifyInstance, engine: Engine, startup: Startup): void {
  const health = engine.store.health
  app.addHook('onRequest', (req, reply, done) => {
    if (startup.ready && health.available) return done()
    if (!GATED.test(req.url)) return done()
    const ingress = req.url.startsWith('/hooks/')
    if (startup.stopping) {
      // The connection is closed after the answer, so the client's next try finds a live instance.
      reply.header('connection', 'close')
      return done(
        new PatchbayError('SERVICE_STOPPING', 'This instance is stopping; send this again.', {
          retryAfterMs: STARTING_RETRY_AFTER_MS,
        }),
      )
    }
    if (!startup.ready)
      return done(
        new PatchbayError(
          'SERVICE_STARTING',
          `Patchbay is starting (${startup.step}); send this again shortly.`,
          {
            retryAfterMs: STARTING_RETRY_AFTER_MS,
          },
        ),
      )
    // A full disk still serves reads; the webhook HEAD/GET check of an upstream is a read too.
    if (health.problem?.kind === 'full' && (req.method === 'GET' || req.method === 'HEAD')) return done()
    done(health.refusal({ ingress }))
  })
}

/**
 * `/healthz`: the process answers. `/readyz`: started, the store answers (and has room), its
 * migrations are applied; Redis, an accelerator, is reported but does not make an instance unready.
 */
export function installProbes(
  app: FastifyInstance,
  engine: Engine,
  redis: Redis | null,
  startup: Startup,
): void {
  app.get('/healthz', { config: publicRoute, schema: { hide: true } }, async () => ({ ok: true }))
  app.get('/readyz', { config: publicRoute, schema: { hide: true } }, async (_req, reply) => {
    const checks: Record<string, string> = {}
    if (startup.stopping) checks.startup = 'stopping'
    else if (!startup.ready) checks.startup = `starting: ${startup.step}`
    const problem = engine.store.health.problem
    if (problem?.kind === 'unreachable')
      checks.database = `unreachable since ${problem.since}: ${problem.reason}`
    else
      try {
        await withTimeout(sql`select 1`.execute(engine.store.db), 2000)
        const { pending } = await withTimeout(migrationStatus(engine.store.db), 2000)
        checks.database = 'ok'
        checks.migrations = pending.length === 0 ? 'ok' : `pending: ${pending.join(', ')}`
      } catch (err) {
        engine.store.health.failure(err)
        checks.database = `unreachable: ${(err as Error).message}`
      }
    if (problem?.kind === 'full') checks.disk = `full since ${problem.since}: ${problem.reason}`
    const ready = Object.values(checks).every((c) => c === 'ok')
    if (redis) {
      checks.redis = await withTimeout(redis.ping(), 2000).then(
        () => 'ok',
        (err: Error) =>
          `unreachable: ${err.message} (pacing falls back to this instance's share of each budget; caches and changes to the store)`,
      )
    }
    return reply.code(ready ? 200 : 503).send({ ready, checks })
  })
}

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref()),
  ])

/**
 * Prometheus metrics at `/metrics`, readable with `Authorization: Bearer <PATCHBAY_METRICS_TOKEN>`
 * (without a token the route does not exist). HTTP durations and upstream requests are counted by
 * this instance; step runs, deliveries, queue depths and credits are read from the store when
 * scraped, so they are the deployment's totals whichever instance answers.
 */
export function installMetrics(
  app: FastifyInstance,
  engine: Engine,
  opts: { token: string; baseUrls: Record<string, string | undefined> },
): { close(): void } {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'patchbay_' })

  const httpDuration = new Histogram({
    name: 'patchbay_http_request_duration_seconds',
    help: 'HTTP requests served, by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  app.addHook('onResponse', (req: FastifyRequest, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched'
    httpDuration.observe(
      { method: req.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    )
    done()
  })

  // Upstream requests, seen through undici's diagnostics channel (every request of the kit's
  // client reports there), counted by connector from their base addresses.
  const upstreamRequests = new Counter({
    name: 'patchbay_upstream_requests_total',
    help: 'Requests sent to upstreams, by connector and status class.',
    labelNames: ['connector', 'status'] as const,
    registers: [registry],
  })
  const upstreamRateLimited = new Counter({
    name: 'patchbay_upstream_rate_limited_total',
    help: 'Upstream answers 429 (rate limited), by connector.',
    labelNames: ['connector'] as const,
    registers: [registry],
  })
  const connectorOf = new Map<string, string>()
  for (const [id, url] of Object.entries(opts.baseUrls)) if (url) connectorOf.set(new URL(url).origin, id)
  const onHeaders = (message: unknown) => {
    const { request, response } = message as {
      request: { origin?: string | URL }
      response: { statusCode: number }
    }
    const connector = connectorOf.get(new URL(String(request.origin)).origin)
    if (!connector) return
    upstreamRequests.inc({ connector, status: `${Math.floor(response.statusCode / 100)}xx` })
    if (response.statusCode === 429) upstreamRateLimited.inc({ connector })
  }
  diagnostics.subscribe('undici:request:headers', onHeaders)

  const db = engine.store.db
  new Gauge({
    name: 'patchbay_step_runs',
    help: 'Step runs recorded in the store, by step and outcome.',
    labelNames: ['step', 'outcome'] as const,
    registers: [registry],
    async collect() {
      this.reset()
      for (const r of await engine.stepRuns.countByStepAndStatus())
        this.set({ step: r.step_id, outcome: r.status }, r.n)
    },
  })
  new Gauge({
    name: 'patchbay_deliveries',
    help: 'Deliveries to agents in the store, by status (pending, delivered, failed, dead).',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset()
      const rows = await db
        .selectFrom('deliveries')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute()
      for (const r of rows) this.set({ status: r.status }, Number(r.n))
    },
  })
  new Gauge({
    name: 'patchbay_queue_depth',
    help: 'Work waiting: received webhooks not yet processed (inbox), deliveries pending, tool runs running.',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      const count = async (table: 'inbox' | 'deliveries' | 'tool_runs', status: 'pending' | 'running') =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('status', '=', status)
              .executeTakeFirst()
          )?.n ?? 0,
        )
      this.set({ queue: 'inbox' }, await count('inbox', 'pending'))
      this.set({ queue: 'deliveries' }, await count('deliveries', 'pending'))
      this.set({ queue: 'tool_runs' }, await count('tool_runs', 'running'))
    },
  })
  // How far delivery lags on this instance (what its ingress holds back on, PATCHBAY_DELIVERY_BACKLOG_LIMIT).
  new Gauge({
    name: 'patchbay_delivery_backlog',
    help: 'Deliveries handed to this instance to send (or run) and not yet settled; at PATCHBAY_DELIVERY_BACKLOG_LIMIT the ingress answers 503.',
    registers: [registry],
    collect() {
      this.set(engine.events.ingress.backlog().backlog)
    },
  })
  new Gauge({
    name: 'patchbay_delivery_lag_seconds',
    help: 'How long the oldest delivery waiting on this instance has waited.',
    registers: [registry],
    collect() {
      this.set(engine.events.ingress.backlog().oldestAgeMs / 1000)
    },
  })
  new Gauge({
    name: 'patchbay_credits_spent',
    help: 'Credits metered upstreams charged, by connector (the credit ledger).',
    labelNames: ['connector'] as const,
    registers: [registry],
    async collect() {
      this.reset()
      const rows = await db
        .selectFrom('credit_ledger')
        .select(['connector', (eb) => eb.fn.sum<number>('credits').as('n')])
        .groupBy('connector')
        .execute()
      for (const r of rows) this.set({ connector: r.connector }, Number(r.n ?? 0))
    },
  })

  new Gauge({
    name: 'patchbay_trace_spans_dropped_total',
    help: 'Trace spans this instance dropped: the trace backend did not take them, or the export queue was full (0 with tracing off).',
    registers: [registry],
    collect() {
      this.set(tracingCounts.dropped)
    },
  })
  new Gauge({
    name: 'patchbay_trace_spans_exported_total',
    help: 'Trace spans this instance exported to the OTLP backend.',
    registers: [registry],
    collect() {
      this.set(tracingCounts.exported)
    },
  })

  const expected = Buffer.from(`Bearer ${opts.token}`)
  app.get('/metrics', { config: publicRoute, schema: { hide: true } }, async (req, reply) => {
    const given = Buffer.from(req.headers.authorization ?? '')
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new PatchbayError(
        'UNAUTHORIZED',
        'The metrics need Authorization: Bearer <PATCHBAY_METRICS_TOKEN>.',
        {
          hint: 'Send the token PATCHBAY_METRICS_TOKEN is set to.',
        },
      )
    return reply.type(registry.contentType).send(await registry.metrics())
  })
  return { close: () => diagnostics.unsubscribe('undici:request:headers', onHeaders) }
}
