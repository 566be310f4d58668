// The one retry policy of every upstream request: what may be retried, and how long to wait.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  defaultRetryPolicy,
  isIdempotent,
  parseRetryAfter,
  retryDelayMs,
  shouldRetry,
} from '../../src/kit/retry-policy.ts'

test('a 429 is retried for any method: the upstream did no work', () => {
  assert.equal(shouldRetry({ status: 429 }, false), true)
  assert.equal(shouldRetry({ status: 429 }, true), true)
})

test('a 5xx or a broken connection is retried only for idempotent requests', () => {
  for (const outcome of [{ status: 500 }, { status: 503 }, { networkError: true }]) {
    assert.equal(shouldRetry(outcome, true), true, JSON.stringify(outcome))
    assert.equal(shouldRetry(outcome, false), false, JSON.stringify(outcome))
  }
})

test('other client errors are never retried', () => {
  for (const status of [400, 401, 403, 404, 409, 422]) assert.equal(shouldRetry({ status }, true), false)
})

test('GET, HEAD, PUT, DELETE and OPTIONS are idempotent; POST and PATCH only when declared so', () => {
  for (const m of ['GET', 'head', 'PUT', 'DELETE', 'OPTIONS']) assert.equal(isIdempotent(m), true, m)
  for (const m of ['POST', 'PATCH']) assert.equal(isIdempotent(m), false, m)
  assert.equal(isIdempotent('POST', true), true)
  assert.equal(isIdempotent('GET', false), false)
})

test('backoff doubles per retry with jitter in its upper half, and is capped', () => {
  const policy = { retries: 5, baseDelayMs: 100, maxDelayMs: 1000 }
  for (let retry = 0; retry < 6; retry++) {
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry)
    for (let i = 0; i < 50; i++) {
      const d = retryDelayMs(policy, retry)
      assert.ok(d >= ceiling / 2 && d <= ceiling, `retry ${retry}: ${d} outside [${ceiling / 2}, ${ceiling}]`)
    }
  }
})

test("the upstream's own wait is used when given, within the cap", () => {
  assert.equal(retryDelayMs(defaultRetryPolicy, 0, 1500), 1500)
  assert.equal(retryDelayMs(defaultRetryPolicy, 0, 60_000), defaultRetryPolicy.maxDelayMs)
})

test('Retry-After is read as seconds or as an HTTP date', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  assert.equal(parseRetryAfter('2', now), 2000)
  assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000)
  assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now), 0)
  assert.equal(parseRetryAfter('soon', now), undefined)
  assert.equal(parseRetryAfter(undefined, now), undefined)
})
