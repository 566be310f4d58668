// Lookup results shared by every instance through Redis (kit/result-cache.ts's shared layer):
// one string key per result, holding the value and when it expires, with Redis's own expiry set
// to the same moment, so nothing outlives the cache's time to live.
import type { Redis } from 'ioredis'
import type { SharedResults } from './result-cache.ts'

/** Results on `redis` (the service's connection, which prefixes every key with the deployment's prefix). */
export function createRedisResults(redis: Redis, prefix = 'results:'): SharedResults {
  return {
    async get(keys) {
      const found = new Map<string, { value: unknown; expiresAt: number }>()
      if (keys.length === 0) return found
      const values = await redis.mget(keys.map((k) => prefix + k))
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
      const now = Date.now()
      const pipeline = redis.pipeline()
      for (const e of entries) {
        const ttl = Math.ceil(e.expiresAt - now)
        if (ttl > 0) pipeline.set(prefix + e.key, JSON.stringify({ v: e.value, exp: e.expiresAt }), 'PX', ttl)
      }
      await pipeline.exec()
    },
  }
}
