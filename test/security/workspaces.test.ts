// Workspaces, workspace keys and the audit log, as a person and their keys use them: a person
// makes a workspace and owns it, makes keys of at most their role, a removed member's keys stop at
// once, every change (and every refused one) is in the audit log with who, what and from where,
// and deleting a workspace removes everything it owns — its upstream webhooks included.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/server/app.ts'
import { newId, nowIso } from '../../src/store/ids.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let app: FastifyInstance
const people = { ann: newId('per'), bob: newId('per') }

before(async () => {
  t = await startTestService()
  const now = nowIso()
  for (const [name, id] of Object.entries(people))
    await t.service.engine.store.db
      .insertInto('people')
      .values({ id, email: `${name}@example.test`, name, created_at: now, updated_at: now })
      .execute()
  // Sign-in's hook, as a test stands in for it: X-Person names who is signed in.
  app = await buildApp(t.service.engine, {
    people: [
      {
        authenticate: (req) => {
          const name = req.headers['x-person'] as keyof typeof people | undefined
          return name ? { personId: people[name], sessionId: `s-${name}`, keyId: null } : undefined
        },
      },
    ],
  })
})
after(async () => {
  await app.close()
  await t.close()
})

async function as(
  who: 'ann' | 'bob' | { key: string },
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
  workspace?: string,
) {
  const res = await app.inject({
    method,
    url,
    payload: body as object,
    headers: {
      ...(typeof who === 'string' ? { 'x-person': who } : { authorization: `Bearer ${who.key}` }),
      ...(workspace ? { 'patchbay-workspace': workspace } : {}),
      'user-agent': 'workspaces-test/1',
    },
  })
  return { status: res.statusCode, body: res.body ? res.json() : null }
}

