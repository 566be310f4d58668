// Connecting a code-host account, as a user would: the sign-in pop-up (Patchbay's callback page
// fetched like a browser, its message to the opener read back), the redirect variant, declined
// and replayed sign-ins, reconnecting in place, access tokens — fine-grained ones reaching only
// their repositories — and disconnecting, which removes the upstream webhooks.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { CodehostSandbox } from '../../sandbox/codehost/index.ts'
import { act, api, ch, connectWithToken, mintToken, signInLikeABrowser } from '../helpers/codehost.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let sb: CodehostSandbox

before(async () => {
  t = await startTestService({ codehost: true })
  sb = t.codehost!
  await act(sb, 'create_repo', { name: 'elsewhere' })
})
after(async () => {
  await t.close()
})

/** The message the callback page posts to its opener, and where to. */
function postedMessage(html: string): { message: any; origin: string } {
  const message = /var message = (\{.*?\});/.exec(html)
  const origin = /var origin = ("[^"]*");/.exec(html)
  assert.ok(message && origin, `the page carries a message for its opener:\n${html}`)
  assert.match(html, /window\.opener\.postMessage\(message, origin\)/)
  assert.match(html, /window\.close\(\)/)
  return { message: JSON.parse(message[1]), origin: JSON.parse(origin[1]) }
}

async function startSignIn(body: Record<string, unknown>) {
  const res = await t.api('POST', '/v1/connections/oauth/start', { connector: 'codehost', ...body })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { authorizeUrl: string; state: string }
}

const connections = async () => (await t.api('GET', '/v1/connections?connector=codehost')).body.connections

