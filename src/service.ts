// Starts Patchbay: the store, the vault, the engine and the HTTP server, in that order.
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import type { Config } from './config.ts'
import { PostgresChangeTransport, RedisChangeTransport } from './engine/changes/transports.ts'
import { Engine } from './engine/engine.ts'
import { PgBossSweeps } from './engine/jobs/sweeps.ts'
import { createRedisPacer } from './kit/redis-pacer.ts'
import { buildApp, loggerOptions } from './server/app.ts'
import { bootstrapWorkspace } from './server/bootstrap.ts'
import { openStore } from './store/database.ts'
import { loadVault } from './store/vault.ts'

export interface RunningService {
  app: FastifyInstance
  engine: Engine
  url: string
  workspaceId: string
  /** The admin key in clear when this start created it (printed once). */
  generatedAdminKey: string | null
  close(): Promise<void>
}

export interface ServiceOptions {
  baseUrls: Record<string, string | undefined>
  /** PostgreSQL schema to isolate in (tests). */
  pgSchema?: string
  /** false silences the log (tests). */
  logging?: boolean
  /** OAuth apps to use where the configuration names none (the sandbox's demo app). */
  oauthApps?: Record<string, { clientId: string; clientSecret: string } | undefined>
}

export async function startService(config: Config, opts: ServiceOptions): Promise<RunningService> {
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgSchema: opts.pgSchema,
  })
  const vault = loadVault(config)
  // One logger for the server and the engine, so both are redacted alike.
  const log =
    opts.logging === false ? pino({ level: 'silent' }) : pino(loggerOptions(config.logLevel) as object)
  // With Redis, every instance sharing a token shares its pacing budget.
  const redisPacer = config.redisUrl ? createRedisPacer(config.redisUrl) : null
  // Several instances share one PostgreSQL: changes travel between them (Redis pub/sub when
  // configured, else LISTEN/NOTIFY), and one of them at a time looks for due work (pg-boss).
  const pg = store.postgres
  const name = pg?.schema ?? 'public'
  const changes = config.redisUrl
    ? new RedisChangeTransport({ url: config.redisUrl, channel: `patchbay:changes:${name}` })
    : pg
      ? new PostgresChangeTransport({
          url: pg.url,
          pool: pg.pool,
          channel: `patchbay_changes_${name}`,
          onError: (err) => log.warn({ err }, 'the change listener lost its connection'),
        })
      : null
  const sweeps = pg
    ? new PgBossSweeps({
        connectionString: pg.url,
        schema: pg.schema ? `${pg.schema}_jobs` : 'patchbay_jobs',
        everyMs: config.deliveryScanMs,
        onError: (err) => log.error({ err }, 'the job queue failed'),
      })
    : undefined
  const engine = new Engine({
    changes,
    sweeps,
    pacer: redisPacer ?? undefined,
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
    },
    pacing: config.pacing,
    oauth: { apps: { ...opts.oauthApps, ...config.oauthApps }, webUrls: config.webUrls },
  })
  await engine.changes.start()
  const app = await buildApp(engine, { loggerInstance: log })
  await app.listen({ port: config.port, host: config.host })
  // Only once the server listens: a start that fails before has created nothing, so a generated
  // admin key is never lost with it.
  const boot = await bootstrapWorkspace(store, config.adminKey)
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr ? addr.port : config.port
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  await engine.events.start(config.publicUrl ?? `http://${host}:${port}`)
  return {
    app,
    engine,
    url: `http://${host}:${port}`,
    workspaceId: boot.workspaceId,
    generatedAdminKey: boot.generatedAdminKey,
    close: async () => {
      // Streams end first (an open stream would hold the server), then requests under way finish,
      // then claimed work finishes or is left to its lease.
      engine.events.streams.closeAll()
      await app.close()
      await engine.close()
      await redisPacer?.close()
    },
  }
}
