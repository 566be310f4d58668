// Every setting Patchbay reads, in one place. The README's configuration table mirrors this file.
import path from 'node:path'
import { parseAllowList } from './kit/egress.ts'

export interface Config {
  port: number
  host: string
  /** The address upstreams and browsers reach this service at (webhook callbacks, OAuth). */
  publicUrl: string | null
  dataDir: string
  databaseUrl: string | null
  redisUrl: string | null
  masterKey: string | null
  previousMasterKeys: string[]
  adminKey: string | null
  upstreams: { taskboard: string | null; codehost: string | null; contactdata: string | null }
  upstreamTimeoutMs: number
  upstreamRetries: number
  /** Pacing budgets of ready-made steps per connector, overriding the connector's default. */
  pacing: Record<string, { points: number; durationMs: number }>
  logLevel: string
  /** Result cache and coalescing of lookups per connector (contact-data), overriding its defaults. */
  lookups: Record<string, { cacheTtlMs?: number; cacheMaxEntries?: number; coalesceWindowMs?: number }>
  /** Push deliveries: waits between attempts (the last one dead-letters), timeout, retry scan. */
  deliveryRetryScheduleMs: number[] | undefined
  deliveryTimeoutMs: number
  deliveryScanMs: number
  /** The shortest poll interval a polled trigger may ask for. */
  minPollIntervalMs: number
  /** Patchbay's OAuth app per connector, for sign-in flows (PATCHBAY_<ID>_CLIENT_ID / _CLIENT_SECRET). */
  oauthApps: Record<string, { clientId: string; clientSecret: string }>
  /** Upstream web addresses (authorize pages) where they differ from the API address (PATCHBAY_<ID>_WEB_URL). */
  webUrls: Record<string, string>
  /** Non-public hosts, host:port pairs and CIDR ranges Patchbay may send to (PATCHBAY_EGRESS_ALLOW). */
  egressAllow: string[]
}

/** `PATCHBAY_CODEHOST_CLIENT_ID` + `PATCHBAY_CODEHOST_CLIENT_SECRET` (both or neither), per connector. */
function parseOAuthApps(env: NodeJS.ProcessEnv): Config['oauthApps'] {
  const out: Config['oauthApps'] = {}
  for (const id of ['taskboard', 'codehost', 'contactdata']) {
    const p = `PATCHBAY_${id.toUpperCase()}_CLIENT_`
    const clientId = env[`${p}ID`] || undefined
    const clientSecret = env[`${p}SECRET`] || undefined
    if (!clientId && !clientSecret) continue
    if (!clientId || !clientSecret) throw new Error(`${p}ID and ${p}SECRET must be set together`)
    out[id] = { clientId, clientSecret }
  }
  return out
}

function parseWebUrls(env: NodeJS.ProcessEnv): Config['webUrls'] {
  const out: Config['webUrls'] = {}
  for (const id of ['taskboard', 'codehost']) {
    const v = env[`PATCHBAY_${id.toUpperCase()}_WEB_URL`]
    if (v) out[id] = v
  }
  return out
}

/**
 * `PATCHBAY_CONTACTDATA_CACHE_TTL_MS`, `PATCHBAY_CONTACTDATA_CACHE_MAX_ENTRIES` and
 * `PATCHBAY_CONTACTDATA_COALESCE_MS` (0 turns the cache or coalescing off).
 */
function parseLookups(int: (name: string) => number | undefined): Config['lookups'] {
  const out: Config['lookups'] = {}
  for (const id of ['contactdata']) {
    const p = `PATCHBAY_${id.toUpperCase()}_`
    const t = {
      cacheTtlMs: int(`${p}CACHE_TTL_MS`),
      cacheMaxEntries: int(`${p}CACHE_MAX_ENTRIES`),
      coalesceWindowMs: int(`${p}COALESCE_MS`),
    }
    if (Object.values(t).some((v) => v !== undefined)) out[id] = t
  }
  return out
}

/** `PATCHBAY_TASKBOARD_PACING=100/10000`: 100 requests per 10,000 ms per token. */
function parsePacing(env: NodeJS.ProcessEnv): Config['pacing'] {
  const out: Config['pacing'] = {}
  for (const id of ['taskboard', 'codehost', 'contactdata']) {
    const name = `PATCHBAY_${id.toUpperCase()}_PACING`
    const v = env[name]
    if (!v) continue
    const m = /^(\d+)\/(\d+)$/.exec(v.trim())
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1)
      throw new Error(`${name} must look like 100/10000 (requests/milliseconds), got "${v}"`)
    out[id] = { points: Number(m[1]), durationMs: Number(m[2]) }
  }
  return out
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const int = (name: string, fallback: number) => {
    const v = env[name]
    if (v === undefined || v === '') return fallback
    const n = Number(v)
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got "${v}"`)
    return n
  }
  const str = (name: string) => (env[name] && env[name] !== '' ? env[name]! : null)
  return {
    port: int('PORT', 8080),
    host: env.HOST || '127.0.0.1',
    publicUrl: str('PATCHBAY_PUBLIC_URL'),
    dataDir: path.resolve(env.PATCHBAY_DATA_DIR || './data'),
    databaseUrl: str('PATCHBAY_DATABASE_URL'),
    redisUrl: str('REDIS_URL'),
    masterKey: str('PATCHBAY_MASTER_KEY'),
    previousMasterKeys: (env.PATCHBAY_PREVIOUS_MASTER_KEYS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    adminKey: str('PATCHBAY_ADMIN_KEY'),
    upstreams: {
      taskboard: str('PATCHBAY_TASKBOARD_URL'),
      codehost: str('PATCHBAY_CODEHOST_URL'),
      contactdata: str('PATCHBAY_CONTACTDATA_URL'),
    },
    upstreamTimeoutMs: int('PATCHBAY_UPSTREAM_TIMEOUT_MS', 15_000),
    upstreamRetries: int('PATCHBAY_UPSTREAM_RETRIES', 3),
    pacing: parsePacing(env),
    logLevel: env.LOG_LEVEL || 'info',
    deliveryRetryScheduleMs: parseSchedule(env.PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS),
    deliveryTimeoutMs: int('PATCHBAY_DELIVERY_TIMEOUT_MS', 10_000),
    deliveryScanMs: int('PATCHBAY_DELIVERY_SCAN_MS', 1_000),
    minPollIntervalMs: int('PATCHBAY_MIN_POLL_INTERVAL_MS', 10_000),
    oauthApps: parseOAuthApps(env),
    webUrls: parseWebUrls(env),
    egressAllow: parseEgressAllow(env.PATCHBAY_EGRESS_ALLOW),
    lookups: parseLookups((name) => (env[name] === undefined || env[name] === '' ? undefined : int(name, 0))),
  }
}

/** `PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS=5000,300000,…`: the waits between push attempts. */
function parseSchedule(v: string | undefined): number[] | undefined {
  if (!v) return undefined
  const parts = v.split(',').map((p) => Number(p.trim()))
  if (parts.some((n) => !Number.isInteger(n) || n < 0))
    throw new Error(`PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS must be comma-separated milliseconds, got "${v}"`)
  return parts
}

/** `PATCHBAY_EGRESS_ALLOW=10.0.0.0/8,git.corp.example,127.0.0.1:4010`: comma- or space-separated. */
function parseEgressAllow(v: string | undefined): string[] {
  const entries = (v ?? '').split(/[\s,]+/).filter(Boolean)
  try {
    parseAllowList(entries)
  } catch (err) {
    throw new Error(`PATCHBAY_EGRESS_ALLOW: ${(err as Error).message}`)
  }
  return entries
}