describe('sign-in through a pop-up', () => {
  test('the catalog offers the pop-up sign-in and access tokens', async () => {
    const { body } = await t.api('GET', '/v1/catalog')
    const codehost = body.connectors.find((c: any) => c.id === 'codehost')
    assert.deepEqual(
      codehost.auth.map((a: any) => [a.id, a.credentialsSchema === null]),
      [
        ['oauth2', true],
        ['token', false],
      ],
    )
    assert.match(codehost.auth[0].description, /pop-up/)
  })

  test('the authorize address asks for repositories, workflows, snippets and projects, back to Patchbay', async () => {
    const { authorizeUrl, state } = await startSignIn({ mode: 'popup' })
    const u = new URL(authorizeUrl)
    assert.equal(`${u.origin}${u.pathname}`, `${sb.webUrl}/login/oauth/authorize`)
    assert.equal(u.searchParams.get('client_id'), sb.demo.oauthClientId)
    assert.equal(u.searchParams.get('scope'), 'repo workflow gist project admin:org_hook')
    assert.equal(u.searchParams.get('redirect_uri'), `${t.url}/v1/oauth/callback/codehost`)
    assert.equal(u.searchParams.get('state'), state)
    assert.ok(!authorizeUrl.includes(sb.demo.oauthClientSecret), 'the client secret stays on the server')
  })

  let signedIn: string

  test('the callback page hands the new connection to its opener and closes; the account is listed by its login', async () => {
    const opener = `${t.url}/connect/codehost`
    const { authorizeUrl } = await startSignIn({ mode: 'popup', returnTo: opener })
    const page = await signInLikeABrowser(sb, authorizeUrl)
    assert.equal(page.status, 200)
    assert.match(page.contentType, /text\/html/)
    const { message, origin } = postedMessage(page.html)
    assert.equal(message.type, 'patchbay:oauth')
    assert.match(message.connectionId, /^con_/)
    assert.equal(message.accountName, 'octo-demo')
    assert.equal(origin, new URL(t.url).origin, "only the opener's origin receives it")
    assert.ok(!page.html.includes('cho_'), 'no token in the page')

    const listed = (await connections()).find((c: any) => c.id === message.connectionId)
    assert.equal(listed.accountName, 'octo-demo')
    assert.equal(listed.authMethod, 'oauth2')
    assert.equal(listed.status, 'active')
    signedIn = message.connectionId

    // The connection works: a step runs with the token the sign-in produced.
    const run = await t.api('POST', '/v1/steps/codehost.get_repository/run', {
      connectionId: signedIn,
      input: { owner: 'octo-demo', repo: 'hello-world' },
    })
    assert.equal(run.status, 200, JSON.stringify(run.body))

    // The same callback again (a replayed or reloaded pop-up) connects nothing more.
    const before = (await connections()).length
    const replay = await fetch(page.callbackUrl)
    const replayed = postedMessage(await replay.text()).message
    assert.equal(replayed.code, 'OAUTH_STATE_USED')
    assert.equal((await connections()).length, before)
  })

  test('the callback page is served without caching, referrer or foreign scripts', async () => {
    const { authorizeUrl } = await startSignIn({ mode: 'popup' })
    const page = await fetch(authorizeUrl)
    const html = await page.text()
    const form = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
    )
    const posted = await fetch(`${sb.webUrl}/login/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...form,
        login: sb.demo.login,
        password: sb.demo.password,
        authorize: '1',
      }),
    })
    const cb = await fetch(posted.headers.get('location')!)
    assert.equal(cb.headers.get('cache-control'), 'no-store')
    assert.equal(cb.headers.get('referrer-policy'), 'no-referrer')
    const csp = cb.headers.get('content-security-policy') ?? ''
    assert.match(csp, /script-src 'nonce-[^']+'/)
    const nonce = /'nonce-([^']+)'/.exec(csp)![1]
    assert.ok((await cb.text()).includes(`<script nonce="${nonce}">`))
  })

  test('a declined sign-in posts an error to the opener and connects nothing', async () => {
    const before = (await connections()).length
    const { authorizeUrl } = await startSignIn({ mode: 'popup' })
    const page = await signInLikeABrowser(sb, authorizeUrl, { approve: false })
    const { message } = postedMessage(page.html)
    assert.equal(message.type, 'patchbay:oauth')
    assert.equal(message.code, 'OAUTH_DENIED')
    assert.match(message.error, /declined/)
    assert.equal(message.connectionId, undefined)
    assert.equal((await connections()).length, before)
  })

  test('a forged or altered state is refused', async () => {
    const { state } = await startSignIn({ mode: 'popup' })
    for (const forged of ['nonsense', `${state.slice(0, -4)}AAAA`]) {
      const res = await fetch(
        `${t.url}/v1/oauth/callback/codehost?code=abc&state=${encodeURIComponent(forged)}`,
      )
      assert.equal(res.status, 400)
      assert.equal(postedMessage(await res.text()).message.code, 'OAUTH_STATE_INVALID')
    }
    // A state started for the code-host is not accepted on another connector's callback.
    const other = await fetch(
      `${t.url}/v1/oauth/callback/taskboard?code=abc&state=${encodeURIComponent(state)}`,
    )
    assert.equal(postedMessage(await other.text()).message.code, 'OAUTH_STATE_INVALID')
  })

  test('redirect mode returns the browser to returnTo with the connection id (or the error)', async () => {
    const { authorizeUrl } = await startSignIn({
      mode: 'redirect',
      returnTo: '/dashboard/connections?tab=codehost',
    })
    const page = await signInLikeABrowser(sb, authorizeUrl)
    assert.equal(page.status, 302)
    const back = new URL(page.location!, t.url)
    assert.equal(back.pathname, '/dashboard/connections')
    assert.equal(back.searchParams.get('tab'), 'codehost')
    assert.equal(back.searchParams.get('connector'), 'codehost')
    assert.ok((await connections()).some((c: any) => c.id === back.searchParams.get('connectionId')))

    const declined = await signInLikeABrowser(
      sb,
      (await startSignIn({ mode: 'redirect', returnTo: 'https://app.example/done' })).authorizeUrl,
      { approve: false },
    )
    const err = new URL(declined.location!)
    assert.equal(err.origin, 'https://app.example')
    assert.equal(err.searchParams.get('error'), 'OAUTH_DENIED')
  })

  test('reconnecting through the pop-up keeps the connection id; another account is refused', async () => {
    const before = (await connections()).length
    const { authorizeUrl } = await startSignIn({ mode: 'popup', connectionId: signedIn })
    const { message } = postedMessage((await signInLikeABrowser(sb, authorizeUrl)).html)
    assert.equal(message.connectionId, signedIn)
    assert.equal(message.reconnected, true)
    assert.equal((await connections()).length, before)

    const other = await startSignIn({ mode: 'popup', connectionId: signedIn })
    const refused = postedMessage(
      (await signInLikeABrowser(sb, other.authorizeUrl, { login: 'reviewer', password: 'reviewer-password' }))
        .html,
    ).message
    assert.equal(refused.code, 'ACCOUNT_MISMATCH')
  })

  test('starting checks its input: connector, mode, returnTo and the connection to reconnect', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ connector: 'nope' }, 400, 'UNKNOWN_CONNECTOR'],
      [{ connector: 'contactdata' }, 400, 'OAUTH_NOT_SUPPORTED'],
      [{ connector: 'codehost', mode: 'window' }, 400, 'VALIDATION_FAILED'],
      [{ connector: 'codehost', returnTo: 'javascript:alert(1)' }, 400, 'VALIDATION_FAILED'],
      [{ connector: 'codehost', returnTo: '//evil.example' }, 400, 'VALIDATION_FAILED'],
      [{ connector: 'codehost', connectionId: 'con_nope' }, 404, 'CONNECTION_NOT_FOUND'],
    ]
    for (const [body, status, code] of cases) {
      const res = await t.api('POST', '/v1/connections/oauth/start', body)
      assert.equal(res.status, status, JSON.stringify({ body, res: res.body }))
      assert.equal(res.body.error.code, code)
    }
  })

  test('/connect/codehost is the hosted connect page: it opens the sign-in in a pop-up through a connect link', async () => {
    const res = await fetch(`${t.url}/connect/codehost`)
    assert.equal(res.status, 200)
    const html = await res.text()
    assert.match(html, /\/v1\/connect\/oauth\/start/)
    assert.match(html, /window\.open\(/)
    assert.match(html, /patchbay:oauth/)
    assert.match(html, /needs a connect link/)
    assert.doesNotMatch(html, /Workspace \(admin\) key/)
  })
})

describe('access tokens', () => {
  test('a classic token connects under the account’s login; a wrong one is refused and nothing stored', async () => {
    const token = await mintToken(sb, { kind: 'classic', scopes: ['repo', 'workflow'] })
    const res = await t.api('POST', '/v1/connections', {
      connector: 'codehost',
      authMethod: 'token',
      credentials: { token },
    })
    assert.equal(res.status, 201)
    assert.equal(res.body.accountName, 'octo-demo')
    assert.equal(res.body.authMethod, 'token')
    assert.ok(!JSON.stringify(res.body).includes(token))
    const before = (await connections()).length
    const bad = await t.api('POST', '/v1/connections', {
      connector: 'codehost',
      authMethod: 'token',
      credentials: { token: 'chp_not_a_real_token' },
    })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'INVALID_CREDENTIALS')
    assert.match(bad.body.error.message, /Bad credentials/)
    assert.equal((await connections()).length, before)
  })

  test('a fine-grained token reaches only its repositories: anything else is refused as not found', async () => {
    const token = await mintToken(sb, { kind: 'fine_grained', repositories: ['octo-demo/hello-world'] })
    const conn = await connectWithToken(t, token)
    // The connection says what kind of token it holds and what it reaches.
    const shown = (await t.api('GET', `/v1/connections/${conn}`)).body
    assert.deepEqual(shown.details, {
      tokenKind: 'fine-grained token',
      repositories: 'only the repositories the token was made for',
    })
    const run = (step: string, input: Record<string, unknown>) =>
      t.api('POST', `/v1/steps/codehost.${step}/run`, { connectionId: conn, input })
    assert.equal((await run('get_repository', { owner: 'octo-demo', repo: 'hello-world' })).status, 200)

    const outside = await run('get_repository', { owner: 'octo-demo', repo: 'elsewhere' })
    assert.equal(outside.status, 404)
    assert.equal(outside.body.error.code, 'UPSTREAM_NOT_FOUND')
    assert.match(outside.body.error.hint, /fine-grained token reaches only the repositories it was made for/)
    const issue = await run('create_issue', { owner: 'octo-demo', repo: 'elsewhere', title: 'No' })
    assert.equal(issue.body.error.code, 'UPSTREAM_NOT_FOUND')
    const call = await t.api('POST', '/v1/steps/codehost.api_call/run', {
      connectionId: conn,
      input: {
        method: 'GET',
        endpoint: '/repos/octo-demo/elsewhere',
        headers: { accept: 'application/vnd.codehost+json' },
      },
    })
    assert.equal(call.body.error.code, 'UPSTREAM_NOT_FOUND')

    // A search through it sees only its repositories.
    await act(sb, 'open_issue', { repo: 'elsewhere', title: 'Hidden bug', labels: ['bug'] })
    const found = await run('search_issues_and_pull_requests', { q: 'bug' })
    assert.ok(found.body.output.items.every((i: any) => i.repository === 'octo-demo/hello-world'))

    // Still the connection works where it may: the connection stays active.
    const view = await t.api('GET', `/v1/connections/${conn}`)
    assert.equal(view.body.status, 'active')
  })

  test('a fine-grained token without a permission is UPSTREAM_FORBIDDEN, saying which kind of permission', async () => {
    const token = await mintToken(sb, {
      kind: 'fine_grained',
      repositories: ['octo-demo/hello-world'],
      permissions: { contents: 'read', issues: 'read' },
    })
    const conn = await connectWithToken(t, token)
    const res = await t.api('POST', '/v1/steps/codehost.create_issue/run', {
      connectionId: conn,
      input: { owner: 'octo-demo', repo: 'hello-world', title: 'Read-only token' },
    })
    assert.equal(res.status, 403)
    assert.equal(res.body.error.code, 'UPSTREAM_FORBIDDEN')
    assert.match(res.body.error.message, /Resource not accessible by personal access token/)
    assert.match(res.body.error.hint, /fine-grained token lacks the permission/)
  })

  test('a revoked token lapses the connection; reconnecting (token or pop-up) fixes it in place', async () => {
    const token = await mintToken(sb, { kind: 'classic', scopes: ['repo'] })
    const conn = await connectWithToken(t, token)
    await ch(sb, 'DELETE', `/tokens/${token}`)
    const res = await t.api('POST', '/v1/steps/codehost.get_repository/run', {
      connectionId: conn,
      input: { owner: 'octo-demo', repo: 'hello-world' },
    })
    assert.equal(res.status, 409)
    assert.equal(res.body.error.code, 'CONNECTION_LAPSED')
    assert.equal((await t.api('GET', `/v1/connections/${conn}`)).body.status, 'lapsed')

    const fresh = await mintToken(sb, { kind: 'classic', scopes: ['repo'] })
    const back = await t.api('POST', `/v1/connections/${conn}/reconnect`, {
      authMethod: 'token',
      credentials: { token: fresh },
    })
    assert.equal(back.status, 200, JSON.stringify(back.body))
    assert.equal(back.body.id, conn)
    assert.equal(back.body.status, 'active')

    await ch(sb, 'DELETE', `/tokens/${fresh}`)
    await t.api('POST', '/v1/steps/codehost.get_repository/run', {
      connectionId: conn,
      input: { owner: 'octo-demo', repo: 'hello-world' },
    })
    const { authorizeUrl } = await startSignIn({ mode: 'popup', connectionId: conn })
    const { message } = postedMessage((await signInLikeABrowser(sb, authorizeUrl)).html)
    assert.equal(message.connectionId, conn)
    const view = (await t.api('GET', `/v1/connections/${conn}`)).body
    assert.equal(view.status, 'active')
    assert.equal(view.authMethod, 'oauth2')
  })
})

test('disconnecting removes the connection’s upstream webhooks', async () => {
  const token = await mintToken(sb, {
    kind: 'classic',
    scopes: ['repo', 'admin:repo_hook', 'admin:org_hook'],
  })
  const conn = await connectWithToken(t, token)
  const agent = await t.api('POST', '/v1/agents', {
    name: 'hooked',
    scope: { repositories: ['octo-demo/hello-world'] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  for (const trigger of ['codehost.new_issue', 'codehost.new_star', 'codehost.new_repository']) {
    const res = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
      trigger,
      connectionId: conn,
      config:
        trigger === 'codehost.new_repository'
          ? { organization: 'octo-org' }
          : { owner: 'octo-demo', repo: 'hello-world' },
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
  }
  const ours = (hooks: any[]) =>
    hooks.filter((h) => String(h.config.url).startsWith(`${t.url}/hooks/codehost/`))
  assert.equal(
    ours((await api(sb, sb.demo.token, 'GET', '/repos/octo-demo/hello-world/hooks')).body).length,
    1,
  )
  assert.equal(ours((await api(sb, sb.demo.token, 'GET', '/orgs/octo-org/hooks')).body).length, 1)

  const res = await t.api('DELETE', `/v1/connections/${conn}`)
  assert.equal(res.status, 204)
  assert.equal(
    ours((await api(sb, sb.demo.token, 'GET', '/repos/octo-demo/hello-world/hooks')).body).length,
    0,
  )
  assert.equal(ours((await api(sb, sb.demo.token, 'GET', '/orgs/octo-org/hooks')).body).length, 0)
  assert.equal((await t.api('GET', `/v1/agents/${agent.body.id}/triggers`)).body.triggers.length, 0)
})
