// Agents and agent keys over real HTTP: create, read, change and delete agents with every field
// checked; the signing secret shown once and sealed at rest; agent keys that act as their agent
// only and stop working the moment they are revoked.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let conn: string
let otherConn: string
const board = '65a4f4102efd631cc239e762'

before(async () => {
  t = await startTestService()
  const connect = async (token: string) =>
    (
      await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: t.taskboard.demo.key, token },
        // Two connections of one account, as a workspace may keep them.
        second: true,
      })
    ).body.id as string
  conn = await connect(t.taskboard.demo.token)
  otherConn = await connect(t.taskboard.demo.token)
})
after(() => t.close())

const newAgent = (over: Record<string, unknown> = {}) =>
  t.api('POST', '/v1/agents', {
    name: 'Triage bot',
    scope: { boards: [board], repositories: ['acme/web'] },
    connectionIds: [conn],
    delivery: { type: 'webhook', url: 'https://agent.example/hooks' },
    ...over,
  })

test('an agent is created with its scope, connections and delivery; the signing secret is shown once', async () => {
  const res = await newAgent()
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const a = res.body
  assert.match(a.id, /^agt_/)
  assert.equal(a.name, 'Triage bot')
  assert.deepEqual(a.scope, { boards: [board], repositories: ['acme/web'] })
  assert.deepEqual(a.connectionIds, [conn])
  assert.deepEqual(a.delivery, { type: 'webhook', url: 'https://agent.example/hooks' })
  // Standard Webhooks: whsec_ and the base64 of 24 bytes.
  assert.match(a.signingSecret, /^whsec_[A-Za-z0-9+/]{32}$/)
  assert.equal(Buffer.from(a.signingSecret.slice(6), 'base64').length, 24)

  const got = await t.api('GET', `/v1/agents/${a.id}`)
  assert.equal(got.status, 200)
  assert.equal(got.body.signingSecret, undefined, 'never shown again')
  const { signingSecret: _shownOnce, ...shown } = a
  assert.deepEqual(got.body, shown)
  const listed = await t.api('GET', '/v1/agents')
  assert.ok(listed.body.agents.some((x: any) => x.id === a.id))
  assert.ok(!JSON.stringify(listed.body).includes(a.signingSecret))

  // The delivery code reads it from the engine; at rest it is vault ciphertext.
  assert.equal(await t.service.engine.agents.signingSecret(a.id), a.signingSecret)
  const rows = await t.service.engine.store.db.selectFrom('agents').selectAll().execute()
  assert.ok(!JSON.stringify(rows).includes(a.signingSecret.slice(6)))
  const view = await t.service.engine.agents.get(t.service.workspaceId, a.id)
  assert.deepEqual(Object.keys(view).sort(), [
    'connectionIds',
    'createdAt',
    'delivery',
    'endUserId',
    'id',
    'name',
    'scope',
    'toolSelection',
    'updatedAt',
  ])
})

test('defaults: no scope and no connections mean none; a stream agent needs no URL; duplicates collapse', async () => {
  const res = await t.api('POST', '/v1/agents', {
    name: '  Reader  ',
    delivery: { type: 'stream' },
    scope: { boards: [board, board] },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.name, 'Reader')
  assert.deepEqual(res.body.scope, { boards: [board], repositories: [] })
  assert.deepEqual(res.body.connectionIds, [])
  assert.deepEqual(res.body.delivery, { type: 'stream' })
})

test('every field is checked, and the message names the field and what is wrong', async () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ name: '' }, /body\.name/],
    [
      { delivery: { type: 'webhook', url: 'ftp://x.example/h' } },
      /body\.delivery\.url: must be an http:\/\/ or https:\/\/ URL/,
    ],
    [{ delivery: { type: 'webhook', url: 'not a url' } }, /body\.delivery\.url: must be an absolute/],
    [
      { delivery: { type: 'webhook', url: 'https://user:pw@x.example/' } },
      /body\.delivery\.url: must not carry credentials/,
    ],
    [{ delivery: { type: 'email' } }, /body\.delivery/],
    [{ delivery: undefined }, /body\.delivery/],
    [{ scope: { boards: ['Demo Board'] } }, /body\.scope\.boards\.0: must be a task-board board identifier/],
    [
      { scope: { repositories: ['acme'] } },
      /body\.scope\.repositories\.0: must be a code-host repository written owner\/repo/,
    ],
    [{ scope: { repositories: ['acme/..'] } }, /body\.scope\.repositories\.0/],
    [{ scope: { board: [board] } }, /body\.scope.*board/],
    [{ connectionIds: 'con_x' }, /body\.connectionIds/],
  ]
  for (const [over, message] of cases) {
    const res = await newAgent(over)
    assert.equal(res.status, 400, JSON.stringify(over))
    assert.equal(res.body.error.code, 'VALIDATION_FAILED', JSON.stringify(over))
    assert.match(res.body.error.message, message, JSON.stringify(over))
  }
  const unknown = await newAgent({ connectionIds: [conn, 'con_nope'] })
  assert.equal(unknown.status, 400)
  assert.equal(unknown.body.error.code, 'CONNECTION_NOT_FOUND')
  assert.match(unknown.body.error.message, /connectionIds\.1 "con_nope"/)
})

