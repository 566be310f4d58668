// Starts Patchbay: the store, the vault, the engine and the HTTP server, in that order.
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import type { Config } from './config.ts'
import { Engine } from './engine/engine.ts'
import { EgressGuard, type Resolve } from './kit/egress.ts'
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
  /** Allow-list entries beside PATCHBAY_EGRESS_ALLOW: what the caller started itself (the embedded sandbox's host:port). */
  egressAllow?: string[]
  /** Name resolution for the egress guard (tests give a stub resolver). */
  egressResolve?: Resolve
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
  const engine = new Engine({
    egress: new EgressGuard({
      allow: [...config.egressAllow, ...(opts.egressAllow ?? [])],
      resolve: opts.egressResolve,
    }),
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
      scanIntervalMs: config.deliveryScanMs,
      minPollIntervalMs: config.minPollIntervalMs,
    },
    pacing: config.pacing,
    oauth: { apps: { ...opts.oauthApps, ...config.oauthApps }, webUrls: config.webUrls },
  })
  const boot = await bootstrapWorkspace(engine.apiKeys, config.adminKey)
  const app = await buildApp(engine, { loggerInstance: log })
  await app.listen({ port: config.port, host: config.host })
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
      await app.close()
      await engine.close()
      await redisPacer?.close()
    },
  }
}
