// The task-board emulator: OAuth 1.0a (signed by an implementation written here, independent of the emulator's).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { api, control, oauthHeader, readForm, sandboxForThisFile, sb, submitForm } from './harness.ts'

sandboxForThisFile()

test('OAuth 1.0a: request token, approve page, access token, then signed and unsigned API calls', async () => {
  const app = { key: sb.demo.key, secret: sb.demo.secret }
  const reqUrl = `${sb.authUrl}/1/OAuthGetRequestToken`
  const callback = 'http://localhost:7777/oauth/callback?state=abc'

  const forged = await fetch(reqUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader('POST', reqUrl, { ...app, secret: 'wrong' }, { oauth_callback: callback }),
    },
  })
  assert.equal(forged.status, 401)
  assert.equal(await forged.text(), 'invalid signature')

  const rtRes = await fetch(reqUrl, {
    method: 'POST',
    headers: { authorization: oauthHeader('POST', reqUrl, app, { oauth_callback: callback }) },
  })
  assert.equal(rtRes.status, 200)
  const rt = new URLSearchParams(await rtRes.text())
  assert.equal(rt.get('oauth_callback_confirmed'), 'true')
  const requestToken = rt.get('oauth_token')!
  const requestSecret = rt.get('oauth_token_secret')!

  const authorize = new URLSearchParams({
    oauth_token: requestToken,
    name: 'Patchbay',
    scope: 'read,write',
    expiration: '1day',
  })
  const page = await fetch(`${sb.authUrl}/1/OAuthAuthorizeToken?${authorize}`)
  assert.equal(page.status, 200)
  const { action, fields } = readForm(await page.text())
  const approved = await submitForm(action, {
    ...fields,
    username: 'demo',
    password: 'demo',
    approve: 'Allow',
  })
  assert.equal(approved.res.status, 302)
  const back = new URL(approved.res.headers.get('location')!)
  assert.equal(back.searchParams.get('state'), 'abc')
  assert.equal(back.searchParams.get('oauth_token'), requestToken)
  const verifier = back.searchParams.get('oauth_verifier')!

  const accUrl = `${sb.authUrl}/1/OAuthGetAccessToken`
  const wrongVerifier = await fetch(accUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        accUrl,
        { ...app, token: requestToken, tokenSecret: requestSecret },
        { oauth_verifier: 'nope' },
      ),
    },
  })
  assert.equal(wrongVerifier.status, 401)
  const acc = await fetch(accUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        accUrl,
        { ...app, token: requestToken, tokenSecret: requestSecret },
        { oauth_verifier: verifier },
      ),
    },
  })
  assert.equal(acc.status, 200)
  const at = new URLSearchParams(await acc.text())
  const accessToken = at.get('oauth_token')!
  const accessSecret = at.get('oauth_token_secret')!
  assert.ok(accessToken && accessSecret)

  // Usable as a plain token...
  assert.equal((await api('GET', '/1/members/me', { token: accessToken })).json.username, 'demo')
  // ...and in a signed request, with a signed form body.
  const cardsUrl = `${sb.url}/1/cards`
  const form = { idList: sb.demo.listIds[0], name: 'Signed card' }
  const signed = await fetch(cardsUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        cardsUrl,
        { ...app, token: accessToken, tokenSecret: accessSecret },
        {},
        form,
      ),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(form).toString(),
  })
  assert.equal(signed.status, 200, await signed.clone().text())
  assert.equal((await signed.json()).name, 'Signed card')
  const meUrl = `${sb.url}/1/members/me?fields=username`
  const badSig = await fetch(meUrl, {
    headers: {
      authorization: oauthHeader('GET', meUrl, { ...app, token: accessToken, tokenSecret: 'not-it' }),
    },
  })
  assert.equal(badSig.status, 401)
  assert.equal(await badSig.text(), 'invalid signature')
  const goodSig = await fetch(meUrl, {
    headers: {
      authorization: oauthHeader('GET', meUrl, { ...app, token: accessToken, tokenSecret: accessSecret }),
    },
  })
  assert.equal(goodSig.status, 200)

  // The approved expiration applies, and the request token cannot be exchanged twice.
  const replay = await fetch(accUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        accUrl,
        { ...app, token: requestToken, tokenSecret: requestSecret },
        { oauth_verifier: verifier },
      ),
    },
  })
  assert.equal(replay.status, 401)
  await control('POST', '/clock', { advanceMs: 86_400_000 + 1000 })
  assert.equal((await api('GET', '/1/members/me', { token: accessToken })).text, 'invalid token')
})

test('OAuth 1.0a: read scope is enforced, and oob shows the verifier on the page', async () => {
  const app = { key: sb.demo.key, secret: sb.demo.secret }
  const reqUrl = `${sb.authUrl}/1/OAuthGetRequestToken`
  const rt = new URLSearchParams(
    await (
      await fetch(reqUrl, {
        method: 'POST',
        headers: { authorization: oauthHeader('POST', reqUrl, app, { oauth_callback: 'oob' }) },
      })
    ).text(),
  )
  const page = await fetch(
    `${sb.authUrl}/1/OAuthAuthorizeToken?oauth_token=${rt.get('oauth_token')}&scope=read`,
  )
  const { action, fields } = readForm(await page.text())
  const shown = await submitForm(action, { ...fields, username: 'demo', password: 'demo', approve: 'Allow' })
  const verifier = /<pre id="verifier">([0-9a-f]+)<\/pre>/.exec(shown.text)![1]!
  const accUrl = `${sb.authUrl}/1/OAuthGetAccessToken`
  const at = new URLSearchParams(
    await (
      await fetch(accUrl, {
        method: 'POST',
        headers: {
          authorization: oauthHeader(
            'POST',
            accUrl,
            { ...app, token: rt.get('oauth_token')!, tokenSecret: rt.get('oauth_token_secret')! },
            { oauth_verifier: verifier },
          ),
        },
      })
    ).text(),
  )
  const token = at.get('oauth_token')!
  assert.equal((await api('GET', '/1/members/me', { token })).status, 200)
  assert.equal(
    (await api('POST', '/1/boards', { token, json: { name: 'no' } })).text,
    'unauthorized permission requested',
  )
  const unknownConsumer = await fetch(reqUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        reqUrl,
        { key: '1'.repeat(32), secret: 'x' },
        { oauth_callback: 'oob' },
      ),
    },
  })
  assert.equal(await unknownConsumer.text(), 'invalid key')
})
