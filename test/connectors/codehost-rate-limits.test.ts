// The code-host's rate limits, with the sandbox's windows shrunk through its control API: a
// spent budget whose reset is near is waited for (no request wasted on a refusal), one whose
// reset is far is RATE_LIMITED at once with retryAfterMs and nothing sent, secondary limits are
// retried after their retry-after, and the connection's budgets are readable. Time is driven by
// hand (Patchbay's clock and the sandbox's move together, as in the task-board pacing tests), so
// waiting for a reset or a retry-after takes no real time and does not depend on the machine's load.
import assert from 'node:assert/strict'
import { after, afterEach, before, test } from 'node:test'
import { type CodehostSandbox, startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import { createPacer } from '../../src/kit/pacer.ts'
import { ch, connectWithToken, mintToken } from '../helpers/codehost.ts'
import { countingPacer, ManualClock, SharedTime } from '../helpers/manual-clock.ts'
import { countRequests, type RequestCounter } from '../helpers/request-counter.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let sb: CodehostSandbox
let counter: RequestCounter | null = null
const R = { owner: 'octo-demo', repo: 'hello-world' }
const clock = new ManualClock()
const pacer = countingPacer(createPacer(clock))
let time: SharedTime

before(async () => {
  sb = await startCodehostSandbox()
  time = new SharedTime(clock, pacer, sb)
  t = await startTestService({ codehost: sb, clock, pacer })
})
afterEach(async () => {
  await counter?.stop()
  counter = null
  await ch(sb, 'POST', '/rate-limits', { reset: true })
})
after(async () => {
  time.close()
  await t.close()
  await sb.close()
})

/** A connection of its own (its own token, so its own budget). */
async function freshConnection() {
  return connectWithToken(t, await mintToken(sb, { kind: 'classic', scopes: ['repo', 'workflow'] }))
}

/** Runs a step, moving time on whenever Patchbay waits (for a budget's reset, a retry-after). */
const run = (conn: string, step: string, input: Record<string, unknown>) =>
  time.run(() => t.api('POST', `/v1/steps/codehost.${step}/run`, { connectionId: conn, input }))

test('a spent budget that resets soon is waited for: every step succeeds and no request is refused', async () => {
  const conn = await freshConnection()
  await ch(sb, 'POST', '/rate-limits', { core: 3, windowMs: 2000 })
  counter = await countRequests(sb, '/repos/octo-demo/hello-world')
  const waitsBefore = t.service.engine.rateBudgets.stats.waits
  for (let i = 0; i < 5; i++) {
    const res = await run(conn, 'get_repository', R)
    assert.equal(res.status, 200, `run ${i}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.meta.attempts, 1, `run ${i}: no refusal was retried: the request waited instead`)
  }
  assert.equal(await counter.count(), 5, 'exactly the five requests reached the code-host')
  assert.ok(t.service.engine.rateBudgets.stats.waits > waitsBefore)
})

test('a spent budget that resets later than the cap is RATE_LIMITED at once, with retryAfterMs, nothing sent', async () => {
  const conn = await freshConnection()
  await ch(sb, 'POST', '/rate-limits', { core: 2, windowMs: 3_600_000 })
  counter = await countRequests(sb, '/repos/octo-demo/hello-world')
  assert.equal((await run(conn, 'get_repository', R)).status, 200)
  assert.equal((await run(conn, 'get_repository', R)).status, 200)
  const refused = await run(conn, 'get_repository', R)
  assert.equal(refused.status, 429)
  assert.equal(refused.body.error.code, 'RATE_LIMITED')
  assert.ok(refused.body.error.retryAfterMs > 10_000, JSON.stringify(refused.body))
  assert.match(refused.body.error.message, /Nothing was sent/)
  assert.equal(await counter.count(), 2)

  // The API Call step is not held back: the code-host's own refusal comes back as RATE_LIMITED.
  const call = await run(conn, 'api_call', {
    method: 'GET',
    endpoint: '/repos/octo-demo/hello-world',
    headers: { accept: 'application/vnd.codehost+json' },
  })
  assert.equal(call.status, 429)
  assert.equal(call.body.error.code, 'RATE_LIMITED')
  assert.equal(call.body.error.upstream.status, 403)
  assert.match(call.body.error.message, /API rate limit exceeded/)
  assert.ok(call.body.error.retryAfterMs > 10_000)
  assert.equal(await counter.count(), 3)

  // The connection's budgets: what Patchbay tracked and what the code-host says (free to ask).
  const status = await t.api('GET', `/v1/connections/${conn}/rate-limit-status`)
  assert.equal(status.status, 200, JSON.stringify(status.body))
  assert.equal(status.body.supported, true)
  assert.equal(status.body.tracked.core.limit, 2)
  assert.equal(status.body.tracked.core.remaining, 0)
  assert.ok(Date.parse(status.body.tracked.core.resetAt) > clock.now() + 60_000)
  assert.equal(status.body.upstream.core.remaining, 0)
  assert.equal(status.body.upstream.core.limit, 2)
  assert.ok(status.body.upstream.search.limit > 0)
  const trackedOnly = await t.api('GET', `/v1/connections/${conn}/rate-limit-status?upstream=false`)
  assert.equal(trackedOnly.body.upstream, null)
})

test('each budget is its own: a spent search budget does not hold back core requests', async () => {
  const conn = await freshConnection()
  await ch(sb, 'POST', '/rate-limits', { search: 1, searchWindowMs: 3_600_000 })
  assert.equal((await run(conn, 'search_issues_and_pull_requests', { q: 'bug' })).status, 200)
  const refused = await run(conn, 'search_issues_and_pull_requests', { q: 'bug' })
  assert.equal(refused.body.error.code, 'RATE_LIMITED')
  assert.match(refused.body.error.message, /search rate limit/)
  assert.equal((await run(conn, 'get_repository', R)).status, 200)
})

test('a secondary limit is retried after its retry-after when that is short', async () => {
  const conn = await freshConnection()
  await ch(sb, 'POST', '/rate-limits', { secondaryCreatesPerMinute: 1, secondaryWindowMs: 1500 })
  counter = await countRequests(sb, '/repos/octo-demo/hello-world/issues')
  const first = await run(conn, 'create_issue', { ...R, title: 'One' })
  assert.equal(first.status, 200)
  const second = await run(conn, 'create_issue', { ...R, title: 'Two' })
  assert.equal(second.status, 200, JSON.stringify(second.body))
  assert.equal(second.body.meta.attempts, 2, 'refused once with retry-after, then sent again')
  assert.equal(await counter.count(), 3)
})

test('a secondary limit with a long retry-after is RATE_LIMITED with that wait', async () => {
  const conn = await freshConnection()
  await ch(sb, 'POST', '/rate-limits', { secondaryCreatesPerMinute: 1, secondaryWindowMs: 120_000 })
  assert.equal((await run(conn, 'create_issue', { ...R, title: 'One' })).status, 200)
  const refused = await run(conn, 'create_issue', { ...R, title: 'Two' })
  assert.equal(refused.status, 429)
  assert.equal(refused.body.error.code, 'RATE_LIMITED')
  assert.match(refused.body.error.message, /secondary rate limit/)
  assert.ok(refused.body.error.retryAfterMs > 60_000 && refused.body.error.retryAfterMs <= 120_000)
})

test('an agent key reads the budgets of its own connections only', async () => {
  const mine = await freshConnection()
  const other = await freshConnection()
  const agent = await t.api('POST', '/v1/agents', {
    name: 'budgeted',
    scope: { repositories: ['octo-demo/hello-world'] },
    connectionIds: [mine],
    delivery: { type: 'stream' },
  })
  const key = (await t.api('POST', `/v1/agents/${agent.body.id}/keys`, {})).body.key
  assert.equal((await t.api('GET', `/v1/connections/${mine}/rate-limit-status`, undefined, key)).status, 200)
  const refused = await t.api('GET', `/v1/connections/${other}/rate-limit-status`, undefined, key)
  assert.ok([403, 404].includes(refused.status), JSON.stringify(refused.body))
})
