// Task-board connections against the sandbox: OAuth 1.0a driven over HTTP the way a browser
// drives it (authorize page → login-and-approve form → redirect to Patchbay's callback), the key
// and token walkthrough through the token page, a lapsed connection reconnected in place with its
// webhooks registered again, and disconnecting.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { OAUTH_STATE_TTL_MS } from '../../src/engine/connections/oauth-flows.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { approve, connectDemoTaskboard, control, taskboardRest } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let oauthConnection: string

const demoLogin = { username: 'demo', password: 'demo' }

/**
 * Starts a sign-in, approves it as demo and follows the redirect to Patchbay's callback. Each
 * sign-in makes a connection of its own (`second`), so the tests can count them.
 */
async function signIn(body: Record<string, unknown>, button = 'Allow') {
  const start = await t.api('POST', '/v1/connections/oauth/start', {
    connector: 'taskboard',
    second: true,
    ...body,
  })
  assert.equal(start.status, 200, JSON.stringify(start.body))
  const approved = await approve(start.body.authorizeUrl, demoLogin, button)
  assert.equal(approved.status, 302)
  const callback = new URL(approved.headers.get('location')!)
  const back = await fetch(callback, { redirect: 'manual' })
  return { start: start.body, callback, back }
}

const tbAs = (token: string) => (method: string, path: string, body?: unknown) =>
  taskboardRest(sandbox, method, path, body, token)
const tb = (method: string, path: string, body?: unknown) => tbAs(sandbox.demo.token)(method, path, body)

const countConnections = async () => (await t.api('GET', '/v1/connections')).body.connections.length

/** A stream agent on the demo board with these connections. */
async function agentWith(connectionIds: string[]) {
  const res = await t.api('POST', '/v1/agents', {
    name: `agent-${Math.random().toString(36).slice(2, 8)}`,
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds,
    delivery: { type: 'stream' },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id as string
}

/** Waits until the trigger has a delivery for an event about this card. */
async function deliveredFor(triggerId: string, cardId: string) {
  await eventually(
    async () => {
      const ds = (await t.api('GET', `/v1/deliveries?triggerId=${triggerId}`)).body.deliveries
      for (const d of ds) {
        const e = (await t.api('GET', `/v1/events/${d.eventId}`)).body
        if (e.refs.card === cardId) return true
      }
      return false
    },
    (found) => found,
  )
}

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({
    taskboard: sandbox,
    env: {
      PATCHBAY_TASKBOARD_CLIENT_ID: sandbox.demo.key,
      PATCHBAY_TASKBOARD_CLIENT_SECRET: sandbox.demo.secret,
    },
  })
})
after(async () => {
  await t.close()
  await sandbox.close()
})

test('OAuth: authorize page, login and approve, back to Patchbay — the connection is active under the account name', async () => {
  const returnTo = `${t.url}/dashboard/connections`
  const { start, callback, back } = await signIn({ mode: 'redirect', returnTo })
  const authorize = new URL(start.authorizeUrl)
  assert.equal(`${authorize.origin}${authorize.pathname}`, `${sandbox.webUrl}/1/OAuthAuthorizeToken`)
  assert.equal(authorize.searchParams.get('scope'), 'read,write', 'read and write access is asked for')
  // The task-board sent the browser to Patchbay's callback with the state and its verifier.
  assert.equal(`${callback.origin}${callback.pathname}`, `${t.url}/v1/oauth/callback/taskboard`)
  assert.equal(callback.searchParams.get('state'), start.state)
  assert.ok(callback.searchParams.get('oauth_verifier'))
  assert.equal(back.status, 302)
  const done = new URL(back.headers.get('location')!)
  assert.equal(`${done.origin}${done.pathname}`, returnTo)
  oauthConnection = done.searchParams.get('connectionId')!
  assert.match(oauthConnection, /^con_/)

  const view = (await t.api('GET', `/v1/connections/${oauthConnection}`)).body
  assert.equal(view.accountName, 'demo')
  assert.equal(view.authMethod, 'oauth1')
  assert.equal(view.status, 'active')
  assert.ok(!JSON.stringify(view).includes(sandbox.demo.secret), 'no secret in the view')
  // The access token is an ordinary token with read and write access.
  const run = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: oauthConnection,
    input: { idList: sandbox.demo.listIds[0], name: 'Made through OAuth' },
  })
  assert.equal(run.status, 200, JSON.stringify(run.body))
  const state = await control(sandbox, 'GET', '/state')
  const issued = state.tokens.filter((x: any) => x.oauth && x.idMember === sandbox.demo.memberId)
  assert.equal(issued.length, 1)
  assert.deepEqual(issued[0].scopes, ['read', 'write'])
  assert.equal(issued[0].dateExpires, null)
})

