// Issue 23, build 5, for end users: an end user of the operator — no account in Patchbay — allows a
// real MCP client (the MCP TypeScript SDK's client with its OAuth provider support) to act as the
// agent bound to them. The operator's backend makes a connect session with allowMcpGrant; the end
// user arrives on Patchbay's consent page in the real browser (Chromium) with its token after the #
// of the authorization address, sees only the agents bound to them and what each may touch, and
// allows one; the client lists and calls tools with that end user's connection only. Bad input
// beside it: another end user's agent, an unbound agent, a forged, reused or expired connect link,
// a link not made for MCP — each a clear error, audited as mcp_oauth.refused, nothing changed. The
// grant is listed with the end user, ends when its agent stops acting for them, and is revoked on
// the end user's page of the dashboard. A third-party client opens the page without the token: the
// end user pastes the link there (the hosted connect page, opened with it, says so).
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Browser, Page } from 'playwright-core'
import { startTestService, type TestService } from '../helpers/service.ts'
import { mintTaskboardToken } from '../helpers/taskboard.ts'
import {
  browserUnavailableReason,
  collectPageErrors,
  ensureDashboardBuilt,
  launchBrowser,
  signIn,
} from './browser.ts'
import { ClientState, startCallback, toolsListWithToken } from './mcp-oauth-client.ts'

const unavailable = browserUnavailableReason()

