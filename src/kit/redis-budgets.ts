// The budget ledger of kit/budget-ledger.ts kept in Redis, for every instance sharing a credential:
// one hash per credential and resource ({limit, remaining, resetAt}), read and changed by one Lua
// script at a time, so two instances never both take the last request of a window. Times are the
// callers' (the upstream's reset is an absolute time its own answers gave); a hash outlives its
// window by a minute at most.
import type { Redis } from 'ioredis'
import {
  type BudgetLedger,
  createMemoryBudgetLedger,
  PROVISIONAL_WINDOW_MS,
  type Reservation,
} from './budget-ledger.ts'
import type { RedisLink } from './redis-link.ts'

const KEEP_AFTER_RESET_MS = 60_000

const RESERVE = `
local c = redis.call('HMGET', KEYS[1], 'limit', 'remaining', 'resetAt')
if not c[1] then return {1} end
local limit, remaining, resetAt = tonumber(c[1]), tonumber(c[2]), tonumber(c[3])
if remaining > 0 then
  redis.call('HSET', KEYS[1], 'remaining', remaining - 1)
  return {1}
end
if tonumber(ARGV[1]) >= resetAt + tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'remaining', limit - 1, 'resetAt', tonumber(ARGV[1]) + ${PROVISIONAL_WINDOW_MS})
  return {1}
end
return {0, limit, resetAt}
`

const OBSERVE = `
local limit, remaining, resetAt = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local known = tonumber(redis.call('HGET', KEYS[1], 'resetAt'))
if known == resetAt then
  local left = tonumber(redis.call('HGET', KEYS[1], 'remaining'))
  if remaining < left then left = remaining end
  redis.call('HSET', KEYS[1], 'limit', limit, 'remaining', left)
else
  redis.call('HSET', KEYS[1], 'limit', limit, 'remaining', remaining, 'resetAt', resetAt)
end
redis.call('PEXPIRE', KEYS[1], math.max(resetAt - tonumber(ARGV[4]), 0) + ${KEEP_AFTER_RESET_MS})
return 0
`

/**
 * The ledger on `redis` (the service's connection, which prefixes every key with the deployment's
 * prefix). With a `link`, this instance's own ledger answers while Redis is away (what it learns
 * meanwhile stays local), and each command is bounded in time.
 */
export function createRedisBudgetLedger(redis: Redis, prefix = 'budget:', link?: RedisLink): BudgetLedger {
  const local = createMemoryBudgetLedger()
  const timed = <T>(c: Promise<T>) => (link ? link.timed(c) : c)
  return {
    async reserve(key, nowMs, marginMs): Promise<Reservation> {
      if (link && !link.up) return local.reserve(key, nowMs, marginMs)
      const [granted, limit, resetAt] = (await timed(
        redis.eval(RESERVE, 1, prefix + key, nowMs, marginMs),
      )) as number[]
      return granted === 1 ? { granted: true } : { granted: false, limit, resetAt }
    },
    async observe(key, count, nowMs) {
      if (link && !link.up) return local.observe(key, count, nowMs)
      await timed(redis.eval(OBSERVE, 1, prefix + key, count.limit, count.remaining, count.resetAt, nowMs))
    },
  }
}