test('PATCH replaces the given fields only, and checks them like create', async () => {
  const a = (await newAgent()).body
  const renamed = await t.api('PATCH', `/v1/agents/${a.id}`, { name: 'Renamed' })
  assert.equal(renamed.status, 200)
  assert.equal(renamed.body.name, 'Renamed')
  assert.deepEqual(renamed.body.scope, a.scope)
  assert.deepEqual(renamed.body.connectionIds, a.connectionIds, 'fields not given stay as they were')
  assert.deepEqual(renamed.body.delivery, a.delivery)
  const changed = await t.api('PATCH', `/v1/agents/${a.id}`, {
    scope: { boards: [] },
    connectionIds: [otherConn],
    delivery: { type: 'stream' },
  })
  assert.equal(changed.status, 200, JSON.stringify(changed.body))
  assert.deepEqual(changed.body.scope, { boards: [], repositories: [] })
  assert.deepEqual(changed.body.connectionIds, [otherConn])
  assert.deepEqual(changed.body.delivery, { type: 'stream' })
  const empty = await t.api('PATCH', `/v1/agents/${a.id}`, {})
  assert.equal(empty.status, 400)
  assert.match(empty.body.error.message, /at least one field/)
  const bad = await t.api('PATCH', `/v1/agents/${a.id}`, {
    delivery: { type: 'webhook', url: 'javascript:alert(1)' },
  })
  assert.equal(bad.body.error.code, 'VALIDATION_FAILED')
  const missingConn = await t.api('PATCH', `/v1/agents/${a.id}`, { connectionIds: ['con_gone'] })
  assert.equal(missingConn.body.error.code, 'CONNECTION_NOT_FOUND')
  assert.equal(
    (await t.api('PATCH', '/v1/agents/agt_nope', { name: 'x' })).body.error.code,
    'AGENT_NOT_FOUND',
  )
})

test('rotating the signing secret returns a new one once; the old one is gone', async () => {
  const a = (await newAgent()).body
  const rotated = await t.api('POST', `/v1/agents/${a.id}/webhook-secret/rotate`)
  assert.equal(rotated.status, 200)
  assert.match(rotated.body.signingSecret, /^whsec_/)
  assert.notEqual(rotated.body.signingSecret, a.signingSecret)
  assert.equal(await t.service.engine.agents.signingSecret(a.id), rotated.body.signingSecret)
  const missing = await t.api('POST', '/v1/agents/agt_nope/webhook-secret/rotate')
  assert.equal(missing.status, 404)
  assert.equal(missing.body.error.code, 'AGENT_NOT_FOUND')
})

