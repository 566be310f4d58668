// The kit's lookup pieces on their own: the result cache (expiry, eviction, sharing a fetch under
// way) and the batcher's split of a shared bulk call's charge.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { apportion } from '../../src/kit/batcher.ts'
import { ResultCache } from '../../src/kit/result-cache.ts'

test('a cached result is served until it expires, and the least recently used goes first when full', () => {
  let now = 0
  const cache = new ResultCache({ ttlMs: 1000, maxEntries: 2, now: () => now })
  const claim = cache.claim<string>('a')
  assert.equal(claim.owner, true)
  if (claim.owner) claim.settle('A', true)
  assert.deepEqual(cache.lookup('a'), { state: 'hit', value: 'A' })
  cache.put('b', 'B')
  cache.lookup('a') // a is now the most recently used
  cache.put('c', 'C')
  assert.equal(cache.lookup('b').state, 'miss', 'b was evicted')
  assert.equal(cache.lookup('a').state, 'hit')
  now = 1000
  assert.equal(cache.lookup('a').state, 'miss', 'expired')
})

test('a fetch under way is shared; a failed one is not kept; a result may be refused for keeping', async () => {
  const cache = new ResultCache({ ttlMs: 60_000, maxEntries: 10 })
  const first = cache.claim<number>('k')
  const second = cache.claim<number>('k')
  assert.equal(first.owner, true)
  assert.equal(second.owner, false)
  if (!first.owner || second.owner) return
  assert.equal(second.lookup.state, 'pending')
  first.fail(new Error('upstream down'))
  await assert.rejects((second.lookup as { promise: Promise<number> }).promise, /upstream down/)
  assert.equal(cache.lookup('k').state, 'miss')
  const again = cache.claim<number>('k')
  if (again.owner) again.settle(7, false)
  assert.equal(cache.lookup('k').state, 'miss', 'settled without keeping')
})

test('with a time to live of 0 nothing is cached or shared', () => {
  const cache = new ResultCache({ ttlMs: 0, maxEntries: 10 })
  const a = cache.claim('k')
  const b = cache.claim('k')
  assert.equal(a.owner && b.owner, true)
  cache.put('k', 1)
  assert.equal(cache.lookup('k').state, 'miss')
})

test("a bulk call's charge is split by what each result cost, adding up to exactly the charge", () => {
  assert.deepEqual(apportion(5, [2, 0, 1, 2]), [2, 0, 1, 2])
  assert.deepEqual(apportion(3, [1, 1]), [2, 1], 'more charged than estimated: the remainder goes somewhere')
  assert.deepEqual(apportion(2, [0, 0]), [1, 1], 'no estimate: evenly')
  assert.deepEqual(apportion(0, [2, 1]), [0, 0])
  const shares = apportion(7, [1, 1, 1])
  assert.equal(
    shares.reduce((a, b) => a + b, 0),
    7,
  )
})
