// Starts Patchbay: the store, the vault, the engine and the HTTP server, in that order.

import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import PinoPretty from 'pino-pretty'
import { type Config, maskUrlPassword, StartupError } from './config.ts'
import {
  PostgresChangeTransport,
  RedisChangeTransport,
  RedisOrPostgresChangeTransport,
} from './engine/changes/transports.ts'
import { Engine } from './engine/engine.ts'
import { PgBossSweeps } from './engine/jobs/sweeps.ts'
import { Registry } from './engine/registry.ts'
import type { Clock } from './kit/clock.ts'
import type { ConnectorDefinition } from './kit/define.ts'
import { EgressGuard, type Resolve } from './kit/egress.ts'
import { smtpMailer } from './kit/mailer.ts'
import { createPacer, type Pacer } from './kit/pacer.ts'
import { createRedisBudgetLedger } from './kit/redis-budgets.ts'
import { RedisLink } from './kit/redis-link.ts'
import { createRedisPacer, pacerWithFallback } from './kit/redis-pacer.ts'
import { createRedisResults } from './kit/redis-results.ts'
import { PATCHBAY_VERSION } from './kit/version.ts'
import { buildApp, loggerOptions } from './server/app.ts'
import { bootstrapWorkspace } from './server/bootstrap.ts'
import { Startup } from './server/observability.ts'
import { openStore } from './store/database.ts'
import { loadVault } from './store/vault.ts'

export interface RunningService {
  app: FastifyInstance
  engine: Engine
  url: string
  workspaceId: string
  /** The owner key in clear when this start created it (printed once). */
  generatedAdminKey: string | null
  /**
   * While no person owns the first workspace: the one-time link that lets the first person claim
   * it (printed at every start until then; the token is in the fragment, never sent in a request
   * line or logged).
   */
  ownerSetupUrl: string | null
  /** The owner-setup token itself (for POST /v1/auth/claim-owner), with ownerSetupUrl. */
  ownerSetupToken: string | null
  close(): Promise<void>
}

export interface ServiceOptions {
  baseUrls: Record<string, string | undefined>
  /** PostgreSQL schema to isolate in (tests). */
  pgSchema?: string
  /** false silences the log (tests). */
  logging?: boolean
  /** Where log lines go instead of stdout (JSON; tests read them). */
  logDestination?: pino.DestinationStream
  /** OAuth apps to use where the configuration names none (the sandbox's demo app). */
  oauthApps?: Record<string, { clientId: string; clientSecret: string } | undefined>
  /** Time for the parts that wait (tests drive a manual clock). */
  clock?: Clock
  /** A pacer instead of the in-memory one (tests count what it lets through). */
  pacer?: Pacer
  /** Allow-list entries beside PATCHBAY_EGRESS_ALLOW: what the caller started itself (the embedded sandbox's host:port). */
  egressAllow?: string[]
  /** Name resolution for the egress guard (tests give a stub resolver). */
  egressResolve?: Resolve
  /** The connectors it offers instead of those Patchbay ships (src/connectors/index.ts): tests add one. */
  connectors?: ConnectorDefinition[]
}

/** stdout as readable lines (a terminal) or JSON lines (a log collector). */
function logStream(format: Config['logFormat']): pino.DestinationStream {
  if (format === 'json') return pino.destination({ dest: 1, sync: true })
  return PinoPretty({
    colorize: process.stdout.isTTY,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    sync: true,
  })
}

/** How long a start waits for PostgreSQL or Redis to answer before giving up. */
const CONNECT_TIMEOUT_MS = 5_000

