// Operating Patchbay: liveness and readiness, Prometheus metrics behind their token, and request
// ids in responses and in every log line of the request (the engine's too).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { buildApp } from '../../src/server/app.ts'
import { Startup } from '../../src/server/observability.ts'
import { eventually } from '../helpers/receiver.ts'
import { REDIS_URL, redisUnavailableReason } from '../helpers/redis.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

const METRICS_TOKEN = 'metrics-token-for-tests-0123'
const lines: any[] = []
let t: TestService
let connectionId: string

before(async () => {
  t = await startTestService({
    env: { PATCHBAY_METRICS_TOKEN: METRICS_TOKEN, LOG_LEVEL: 'debug' },
    logDestination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  })
  const made = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: {
      key: t.taskboard.demo.key,
      token: t.taskboard.demo.token,
      secret: t.taskboard.demo.secret,
    },
  })
  assert.equal(made.status, 201, JSON.stringify(made.body))
  connectionId = made.body.id
})
after(() => t.close())

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${t.url}${path}`, { headers })

test('/healthz answers without a key; /readyz reports the database and its migrations', async () => {
  assert.equal((await get('/healthz')).status, 200)
  const ready = await get('/readyz')
  assert.equal(ready.status, 200)
  assert.deepEqual(await ready.json(), { ready: true, checks: { database: 'ok', migrations: 'ok' } })
})

test('a request id is taken from X-Request-Id, or made, and returned', async () => {
  const given = await get('/healthz', { 'x-request-id': 'trace-abc.123' })
  assert.equal(given.headers.get('x-request-id'), 'trace-abc.123')
  const made = (await get('/healthz')).headers.get('x-request-id')
  assert.match(made ?? '', /^[0-9a-f-]{36}$/)
  // A header that is not a plain token is not echoed into responses and logs.
  const odd = (await get('/healthz', { 'x-request-id': 'a b<script>' })).headers.get('x-request-id')
  assert.match(odd ?? '', /^[0-9a-f-]{36}$/)
})

test('every log line of a request carries its id, the engine’s lines too; request lines are debug', async () => {
  const agent = await t.api('POST', '/v1/agents', {
    name: 'ids',
    scope: { boards: [t.taskboard.demo.boardId] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  const trig = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: t.taskboard.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  const refused = await fetch(`${t.url}/hooks/taskboard/${trig.body.webhook.id}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-request-id': 'forged-delivery-1',
      'x-taskboard-webhook': 'forged',
    },
    body: JSON.stringify({ action: { id: 'x', type: 'createCard' } }),
  })
  assert.equal(refused.status, 401)
  const mine = lines.filter((l) => l.reqId === 'forged-delivery-1')
  // The engine's warning about the signature, and the request's own line.
  assert.ok(
    mine.some((l) => l.level === 40 && /signature/.test(l.msg)),
    JSON.stringify(mine),
  )
  const request = mine.find((l) => l.msg === 'request')
  assert.equal(request?.level, 20)
  assert.equal(request?.statusCode, 401)
  assert.equal(lines.filter((l) => l.msg === 'request' && l.level > 20).length, 0)
})

