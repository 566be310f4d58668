// Redis for tests: used when it answers (required under CI=true), else skipped with a reason.
import { Redis } from 'ioredis'

export const REDIS_URL = process.env.PATCHBAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

export async function redisUnavailableReason(): Promise<string | null> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  try {
    await client.connect()
    await client.ping()
    return null
  } catch (err) {
    const reason = `Redis at ${REDIS_URL} did not answer (${(err as Error).message})`
    if (process.env.CI === 'true') throw new Error(`${reason}; under CI=true Redis is required.`)
    return reason
  } finally {
    client.disconnect()
  }
}
