// The API's shell: health, the OpenAPI document and reference page, authentication, the
// catalog and the tool step search.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
before(async () => {
  t = await startTestService()
})
after(() => t.close())

test('GET /healthz answers without a key', async () => {
  const res = await fetch(`${t.url}/healthz`)
  assert.equal(res.status, 200)
  assert.deepEqual(await res.json(), { ok: true })
})

test('/openapi.json is an OpenAPI 3.1 document generated from the route schemas, /docs a readable page', async () => {
  const doc = await (await fetch(`${t.url}/openapi.json`)).json()
  assert.equal(doc.openapi, '3.1.0')
  const run = doc.paths['/v1/steps/{stepId}/run'].post
  assert.ok(run.requestBody.content['application/json'].schema.properties.connectionId)
  assert.ok(doc.paths['/v1/connections'].post)
  const docs = await fetch(`${t.url}/docs/`, { redirect: 'follow' })
  assert.equal(docs.status, 200)
  assert.match(await docs.text(), /<html/i)
})

test('the /v1 API refuses a request without a key, with a malformed header or with an unknown key', async () => {
  const none = await fetch(`${t.url}/v1/catalog`)
  assert.equal(none.status, 401)
  assert.equal((await none.json()).error.code, 'UNAUTHORIZED')
  const malformed = await fetch(`${t.url}/v1/catalog`, { headers: { authorization: 'Token abc' } })
  assert.equal(malformed.status, 401)
  assert.match((await malformed.json()).error.message, /Bearer/)
  const unknown = await t.api('GET', '/v1/catalog', undefined, 'pb_admin_nope')
  assert.equal(unknown.status, 401)
  assert.match(unknown.body.error.hint, /Bearer/)
})

test('an unknown route answers the one error body', async () => {
  const res = await t.api('GET', '/v1/nothing-here')
  assert.equal(res.status, 404)
  assert.equal(res.body.error.code, 'ROUTE_NOT_FOUND')
})

test('the catalog lists the task-board connector with its auth methods and steps named as the spec names them', async () => {
  const { status, body } = await t.api('GET', '/v1/catalog')
  assert.equal(status, 200)
  const tb = body.connectors.find((c: any) => c.id === 'taskboard')
  assert.equal(tb.name, 'Task-Board')
  assert.equal(tb.beta, false)
  assert.deepEqual(
    tb.auth.map((a: any) => a.id),
    ['oauth1', 'api_key_token'],
  )
  const names = Object.fromEntries(tb.steps.map((s: any) => [s.id, s.name]))
  assert.equal(names['taskboard.create_card'], 'Create Card')
  assert.equal(names['taskboard.get_card'], 'Get Card')
  assert.equal(names['taskboard.api_call'], 'Task-Board API Call')
  const create = tb.steps.find((s: any) => s.id === 'taskboard.create_card')
  assert.deepEqual(create.inputSchema.required.sort(), ['idList', 'name'])
  assert.ok(create.inputSchema.properties.idList.description)
  assert.equal(create.hints.readOnly, false)
  assert.equal(tb.steps.find((s: any) => s.id === 'taskboard.get_card').hints.readOnly, true)
  assert.ok(Array.isArray(tb.triggers))
})

test('the step search finds every task-board step by the connector name, in any spelling', async () => {
  const all = (await t.api('GET', '/v1/catalog')).body.connectors
    .find((c: any) => c.id === 'taskboard')
    .steps.map((s: any) => s.id)
    .sort()
  for (const q of ['task', 'task-board', 'TASK-BOARD', 'Task Board', 'taskboard']) {
    const { body } = await t.api('GET', `/v1/steps?q=${encodeURIComponent(q)}`)
    assert.deepEqual(body.steps.map((s: any) => s.id).sort(), all, `q=${q}`)
  }
  const create = await t.api('GET', '/v1/steps?q=create%20card')
  assert.deepEqual(
    create.body.steps.map((s: any) => s.id),
    ['taskboard.create_card'],
  )
  const none = await t.api('GET', '/v1/steps?q=zzzz')
  assert.deepEqual(none.body.steps, [])
})

test('GET /v1/steps/:id describes one step, and an unknown step is a clear 404', async () => {
  const ok = await t.api('GET', '/v1/steps/taskboard.get_card')
  assert.equal(ok.body.name, 'Get Card')
  const missing = await t.api('GET', '/v1/steps/taskboard.nope')
  assert.equal(missing.status, 404)
  assert.equal(missing.body.error.code, 'STEP_NOT_FOUND')
  assert.match(missing.body.error.hint, /GET \/v1\/steps\?q=/)
})

test('a body that is not JSON gets MALFORMED_JSON, and the service keeps serving', async () => {
  const res = await fetch(`${t.url}/v1/connections`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json' },
    body: '{"connector":',
  })
  assert.equal(res.status, 400)
  assert.equal((await res.json()).error.code, 'MALFORMED_JSON')
  assert.equal((await t.api('GET', '/v1/catalog')).status, 200)
})
