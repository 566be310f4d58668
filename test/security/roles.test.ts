// Roles, enforced by the one policy table: what each role of a workspace key may do, what an agent
// key may do, a key of another workspace reaching nothing of this one (404, never a 2xx), an
// expired key refused, and a signed-in person acting on the workspace the Patchbay-Workspace
// header names (through a PersonAuthenticator, the hook sign-in plugs into).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import Fastify from 'fastify'
import type { Role } from '../../src/engine/access/caller.ts'
import { POLICY } from '../../src/engine/access/policy.ts'
import { buildApp } from '../../src/server/app.ts'
import { attachRules } from '../../src/server/authorize.ts'
import { newId, nowIso } from '../../src/store/ids.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
const keys = {} as Record<Role, string>
let otherKey: string
let otherWorkspace: string
before(async () => {
  t = await startTestService()
  const engine = t.service.engine
  for (const role of ['owner', 'admin', 'member', 'viewer'] as const)
    keys[role] = (
      await engine.apiKeys.create({ workspaceId: t.service.workspaceId, kind: 'workspace', role, name: role })
    ).key
  const other = await engine.apiKeys.createWorkspace('Other')
  otherWorkspace = other.id
  otherKey = (
    await engine.apiKeys.create({ workspaceId: other.id, kind: 'workspace', role: 'owner', name: 'o' })
  ).key
})
after(() => t.close())

const agentBody = (name: string) => ({ name, delivery: { type: 'stream' } })

test('a viewer reads but changes nothing; a member makes agents; only an admin sets budgets', async () => {
  assert.equal((await t.api('GET', '/v1/events', undefined, keys.viewer)).status, 200)
  assert.equal((await t.api('GET', '/v1/agents', undefined, keys.viewer)).status, 200)
  const refused = await t.api('POST', '/v1/agents', agentBody('v'), keys.viewer)
  assert.equal(refused.status, 403)
  assert.equal(refused.body.error.code, 'ROLE_FORBIDDEN')
  assert.match(refused.body.error.message, /needs the role member or above.*is viewer/)
  assert.ok(refused.body.error.hint)

  const made = await t.api('POST', '/v1/agents', agentBody('by member'), keys.member)
  assert.equal(made.status, 201, JSON.stringify(made.body))
  const agentId = made.body.id
  const budget = { limit: 100 }
  const asMember = await t.api('PUT', `/v1/credits/budgets/${agentId}`, budget, keys.member)
  assert.equal(asMember.status, 403)
  assert.equal(asMember.body.error.code, 'ROLE_FORBIDDEN')
  assert.equal((await t.api('PUT', `/v1/credits/budgets/${agentId}`, budget, keys.admin)).status, 200)
  // The first-start key is an owner key.
  assert.equal((await t.api('DELETE', `/v1/credits/budgets/${agentId}`)).status, 204)
})

test('an agent key keeps its rights: its own agent only, nothing of the workspace', async () => {
  const agent = (await t.api('POST', '/v1/agents', agentBody('a'))).body
  const agentKey = (await t.api('POST', `/v1/agents/${agent.id}/keys`, { name: 'k' })).body.key
  assert.equal((await t.api('GET', `/v1/agents/${agent.id}`, undefined, agentKey)).status, 200)
  const list = await t.api('GET', '/v1/agents', undefined, agentKey)
  assert.equal(list.status, 403)
  assert.equal(list.body.error.code, 'AGENT_KEY_FORBIDDEN')
  const other = (await t.api('POST', '/v1/agents', agentBody('b'))).body
  const foreign = await t.api('GET', `/v1/agents/${other.id}`, undefined, agentKey)
  assert.equal(foreign.status, 403)
  assert.equal(foreign.body.error.code, 'AGENT_KEY_FORBIDDEN')
})

test('a key of another workspace reaches nothing of this one: 404, whatever it names', async () => {
  const agent = (await t.api('POST', '/v1/agents', agentBody('mine'))).body
  for (const [method, path] of [
    ['GET', `/v1/agents/${agent.id}`],
    ['DELETE', `/v1/agents/${agent.id}`],
    ['GET', `/v1/agents/${agent.id}/keys`],
  ] as const) {
    const res = await t.api(method, path, undefined, otherKey)
    assert.equal(res.status, 404, `${method} ${path}`)
  }
  assert.deepEqual((await t.api('GET', '/v1/agents', undefined, otherKey)).body.agents, [])
  assert.equal((await t.api('GET', `/v1/agents/${agent.id}`)).status, 200, 'still there')
  // Naming this workspace in the header does not move the key.
  const res = await t.service.app.inject({
    method: 'GET',
    url: '/v1/agents',
    headers: { authorization: `Bearer ${otherKey}`, 'patchbay-workspace': t.service.workspaceId },
  })
  assert.equal(res.statusCode, 404)
  assert.equal(res.json().error.code, 'WORKSPACE_NOT_FOUND')
})