describe('an end user allows an MCP client through a connect session', { skip: unavailable ?? false }, () => {
  let t: TestService
  let browser: Browser
  let callback: Awaited<ReturnType<typeof startCallback>>
  const ids = { aliceConn: '', bobConn: '', aliceAgent: '', bobAgent: '', workspaceAgent: '' }
  /** The link Alice spent on her grant in the first test. */
  let spentLink = ''
  const mcpUrl = () => new URL(`${t.url}/mcp`)
  /** The operator's backend: a connect session for one end user. */
  const connectSession = async (endUserId: string, extra: Record<string, unknown> = {}) => {
    const res = await t.api('POST', '/v1/connect-sessions', { endUserId, ...extra })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    return res.body as { id: string; token: string; url: string; expiresAt: string }
  }
  /** An end user connects an account through a connect link (the hosted page's API). */
  const connectAs = async (endUserId: string, credentials: Record<string, string>) => {
    const s = await connectSession(endUserId, { displayName: endUserId === 'cust-a' ? 'Alice' : 'Bob' })
    const res = await fetch(`${t.url}/v1/connect/connections`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        token: s.token,
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials,
      }),
    })
    const body = await res.json()
    assert.equal(res.status, 201, JSON.stringify(body))
    return body.connection.id as string
  }
  /** The MCP client starts: its 401 leads to registration and an authorization address. */
  const startClient = async () => {
    const state = new ClientState(callback.url)
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: state })
    await assert.rejects(new Client({ name: 'c', version: '1' }).connect(transport), UnauthorizedError)
    assert.ok(state.authorizationUrl, 'the client was sent to authorize')
    return { state, transport, authorizationUrl: state.authorizationUrl }
  }
  /** The consent page's own API, called from the page (its interaction cookie is this browser's). */
  const fromPage = (page: Page, path: string, body: unknown) =>
    page.evaluate(
      async ({ path, body }) => {
        const res = await fetch(location.pathname + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify(body),
        })
        return { status: res.status, body: await res.json() }
      },
      { path, body },
    )
  const refusals = async () =>
    (
      await t.service.engine.store.db
        .selectFrom('audit_log')
        .select(['detail', 'workspace_id'])
        .where('action', '=', 'mcp_oauth.refused')
        .execute()
    ).map((r) => ({ ...JSON.parse(r.detail ?? '{}'), workspace: r.workspace_id }))
  const sessionRow = (id: string) =>
    t.service.engine.store.db
      .selectFrom('connect_sessions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()

  before(async () => {
    await ensureDashboardBuilt()
    t = await startTestService()
    callback = await startCallback()
    browser = await launchBrowser()
    const demo = t.taskboard.demo
    // Alice (cust-a) connects the demo account; Bob (cust-b) an account of his own.
    ids.aliceConn = await connectAs('cust-a', { key: demo.key, token: demo.token, secret: demo.secret })
    const bob = await mintTaskboardToken(t.taskboard, { username: `bob${Date.now()}` })
    ids.bobConn = await connectAs('cust-b', { key: bob.key, token: bob.token })
    const agent = async (body: Record<string, unknown>) => {
      const res = await t.api('POST', '/v1/agents', { delivery: { type: 'stream' }, ...body })
      assert.equal(res.status, 201, JSON.stringify(res.body))
      return res.body.id as string
    }
    ids.aliceAgent = await agent({
      name: 'Alice helper',
      endUserId: 'cust-a',
      scope: { boards: [demo.boardId] },
      connectionIds: [ids.aliceConn],
    })
    ids.bobAgent = await agent({ name: 'Bob helper', endUserId: 'cust-b', connectionIds: [ids.bobConn] })
    // The workspace's own agent (bound to no end user), with the workspace's own connection.
    const own = await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: demo.key, token: demo.token, secret: demo.secret },
    })
    assert.equal(own.status, 201, JSON.stringify(own.body))
    ids.workspaceAgent = await agent({ name: 'Workspace helper', connectionIds: [own.body.id] })
  })
  after(async () => {
    await browser?.close()
    await callback?.close()
    await t?.close()
  })

  it('the end user allows their own agent; tools act with their connection; revocable', async () => {
    // The operator's backend makes a connect session that may allow an MCP client.
    const link = await connectSession('cust-a', { allowMcpGrant: true })
    const { state, transport, authorizationUrl } = await startClient()

    // The operator's app sends the end user to the authorization address with the token after #.
    const context = await browser.newContext()
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    const errors = collectPageErrors(page)
    const returned = callback.next()
    await page.goto(`${authorizationUrl.href}#${link.token}`)
    await page.getByRole('heading', { name: 'Allow Test Desktop Assistant to use Patchbay' }).waitFor()
    await page.getByText(/You are Alice \(cust-a\) of .*, through a connect link/).waitFor()
    // The token is taken off the address at once.
    assert.ok(!page.url().includes('#'), page.url())
    // Only the agent bound to Alice is offered, never Bob's or the workspace's own.
    const offered = await page.locator('#agents label').allTextContents()
    assert.deepEqual(offered, ['Alice helper — acts for end user cust-a'])
    await page.getByLabel('Alice helper').check()
    // What it may touch, before allowing.
    await page.getByText(`Boards: ${t.taskboard.demo.boardId}`).waitFor()
    await page.getByText('Connections: 1 of end user cust-a').waitFor()

    // Bad input, sent as the page would: another end user's agent, the workspace's own agent, a
    // forged token. Each is refused in words, and nothing changes (the link still works after).
    for (const agentId of [ids.bobAgent, ids.workspaceAgent, 'agt_nonexistent']) {
      const res = await fromPage(page, '/grant-as-end-user', { token: link.token, agentId })
      assert.equal(res.status, 403, JSON.stringify(res.body))
      assert.equal(res.body.error.code, 'MCP_AGENT_NOT_END_USERS')
      assert.match(res.body.error.message, /does not act for you \(end user "cust-a"\)/)
      assert.ok(res.body.error.hint)
    }
    const forged = await fromPage(page, '/grant-as-end-user', {
      token: `pbcs_${'x'.repeat(43)}`,
      agentId: ids.aliceAgent,
    })
    assert.equal(forged.status, 401)
    assert.equal(forged.body.error.code, 'CONNECT_SESSION_INVALID')
    assert.equal((await sessionRow(link.id)).used_at, null, 'the link is not spent by refusals')
    assert.deepEqual((await t.api('GET', '/v1/mcp-grants')).body.grants, [])
    const audited = await refusals()
    assert.equal(
      audited.filter((r) => r.error === 'MCP_AGENT_NOT_END_USERS' && r.workspace === t.service.workspaceId)
        .length,
      3,
    )
    assert.ok(audited.some((r) => r.error === 'MCP_AGENT_NOT_END_USERS' && r.agentId === ids.bobAgent))
    assert.ok(audited.some((r) => r.error === 'CONNECT_SESSION_INVALID' && r.workspace === null))

    // The end user allows their agent.
    await page.getByRole('button', { name: 'Allow' }).click()
    const back = await returned
    const code = back.searchParams.get('code')
    assert.ok(code, `a code in ${back}`)
    assert.deepEqual(errors, [])
    await context.close()
    assert.ok((await sessionRow(link.id)).used_at, 'the link is spent')
    spentLink = link.url

    // The client finishes, lists and calls tools: with Alice's connection.
    await transport.finishAuth(code)
    assert.ok(state.saved?.access_token && state.saved.refresh_token)
    const client = new Client({ name: 'c', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: state }))
    const { tools } = await client.listTools()
    assert.ok(tools.some((tool) => tool.name === 'taskboard_create_card'))
    const made = await client.callTool({
      name: 'taskboard_create_card',
      arguments: { idList: t.taskboard.demo.listIds[0], name: 'Made for Alice over OAuth' },
    })
    assert.notEqual(made.isError, true, JSON.stringify(made))
    assert.equal((made.structuredContent as { name: string }).name, 'Made for Alice over OAuth')
    // A refresh: new tokens, still Alice's agent.
    const first = state.saved.access_token
    assert.equal(await auth(state, { serverUrl: mcpUrl() }), 'AUTHORIZED')
    assert.notEqual(state.saved!.access_token, first)
    assert.ok((await client.listTools()).tools.length > 0, 'the refreshed token works')
    const runs = (await t.api('GET', '/v1/runs?limit=5')).body.runs
    const run = runs.find((r: { stepId: string }) => r.stepId === 'taskboard.create_card')
    assert.equal(run?.connectionId, ids.aliceConn, JSON.stringify(runs))

    // Listed with the end user and the link it was given through, by no person.
    const [grant, ...more] = (await t.api('GET', '/v1/mcp-grants')).body.grants
    assert.equal(more.length, 0)
    assert.equal(grant.agent.id, ids.aliceAgent)
    assert.equal(grant.endUserId, 'cust-a')
    assert.equal(grant.grantedBy, null)
    assert.equal(grant.connectSessionId, link.id)
    const audit = (await t.api('GET', '/v1/audit?limit=50')).body.entries
    const created = audit.find((e: { action: string }) => e.action === 'mcp_grant.created')
    assert.equal(created?.detail?.endUserId, 'cust-a', JSON.stringify(created))

    // The token acts as Alice's agent only.
    const raw = (query = '') => toolsListWithToken(state, `${t.url}/mcp`, query)
    assert.equal((await raw(`?agent=${ids.bobAgent}`)).status, 403)
    // Once the agent stops acting for Alice, her grant's token is refused.
    const rebound = await t.api('PATCH', `/v1/agents/${ids.aliceAgent}`, {
      endUserId: 'cust-b',
      connectionIds: [ids.bobConn],
    })
    assert.equal(rebound.status, 200, JSON.stringify(rebound.body))
    const refused = await raw()
    assert.equal(refused.status, 401)
    assert.match((await refused.json()).error.message, /no longer acts for the end user/)
    const restored = await t.api('PATCH', `/v1/agents/${ids.aliceAgent}`, {
      endUserId: 'cust-a',
      connectionIds: [ids.aliceConn],
    })
    assert.equal(restored.status, 200, JSON.stringify(restored.body))
    assert.equal((await raw()).status, 200)

    // Revoked on the end user's page of the dashboard: access ends at once.
    const dashboard = await browser.newContext()
    const admin = await dashboard.newPage()
    admin.setDefaultTimeout(20_000)
    const dashboardErrors = collectPageErrors(admin)
    await signIn(admin, t.url, t.adminKey)
    await admin.goto(`${t.url}/#/end-users/cust-a`)
    const section = admin.getByRole('region', { name: 'MCP clients' })
    await section.getByText('allowed by the end user (connect link)').waitFor()
    await section.getByRole('button', { name: 'Revoke Test Desktop Assistant' }).click()
    await section.getByText('No MCP client acts for this end user.').waitFor()
    assert.deepEqual(dashboardErrors, [])
    await dashboard.close()
    assert.equal((await raw()).status, 401)
    await assert.rejects(client.listTools())
    assert.deepEqual((await t.api('GET', '/v1/mcp-grants')).body.grants, [])
  })

  it('a pasted link: refused reused, expired, forged or not made for MCP, in words; a good one works', async () => {
    assert.ok(spentLink, 'the first test spent a link')
    // One expired, one that only connects accounts, and a good one.
    const expired = await connectSession('cust-a', { allowMcpGrant: true })
    await t.service.engine.store.db
      .updateTable('connect_sessions')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', expired.id)
      .execute()
    const connectOnly = await connectSession('cust-a')
    const good = await connectSession('cust-a', { allowMcpGrant: true })
    const { state, transport, authorizationUrl } = await startClient()

    const context = await browser.newContext()
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    const errors = collectPageErrors(page)
    // Opened as a link, the hosted connect page says how it allows an MCP client (without spending it).
    await page.goto(good.url)
    await page.getByText(`add ${t.url}/mcp to it, and when its sign-in page opens, paste the link`).waitFor()
    assert.equal((await sessionRow(good.id)).used_at, null)
    // A third-party MCP client opened the page: no token in the address; the end user pastes the link.
    await page.goto(authorizationUrl.href)
    await page.getByRole('heading', { name: 'Allow Test Desktop Assistant to use Patchbay' }).waitFor()
    const paste = async (value: string, words: RegExp) => {
      await page.getByLabel('Connect link').fill(value)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page
        .getByRole('alert')
        .getByText(words)
        .waitFor()
        .catch(async (e) => {
          throw new Error(`${e.message}: ${await page.getByRole('alert').textContent()}`)
        })
    }
    await paste(spentLink, /already been used to allow an MCP client.*ask the app that sent you here/)
    await paste(expired.url, /This connect link expired at .*Ask the app that sent you here/)
    await paste(connectOnly.url, /lets you connect an account, not allow an MCP client/)
    await paste(`${t.url}/connect#pbcs_${'y'.repeat(43)}`, /not valid: it is not one Patchbay gave out/)
    await paste('not a link', /That is not a connect link/)
    // Nothing was offered, granted or spent.
    assert.equal(await page.locator('#choose').isHidden(), true)
    assert.equal((await sessionRow(expired.id)).used_at, null)
    assert.equal((await sessionRow(connectOnly.id)).used_at, null)
    assert.deepEqual((await t.api('GET', '/v1/mcp-grants')).body.grants, [])

    // The good link, pasted: Alice's agent, allowed; the client's token works.
    const returned = callback.next()
    await page.getByLabel('Connect link').fill(good.url)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByText(/You are Alice \(cust-a\)/).waitFor()
    await page.getByLabel('Alice helper').check()
    await page.getByRole('button', { name: 'Allow' }).click()
    await transport.finishAuth((await returned).searchParams.get('code')!)
    assert.deepEqual(errors, [])
    await context.close()
    const client = new Client({ name: 'c', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: state }))
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'taskboard_create_card'))
    const [grant] = (await t.api('GET', '/v1/mcp-grants')).body.grants
    assert.equal(grant.connectSessionId, good.id)
    assert.equal((await t.api('DELETE', `/v1/mcp-grants/${grant.id}`)).status, 200)

    const audited = (await refusals()).filter((r) => r.endpoint === 'consent')
    for (const code of [
      'CONNECT_SESSION_USED',
      'CONNECT_SESSION_EXPIRED',
      'CONNECT_SESSION_NOT_FOR_MCP',
      'CONNECT_SESSION_INVALID',
    ])
      assert.ok(
        audited.some((r) => r.error === code),
        `${code} audited: ${JSON.stringify(audited)}`,
      )
    assert.ok(
      audited
        .filter((r) => r.error !== 'CONNECT_SESSION_INVALID')
        .every((r) => r.workspace === t.service.workspaceId && r.endUserId === 'cust-a'),
    )
  })

  it('deleting the end user ends the grants they gave', async () => {
    const link = await connectSession('cust-b', { allowMcpGrant: true })
    const { transport, authorizationUrl } = await startClient()
    const context = await browser.newContext()
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    const returned = callback.next()
    await page.goto(`${authorizationUrl.href}#${link.token}`)
    await page.getByLabel('Bob helper').check()
    await page.getByRole('button', { name: 'Allow' }).click()
    await transport.finishAuth((await returned).searchParams.get('code')!)
    await context.close()
    const grants = (await t.api('GET', '/v1/mcp-grants')).body.grants
    assert.deepEqual(
      grants.map((g: { endUserId: string }) => g.endUserId),
      ['cust-b'],
    )
    const removed = await t.api('DELETE', '/v1/end-users/cust-b')
    assert.equal(removed.status, 200, JSON.stringify(removed.body))
    assert.equal(removed.body.mcpGrants, 1)
    assert.deepEqual((await t.api('GET', '/v1/mcp-grants')).body.grants, [])
  })
})
