// The first slice, end to end over real HTTP: Create Card, Get Card and Task-Board API Call
// run through Patchbay against the sandbox task-board.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let connectionId: string
before(async () => {
  t = await startTestService({ contactdata: true })
  const res = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
  })
  connectionId = res.body.id
})
after(() => t.close())

/** Runs a step with the demo connection, or with none when `conn` is null. */
const run = (stepId: string, input: unknown, conn: string | null = connectionId) =>
  t.api('POST', `/v1/steps/${stepId}/run`, { connectionId: conn ?? undefined, input })

test('Create Card then Get Card returns the same card, slimmed', async () => {
  const idList = t.taskboard.demo.listIds[0]
  const created = await run('taskboard.create_card', {
    idList,
    name: 'Write the README',
    desc: 'For newcomers',
    pos: 'top',
    due: '2026-12-31T17:00:00Z',
  })
  assert.equal(created.status, 200, JSON.stringify(created.body))
  const card = created.body.output
  assert.match(card.id, /^[0-9a-f]{24}$/)
  assert.equal(card.name, 'Write the README')
  assert.equal(card.idList, idList)
  assert.equal(card.idBoard, t.taskboard.demo.boardId)
  assert.equal(typeof card.pos, 'number')
  assert.equal(new Date(card.due).toISOString(), '2026-12-31T17:00:00.000Z')
  assert.equal(created.body.meta.attempts, 1)
  assert.ok(created.body.meta.durationMs >= 0)
  assert.equal(card.badges, undefined, 'outputs are slim')

  const got = await run('taskboard.get_card', { idCard: card.id })
  assert.equal(got.status, 200)
  assert.deepEqual(got.body.output, card)
})

test('bad step input is refused before anything is sent, naming each field', async () => {
  const missing = await run('taskboard.create_card', { name: 'x' })
  assert.equal(missing.status, 400)
  assert.equal(missing.body.error.code, 'VALIDATION_FAILED')
  assert.match(missing.body.error.message, /input\.idList/)
  const badId = await run('taskboard.get_card', { idCard: 'not-an-id' })
  assert.match(badId.body.error.message, /input\.idCard: must be a card identifier/)
  const badPos = await run('taskboard.create_card', {
    idList: t.taskboard.demo.listIds[0],
    name: 'x',
    pos: 'middle',
  })
  assert.match(badPos.body.error.message, /input\.pos/)
  const badDue = await run('taskboard.create_card', {
    idList: t.taskboard.demo.listIds[0],
    name: 'x',
    due: 'next tuesday',
  })
  assert.match(badDue.body.error.message, /input\.due: must be a date/)
})

test('a card that does not exist upstream is UPSTREAM_NOT_FOUND with the upstream status', async () => {
  const res = await run('taskboard.get_card', { idCard: 'a'.repeat(24) })
  assert.equal(res.status, 404)
  assert.equal(res.body.error.code, 'UPSTREAM_NOT_FOUND')
  assert.equal(res.body.error.upstream.status, 404)
})

test('unknown steps and connections, and a missing connection, are clear errors', async () => {
  assert.equal((await run('taskboard.fly', {})).body.error.code, 'STEP_NOT_FOUND')
  const unknown = await run('taskboard.get_card', { idCard: 'a'.repeat(24) }, 'con_missing')
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.error.code, 'CONNECTION_NOT_FOUND')
  const none = await run('taskboard.get_card', { idCard: 'a'.repeat(24) }, null)
  assert.equal(none.body.error.code, 'CONNECTION_REQUIRED')
})

test('a connection disconnected after a run is refused by the very next run (nothing kept from the run before)', async () => {
  const second = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
    second: true,
  })
  assert.equal(second.status, 201, JSON.stringify(second.body))
  const idCard = (await run('taskboard.create_card', { idList: t.taskboard.demo.listIds[0], name: 'x' })).body
    .output.id
  assert.equal((await run('taskboard.get_card', { idCard }, second.body.id)).status, 200)
  assert.equal((await t.api('DELETE', `/v1/connections/${second.body.id}`)).status, 200)
  const after = await run('taskboard.get_card', { idCard }, second.body.id)
  assert.equal(after.status, 404)
  assert.equal(after.body.error.code, 'CONNECTION_NOT_FOUND')
})