test('OAuth connections verify webhook deliveries with the app secret, so instant triggers work', async () => {
  const agent = await agentWith([oauthConnection])
  const trig = await t.api('POST', `/v1/agents/${agent}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: oauthConnection,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  const card = await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'Seen through OAuth' })
  await deliveredFor(trig.body.id, card.id)
})

test('a used, forged or altered state is refused with a clear code, and nothing is stored', async () => {
  const before = await countConnections()
  const returnTo = `${t.url}/after`
  const { callback } = await signIn({ mode: 'redirect', returnTo })
  // The same callback again (a replay): refused.
  const replay = await fetch(callback, { redirect: 'manual' })
  assert.equal(replay.status, 302)
  assert.equal(new URL(replay.headers.get('location')!).searchParams.get('error'), 'OAUTH_STATE_USED')

  const forged = new URL(callback)
  forged.searchParams.set('state', 'made-up')
  const page = await fetch(forged, { redirect: 'manual' })
  assert.equal(page.status, 400)
  assert.match(await page.text(), /OAUTH_STATE_INVALID/)

  const altered = new URL(callback)
  const s = altered.searchParams.get('state')!
  altered.searchParams.set('state', `${s.slice(0, -4)}${s.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`)
  const page2 = await fetch(altered, { redirect: 'manual' })
  assert.equal(page2.status, 400)
  assert.match(await page2.text(), /OAUTH_STATE_INVALID/)
  assert.equal(await countConnections(), before + 1, 'only the completed sign-in made a connection')
})

test('a sign-in that outlives its state is refused as expired, and nothing is stored', async () => {
  const before = await countConnections()
  const oauth = t.service.engine.oauth
  oauth.stateTtlMs = 1
  try {
    const start = await t.api('POST', '/v1/connections/oauth/start', {
      connector: 'taskboard',
      mode: 'redirect',
      returnTo: `${t.url}/after`,
    })
    await eventually(
      async () => Date.now(),
      (now) => now > Date.parse(start.body.expiresAt),
    )
    const approved = await approve(start.body.authorizeUrl, demoLogin)
    const back = await fetch(approved.headers.get('location')!, { redirect: 'manual' })
    assert.equal(back.status, 302)
    assert.equal(new URL(back.headers.get('location')!).searchParams.get('error'), 'OAUTH_STATE_EXPIRED')
  } finally {
    oauth.stateTtlMs = OAUTH_STATE_TTL_MS
  }
  assert.equal(await countConnections(), before)
})

test('a request token that belongs to another sign-in is refused', async () => {
  const before = await countConnections()
  const a = await t.api('POST', '/v1/connections/oauth/start', {
    connector: 'taskboard',
    mode: 'redirect',
    returnTo: `${t.url}/a`,
  })
  const b = await signIn({ mode: 'redirect', returnTo: `${t.url}/b` })
  // Sign-in b's answer (its request token and verifier) presented with sign-in a's state.
  const crossed = new URL(b.callback)
  crossed.searchParams.set('state', a.body.state)
  const res = await fetch(crossed, { redirect: 'manual' })
  assert.equal(res.status, 302)
  assert.equal(new URL(res.headers.get('location')!).searchParams.get('error'), 'OAUTH_STATE_INVALID')
  assert.equal(await countConnections(), before + 1)
})

test('declining on the task-board sends the browser back with OAUTH_DENIED and stores nothing', async () => {
  const before = await countConnections()
  const { back } = await signIn({ mode: 'redirect', returnTo: `${t.url}/after` }, 'Deny')
  assert.equal(back.status, 302)
  assert.equal(new URL(back.headers.get('location')!).searchParams.get('error'), 'OAUTH_DENIED')
  assert.equal(await countConnections(), before)
})

test("pop-up mode: the callback page posts the connection id to its opener on Patchbay's origin", async () => {
  const { back } = await signIn({ mode: 'popup' })
  assert.equal(back.status, 200)
  const html = await back.text()
  const message = JSON.parse(/var message = (.*);/.exec(html)![1])
  const origin = JSON.parse(/var origin = (.*);/.exec(html)![1])
  assert.equal(message.type, 'patchbay:oauth')
  assert.match(message.connectionId, /^con_/)
  assert.equal(origin, new URL(t.url).origin)
  assert.match(html, /window\.opener\.postMessage\(message, origin\)/)
  await t.api('DELETE', `/v1/connections/${message.connectionId}`)
})

test('OAuth reconnects in place: same connection, a fresh token, its webhooks registered again', async () => {
  const { back } = await signIn({
    mode: 'redirect',
    returnTo: `${t.url}/after`,
    connectionId: oauthConnection,
  })
  const done = new URL(back.headers.get('location')!)
  assert.equal(done.searchParams.get('connectionId'), oauthConnection)
  // The sign-in issued a new token, and the connection's board webhook now exists under it.
  const state = await control(sandbox, 'GET', '/state')
  const newest = state.tokens.filter((x: any) => x.oauth).at(-1).token
  assert.ok(state.webhooks.some((w: any) => w.idModel === sandbox.demo.boardId && w.token === newest))
  assert.equal((await t.api('GET', `/v1/connections/${oauthConnection}`)).body.status, 'active')
})

test('OAuth start refuses what it cannot do: agent keys, unknown connectors, a connection of another connector', async () => {
  const agent = await agentWith([oauthConnection])
  const key = (await t.api('POST', `/v1/agents/${agent}/keys`, {})).body.key
  const asAgent = await t.api('POST', '/v1/connections/oauth/start', { connector: 'taskboard' }, key)
  assert.equal(asAgent.status, 403)
  assert.equal(asAgent.body.error.code, 'AGENT_KEY_FORBIDDEN')
  const unknown = await t.api('POST', '/v1/connections/oauth/start', { connector: 'fax' })
  assert.equal(unknown.body.error.code, 'UNKNOWN_CONNECTOR')
  // OAuth is not a credentials flow: POST /v1/connections points to the sign-in.
  const direct = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'oauth1',
    credentials: {},
  })
  assert.equal(direct.body.error.code, 'UNKNOWN_AUTH_METHOD')
  assert.match(direct.body.error.hint, /\/v1\/connections\/oauth\/start/)
  const missing = await t.api('POST', '/v1/connections/oauth/start', {
    connector: 'taskboard',
    connectionId: 'con_nope',
  })
  assert.equal(missing.body.error.code, 'CONNECTION_NOT_FOUND')
})

test("the token page address, then approve it, then connect with the key and token (the spec's three steps)", async () => {
  // 1. An extension made on the admin page gives an API key (and its secret).
  const app = await control(sandbox, 'POST', '/apps', { member: 'demo', name: 'My automation' })
  // 2. The token request address for that key.
  const res = await t.api('POST', '/v1/connectors/taskboard/token-url', {
    key: app.key,
    name: 'Nightly sync',
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(
    res.body.url,
    `${sandbox.webUrl}/1/authorize?expiration=never&name=Nightly%20sync&scope=read,write&response_type=token&key=${app.key}`,
  )
  // 3. Approve it; the page shows the token, which is stored together with the key.
  const shown = await approve(res.body.url, demoLogin)
  assert.equal(shown.status, 200)
  const token = /<pre id="token">([0-9a-f]{64})<\/pre>/.exec(await shown.text())![1]
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: app.key, token, secret: app.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  assert.equal(conn.body.accountName, 'demo')
  assert.ok(!JSON.stringify(conn.body).includes(token))

  const bad = [
    [{ key: 'not a key!' }, /body\.key/],
    [{ key: app.key, expiration: 'forever' }, /body\.expiration/],
    [{ key: app.key, scope: 'admin' }, /body\.scope/],
    [{}, /body\.key/],
  ] as const
  for (const [body, field] of bad) {
    const r = await t.api('POST', '/v1/connectors/taskboard/token-url', body)
    assert.equal(r.status, 400)
    assert.equal(r.body.error.code, 'VALIDATION_FAILED')
    assert.match(r.body.error.message, field)
  }
  assert.equal(
    (await t.api('POST', '/v1/connectors/fax/token-url', { key: app.key })).body.error.code,
    'UNKNOWN_CONNECTOR',
  )
  assert.equal(
    (await t.api('POST', '/v1/connectors/contactdata/token-url', { key: app.key })).body.error.code,
    'TOKEN_PAGE_NOT_SUPPORTED',
  )
})

test('API key plus token: a refused token stores nothing; without the secret, instant triggers are refused with the fix', async () => {
  const before = await countConnections()
  const wrong = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: 'f'.repeat(64) },
  })
  assert.equal(wrong.status, 400)
  assert.equal(wrong.body.error.code, 'INVALID_CREDENTIALS')
  assert.equal(await countConnections(), before)

  const noSecret = await connectDemoTaskboard(t, sandbox)
  const agent = await agentWith([noSecret])
  const trig = await t.api('POST', `/v1/agents/${agent}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: noSecret,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trig.status, 400)
  assert.equal(trig.body.error.code, 'CONNECTION_CANNOT_VERIFY_WEBHOOKS')
  assert.match(trig.body.error.message, /secret/)
})

test("a lapsed connection is reconnected in place: same id, its triggers' webhooks registered again; then disconnected", async () => {
  const short = await control(sandbox, 'POST', '/tokens', {
    member: 'demo',
    key: sandbox.demo.key,
    expiration: '1hour',
  })
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: short.token, secret: sandbox.demo.secret },
  })
  const id = conn.body.id
  const agent = await agentWith([id])
  const trig = (
    await t.api('POST', `/v1/agents/${agent}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId: id,
      config: { idBoard: sandbox.demo.boardId },
    })
  ).body
  assert.equal((await tbAs(short.token)('GET', `/1/tokens/${short.token}/webhooks`)).length, 1)

  // The token expires (the sandbox removes it and its webhooks); the next step lapses the connection.
  await control(sandbox, 'POST', '/clock', { advanceMs: 2 * 3600_000 })
  const lapsed = await t.api('POST', '/v1/steps/taskboard.get_boards/run', { connectionId: id, input: {} })
  assert.equal(lapsed.body.error.code, 'CONNECTION_LAPSED')
  assert.equal((await t.api('GET', `/v1/connections/${id}`)).body.status, 'lapsed')

  // Another account's token cannot take the connection over.
  const mismatch = await t.api('POST', `/v1/connections/${id}/reconnect`, {
    authMethod: 'api_key_token',
    credentials: {
      key: sandbox.demo.key,
      token: '0600093253dddd0cff2358c1e345360518a7b697f3703e81c41c4390429bd635',
    },
  })
  assert.equal(mismatch.body.error.code, 'ACCOUNT_MISMATCH')

  const fresh = await control(sandbox, 'POST', '/tokens', { member: 'demo', key: sandbox.demo.key })
  const back = await t.api('POST', `/v1/connections/${id}/reconnect`, {
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: fresh.token, secret: sandbox.demo.secret },
  })
  assert.equal(back.status, 200, JSON.stringify(back.body))
  assert.equal(back.body.id, id)
  assert.equal(back.body.status, 'active')
  const hooks = await tbAs(fresh.token)('GET', `/1/tokens/${fresh.token}/webhooks`)
  assert.deepEqual(
    hooks.map((h: any) => h.idModel),
    [sandbox.demo.boardId],
  )
  const card = await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'After the reconnect' })
  await deliveredFor(trig.id, card.id)

  // Disconnecting removes the credentials, the triggers and the upstream webhooks.
  const del = await t.api('DELETE', `/v1/connections/${id}`)
  assert.equal(del.status, 204)
  assert.equal((await t.api('GET', `/v1/connections/${id}`)).body.error.code, 'CONNECTION_NOT_FOUND')
  assert.equal((await t.api('GET', `/v1/triggers/${trig.id}`)).body.error.code, 'TRIGGER_NOT_FOUND')
  assert.deepEqual(await tbAs(fresh.token)('GET', `/1/tokens/${fresh.token}/webhooks`), [])
  const row = await t.service.engine.store.db
    .selectFrom('connections')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst()
  assert.equal(row, undefined, 'the sealed credentials are gone')
})
