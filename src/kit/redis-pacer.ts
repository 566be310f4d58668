// The same sliding-log pacing as pacer.ts, kept in Redis so that every instance sharing a token
// shares its budget. One Lua script does the check-and-record atomically: it drops sends older
// than the window, records this one when there is room, or says how long to wait. Times are
// Redis's own, so instances with skewed clocks still agree.
import type { Redis } from 'ioredis'
import type { Budget, Pacer } from './pacer.ts'

const SLIDING_LOG = `
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local points = tonumber(ARGV[2])
local member = ARGV[3]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) < points then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window)
  return 0
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return tonumber(oldest[2]) + window - now + 1
`

/** Paces on `redis` (the service's connection, which prefixes every key with the deployment's prefix). */
export function createRedisPacer(redis: Redis, prefix = 'pace:'): Pacer {
  let seq = 0
  const unique = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  return {
    async wait(key: string, budget: Budget) {
      // Same allowance for network jitter as the in-memory pacer.
      const window = budget.durationMs + Math.max(20, Math.round(budget.durationMs * 0.005))
      for (;;) {
        const waitMs = Number(
          await redis.eval(SLIDING_LOG, 1, prefix + key, window, budget.points, `${unique}-${seq++}`),
        )
        if (waitMs <= 0) return
        await new Promise((r) => setTimeout(r, waitMs))
      }
    },
  }
}