test('an agent key acts as its agent only: steps, catalog and its own connections, nothing to manage', async () => {
  const a = (await newAgent()).body
  const b = (await newAgent({ name: 'Other' })).body
  const made = await t.api('POST', `/v1/agents/${a.id}/keys`, { name: 'laptop' })
  assert.equal(made.status, 201, JSON.stringify(made.body))
  const key = made.body.key as string
  assert.match(key, /^pb_agent_/)
  assert.equal(made.body.agentId, a.id)
  assert.equal(made.body.name, 'laptop')
  const as = (method: string, path: string, body?: unknown) => t.api(method, path, body, key)

  assert.equal((await as('GET', '/v1/catalog')).status, 200)
  assert.equal((await as('GET', `/v1/agents/${a.id}`)).status, 200)
  const conns = await as('GET', '/v1/connections')
  assert.deepEqual(
    conns.body.connections.map((c: any) => c.id),
    [conn],
    'only the connections the agent may use',
  )
  assert.equal((await as('GET', `/v1/connections/${conn}`)).status, 200)
  assert.equal((await as('GET', `/v1/connections/${otherConn}`)).body.error.code, 'CONNECTION_NOT_FOUND')
  const card = await as('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: conn,
    input: { idList: t.taskboard.demo.listIds[0], name: 'made by an agent key' },
  })
  assert.equal(card.status, 200, JSON.stringify(card.body))

  for (const [method, path, body] of [
    ['POST', '/v1/connections', { connector: 'taskboard', authMethod: 'api_key_token', credentials: {} }],
    ['DELETE', `/v1/connections/${conn}`, undefined],
    ['GET', '/v1/agents', undefined],
    ['POST', '/v1/agents', { name: 'x', delivery: { type: 'stream' } }],
    ['GET', `/v1/agents/${b.id}`, undefined],
    ['PATCH', `/v1/agents/${a.id}`, { name: 'self-promoted' }],
    ['DELETE', `/v1/agents/${b.id}`, undefined],
    ['POST', `/v1/agents/${a.id}/keys`, {}],
    ['GET', `/v1/agents/${a.id}/keys`, undefined],
    ['POST', `/v1/agents/${a.id}/webhook-secret/rotate`, undefined],
  ] as const) {
    const res = await as(method, path, body)
    assert.equal(res.status, 403, `${method} ${path}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.error.code, 'AGENT_KEY_FORBIDDEN', `${method} ${path}`)
  }
})

test('agent keys are listed without secrets, and a revoked key is refused at once (401)', async () => {
  const a = (await newAgent()).body
  const k1 = (await t.api('POST', `/v1/agents/${a.id}/keys`, {})).body
  const k2 = (await t.api('POST', `/v1/agents/${a.id}/keys`, { name: 'ci' })).body
  const listed = await t.api('GET', `/v1/agents/${a.id}/keys`)
  assert.equal(listed.status, 200)
  assert.deepEqual(listed.body.keys.map((k: any) => k.id).sort(), [k1.id, k2.id].sort())
  assert.ok(!JSON.stringify(listed.body).includes(k1.key))
  assert.ok(listed.body.keys.every((k: any) => k.key === undefined && k.revokedAt === null))
  assert.equal(listed.body.keys.find((k: any) => k.id === k1.id).name, 'Triage bot key')

  // Used just before (so it sits in the authentication cache), then revoked.
  assert.equal((await t.api('GET', '/v1/catalog', undefined, k1.key)).status, 200)
  assert.equal((await t.api('DELETE', `/v1/agents/${a.id}/keys/${k1.id}`)).status, 204)
  const refused = await t.api('GET', '/v1/catalog', undefined, k1.key)
  assert.equal(refused.status, 401)
  assert.equal(refused.body.error.code, 'UNAUTHORIZED')
  assert.match(refused.body.error.message, /revoked/)
  assert.equal(
    (await t.api('GET', '/v1/catalog', undefined, k2.key)).status,
    200,
    'the other key still works',
  )
  const after = await t.api('GET', `/v1/agents/${a.id}/keys`)
  assert.ok(after.body.keys.find((k: any) => k.id === k1.id).revokedAt)
  const unknown = await t.api('DELETE', `/v1/agents/${a.id}/keys/key_nope`)
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.error.code, 'KEY_NOT_FOUND')
})

test('deleting an agent revokes its keys at once and removes it', async () => {
  const a = (await newAgent()).body
  const k = (await t.api('POST', `/v1/agents/${a.id}/keys`, {})).body
  assert.equal((await t.api('GET', `/v1/agents/${a.id}`, undefined, k.key)).status, 200)
  assert.equal((await t.api('DELETE', `/v1/agents/${a.id}`)).status, 204)
  assert.equal((await t.api('GET', `/v1/agents/${a.id}`, undefined, k.key)).status, 401)
  const gone = await t.api('GET', `/v1/agents/${a.id}`)
  assert.equal(gone.status, 404)
  assert.equal(gone.body.error.code, 'AGENT_NOT_FOUND')
  assert.equal((await t.api('DELETE', `/v1/agents/${a.id}`)).status, 404)
})
