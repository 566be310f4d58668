// The code-host sandbox over real HTTP: rate limits.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, ctl, R, type Res, sandboxPerFile } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('rate limits', () => {
  test('/rate_limit is free and every response carries the headers', async () => {
    const a = await api('GET', '/rate_limit')
    const b = await api('GET', '/rate_limit')
    assert.equal(a.json.resources.core.used, b.json.resources.core.used)
    assert.equal(a.json.resources.core.limit, 5000)
    assert.equal(a.json.resources.search.limit, 30)
    assert.ok(a.json.resources.graphql)
    assert.deepEqual(a.json.rate, a.json.resources.core)
    const r = await api('GET', '/user')
    assert.equal(r.headers.get('x-ratelimit-limit'), '5000')
    assert.equal(r.headers.get('x-ratelimit-used'), String(a.json.resources.core.used + 1))
    assert.equal(Number(r.headers.get('x-ratelimit-remaining')), 5000 - a.json.resources.core.used - 1)
    assert.equal(r.headers.get('x-ratelimit-resource'), 'core')
    assert.ok(Number(r.headers.get('x-ratelimit-reset')) > Date.now() / 1000)
  })

  test('primary limit exhausted: 403 with remaining 0; window reset on the clock', async () => {
    await ctl('POST', '/_sandbox/rate-limits', { core: 3, windowMs: 60_000 })
    for (let i = 0; i < 3; i++) assert.equal((await api('GET', '/user')).status, 200)
    const over = await api('GET', '/user')
    assert.equal(over.status, 403)
    assert.equal(over.headers.get('x-ratelimit-remaining'), '0')
    assert.equal(over.json.message, 'API rate limit exceeded for user ID 1001.')
    assert.equal((await api('GET', '/rate_limit')).json.resources.core.remaining, 0)
    await ctl('POST', '/_sandbox/clock', { advanceMs: 60_001 })
    assert.equal((await api('GET', '/user')).status, 200)
  })

  test('search limit', async () => {
    await ctl('POST', '/_sandbox/rate-limits', { search: 2, searchWindowMs: 60_000 })
    assert.equal((await api('GET', '/search/issues?q=bug')).status, 200)
    assert.equal((await api('GET', '/search/issues?q=bug')).status, 200)
    const over = await api('GET', '/search/issues?q=bug')
    assert.equal(over.status, 403)
    assert.equal(over.headers.get('x-ratelimit-resource'), 'search')
    assert.equal((await api('GET', '/user')).status, 200)
  })

  test('secondary limits: content creation per minute and concurrency, with retry-after', async () => {
    await ctl('POST', '/_sandbox/rate-limits', { secondaryCreatesPerMinute: 2 })
    assert.equal((await api('POST', `${R}/issues`, { body: { title: 'a' } })).status, 201)
    assert.equal((await api('POST', `${R}/issues`, { body: { title: 'b' } })).status, 201)
    const over = await api('POST', `${R}/issues`, { body: { title: 'c' } })
    assert.equal(over.status, 403)
    assert.match(over.json.message, /^You have exceeded a secondary rate limit/)
    assert.ok(Number(over.headers.get('retry-after')) > 0)
    assert.equal((await api('GET', `${R}/issues/1`)).status, 200)

    await ctl('POST', '/_sandbox/rate-limits', { reset: true, secondaryInFlight: 1 })
    await ctl('POST', '/_sandbox/faults', { latencyMs: 300, pathPrefix: '/user', count: 2 })
    const [first, second] = await Promise.all([
      api('GET', '/user'),
      new Promise<Res>((r) => setTimeout(() => r(api('GET', '/user')), 50)),
    ])
    assert.equal(first.status, 200)
    assert.equal(second.status, 403)
    assert.equal(second.headers.get('retry-after'), '60')
  })
})