test('/metrics needs its token and answers the named series', async () => {
  const run = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId,
    input: { idList: t.taskboard.demo.listIds[0], name: 'Counted' },
  })
  assert.equal(run.status, 200, JSON.stringify(run.body))
  assert.equal((await get('/metrics')).status, 401)
  assert.equal((await get('/metrics', { authorization: 'Bearer wrong' })).status, 401)
  const res = await get('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` })
  assert.equal(res.status, 200)
  const text = await res.text()
  assert.match(
    text,
    /^patchbay_http_request_duration_seconds_count\{method="POST",route="\/v1\/steps\/:stepId\/run",status="200"\} [1-9]/m,
  )
  assert.match(text, /^patchbay_step_runs\{step="taskboard.create_card",outcome="succeeded"\} 1$/m)
  assert.match(text, /^patchbay_upstream_requests_total\{connector="taskboard",status="2xx"\} [1-9]/m)
  assert.match(text, /^# TYPE patchbay_upstream_rate_limited_total counter$/m)
  assert.match(text, /^patchbay_queue_depth\{queue="deliveries"\} 0$/m)
  assert.match(text, /^# TYPE patchbay_deliveries gauge$/m)
  assert.match(text, /^# TYPE patchbay_credits_spent gauge$/m)
  assert.match(text, /^patchbay_process_resident_memory_bytes /m)
})

test('without a metrics token there is no /metrics', async () => {
  const other = await startTestService({ taskboard: t.taskboard })
  try {
    assert.equal((await fetch(`${other.url}/metrics`)).status, 404)
  } finally {
    await other.close()
  }
})

test('/readyz says when Redis is configured and answers', async (ctx) => {
  const reason = await redisUnavailableReason()
  if (reason) return ctx.skip(reason)
  const other = await startTestService({ taskboard: t.taskboard, env: { REDIS_URL } })
  try {
    assert.deepEqual(await (await fetch(`${other.url}/readyz`)).json(), {
      ready: true,
      checks: { database: 'ok', migrations: 'ok', redis: 'ok' },
    })
  } finally {
    await other.close()
  }
})

test('until the start is done, the API and the webhook ingress answer 503 SERVICE_STARTING with Retry-After, never 401', async () => {
  const startup = new Startup('webhook subscriptions')
  const app = await buildApp(t.service.engine, { startup })
  try {
    const hook = await app.inject({ method: 'POST', url: '/hooks/taskboard/hk_anything', payload: '{}' })
    assert.equal(hook.statusCode, 503, hook.body)
    assert.equal(hook.json().error.code, 'SERVICE_STARTING')
    assert.equal(hook.headers['retry-after'], '1')
    const unkeyed = await app.inject({ method: 'GET', url: '/v1/agents' })
    assert.equal(unkeyed.statusCode, 503, 'not 401: nothing is judged before the start is done')
    const ready = await app.inject({ method: 'GET', url: '/readyz' })
    assert.equal(ready.statusCode, 503)
    assert.equal(ready.json().checks.startup, 'starting: webhook subscriptions')
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    startup.done()
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
    assert.equal((await app.inject({ method: 'GET', url: '/v1/agents' })).statusCode, 401)
  } finally {
    await app.close()
  }
})

test('a database that stops answering: 503 DATABASE_UNAVAILABLE with Retry-After and /readyz says why, then back by itself', async () => {
  const health = t.service.engine.store.health
  // What a query sees when PostgreSQL stops: the store is marked away until its probe answers.
  const refusedConnection = () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  health.failure(refusedConnection())
  const refused = await fetch(`${t.url}/v1/connections`, {
    headers: { authorization: `Bearer ${t.adminKey}` },
  })
  assert.equal(refused.status, 503)
  assert.equal(refused.headers.get('retry-after'), '5')
  const body = await refused.json()
  assert.equal(body.error.code, 'DATABASE_UNAVAILABLE')
  assert.match(body.error.hint, /readyz/)
  // The probe looks a whole second after a failure is seen; seen again, the outage goes on.
  health.failure(refusedConnection())
  const ready = await get('/readyz')
  assert.equal(ready.status, 503)
  assert.match((await ready.json()).checks.database, /^unreachable since .*ECONNREFUSED/)
  // This store answers (it never went away): the next probe finds it back, without a restart.
  await eventually(
    async () =>
      (await fetch(`${t.url}/v1/connections`, { headers: { authorization: `Bearer ${t.adminKey}` } })).status,
    (s) => s === 200,
    10_000,
  )
  assert.equal((await get('/readyz')).status, 200)
})

test('/readyz fails when the database is gone', async () => {
  await t.service.engine.store.close()
  const res = await get('/readyz')
  assert.equal(res.status, 503)
  const body = await res.json()
  assert.equal(body.ready, false)
  assert.match(body.checks.database, /^unreachable: /)
})
