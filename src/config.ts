// Every setting Patchbay reads, in one place. The README's configuration table mirrors this file.
import path from 'node:path'

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
  logLevel: string
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
    previousMasterKeys: (env.PATCHBAY_PREVIOUS_MASTER_KEYS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    adminKey: str('PATCHBAY_ADMIN_KEY'),
    upstreams: {
      taskboard: str('PATCHBAY_TASKBOARD_URL'),
      codehost: str('PATCHBAY_CODEHOST_URL'),
      contactdata: str('PATCHBAY_CONTACTDATA_URL'),
    },
    upstreamTimeoutMs: int('PATCHBAY_UPSTREAM_TIMEOUT_MS', 15_000),
    upstreamRetries: int('PATCHBAY_UPSTREAM_RETRIES', 3),
    logLevel: env.LOG_LEVEL || 'info',
  }
}
