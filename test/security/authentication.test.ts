// Default-deny authentication on the route the router matches: every route of /openapi.json,
// spelled plainly and percent-encoded, answers without a key or with a wrong one exactly as the
// plain route does (401), never 2xx and never 5xx; public routes stay reachable.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { pino } from 'pino'
import { ruleOf } from '../../src/engine/access/policy.ts'
import { buildApp, loggerOptions } from '../../src/server/app.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let routes: { method: string; path: string; operationId: string }[]
before(async () => {
  t = await startTestService()
  const doc = await (await fetch(`${t.url}/openapi.json`)).json()
  routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map(([m, op]) => ({
        method: m.toUpperCase(),
        path: path.replace(/\{[^}]+\}/g, 'x1'),
        operationId: (op as { operationId: string }).operationId,
      })),
  )
})
after(() => t.close())

const hex = (c: string) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`

/** Spellings the router reads as the same route: one letter encoded, upper-case hex, every letter encoded. */
function spellings(path: string): string[] {
  const firstLetter = path.replace(/[a-z]/, (c) => hex(c))
  const upperHex = path.replace(/[a-z]/, (c) => hex(c).toUpperCase())
  const lastSegment = path.replace(/([a-z])([^/]*)$/, (_m, c, rest) => hex(c) + rest)
  const everyLetter = path.replace(/[a-z0-9]/gi, (c) => hex(c))
  return [...new Set([path, firstLetter, upperHex, lastSegment, everyLetter])]
}

async function send(method: string, path: string, key?: string) {
  const res = await fetch(t.url + path, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }),
    },
    body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
  })
  const text = await res.text()
  return { status: res.status, text }
}

test('GET /%761/catalog without a key answers 401, like /v1/catalog', async () => {
  for (const path of ['/%761/catalog', '/%76%31/catalog', '/v1/%63atalog', '/v1/catalog']) {
    const res = await send('GET', path)
    assert.equal(res.status, 401, path)
    assert.equal(JSON.parse(res.text).error.code, 'UNAUTHORIZED', path)
  }
})

test('every route of /openapi.json, in every spelling, refuses no key and a wrong key with 401 (no 2xx, no 5xx)', async () => {
  assert.ok(routes.length > 30, `the document lists ${routes.length} operations`)
  const failures: string[] = []
  for (const r of routes) {
    // Public by the policy table (sign-in, sign-up, the sign-in callbacks): they check their
    // callers themselves; below, they answer without a key and never 5xx.
    if (ruleOf(r.operationId)?.access === 'public') continue
    for (const path of spellings(r.path))
      for (const key of [undefined, 'pb_admin_wrong', 'pb_agent_wrong']) {
        const res = await send(r.method, path, key)
        if (res.status !== 401) failures.push(`${r.method} ${path} key=${key ?? 'none'} → ${res.status}`)
      }
  }
  assert.deepEqual(failures, [])
})

test('with a valid key, an encoded spelling answers exactly what the plain route answers', async () => {
  const plain = await send('GET', '/v1/catalog', t.adminKey)
  assert.equal(plain.status, 200)
  for (const path of spellings('/v1/catalog')) {
    const res = await send('GET', path, t.adminKey)
    assert.equal(res.status, 200, path)
    assert.equal(res.text, plain.text, path)
  }
  for (const path of spellings('/v1/agents/agt_nope')) {
    const res = await send('GET', path, t.adminKey)
    assert.equal(res.status, 404, path)
    assert.equal(JSON.parse(res.text).error.code, 'AGENT_NOT_FOUND', path)
  }
})

test('the MCP endpoint, encoded, needs a key too', async () => {
  for (const path of ['/mcp', '/%6dcp', '/%6D%63%70']) {
    const res = await send('POST', path)
    assert.equal(res.status, 401, path)
  }
})

test('the public routes answer without a key, and the callback refuses a bad state with a 4xx', async () => {
  assert.equal((await send('GET', '/healthz')).status, 200)
  assert.equal((await send('GET', '/%68ealthz')).status, 200)
  assert.equal((await send('GET', '/openapi.json')).status, 200)
  assert.equal((await send('GET', '/docs/')).status, 200)
  const callback = await send('GET', '/v1/oauth/callback/taskboard?state=nope')
  assert.ok(callback.status >= 400 && callback.status < 500, `callback → ${callback.status}`)
  // Every route the policy table makes public answers an empty request without a 5xx, and only
  // the ones that reveal nothing (the sign-in page's settings) with a 2xx.
  const publicRoutes = routes.filter((r) => ruleOf(r.operationId)?.access === 'public')
  assert.ok(publicRoutes.some((r) => r.operationId === 'signIn'))
  for (const r of publicRoutes) {
    const res = await send(r.method, r.path)
    assert.ok(res.status < 500, `${r.method} ${r.path} → ${res.status}`)
    if (res.status < 300)
      assert.equal(r.operationId, 'getSsoSettings', `${r.method} ${r.path} → ${res.status}`)
  }
})

test("an agent key's last use is recorded (and shown in its agent's key list)", async () => {
  const agent = await t.api('POST', '/v1/agents', { name: 'last-used', delivery: { type: 'stream' } })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const made = await t.api('POST', `/v1/agents/${agent.body.id}/keys`, { name: 'k' })
  assert.equal(made.status, 201, JSON.stringify(made.body))
  const before = await t.api('GET', `/v1/agents/${agent.body.id}/keys`)
  assert.equal(before.body.keys[0].lastUsedAt, null)
  assert.equal((await t.api('GET', '/v1/catalog', undefined, made.body.key)).status, 200)
  let after: string | null = null
  for (let i = 0; i < 50 && !after; i++) {
    const list = await t.api('GET', `/v1/agents/${agent.body.id}/keys`)
    after = list.body.keys[0].lastUsedAt
    if (!after) await new Promise((r) => setTimeout(r, 20))
  }
  assert.ok(after && !Number.isNaN(Date.parse(after)), `lastUsedAt: ${after}`)
})

test('a refused request is logged once at warn, with its code and route, never the key or the input', async () => {
  const lines: Array<Record<string, unknown>> = []
  const log = pino(loggerOptions('debug') as object, { write: (l: string) => lines.push(JSON.parse(l)) })
  const app = await buildApp(t.service.engine, { loggerInstance: log })
  const wrongKey = 'pb_admin_wrong_but_secret_looking_0123456789'
  const noKey = await app.inject({ method: 'GET', url: '/%761/catalog' })
  const wrong = await app.inject({
    method: 'GET',
    url: '/v1/catalog',
    headers: { authorization: `Bearer ${wrongKey}` },
  })
  const badInput = await app.inject({
    method: 'POST',
    url: '/v1/steps/taskboard.api_call/run',
    headers: { authorization: `Bearer ${t.adminKey}` },
    payload: { input: { auth: { type: 'api_key_token', key: 'k', token: 'topsecret-token-0123' } } },
  })
  assert.deepEqual([noKey.statusCode, wrong.statusCode, badInput.statusCode], [401, 401, 400])
  const warns = lines.filter((l) => l.level === 40)
  assert.deepEqual(
    warns.map((w) => [w.code, w.route]),
    [
      ['UNAUTHORIZED', '/v1/catalog'],
      ['UNAUTHORIZED', '/v1/catalog'],
      ['VALIDATION_FAILED', '/v1/steps/:stepId/run'],
    ],
  )
  const all = JSON.stringify(lines)
  assert.ok(!all.includes(wrongKey), 'the key is not logged')
  assert.ok(!all.includes(t.adminKey), 'the admin key is not logged')
  assert.ok(!all.includes('topsecret-token-0123'), 'the input is not logged')
  await app.close()
})
