// End users over real HTTP against the sandbox task-board: connect sessions (made by a backend,
// used without any workspace key), connections that belong to one end user, agents bound to one,
// lifecycle notices to the workspace's notification URL, and removing an end user.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control, mintTaskboardToken } from '../helpers/taskboard.ts'

const APP = 'http://app.example.test'

describe('end users', () => {
  let sandbox: TaskboardSandbox
  let t: TestService
  let notices: Receiver
  let agentEndpoint: Receiver
  let alice: Awaited<ReturnType<typeof mintTaskboardToken>>
  let bobToken: string
  const state: { aliceConn?: string; bobConn?: string; agentId?: string; agentKey?: string } = {}

  /** A call of the hosted page: no workspace key at all. */
  const anonymous = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(t.url + path, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const session = async (endUserId: string, extra: Record<string, unknown> = {}) => {
    const res = await t.api('POST', '/v1/connect-sessions', { endUserId, returnTo: `${APP}/done`, ...extra })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    return res.body as { token: string; url: string; id: string; expiresAt: string }
  }

  before(async () => {
    sandbox = await startTaskboardSandbox()
    t = await startTestService({ taskboard: sandbox })
    notices = await new Receiver().start()
    agentEndpoint = await new Receiver().start()
    alice = await mintTaskboardToken(sandbox, { username: `alice${Date.now()}` })
    // The same upstream account, its own token: what a second end user connecting it would have.
    bobToken = (
      await control(sandbox, 'POST', '/tokens', {
        memberId: alice.memberId,
        key: alice.key,
        scope: 'read,write',
        expiration: 'never',
      })
    ).token
  })
  after(async () => {
    await t.close()
    await sandbox.close()
    await notices.close()
    await agentEndpoint.close()
  })

  test('settings: allowed origins and a notification URL, whose signing secret is shown once', async () => {
    const res = await t.api('PATCH', '/v1/workspace/settings', {
      allowedOrigins: [APP],
      notificationUrl: notices.url,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.match(res.body.notificationSecret, /^whsec_/)
    notices.secret = res.body.notificationSecret
    // One resource: the workspace's other settings beside them, each kept when another changes.
    const read = await t.api('GET', '/v1/workspace/settings')
    assert.deepEqual(read.body, {
      allowInlineAuth: false,
      allowedOrigins: [APP],
      notificationUrl: notices.url,
    })
    const inline = await t.api('PATCH', '/v1/workspace/settings', { allowInlineAuth: true })
    assert.deepEqual(inline.body, {
      allowInlineAuth: true,
      allowedOrigins: [APP],
      notificationUrl: notices.url,
    })
    // A refused change changes nothing, not even the part that was fine.
    const bad = await t.api('PATCH', '/v1/workspace/settings', {
      allowInlineAuth: false,
      allowedOrigins: ['https://x.test/path'],
    })
    assert.equal(bad.status, 400)
    const after = await t.api('PATCH', '/v1/workspace/settings', { allowInlineAuth: false })
    assert.deepEqual(after.body, {
      allowInlineAuth: false,
      allowedOrigins: [APP],
      notificationUrl: notices.url,
    })
    assert.ok(!('notificationSecret' in after.body), 'the secret is shown once only')
    // The old path answers for one more release, saying it is deprecated and where to go instead.
    const old = await fetch(`${t.url}/v1/end-user-settings`, {
      headers: { authorization: `Bearer ${t.adminKey}` },
    })
    assert.equal(old.status, 200)
    assert.match(old.headers.get('deprecation') ?? '', /^@\d+$/)
    assert.match(old.headers.get('link') ?? '', /<\/v1\/workspace\/settings>; rel="successor-version"/)
    assert.deepEqual(await old.json(), { allowedOrigins: [APP], notificationUrl: notices.url })
    const oldPut = await t.api('PUT', '/v1/end-user-settings', { allowedOrigins: [APP] })
    assert.equal(oldPut.status, 200, JSON.stringify(oldPut.body))
    assert.deepEqual(oldPut.body, { allowedOrigins: [APP], notificationUrl: notices.url })
  })

  test('a connect session with a returnTo outside the allowed origins is refused and makes nothing', async () => {
    const res = await t.api('POST', '/v1/connect-sessions', {
      endUserId: 'mallory',
      returnTo: 'https://evil.example/steal',
    })
    assert.equal(res.status, 400)
    assert.equal(res.body.error.code, 'RETURN_TO_NOT_ALLOWED')
    assert.ok(res.body.error.hint)
    assert.equal((await t.api('GET', '/v1/end-users/mallory')).status, 404)
  })

  test('an end user connects through a connect session without any workspace key; the link is single use', async () => {
    const s = await session('alice', {
      displayName: 'Alice',
      email: 'alice@example.test',
      connectors: ['taskboard'],
    })
    assert.ok(s.url.endsWith(`/connect#${s.token}`))
    const info = await anonymous('GET', '/v1/connect/session', undefined, {
      'patchbay-connect-token': s.token,
    })
    assert.equal(info.status, 200, JSON.stringify(info.body))
    assert.equal(info.body.workspaceName, 'Default')
    assert.deepEqual(
      info.body.connectors.map((c: any) => c.id),
      ['taskboard'],
    )
    // Forged: refused in words.
    const forged = await anonymous('GET', '/v1/connect/session', undefined, {
      'patchbay-connect-token': 'pbcs_forged',
    })
    assert.equal(forged.status, 401)
    assert.equal(forged.body.error.code, 'CONNECT_SESSION_INVALID')
    // A connector the link does not allow.
    const other = await anonymous('POST', '/v1/connect/connections', {
      token: s.token,
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey: 'x' },
    })
    assert.equal(other.status, 403)
    assert.equal(other.body.error.code, 'CONNECT_NOT_ALLOWED')
    // Wrong credentials: an error, and the link still works.
    const wrong = await anonymous('POST', '/v1/connect/connections', {
      token: s.token,
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: alice.key, token: 'not-a-token' },
    })
    assert.equal(wrong.body.error.code, 'INVALID_CREDENTIALS')
    const made = await anonymous('POST', '/v1/connect/connections', {
      token: s.token,
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: alice.key, token: alice.token },
    })
    assert.equal(made.status, 201, JSON.stringify(made.body))
    assert.equal(made.body.connection.endUserId, 'alice')
    assert.equal(made.body.connection.accountName, alice.username)
    const back = new URL(made.body.returnTo)
    assert.equal(back.origin, APP)
    assert.equal(back.searchParams.get('connectionId'), made.body.connection.id)
    state.aliceConn = made.body.connection.id
    const again = await anonymous('POST', '/v1/connect/connections', {
      token: s.token,
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: alice.key, token: alice.token },
    })
    assert.equal(again.status, 409)
    assert.equal(again.body.error.code, 'CONNECT_SESSION_USED')
    // Refusals are in the audit log (the reused link under its workspace, the forged one under none).
    const refused = await t.service.engine.store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'connect_session.refused')
      .execute()
    assert.ok(
      refused.some(
        (r) => r.workspace_id === t.service.workspaceId && r.detail?.includes('CONNECT_SESSION_USED'),
      ),
    )
    assert.ok(refused.some((r) => r.workspace_id === null && r.detail?.includes('CONNECT_SESSION_INVALID')))
    assert.ok(!refused.some((r) => r.detail?.includes(s.token)), 'no token in the audit log')
    const eu = await t.api('GET', '/v1/end-users/alice')
    assert.equal(eu.body.displayName, 'Alice')
    assert.deepEqual(
      eu.body.connections.map((c: any) => c.id),
      [state.aliceConn],
    )
  })

  test('an expired connect session is refused', async () => {
    const s = await session('carol')
    await t.service.engine.store.db
      .updateTable('connect_sessions')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', s.id)
      .execute()
    const res = await anonymous('POST', '/v1/connect/connections', {
      token: s.token,
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: alice.key, token: alice.token },
    })
    assert.equal(res.status, 410)
    assert.equal(res.body.error.code, 'CONNECT_SESSION_EXPIRED')
    // Made with a returnTo on an allowed origin: the page is told where to send the browser back.
    const back = new URL(res.body.error.details.returnTo)
    assert.equal(`${back.origin}${back.pathname}`, `${APP}/done`)
    assert.equal(back.searchParams.get('error'), 'CONNECT_SESSION_EXPIRED')
    assert.deepEqual((await t.api('GET', '/v1/connections?endUserId=carol')).body.connections, [])
  })

  test('the same upstream account connected by two end users is two connections, never shared', async () => {
    const s = await session('bob')
    const made = await anonymous('POST', '/v1/connect/connections', {
      token: s.token,
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: alice.key, token: bobToken },
    })
    assert.equal(made.status, 201, JSON.stringify(made.body))
    assert.equal(made.body.reconnected, false)
    assert.notEqual(made.body.connection.id, state.aliceConn)
    state.bobConn = made.body.connection.id
    const ofAlice = (await t.api('GET', '/v1/connections?endUserId=alice')).body.connections
    const ofBob = (await t.api('GET', '/v1/connections?endUserId=bob')).body.connections
    assert.deepEqual(
      ofAlice.map((c: any) => c.id),
      [state.aliceConn],
    )
    assert.deepEqual(
      ofBob.map((c: any) => c.id),
      [state.bobConn],
    )
    assert.deepEqual((await t.api('GET', '/v1/connections?endUserId=')).body.connections, [])
  })

  test('an agent bound to an end user uses only their connections', async () => {
    const refused = await t.api('POST', '/v1/agents', {
      name: 'alice helper',
      endUserId: 'alice',
      connectionIds: [state.aliceConn, state.bobConn],
      delivery: { type: 'webhook', url: agentEndpoint.url },
    })
    assert.equal(refused.status, 400)
    assert.equal(refused.body.error.code, 'CONNECTION_OF_OTHER_OWNER')
    const unbound = await t.api('POST', '/v1/agents', {
      name: 'workspace agent',
      connectionIds: [state.aliceConn],
      delivery: { type: 'stream' },
    })
    assert.equal(unbound.status, 400)
    assert.equal(unbound.body.error.code, 'CONNECTION_OF_OTHER_OWNER')
    const made = await t.api('POST', '/v1/agents', {
      name: 'alice helper',
      endUserId: 'alice',
      connectionIds: [state.aliceConn],
      delivery: { type: 'webhook', url: agentEndpoint.url },
    })
    assert.equal(made.status, 201, JSON.stringify(made.body))
    assert.equal(made.body.endUserId, 'alice')
    state.agentId = made.body.id
    // Adding bob's connection later is refused too.
    const add = await t.api('PATCH', `/v1/agents/${state.agentId}`, {
      connectionIds: [state.aliceConn, state.bobConn],
    })
    assert.equal(add.body.error.code, 'CONNECTION_OF_OTHER_OWNER')
    const key = await t.api('POST', `/v1/agents/${state.agentId}/keys`, {})
    state.agentKey = key.body.key
    const seen = await t.api('GET', '/v1/connections', undefined, state.agentKey)
    assert.deepEqual(
      seen.body.connections.map((c: any) => c.id),
      [state.aliceConn],
    )
    assert.equal(
      (await t.api('GET', `/v1/connections/${state.bobConn}`, undefined, state.agentKey)).status,
      404,
    )
    const run = await t.api(
      'POST',
      '/v1/steps/taskboard.get_boards/run',
      { connectionId: state.aliceConn, input: {} },
      state.agentKey,
    )
    assert.equal(run.status, 200, JSON.stringify(run.body))
    const runBob = await t.api(
      'POST',
      '/v1/steps/taskboard.get_boards/run',
      { connectionId: state.bobConn, input: {} },
      state.agentKey,
    )
    assert.notEqual(runBob.status, 200)
    assert.ok(!JSON.stringify(runBob.body).includes(bobToken))
    const eu = await t.api('GET', '/v1/end-users/alice')
    assert.deepEqual(
      eu.body.agents.map((a: any) => a.id),
      [state.agentId],
    )
  })

  test("isolation: alice's agent never runs with bob's connection over MCP, in a tool or a trigger", async () => {
    const client = new Client({ name: 'isolation-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${state.agentKey}` } },
      }),
    )
    try {
      const mine: any = await client.callTool({
        name: 'taskboard_get_boards',
        arguments: { connectionId: state.aliceConn },
      })
      assert.equal(mine.isError, undefined, JSON.stringify(mine))
      const bobs: any = await client.callTool({
        name: 'taskboard_get_boards',
        arguments: { connectionId: state.bobConn },
      })
      assert.equal(bobs.isError, true)
      assert.ok(!JSON.stringify(bobs).includes(bobToken))
    } finally {
      await client.close()
    }
    const tool = await t.api('POST', `/v1/agents/${state.agentId}/tools`, {
      name: 'Read boards',
      steps: [{ stepId: 'taskboard.get_boards', connectionId: state.bobConn, input: {} }],
    })
    assert.equal(tool.status, 400, JSON.stringify(tool.body))
    const trigger = await t.api('POST', `/v1/agents/${state.agentId}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId: state.bobConn,
      config: { idBoard: sandbox.demo.boardId },
    })
    assert.equal(trigger.body.error.code, 'CONNECTION_NOT_ALLOWED')
    // An unbound agent cannot be given an end user's connection either.
    const plain = await t.api('POST', '/v1/agents', { name: 'plain', delivery: { type: 'stream' } })
    const widen = await t.api('PATCH', `/v1/agents/${plain.body.id}`, { connectionIds: [state.bobConn] })
    assert.equal(widen.body.error.code, 'CONNECTION_OF_OTHER_OWNER')
    // Re-binding alice's agent to bob while it holds alice's connection is refused.
    const rebind = await t.api('PATCH', `/v1/agents/${state.agentId}`, { endUserId: 'bob' })
    assert.equal(rebind.body.error.code, 'CONNECTION_OF_OTHER_OWNER')
  })

  test('the operator is told, signed, of connections made and of one that lapsed', async () => {
    const created = await notices.until((r) =>
      r.some((n) => n.body.type === 'connection.created' && n.body.data.connectionId === state.bobConn),
    )
    const forAlice = created.find(
      (n) => n.body.type === 'connection.created' && n.body.data.connectionId === state.aliceConn,
    )!
    assert.ok(forAlice.verified, 'signed with the notification secret')
    assert.equal(forAlice.body.data.endUserId, 'alice')
    assert.deepEqual(forAlice.body.data.endUser, {
      id: 'alice',
      displayName: 'Alice',
      email: 'alice@example.test',
    })
    assert.equal(forAlice.body.data.connector, 'taskboard')
    assert.equal(forAlice.body.data.accountName, alice.username)
    assert.ok(!JSON.stringify(created).includes(alice.token))

    // The token is revoked upstream; the agent's next step finds out, and the operator is told.
    const res = await fetch(`${sandbox.url}/1/tokens/${alice.token}?key=${alice.key}&token=${alice.token}`, {
      method: 'DELETE',
    })
    assert.equal(res.status, 200, await res.text())
    const run = await t.api(
      'POST',
      '/v1/steps/taskboard.get_boards/run',
      { connectionId: state.aliceConn, input: {} },
      state.agentKey,
    )
    assert.notEqual(run.status, 200)
    const lapsed = (await notices.until((r) => r.some((n) => n.body.type === 'connection.lapsed'))).filter(
      (n) => n.body.type === 'connection.lapsed',
    )
    assert.equal(lapsed.length, 1)
    assert.equal(lapsed[0].body.data.connectionId, state.aliceConn)
    assert.equal(lapsed[0].body.data.endUserId, 'alice')
    assert.equal(lapsed[0].body.data.status, 'lapsed')
    assert.ok(lapsed[0].body.data.reason)
    // Bob's connection of the same account still works: it has its own token.
    assert.equal((await t.api('GET', `/v1/connections/${state.bobConn}`)).body.status, 'active')

    // Received, then recorded as delivered once the answer is in.
    const listed = await eventually(
      () => t.api('GET', '/v1/notices?type=connection.lapsed'),
      (r) => r.body.notices[0]?.status === 'delivered',
    )
    assert.equal(listed.body.notices.length, 1)
    const replayed = await t.api('POST', `/v1/notices/${listed.body.notices[0].id}/replay`)
    assert.equal(replayed.status, 200, JSON.stringify(replayed.body))
    await notices.until((r) => r.filter((n) => n.id === listed.body.notices[0].id).length === 2)
  })

  test('a notice the notification URL refuses is retried', async () => {
    notices.failNext = 1
    const before = notices.received.length
    const s = await session('dave')
    const made = await anonymous('POST', '/v1/connect/connections', {
      token: s.token,
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: sandbox.demo.token },
    })
    assert.equal(made.status, 201)
    const failed = await eventually(
      () => t.api('GET', '/v1/notices?status=pending'),
      (r) =>
        r.body.notices.some(
          (n: any) => n.body.data.connectionId === made.body.connection.id && n.attempts === 1,
        ),
    )
    const n = failed.body.notices.find((x: any) => x.body.data.connectionId === made.body.connection.id)
    assert.match(n.lastError, /500/)
    // The retry schedule in tests is the deliveries' (first retry after seconds): replaying sends it now.
    await t.api('POST', `/v1/notices/${n.id}/replay`)
    await notices.until((r) => r.length > before && r.some((x) => x.id === n.id))
  })

  test('deleting an end user removes their connections and says what was removed', async () => {
    const res = await t.api('DELETE', '/v1/end-users/alice')
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(
      res.body.connections.map((c: any) => c.id),
      [state.aliceConn],
    )
    assert.deepEqual(res.body.agentsUnbound, [state.agentId])
    assert.equal((await t.api('GET', '/v1/end-users/alice')).status, 404)
    assert.equal((await t.api('GET', `/v1/connections/${state.aliceConn}`)).status, 404)
    assert.equal((await t.api('GET', `/v1/connections/${state.bobConn}`)).status, 200)
    const agent = await t.api('GET', `/v1/agents/${state.agentId}`)
    assert.deepEqual(agent.body.connectionIds, [])
    assert.equal(agent.body.endUserId, 'alice', 'still bound: it never falls back to the workspace')
    await notices.until((r) =>
      r.some((n) => n.body.type === 'connection.deleted' && n.body.data.connectionId === state.aliceConn),
    )
    const list = await t.api('GET', '/v1/end-users?limit=1')
    assert.equal(list.body.endUsers.length, 1)
    assert.ok(list.body.next)
    const rest = await t.api('GET', `/v1/end-users?limit=50&cursor=${encodeURIComponent(list.body.next)}`)
    assert.ok(rest.body.endUsers.every((u: any) => u.id > list.body.endUsers[0].id))
  })
})