test('Task-Board API Call sends method, path, body and query with the connection, /1 added when missing', async () => {
  const me = await run('taskboard.api_call', { method: 'GET', endpoint: '/members/me' })
  assert.equal(me.status, 200)
  assert.equal(me.body.output.status, 200)
  assert.equal(me.body.output.body.username, t.taskboard.demo.username)
  const made = await run('taskboard.api_call', {
    method: 'POST',
    endpoint: '/1/cards',
    body: { idList: t.taskboard.demo.listIds[1], name: 'Through the API Call' },
  })
  assert.equal(made.body.output.body.name, 'Through the API Call')
  const lists = await run('taskboard.api_call', {
    method: 'GET',
    endpoint: `/1/boards/${t.taskboard.demo.boardId}/lists`,
    query: { filter: 'open' },
  })
  assert.deepEqual(
    lists.body.output.body.map((l: any) => l.id),
    t.taskboard.demo.listIds,
  )
})

test('Task-Board API Call with an API key plus token in its input: works without a connection, never echoes them, keeps no trace', async () => {
  const { key, token } = t.taskboard.demo
  const res = await run(
    'taskboard.api_call',
    { auth: { type: 'api_key_token', key, token }, method: 'GET', endpoint: '/1/members/me' },
    null,
  )
  assert.equal(res.status, 200)
  assert.equal(res.body.output.body.username, t.taskboard.demo.username)
  assert.ok(!JSON.stringify(res.body).includes(token))
  const bad = await run(
    'taskboard.api_call',
    { auth: { type: 'api_key_token', key, token: 'e'.repeat(64) }, method: 'GET', endpoint: '/1/members/me' },
    null,
  )
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'INVALID_CREDENTIALS')
  assert.ok(!JSON.stringify(bad.body).includes('e'.repeat(64)))
  // Listing the runs writes the queued run records, so the stored rows are all there to look at.
  const listed = await t.api('GET', '/v1/runs?limit=5')
  assert.equal(listed.body.runs[0].stepId, 'taskboard.api_call')
  const runs = await t.service.engine.store.db.selectFrom('step_runs').selectAll().execute()
  assert.ok(runs.length > 0)
  assert.ok(!JSON.stringify(runs).includes(token))
})

test('the API Call reaches only the base address: URLs, climbing paths and header smuggling are refused', async () => {
  for (const endpoint of [
    'http://127.0.0.1:1/1/members/me',
    '//127.0.0.1/1/members/me',
    '/1/../_sandbox/reset',
    '/1/%2e%2e/_sandbox/reset',
    '/1/members/me\r\nX: y',
    '/1/members%5cme',
  ]) {
    const res = await run('taskboard.api_call', { method: 'GET', endpoint })
    assert.equal(res.status, 400, endpoint)
    assert.equal(res.body.error.code, 'INVALID_ENDPOINT', endpoint)
  }
  const creds = await run('taskboard.api_call', {
    method: 'GET',
    endpoint: '/1/members/me',
    query: { token: 'x' },
  })
  assert.equal(creds.body.error.code, 'CREDENTIALS_IN_REQUEST')
})

test('a connection of another connector is refused before anything is sent', async () => {
  const cd = await t.api('POST', '/v1/connections', {
    connector: 'contactdata',
    authMethod: 'api_key',
    credentials: { apiKey: t.contactdata!.demo.apiKey },
  })
  assert.equal(cd.status, 201, JSON.stringify(cd.body))
  const res = await run('taskboard.get_card', { idCard: 'a'.repeat(24) }, cd.body.id)
  assert.equal(res.status, 400)
  assert.equal(res.body.error.code, 'CONNECTION_CONNECTOR_MISMATCH')
  assert.match(res.body.error.message, /contactdata connection/)
  assert.match(res.body.error.hint, /connector=taskboard/)
})
