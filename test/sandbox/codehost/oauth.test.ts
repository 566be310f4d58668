// The code-host sandbox over real HTTP: OAuth web flow.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, ctl, OWNER, sandboxPerFile, sb } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('OAuth web flow', () => {
  const hidden = (html: string) =>
    Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1],
        m[2].replace(/&#(\d+);/g, (_x, c) => String.fromCharCode(Number(c))),
      ]),
    )

  async function authorize(
    fields: Record<string, string>,
    login = { login: OWNER, password: 'octo-demo-password' },
    decision = '1',
  ) {
    const qs = new URLSearchParams(fields).toString()
    const page = await fetch(`${sb.webUrl}/login/oauth/authorize?${qs}`)
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /text\/html/)
    const html = await page.text()
    assert.match(html, /<form action="\/login\/oauth\/authorize" method="post"/)
    const form = new URLSearchParams({ ...hidden(html), ...login, authorize: decision })
    return fetch(`${sb.webUrl}/login/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      redirect: 'manual',
    })
  }

  const exchange = (p: Record<string, string>, accept = 'application/json') =>
    fetch(`${sb.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept },
      body: new URLSearchParams(p).toString(),
    })

  test('login, approve, redirect with code and state, exchange, use the token', async () => {
    const redirect = 'http://127.0.0.1:9/callback'
    const res = await authorize({
      client_id: sb.demo.oauthClientId,
      redirect_uri: redirect,
      scope: 'repo read:user',
      state: 'xyz',
    })
    assert.equal(res.status, 302)
    const loc = new URL(res.headers.get('location')!)
    assert.equal(`${loc.origin}${loc.pathname}`, redirect)
    assert.equal(loc.searchParams.get('state'), 'xyz')
    const code = loc.searchParams.get('code')!
    assert.ok(code)
    const creds = {
      client_id: sb.demo.oauthClientId,
      client_secret: sb.demo.oauthClientSecret,
      code,
      redirect_uri: redirect,
    }
    const tok = await exchange(creds)
    assert.equal(tok.status, 200)
    const body = await tok.json()
    assert.match(body.access_token, /^cho_/)
    assert.equal(body.token_type, 'bearer')
    assert.equal(body.scope, 'repo,read:user')
    assert.equal((await api('GET', '/user', { token: body.access_token })).json.login, OWNER)
    const reused = await (await exchange(creds)).json()
    assert.equal(reused.error, 'bad_verification_code')

    const res2 = await authorize({
      client_id: sb.demo.oauthClientId,
      redirect_uri: redirect,
      scope: 'repo',
      state: 's2',
    })
    const code2 = new URL(res2.headers.get('location')!).searchParams.get('code')!
    const wrongSecret = await (await exchange({ ...creds, code: code2, client_secret: 'nope' })).json()
    assert.equal(wrongSecret.error, 'incorrect_client_credentials')
    const form = await exchange({ ...creds, code: code2 }, '*/*')
    assert.match(form.headers.get('content-type') ?? '', /x-www-form-urlencoded/)
    const parsed = new URLSearchParams(await form.text())
    assert.match(parsed.get('access_token') ?? '', /^cho_/)
    assert.equal(parsed.get('scope'), 'repo')
  })

  test('codes expire after 10 minutes; wrong password; deny', async () => {
    const redirect = 'http://127.0.0.1:9/cb'
    const res = await authorize({
      client_id: sb.demo.oauthClientId,
      redirect_uri: redirect,
      scope: 'repo',
      state: 'a',
    })
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!
    await ctl('POST', '/_sandbox/clock', { advanceMs: 10 * 60 * 1000 + 1 })
    const expired = await (
      await exchange({ client_id: sb.demo.oauthClientId, client_secret: sb.demo.oauthClientSecret, code })
    ).json()
    assert.equal(expired.error, 'bad_verification_code')

    const wrong = await authorize(
      { client_id: sb.demo.oauthClientId, redirect_uri: redirect, state: 'b' },
      { login: OWNER, password: 'wrong' },
    )
    assert.equal(wrong.status, 200)
    assert.match(await wrong.text(), /Incorrect username or password/)
    const denied = await authorize(
      { client_id: sb.demo.oauthClientId, redirect_uri: redirect, state: 'c' },
      undefined,
      '0',
    )
    const loc = new URL(denied.headers.get('location')!)
    assert.equal(loc.searchParams.get('error'), 'access_denied')
    assert.equal(loc.searchParams.get('state'), 'c')
    assert.equal((await fetch(`${sb.webUrl}/login/oauth/authorize?client_id=unknown`)).status, 404)
  })

  test('registered callback URL is enforced', async () => {
    const app = await ctl('POST', '/_sandbox/apps', {
      name: 'Strict',
      callbackUrl: 'http://127.0.0.1:9/oauth',
    })
    const page = await fetch(
      `${sb.webUrl}/login/oauth/authorize?client_id=${app.json.clientId}&redirect_uri=${encodeURIComponent('http://evil.example/x')}&state=s`,
      { redirect: 'manual' },
    )
    assert.equal(page.status, 302)
    assert.equal(new URL(page.headers.get('location')!).searchParams.get('error'), 'redirect_uri_mismatch')
    const ok = await authorize({
      client_id: app.json.clientId,
      redirect_uri: 'http://127.0.0.1:9/oauth/done',
      state: 's',
    })
    assert.equal(ok.status, 302)
  })
})
