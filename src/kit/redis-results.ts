// Lookup results shared by every instance through Redis (kit/result-cache.ts's shared layer):
// one string key per result, holding the value and when it expires, with Redis's own expiry set
// to the same moment, so nothing outlives the cache's time to live.
import type { Redis } from 'ioredis'
import type { RedisLink } from './redis-link.ts'
import type { SharedResults } from './result-cache.ts'

/**
 * Results on `redis` (the service's connection, which prefixes every key with the deployment's
 * prefix). With a `link`, nothing is asked while Redis is away (each instance's own cache answers,
 * and a miss is looked up upstream), and each command is bounded in time.
 */
export function createRedisResults(redis: Redis, prefix = 'results:', link?: RedisLink): SharedResults {
  const timed = <T>(c: Promise<T>) => (link ? link.timed(c) : c)
  return {
    async get(keys) {
      const found = new Map<string, { value: unknown; expiresAt: number }>()
      if (keys.length === 0 || (link && !link.up)) return found
      const values = await timed(redis.mget(keys.map((k) => prefix + k)))
      values.forEach((raw, i) => {
        if (raw === null) return
        try {
          const { v, exp } = JSON.parse(raw) as { v: unknown; exp: number }
          found.set(keys[i], { value: v, expiresAt: exp })
        } catch {
          // Not one of ours: left alone, looked up again.
        }
      })
      return found
    },
    async put(entries) {
      if (link && !link.up) return
      const now = Date.now()
      const pipeline = redis.pipeline()
      for (const e of entries) {
        const ttl = Math.ceil(e.expiresAt - now)
        if (ttl > 0) pipeline.set(prefix + e.key, JSON.stringify({ v: e.value, exp: e.expiresAt }), 'PX', ttl)
      }
      await timed(pipeline.exec())
    },
  }
}