test('a person makes a workspace and owns it; keys have at most their maker’s role; the audit log shows each step', async () => {
  const made = await as('ann', 'POST', '/v1/workspaces', { name: 'Ann’s team' })
  assert.equal(made.status, 201, JSON.stringify(made.body))
  assert.equal(made.body.role, 'owner')
  const ws = made.body.id
  const list = await as('ann', 'GET', '/v1/workspaces')
  assert.deepEqual(
    list.body.workspaces.map((w: any) => [w.id, w.role]),
    [[ws, 'owner']],
  )
  // A key cannot make a workspace (no one would own it).
  const byKey = await as({ key: t.adminKey }, 'POST', '/v1/workspaces', { name: 'x' })
  assert.equal(byKey.status, 403)
  assert.equal(byKey.body.error.code, 'PERSON_REQUIRED')

  // Bob is an admin there: he may make admin keys, not owner keys.
  await t.service.engine.memberships.put(ws, people.bob, 'admin')
  const ownerKey = await as('bob', 'POST', '/v1/keys', { name: 'too much', role: 'owner' }, ws)
  assert.equal(ownerKey.status, 403)
  assert.equal(ownerKey.body.error.code, 'ROLE_FORBIDDEN')
  const bobKey = await as('bob', 'POST', '/v1/keys', { name: 'ci', role: 'member' }, ws)
  assert.equal(bobKey.status, 201, JSON.stringify(bobKey.body))
  assert.match(bobKey.body.key, /^pb_ws_/)
  assert.equal(bobKey.body.createdBy, people.bob)

  // The key acts on its workspace with its role.
  const agent = await as({ key: bobKey.body.key }, 'POST', '/v1/agents', {
    name: 'a',
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201)
  const keys = await as('ann', 'PATCH', `/v1/workspaces/${ws}`, { name: 'Renamed' })
  assert.equal(keys.body.name, 'Renamed')
  const listed = await as('ann', 'GET', '/v1/keys', undefined, ws)
  const row = listed.body.keys.find((k: any) => k.id === bobKey.body.id)
  assert.equal(row.role, 'member')
  assert.ok(row.lastUsedAt, 'its last use is shown')
  assert.ok(!JSON.stringify(listed.body).includes(bobKey.body.key), 'never the key itself')

  // Bob is removed: the key he made stops at once.
  await t.service.engine.memberships.remove(ws, people.bob)
  const after = await as({ key: bobKey.body.key }, 'GET', '/v1/agents')
  assert.equal(after.status, 401)
  assert.equal((await as('bob', 'GET', `/v1/workspaces/${ws}`)).status, 404)

  // The audit log: who did what, refused attempts too, newest first, filtered and paged.
  const audit = await as('ann', 'GET', '/v1/audit?limit=50', undefined, ws)
  assert.equal(audit.status, 200, JSON.stringify(audit.body))
  const seen = audit.body.entries.map((e: any) => `${e.action} ${e.outcome} ${e.actor.label}`)
  assert.deepEqual(seen.reverse(), [
    'workspace.created ok ann@example.test',
    'key.created refused bob@example.test',
    'key.created ok bob@example.test',
    `agent.created ok ci (${bobKey.body.key.slice(0, 12)}…)`,
    'workspace.updated ok ann@example.test',
  ])
  const created = audit.body.entries.find((e: any) => e.action === 'key.created' && e.outcome === 'ok')
  assert.equal(created.object.id, bobKey.body.id)
  assert.equal(created.userAgent, 'workspaces-test/1')
  assert.ok(created.address)
  assert.ok(!JSON.stringify(audit.body).includes(bobKey.body.key), 'never a secret')
  const refused = audit.body.entries.find((e: any) => e.outcome === 'refused')
  assert.equal(refused.detail.code, 'ROLE_FORBIDDEN')

  const byBob = await as('ann', 'GET', `/v1/audit?actor=${people.bob}`, undefined, ws)
  assert.equal(byBob.body.entries.length, 2)
  const keyActions = await as('ann', 'GET', '/v1/audit?action=key.', undefined, ws)
  assert.equal(keyActions.body.entries.length, 2)
  const page1 = await as('ann', 'GET', '/v1/audit?limit=2', undefined, ws)
  const page2 = await as('ann', 'GET', `/v1/audit?limit=2&cursor=${page1.body.next}`, undefined, ws)
  const page3 = await as('ann', 'GET', `/v1/audit?limit=2&cursor=${page2.body.next}`, undefined, ws)
  assert.equal(page3.body.next, null)
  assert.deepEqual(
    [...page1.body.entries, ...page2.body.entries, ...page3.body.entries].map((e: any) => e.id),
    audit.body.entries.map((e: any) => e.id),
  )
  // Another workspace's audit log shows none of it.
  const other = await t.api('GET', '/v1/audit')
  assert.ok(!other.body.entries.some((e: any) => e.actor.id === people.bob))
})

test('the one-time owner-setup token makes the first person who uses it the owner of the first workspace', async () => {
  const token = t.service.ownerSetupToken
  assert.ok(token, 'no person owns the first workspace yet')
  const forged = await as('bob', 'POST', '/v1/workspaces/claim', { token: `${t.service.workspaceId}.forged` })
  assert.equal(forged.status, 400)
  assert.equal(forged.body.error.code, 'OWNER_SETUP_INVALID')
  const claimed = await as('ann', 'POST', '/v1/workspaces/claim', { token })
  assert.equal(claimed.status, 200, JSON.stringify(claimed.body))
  assert.deepEqual([claimed.body.id, claimed.body.role], [t.service.workspaceId, 'owner'])
  const again = await as('bob', 'POST', '/v1/workspaces/claim', { token })
  assert.equal(again.status, 409)
  const audit = await as(
    'ann',
    'GET',
    '/v1/audit?action=workspace.owner_claimed',
    undefined,
    t.service.workspaceId,
  )
  assert.equal(audit.body.entries[0].actor.label, 'ann@example.test')
})

test('a revoked key and an expired one are refused; a member may not revoke keys', async () => {
  const ws = (await as('ann', 'POST', '/v1/workspaces', { name: 'Keys' })).body.id
  const k = (await as('ann', 'POST', '/v1/keys', { name: 'k', role: 'viewer' }, ws)).body
  assert.equal((await as({ key: k.key }, 'GET', '/v1/events')).status, 200)
  await t.service.engine.memberships.put(ws, people.bob, 'member')
  const byMember = await as('bob', 'DELETE', `/v1/keys/${k.id}`, undefined, ws)
  assert.equal(byMember.status, 403)
  const revoked = await as('ann', 'DELETE', `/v1/keys/${k.id}`, undefined, ws)
  assert.equal(revoked.status, 200)
  assert.ok(revoked.body.revokedAt)
  assert.equal((await as({ key: k.key }, 'GET', '/v1/events')).status, 401)
  const past = await as(
    'ann',
    'POST',
    '/v1/keys',
    { name: 'old', role: 'viewer', expiresAt: '2020-01-01T00:00:00Z' },
    ws,
  )
  assert.equal(past.status, 400)
})

test('deleting a workspace removes everything it owns, its upstream webhooks too, and says what went', async () => {
  const ws = (await as('ann', 'POST', '/v1/workspaces', { name: 'Doomed' })).body.id
  const owner = (await as('ann', 'POST', '/v1/keys', { name: 'o', role: 'owner' }, ws)).body.key
  const k = { key: owner }
  const conn = await as(k, 'POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: {
      key: t.taskboard.demo.key,
      token: t.taskboard.demo.token,
      secret: t.taskboard.demo.secret,
    },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const agent = await as(k, 'POST', '/v1/agents', {
    name: 'a',
    delivery: { type: 'stream' },
    scope: { boards: [t.taskboard.demo.boardId] },
    connectionIds: [conn.body.id],
  })
  const trig = await as(k, 'POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn.body.id,
    config: { idBoard: t.taskboard.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  const hooks = async () => {
    const res = await fetch(`${t.taskboard.url}/1/tokens/${t.taskboard.demo.token}/webhooks`, {
      headers: {
        authorization: `OAuth oauth_consumer_key="${t.taskboard.demo.key}", oauth_token="${t.taskboard.demo.token}"`,
      },
    })
    return (await res.json()) as unknown[]
  }
  assert.equal((await hooks()).length, 1)

  // An admin may not; the owner may.
  await t.service.engine.memberships.put(ws, people.bob, 'admin')
  const byAdmin = await as('bob', 'DELETE', `/v1/workspaces/${ws}`)
  assert.equal(byAdmin.status, 403)
  assert.equal(byAdmin.body.error.code, 'ROLE_FORBIDDEN')
  const gone = await as('ann', 'DELETE', `/v1/workspaces/${ws}`)
  assert.equal(gone.status, 200, JSON.stringify(gone.body))
  assert.equal(gone.body.removed.connections, 1)
  assert.equal(gone.body.removed.agents, 1)
  assert.equal(gone.body.removed.triggers, 1)
  assert.equal(gone.body.removed.keys, 1)
  assert.equal(gone.body.removed.members, 2)
  assert.deepEqual(gone.body.cleanupErrors, [])
  assert.equal((await hooks()).length, 0, 'its upstream webhook is unregistered')
  assert.equal((await as(k, 'GET', '/v1/agents')).status, 401, 'its keys stop')
  assert.equal((await as('ann', 'GET', `/v1/workspaces/${ws}`)).status, 404)
  const db = t.service.engine.store.db
  for (const table of [
    'connections',
    'agents',
    'triggers',
    'api_keys',
    'memberships',
    'subscriptions',
  ] as const) {
    const left = await db.selectFrom(table).select('workspace_id').where('workspace_id', '=', ws).execute()
    assert.equal(left.length, 0, table)
  }
  // The record of the deletion outlives the workspace.
  const record = await db
    .selectFrom('audit_log')
    .selectAll()
    .where('action', '=', 'workspace.deleted')
    .execute()
  assert.equal(record.length, 1)
  assert.equal(JSON.parse(record[0].detail!).workspaceId, ws)
})
