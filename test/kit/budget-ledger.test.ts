// The budget ledger's contract, run against both implementations (one process's memory, and Redis
// shared by instances): a reservation takes one request of what is left, an answer of the same
// window can only lower the count (requests on their way are already taken off), an answer of
// another window replaces it, and a spent window gives way once its reset has passed.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { Redis } from 'ioredis'
import { type BudgetLedger, createMemoryBudgetLedger } from '../../src/kit/budget-ledger.ts'
import { createRedisBudgetLedger } from '../../src/kit/redis-budgets.ts'
import { REDIS_URL, redisUnavailableReason } from '../helpers/redis.ts'
import { TEST_REDIS_PREFIX } from '../helpers/service.ts'

const reason = await redisUnavailableReason()
const redis = reason ? null : new Redis(REDIS_URL, { keyPrefix: `${TEST_REDIS_PREFIX}ledger:` })
after(() => redis?.disconnect())

const ledgers: [string, () => BudgetLedger | null][] = [
  ['in memory', () => createMemoryBudgetLedger()],
  ['in Redis', () => (redis ? createRedisBudgetLedger(redis, `run-${Math.random()}:`) : null)],
]

for (const [name, make] of ledgers) {
  describe(`the budget ledger ${name}`, () => {
    test('takes one request per reservation, and holds back a spent window until its reset', async (t) => {
      const ledger = make()
      if (!ledger) return t.skip(String(reason))
      const now = 1_000_000
      assert.deepEqual(
        await ledger.reserve('a', now, 250),
        { granted: true },
        'nothing known: the request goes',
      )
      await ledger.observe('a', { limit: 5, remaining: 2, resetAt: now + 10_000 }, now)
      assert.deepEqual(await ledger.reserve('a', now, 250), { granted: true })
      assert.deepEqual(await ledger.reserve('a', now, 250), { granted: true })
      assert.deepEqual(await ledger.reserve('a', now, 250), {
        granted: false,
        limit: 5,
        resetAt: now + 10_000,
      })
      // An answer of the same window that has not seen the two requests on their way: still spent.
      await ledger.observe('a', { limit: 5, remaining: 2, resetAt: now + 10_000 }, now)
      assert.equal((await ledger.reserve('a', now + 5_000, 250)).granted, false)
      // After the reset (and the margin) the new window starts full, this request its first.
      assert.deepEqual(await ledger.reserve('a', now + 10_250, 250), { granted: true })
      for (let i = 0; i < 4; i++) assert.equal((await ledger.reserve('a', now + 10_300, 250)).granted, true)
      assert.equal(
        (await ledger.reserve('a', now + 10_300, 250)).granted,
        false,
        'the new window is spent after 5',
      )
    })

    test('an answer of another window replaces the count; lanes are apart', async (t) => {
      const ledger = make()
      if (!ledger) return t.skip(String(reason))
      const now = 2_000_000
      await ledger.observe('b', { limit: 5000, remaining: 4999, resetAt: now + 3_600_000 }, now)
      // The upstream shrank the window (a new limit, an earlier reset): its answer is what counts.
      await ledger.observe('b', { limit: 1, remaining: 0, resetAt: now + 2_000 }, now)
      assert.deepEqual(await ledger.reserve('b', now, 250), {
        granted: false,
        limit: 1,
        resetAt: now + 2_000,
      })
      assert.deepEqual(await ledger.reserve('c', now, 250), { granted: true })
    })
  })
}