test('an expired key is refused with KEY_EXPIRED', async () => {
  const { key } = await t.service.engine.apiKeys.create({
    workspaceId: t.service.workspaceId,
    kind: 'workspace',
    role: 'member',
    name: 'old',
    expiresAt: new Date(Date.now() - 1000).toISOString(),
  })
  const res = await t.api('GET', '/v1/agents', undefined, key)
  assert.equal(res.status, 401)
  assert.equal(res.body.error.code, 'KEY_EXPIRED')
})

test('a signed-in person acts on the workspace the header names, with their role there; a lowered role holds at once', async () => {
  const engine = t.service.engine
  const personId = newId('per')
  const now = nowIso()
  await engine.store.db
    .insertInto('people')
    .values({ id: personId, email: `${personId}@example.test`, name: 'P', created_at: now, updated_at: now })
    .execute()
  await engine.memberships.put(t.service.workspaceId, personId, 'member')
  await engine.memberships.put(otherWorkspace, personId, 'viewer')
  // The hook sign-in plugs into: here a header names the person (sign-in's reads a session cookie).
  const app = await buildApp(engine, {
    people: [
      {
        authenticate: (req) =>
          req.headers['x-person'] ? { personId, sessionId: 's', keyId: null } : undefined,
      },
    ],
  })
  try {
    const as = (ws: string | undefined, method: 'GET' | 'POST', url: string, body?: unknown) =>
      app.inject({
        method,
        url,
        payload: body as object,
        headers: { 'x-person': '1', ...(ws ? { 'patchbay-workspace': ws } : {}) },
      })
    // No header: their first workspace.
    const first = await as(undefined, 'POST', '/v1/agents', agentBody('by person'))
    assert.equal(first.statusCode, 201, first.body)
    const agentId = first.json().id
    assert.equal((await as(otherWorkspace, 'GET', `/v1/agents/${agentId}`)).statusCode, 404)
    const viewer = await as(otherWorkspace, 'POST', '/v1/agents', agentBody('x'))
    assert.equal(viewer.statusCode, 403)
    assert.equal(viewer.json().error.code, 'ROLE_FORBIDDEN')
    const stranger = await as(newId('ws'), 'GET', '/v1/agents')
    assert.equal(stranger.statusCode, 404)
    assert.equal(stranger.json().error.code, 'WORKSPACE_NOT_FOUND')
    // The role is lowered: the next request is refused (memberships are cached, and dropped on change).
    await engine.memberships.put(t.service.workspaceId, personId, 'viewer')
    const lowered = await as(t.service.workspaceId, 'POST', '/v1/agents', agentBody('y'))
    assert.equal(lowered.statusCode, 403)
    await engine.memberships.remove(t.service.workspaceId, personId)
    assert.equal((await as(t.service.workspaceId, 'GET', '/v1/agents')).statusCode, 404)
  } finally {
    await app.close()
  }
})

test('every route of the document has a rule in the policy table', async () => {
  const doc = t.service.app.swagger() as { paths: Record<string, Record<string, { operationId?: string }>> }
  const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId))
  for (const id of ids) assert.ok(id && Object.hasOwn(POLICY, id), `${id} has a rule`)
})

test('a route the policy table does not name fails the start, saying where to add it', async () => {
  const app = Fastify()
  attachRules(app)
  await assert.rejects(async () => {
    app.get('/v1/frobs', { schema: { operationId: 'listFrobs' } }, async () => ({}))
    await app.ready()
  }, /add "listFrobs" to POLICY in src\/engine\/access\/policy.ts/)
  const hidden = Fastify()
  attachRules(hidden)
  hidden.get('/internal', { schema: { hide: true } }, async () => ({}))
  await assert.rejects(async () => hidden.ready(), /GET \/internal.* has no operationId and is not public/)
})
