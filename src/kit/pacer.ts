// Pacing of ready-made steps: every request made with one credential waits for a slot in that
// credential's budget, shared by every step and poll that uses it (and, given Redis, by every
// instance). Built on rate-limiter-flexible; the wait loop is ours because its queue helper
// holds one budget per queue object and we need one per credential.
import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'

export interface Budget {
  points: number
  durationMs: number
}

export interface Pacer {
  /** Resolves when one request under `key` may be sent within `budget`. */
  wait(key: string, budget: Budget): Promise<void>
}

export function createPacer(opts: { redis?: Redis; keyPrefix?: string } = {}): Pacer {
  const limiters = new Map<string, RateLimiterAbstract>()
  const limiterFor = (budget: Budget): RateLimiterAbstract => {
    const id = `${budget.points}/${budget.durationMs}`
    let limiter = limiters.get(id)
    if (!limiter) {
      // rate-limiter-flexible counts whole seconds; sub-second windows are rounded up to one.
      const duration = Math.max(1, Math.ceil(budget.durationMs / 1000))
      const common = { points: budget.points, duration, keyPrefix: `${opts.keyPrefix ?? 'pace'}:${id}` }
      limiter = opts.redis ? new RateLimiterRedis({ ...common, storeClient: opts.redis }) : new RateLimiterMemory(common)
      limiters.set(id, limiter)
    }
    return limiter
  }
  return {
    async wait(key, budget) {
      const limiter = limiterFor(budget)
      for (;;) {
        try {
          await limiter.consume(key, 1)
          return
        } catch (res) {
          if (!(res instanceof RateLimiterRes)) throw res
          await new Promise((r) => setTimeout(r, Math.max(5, res.msBeforeNext)))
        }
      }
    },
  }
}
