// Done-when of issue 23's build 5: a real MCP client (the MCP TypeScript SDK's client with its
// OAuth provider support) adds Patchbay by URL and signs in as the MCP authorization specification
// describes — discovery from /mcp's 401, dynamic client registration, the authorization code with
// PKCE and the /mcp resource, sign-in and consent on Patchbay's page in the real browser (Chromium),
// the token — then lists and calls tools as the agent granted, refreshes (the refresh token
// rotates), and a revocation in the API ends its access at once. Bad input beside it: redirect URIs
// neither https nor loopback, PKCE missing or wrong, another resource, another workspace.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Browser } from 'playwright-core'
import { Person } from '../helpers/person.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import {
  browserUnavailableReason,
  collectPageErrors,
  ensureDashboardBuilt,
  launchBrowser,
  signIn,
} from './browser.ts'
import { ClientState, startCallback, toolsListWithToken } from './mcp-oauth-client.ts'

const unavailable = browserUnavailableReason()

describe('an MCP client signs in with OAuth', { skip: unavailable ?? false }, () => {
  let t: TestService
  let browser: Browser
  let callback: Awaited<ReturnType<typeof startCallback>>
  let agentId: string
  let otherAgentId: string
  const mcpUrl = () => new URL(`${t.url}/mcp`)
  /** The OAuth refusals written to the audit log (under no workspace), by endpoint and error. */
  const refusals = () =>
    t.service.engine.store.db
      .selectFrom('audit_log')
      .select(['detail', 'outcome', 'workspace_id'])
      .where('action', '=', 'mcp_oauth.refused')
      .execute()
      .then((rows) =>
        rows.map((r) => ({ ...JSON.parse(r.detail ?? '{}'), outcome: r.outcome, workspace: r.workspace_id })),
      )

  before(async () => {
    await ensureDashboardBuilt()
    t = await startTestService({ env: { PATCHBAY_SIGNUP: 'open' } })
    callback = await startCallback()
    browser = await launchBrowser()
    // Ada has an account and is a member of the workspace.
    const ada = new Person(t.url)
    assert.equal((await ada.signUp('ada@example.test', 'a long enough password', 'Ada')).status, 201)
    const added = await t.api('POST', `/v1/workspaces/${t.service.workspaceId}/members`, {
      email: 'ada@example.test',
      role: 'member',
    })
    assert.equal(added.status, 201, JSON.stringify(added.body))
    const conn = await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: {
        key: t.taskboard.demo.key,
        token: t.taskboard.demo.token,
        secret: t.taskboard.demo.secret,
      },
    })
    const agent = await t.api('POST', '/v1/agents', {
      name: 'Board helper',
      scope: { boards: [t.taskboard.demo.boardId] },
      connectionIds: [conn.body.id],
      delivery: { type: 'stream' },
    })
    assert.equal(agent.status, 201, JSON.stringify(agent.body))
    agentId = agent.body.id
    // Another workspace's agent, which a token of this workspace never reaches.
    const b = await t.service.engine.apiKeys.createWorkspace('B')
    const bKey = (
      await t.service.engine.apiKeys.create({
        workspaceId: b.id,
        kind: 'workspace',
        role: 'owner',
        name: 'b',
      })
    ).key
    otherAgentId = (
      await t.api(
        'POST',
        '/v1/agents',
        { name: 'B agent', scope: { boards: [] }, connectionIds: [], delivery: { type: 'stream' } },
        bKey,
      )
    ).body.id
    assert.ok(otherAgentId)
  })
  after(async () => {
    await browser?.close()
    await callback?.close()
    await t?.close()
  })

  it('discovery, registration, sign-in and consent in the browser, tools, refresh, revocation', async () => {
    const state = new ClientState(callback.url)
    // 1. Added by URL with nothing else: the 401 starts discovery, registration and the authorization request.
    const first = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: state })
    await assert.rejects(new Client({ name: 'c', version: '1' }).connect(first), UnauthorizedError)
    assert.ok(state.client?.client_id, 'registered dynamically')
    const authorizationUrl = state.authorizationUrl
    assert.ok(authorizationUrl, 'the client was sent to authorize')
    assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${t.url}/oauth/authorize`)
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256')
    assert.equal(authorizationUrl.searchParams.get('resource'), `${t.url}/mcp`)

    // 2. The person signs in and consents in the real browser.
    const context = await browser.newContext()
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    const errors = collectPageErrors(page)
    const returned = callback.next()
    await page.goto(authorizationUrl.href)
    await page.getByRole('heading', { name: 'Allow Test Desktop Assistant to use Patchbay' }).waitFor()
    await page.getByLabel('Email').fill('ada@example.test')
    await page.getByLabel('Password').fill('a long enough password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('Signed in as ada@example.test.').waitFor()
    await page.getByLabel('Board helper').check()
    // What the agent may touch, before consenting.
    await page.getByText(`Boards: ${t.taskboard.demo.boardId}`).waitFor()
    await page.getByRole('button', { name: 'Allow' }).click()
    const back = await returned
    const code = back.searchParams.get('code')
    assert.ok(code, `a code in ${back}`)
    assert.deepEqual(errors, [])
    await context.close()

    // A wrong PKCE verifier is refused (invalid_grant); the code is still good with the right one.
    const wrong = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callback.url,
        client_id: state.client!.client_id,
        code_verifier: 'x'.repeat(64),
        resource: `${t.url}/mcp`,
      }),
    })
    assert.equal(wrong.status, 400)
    assert.equal((await wrong.json()).error, 'invalid_grant')
    await eventually(refusals, (r) => r.some((e) => e.endpoint === 'token' && e.error === 'invalid_grant'))

    // 3. The token: the client finishes, then lists and calls tools as the agent.
    await first.finishAuth(code)
    assert.ok(state.saved?.access_token && state.saved.refresh_token, 'an access and a refresh token')
    assert.ok((state.saved.expires_in ?? 0) <= 600, 'short-lived')
    const client = new Client({ name: 'c', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: state }))
    const { tools } = await client.listTools()
    assert.ok(tools.some((tool) => tool.name === 'taskboard_create_card'))
    const made = await client.callTool({
      name: 'taskboard_create_card',
      arguments: { idList: t.taskboard.demo.listIds[0], name: 'Made over OAuth' },
    })
    assert.notEqual(made.isError, true, JSON.stringify(made))
    assert.equal((made.structuredContent as { name: string }).name, 'Made over OAuth')

    // The grant is listed, with the agent and the client's name.
    const listed = await t.api('GET', '/v1/mcp-grants')
    assert.equal(listed.status, 200)
    assert.equal(listed.body.grants.length, 1)
    const grant = listed.body.grants[0]
    assert.equal(grant.agent.id, agentId)
    assert.equal(grant.agent.name, 'Board helper')
    assert.equal(grant.client.name, 'Test Desktop Assistant')
    assert.equal(grant.resource, `${t.url}/mcp`)

    // The token acts as its agent only, in its workspace only.
    const raw = (query: string, headers: Record<string, string> = {}) =>
      toolsListWithToken(state, `${t.url}/mcp`, query, headers)
    assert.equal((await raw(`?agent=${otherAgentId}`)).status, 403)
    const elsewhere = await raw('', { 'patchbay-workspace': 'ws_elsewhere' })
    assert.equal(elsewhere.status, 404)
    assert.equal((await elsewhere.json()).error.code, 'WORKSPACE_NOT_FOUND')
    // Nor is it a key for the REST API.
    const rest = await fetch(`${t.url}/v1/agents`, {
      headers: { authorization: `Bearer ${state.saved!.access_token}` },
    })
    assert.equal(rest.status, 401)

    // 4. Refresh: a new access token, and a new refresh token (it rotates at each use; a rotated
    // one used again is taken for a stolen one and ends the whole grant, oidc-provider's reuse detection).
    const before = { ...state.saved! }
    assert.equal(await auth(state, { serverUrl: mcpUrl() }), 'AUTHORIZED')
    assert.notEqual(state.saved!.access_token, before.access_token)
    assert.notEqual(state.saved!.refresh_token, before.refresh_token)
    assert.ok((await client.listTools()).tools.length > 0, 'the refreshed token works')

    // 5. Revocation ends access at once: the next request is refused, and so is a refresh.
    // In the dashboard: the agent's page lists the client; Revoke.
    const dashboard = await browser.newContext()
    const admin = await dashboard.newPage()
    admin.setDefaultTimeout(20_000)
    const dashboardErrors = collectPageErrors(admin)
    await signIn(admin, t.url, t.adminKey)
    await admin.goto(`${t.url}/#/agents/${agentId}`)
    const section = admin.getByRole('region', { name: 'MCP clients' })
    await section.getByText('Test Desktop Assistant').waitFor()
    await section.getByRole('button', { name: 'Revoke Test Desktop Assistant' }).click()
    await section.getByText('No MCP client has signed in as this agent.').waitFor()
    assert.deepEqual(dashboardErrors, [])
    await dashboard.close()
    const refused = await raw('')
    assert.equal(refused.status, 401)
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/)
    assert.match((await refused.json()).error.message, /not known.*revoked/)
    await assert.rejects(client.listTools())
    const refresh = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: state.saved!.refresh_token!,
        client_id: state.client!.client_id,
      }),
    })
    assert.equal(refresh.status, 400, 'a refresh after revocation is refused')
    assert.equal((await refresh.json()).error, 'invalid_grant')
    assert.deepEqual((await t.api('GET', '/v1/mcp-grants')).body.grants, [])
    const again = await t.api('DELETE', `/v1/mcp-grants/${grant.id}`)
    assert.equal(again.status, 404)
    assert.equal(again.body.error.code, 'MCP_GRANT_NOT_FOUND')
    // Audited: who granted and who revoked.
    const audit = await t.api('GET', '/v1/audit?limit=50')
    const actions = audit.body.entries.map((e: { action: string }) => e.action)
    assert.ok(actions.includes('mcp_grant.created'), actions.join())
    assert.ok(actions.includes('mcp_grant.revoked'), actions.join())
  })

  it('refuses registrations with redirect URIs that are neither https nor loopback', async () => {
    for (const uri of ['http://example.com/callback', 'javascript:alert(1)', 'myapp://callback']) {
      const res = await fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [uri], token_endpoint_auth_method: 'none' }),
      })
      assert.equal(res.status, 400, uri)
      const body = await res.json()
      assert.equal(body.error, 'invalid_redirect_uri', uri)
      assert.match(body.error_description, /https, or http on a loopback address/, uri)
    }
    // Audited, as refusals, with what was wrong.
    const audited = await eventually(
      refusals,
      (r) => r.filter((e) => e.endpoint === 'registration').length >= 3,
    )
    const registrations = audited.filter((e) => e.endpoint === 'registration')
    assert.ok(
      registrations.every(
        (e) => e.outcome === 'refused' && /invalid_redirect_uri|invalid_client_metadata/.test(e.error),
      ),
    )
    assert.ok(registrations.some((e) => /https, or http on a loopback address/.test(e.description)))
    const ok = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['https://client.example/cb'],
        token_endpoint_auth_method: 'none',
      }),
    })
    assert.equal(ok.status, 201)
  })

  it('refuses an authorization request without PKCE, or for another resource', async () => {
    const reg = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [callback.url], token_endpoint_auth_method: 'none' }),
    })
    const clientId = (await reg.json()).client_id
    const authorize = (params: Record<string, string>) =>
      fetch(
        `${t.url}/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: callback.url, scope: 'mcp', ...params })}`,
        { redirect: 'manual' },
      )
    const noPkce = new URL((await authorize({ resource: `${t.url}/mcp` })).headers.get('location')!)
    assert.equal(noPkce.searchParams.get('error'), 'invalid_request')
    assert.match(noPkce.searchParams.get('error_description')!, /PKCE/)
    const plain = new URL(
      (
        await authorize({
          resource: `${t.url}/mcp`,
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'plain',
        })
      ).headers.get('location')!,
    )
    assert.equal(plain.searchParams.get('error'), 'invalid_request')
    const other = new URL(
      (
        await authorize({
          resource: 'https://elsewhere.example/mcp',
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'S256',
        })
      ).headers.get('location')!,
    )
    assert.equal(other.searchParams.get('error'), 'invalid_target')
    const audited = await eventually(refusals, (r) =>
      ['invalid_request', 'invalid_target'].every((error) =>
        r.some((e) => e.endpoint === 'authorization' && e.error === error && e.clientId === clientId),
      ),
    )
    assert.ok(audited.every((e) => e.workspace === null))
  })

  it('serves authorization server metadata (RFC 8414) that names what it supports', async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-authorization-server`)
    assert.equal(res.status, 200)
    const meta = await res.json()
    assert.equal(meta.issuer, t.url)
    assert.equal(meta.registration_endpoint, `${t.url}/oauth/register`)
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256'])
    assert.deepEqual(meta.response_types_supported, ['code'])
    const prm = await (await fetch(`${t.url}/.well-known/oauth-protected-resource/mcp`)).json()
    assert.deepEqual(prm.authorization_servers, [t.url])
  })
})
