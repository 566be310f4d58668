// The same sliding-log pacing as pacer.ts, kept in Redis so that every instance sharing a token
// shares its budget. One Lua script does the check-and-record atomically: it drops requests that
// have left the window, records this one when there is room, or says how long to wait; another
// moves a request to the moment it was answered. A request on its way is recorded a while ahead
// (UNANSWERED_MAX_MS), so it stays in the window until answered, and an instance that dies with
// requests on their way leaves them there no longer than that. Times are Redis's own, so
// instances with skewed clocks still agree.
import type { Redis } from 'ioredis'
import { type Answered, type Budget, type Pacer, UNANSWERED_MAX_MS, windowOf } from './pacer.ts'

/** How often a waiter looks again while every request in the window is on its way. */
const RECHECK_MS = 25

const LET_GO = `
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local points = tonumber(ARGV[2])
local member = ARGV[3]
local ahead = tonumber(ARGV[4])
local recheck = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) < points then
  redis.call('ZADD', key, now + ahead, member)
  redis.call('PEXPIRE', key, window + ahead)
  return 0
end
local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
if oldest > now then return recheck end
return oldest + window - now + 1
`

const ANSWERED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
return 0
`

/**
 * Paces on `redis` (the service's connection, which prefixes every key with the deployment's
 * prefix). `timed` bounds each command (RedisLink.timed), so a Redis gone away fails the wait
 * quickly instead of holding it through ioredis's reconnect attempts.
 */
export function createRedisPacer(
  redis: Redis,
  prefix = 'pace:',
  timed: <T>(command: Promise<T>) => Promise<T> = (c) => c,
): Pacer {
  let seq = 0
  const unique = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  return {
    async wait(key: string, budget: Budget): Promise<Answered> {
      const window = windowOf(budget)
      const member = `${unique}-${seq++}`
      for (;;) {
        const waitMs = Number(
          await timed(
            redis.eval(LET_GO, 1, prefix + key, window, budget.points, member, UNANSWERED_MAX_MS, RECHECK_MS),
          ),
        )
        if (waitMs <= 0) break
        await new Promise((r) => setTimeout(r, waitMs))
      }
      let said = false
      return () => {
        if (said) return
        said = true
        redis.eval(ANSWERED, 1, prefix + key, member).catch(() => {})
      }
    },
  }
}

/**
 * The shared pacer while Redis answers; while it does not, this instance's `local` pacer with
 * `share` of each budget (PATCHBAY_REDIS_OUTAGE_PACING_SHARE): with up to 1/share instances, the
 * upstream's budget is still kept. A wait that fails because Redis went away meanwhile is taken
 * again locally; nothing is answered 500 for it.
 */
export function pacerWithFallback(
  shared: Pacer,
  local: Pacer,
  link: { readonly up: boolean },
  share: number,
): Pacer {
  const scaled = (b: Budget): Budget => ({
    points: Math.max(1, Math.floor(b.points * share)),
    durationMs: b.durationMs,
  })
  return {
    async wait(key, budget) {
      if (link.up)
        try {
          return await shared.wait(key, budget)
        } catch {
          // Redis went away during the wait: this request is paced here instead.
        }
      return local.wait(key, scaled(budget))
    },
  }
}