async function checkPostgres(url: string): Promise<void> {
  // The clients of PostgreSQL, Redis and pg-boss are loaded only when configured: an embedded
  // start does not pay for them.
  const { Client } = (await import('pg')).default
  const client = new Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS })
  try {
    await client.connect()
    await client.query('select 1')
  } catch (err) {
    throw new StartupError(
      `PATCHBAY_DATABASE_URL=${JSON.stringify(maskUrlPassword(url))}: PostgreSQL did not answer (${(err as Error).message || (err as { code?: string }).code}); start it, or fix the address`,
    )
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * The service's one Redis connection, checked at start. Later outages are waited out: its link
 * (kit/redis-link.ts) hears every error, logs an outage once, and says whether Redis answers, so
 * each use falls back meanwhile.
 */
async function connectRedis(config: Config, log: pino.Logger): Promise<RedisLink> {
  const { Redis } = await import('ioredis')
  const redis = new Redis(config.redisUrl!, {
    lazyConnect: true,
    keyPrefix: config.redisPrefix,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 3,
  })
  const link = new RedisLink(redis, log)
  try {
    await redis.connect()
    await redis.ping()
  } catch (err) {
    redis.disconnect()
    throw new StartupError(
      `REDIS_URL=${JSON.stringify(maskUrlPassword(config.redisUrl!))}: Redis did not answer (${(err as Error).message}); start it, fix the address, or unset REDIS_URL`,
    )
  }
  return link
}

export async function startService(config: Config, opts: ServiceOptions): Promise<RunningService> {
  if (config.databaseUrl) await checkPostgres(config.databaseUrl)
  // Tracing is loaded only when configured (kit/tracing.ts); its SDK is process-wide.
  let tracing: { shutdown(): Promise<void> } | null = null
  // One logger for the server, the store and the engine, so all are redacted alike.
  const log =
    opts.logging === false
      ? pino({ level: 'silent' })
      : pino(loggerOptions(config.logLevel) as object, opts.logDestination ?? logStream(config.logFormat))
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    poolSize: config.databasePoolSize,
    preparedStatements: config.databasePreparedStatements,
    dataDir: config.dataDir,
    pgSchema: opts.pgSchema,
    minFreeBytes: config.minFreeDiskMb * 1024 * 1024,
    log,
  })
  const vault = loadVault(config)
  /** A background failure: one that says the store is away is the store's to tell (once an outage); any other is logged. */
  const backgroundFailure = (what: string) => (err: unknown) => {
    if (!store.health.failure(err)) log.error({ err }, what)
  }
  const link = config.redisUrl ? await connectRedis(config, log).catch(closeStore(store)) : null
  const redis = link?.redis ?? null
  if (config.tracing) {
    const { startTracing } = await import('./kit/tracing.ts')
    tracing = await startTracing({ ...config.tracing, version: PATCHBAY_VERSION, log })
  }
  // Several instances share one PostgreSQL: changes travel between them (Redis pub/sub when
  // configured, else LISTEN/NOTIFY), and one of them at a time looks for due work (pg-boss).
  const pg = store.postgres
  const name = pg?.schema ?? 'public'
  const postgresChanges = pg
    ? new PostgresChangeTransport({
        url: pg.url,
        pool: pg.pool,
        channel: `patchbay_changes_${name}`,
        onError: (err) => {
          if (!store.health.failure(err)) log.warn({ err }, 'the change listener lost its connection')
        },
      })
    : null
  const redisChanges = link
    ? new RedisChangeTransport({ redis: link.redis, channel: `${config.redisPrefix}changes:${name}`, link })
    : null
  // With both, PostgreSQL carries the changes while Redis is away.
  const changes =
    redisChanges && postgresChanges && link
      ? new RedisOrPostgresChangeTransport(redisChanges, postgresChanges, link)
      : (redisChanges ?? postgresChanges)
  const sweeps = pg
    ? await PgBossSweeps.open({
        connectionString: pg.url,
        schema: pg.schema ? `${pg.schema}_jobs` : 'patchbay_jobs',
        everyMs: config.deliveryScanMs,
        onError: backgroundFailure('the job queue failed'),
        health: store.health,
      })
    : undefined
  const engine = new Engine({
    registry: opts.connectors ? new Registry(opts.connectors) : undefined,
    changes,
    sweeps,
    egress: new EgressGuard({
      allow: [...config.egressAllow, ...(opts.egressAllow ?? [])],
      resolve: opts.egressResolve,
    }),
    // With Redis, every instance sharing a token shares its pacing budget.
    // While Redis is away, each instance paces on its share of each budget.
    pacer:
      opts.pacer ??
      (link
        ? pacerWithFallback(
            createRedisPacer(link.redis, undefined, (c) => link.timed(c)),
            createPacer(opts.clock),
            link,
            config.redisOutagePacingShare,
          )
        : undefined),
    // …and a lookup paid for on one instance is a cache hit on the others.
    sharedResults: link ? createRedisResults(link.redis, undefined, link) : undefined,
    // …and what is left of an upstream's reported request budget (the code-host's x-ratelimit-*).
    budgetLedger: link ? createRedisBudgetLedger(link.redis, undefined, link) : undefined,
    clock: opts.clock,
    store,
    vault,
    baseUrls: opts.baseUrls,
    log,
    timeoutMs: config.upstreamTimeoutMs,
    retry: { retries: config.upstreamRetries },
    lookups: config.lookups,
    events: {
      retryScheduleMs: config.deliveryRetryScheduleMs,
      deliveryTimeoutMs: config.deliveryTimeoutMs,
      sweepIntervalMs: config.deliveryScanMs,
      minPollIntervalMs: config.minPollIntervalMs,
      loopDepthLimit: config.loopDepthLimit,
      reconcileIntervalMs: config.reconcileIntervalMs,
      connectionCheckMs: config.connectionCheckMs,
      deliveryBacklogLimit: config.deliveryBacklogLimit,
    },
    pacing: config.pacing,
    oauth: { apps: { ...opts.oauthApps, ...config.oauthApps }, webUrls: config.webUrls },
    people: {
      signup: config.signup,
      sessionTtlMs: config.sessionTtlMs,
      mailer: config.smtp ? smtpMailer(config.smtp.url, config.smtp.from) : null,
      sso: config.oidc,
    },
  })
  await engine.changes.start()
  // The listener opens before the start is done (its port may be chosen by the system, and the
  // public address follows from it), but the API and the webhook ingress answer 503 with
  // Retry-After until the workspace, the webhook subscriptions and the public address are ready.
  const startup = new Startup('the workspace')
  const app = await buildApp(engine, {
    loggerInstance: log,
    redis,
    startup,
    metricsToken: config.metricsToken,
    baseUrls: opts.baseUrls,
    // Session cookies are Secure (and __Host- named) when browsers reach Patchbay over https.
    secureCookies: config.publicUrl?.startsWith('https://') ?? false,
    trustProxy: config.trustProxy,
  })
  await app.listen({ port: config.port, host: config.host }).catch((err: NodeJS.ErrnoException) => {
    // The two ways a good address fails to listen, told as one line like the settings' problems.
    if (err.code === 'EADDRINUSE')
      throw new StartupError(
        `PORT="${config.port}": ${config.host}:${config.port} is in use by another program; stop it, or choose another PORT`,
      )
    if (err.code === 'EACCES')
      throw new StartupError(
        `PORT="${config.port}": this user may not listen on port ${config.port}; choose a PORT above 1023`,
      )
    throw err
  })
  // Only once the server listens: a start that fails before has created nothing, so a generated
  // admin key is never lost with it.
  const boot = await bootstrapWorkspace(store, config.adminKey)
  startup.starting('webhook subscriptions')
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr ? addr.port : config.port
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  await engine.events.start(config.publicUrl ?? `http://${host}:${port}`)
  const ownerSetupToken = await engine.workspaces.ownerSetupToken(boot.workspaceId)
  const publicBase = (config.publicUrl ?? `http://${host}:${port}`).replace(/\/$/, '')
  startup.done()
  return {
    app,
    engine,
    url: `http://${host}:${port}`,
    workspaceId: boot.workspaceId,
    generatedAdminKey: boot.generatedAdminKey,
    ownerSetupToken,
    ownerSetupUrl: ownerSetupToken ? `${publicBase}/#claim-owner=${ownerSetupToken}` : null,
    close: async () => {
      // Streams end first (an open stream would hold the server), then requests under way finish,
      // then claimed work finishes or is left to its lease.
      engine.events.streams.closeAll()
      startup.stop()
      await app.close()
      await engine.close()
      // A Redis away is let go of at once (quit would wait for it to come back).
      if (redis?.status === 'ready') await redis.quit()
      else redis?.disconnect()
      await tracing?.shutdown()
    },
  }
}

/** Closes the store before passing on a start's failure. */
const closeStore =
  (store: { close(): Promise<void> }) =>
  async (err: unknown): Promise<never> => {
    await store.close()
    throw err
  }
