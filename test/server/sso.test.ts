// Single sign-on against a real OpenID Connect provider (oidc-provider) started here, walked as a
// browser walks it (fetch with manual redirects, a cookie jar per site): a verified email joins its
// invitation or the workspace claiming its domain; a wrong state, nonce, issuer or audience is a
// clear 4xx, audited, and signs no one in.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { browse, type Hop, type OpenIdProvider, startOpenIdProvider } from '../helpers/openid-provider.ts'
import { type CookieJar, Person } from '../helpers/person.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let idp: OpenIdProvider
/** Another provider, for a mix-up: its answers must not be taken for the configured one's. */
let other: OpenIdProvider

before(async () => {
  idp = await startOpenIdProvider()
  other = await startOpenIdProvider()
  t = await startTestService({
    env: {
      PATCHBAY_OIDC_ISSUER: idp.issuer,
      PATCHBAY_OIDC_CLIENT_ID: idp.client.id,
      PATCHBAY_OIDC_CLIENT_SECRET: idp.client.secret,
      PATCHBAY_OIDC_JOIN_BY_DOMAIN: 'true',
    },
  })
  idp.register(`${t.url}/v1/auth/sso/callback`)
  other.register(`${t.url}/v1/auth/sso/callback`)
})
after(async () => {
  await t?.close()
  await idp?.close()
  await other?.close()
})

const audit = (action: string) =>
  t.service.engine.store.db.selectFrom('audit_log').selectAll().where('action', '=', action).execute()

/** Signs in through the provider as `login`; answers the hops and the person with Patchbay's cookie. */
async function signInWithSso(login: string, rewrite?: (url: URL) => URL) {
  const jars = new Map<string, CookieJar>()
  const hops = await browse(`${t.url}/v1/auth/sso/start?returnTo=/`, { login, jars, rewrite })
  const person = new Person(t.url)
  const jar = jars.get(new URL(t.url).origin)
  if (jar) for (const [k, v] of jar.cookies) person.jar.cookies.set(k, v)
  return { hops, person, last: hops.at(-1)! }
}

const callbackHop = (hops: Hop[]) => hops.find((h) => h.url.startsWith(`${t.url}/v1/auth/sso/callback`))

describe('single sign-on', () => {
  test('GET /v1/auth/sso tells the sign-in page that single sign-on is offered', async () => {
    const res = await fetch(`${t.url}/v1/auth/sso`)
    assert.deepEqual(await res.json(), {
      sso: true,
      issuer: idp.issuer,
      signup: 'invite',
      passwordReset: false,
    })
  })

  test('an invited person signs in with the provider, joins the workspace, and is linked to the identity', async () => {
    const invite = await t.api('POST', `/v1/workspaces/${t.service.workspaceId}/invitations`, {
      email: 'Alice@Corp.test',
      role: 'member',
    })
    assert.equal(invite.status, 201)
    idp.accounts.set('alice', { email: 'alice@corp.test', emailVerified: true, name: 'Alice' })
    const { hops, person } = await signInWithSso('alice')
    const last = callbackHop(hops)!
    // Patchbay sent the browser to the provider with PKCE, state and nonce, and back.
    const authorize = new URL(hops[0].location!)
    assert.equal(authorize.origin, idp.issuer)
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256')
    assert.ok(authorize.searchParams.get('state') && authorize.searchParams.get('nonce'))
    assert.equal(last.status, 302, last.body)
    assert.equal(last.location, '/')
    assert.equal(hops.at(-1)!.url, `${t.url}/`, 'then the dashboard')
    const me = await person.api('GET', '/v1/me')
    assert.equal(me.status, 200, JSON.stringify(me.body))
    assert.equal(me.body.person.email, 'alice@corp.test')
    assert.equal(me.body.person.name, 'Alice')
    assert.equal(me.body.person.emailVerified, true)
    assert.equal(me.body.session.method, 'sso')
    assert.deepEqual(
      me.body.workspaces.map((w: any) => [w.id, w.role]),
      [[t.service.workspaceId, 'member']],
    )
    const identity = await t.service.engine.store.db.selectFrom('identities').selectAll().execute()
    assert.deepEqual(
      identity.map((i) => [i.issuer, i.subject, i.person_id]),
      [[idp.issuer, 'alice', me.body.person.id]],
    )
    // The next sign-in is the same person, by the identity.
    const again = await signInWithSso('alice')
    assert.equal((await again.person.api('GET', '/v1/me')).body.person.id, me.body.person.id)
    const signIns = (await audit('auth.sign_in')).filter((r) => r.actor_id === me.body.person.id)
    assert.ok(signIns.length >= 2)
    assert.equal(JSON.parse(signIns[0].detail!).method, 'sso')
    assert.ok((await audit('invitation.accepted')).some((r) => r.actor_id === me.body.person.id))
  })

  test('a verified email joins the workspace that claims its domain (the operator allows it)', async () => {
    await t.service.engine.store.db
      .updateTable('workspaces')
      .set({ settings: JSON.stringify({ emailDomain: 'domain.test' }) })
      .where('id', '=', t.service.workspaceId)
      .execute()
    idp.accounts.set('bob', { email: 'bob@domain.test', emailVerified: true, name: 'Bob' })
    const { person, hops } = await signInWithSso('bob')
    const last = callbackHop(hops)!
    assert.equal(last.status, 302, last.body)
    const me = await person.api('GET', '/v1/me')
    assert.deepEqual(
      me.body.workspaces.map((w: any) => [w.id, w.role]),
      [[t.service.workspaceId, 'member']],
    )
  })

  test('an email the provider does not vouch for, or that nothing admits, is refused (403) and no account is made', async () => {
    idp.accounts.set('carol', { email: 'carol@elsewhere.test', emailVerified: true, name: 'Carol' })
    const carol = await signInWithSso('carol')
    assert.equal(carol.last.status, 403, carol.last.body)
    assert.equal(JSON.parse(carol.last.body).error.code, 'SSO_NO_ACCESS')
    idp.accounts.set('dave', { email: 'dave@domain.test', emailVerified: false, name: 'Dave' })
    const dave = await signInWithSso('dave')
    assert.equal(dave.last.status, 403)
    assert.match(JSON.parse(dave.last.body).error.message, /email_verified/)
    for (const email of ['carol@elsewhere.test', 'dave@domain.test'])
      assert.equal(await t.service.engine.accounts.people.byEmail(email), undefined)
    assert.equal((await carol.person.api('GET', '/v1/me')).status, 401)
  })

  describe('a tampered answer is a clear 4xx, audited, and signs no one in', () => {
    before(() => {
      other.accounts.set('alice', { email: 'alice@corp.test', emailVerified: true, name: 'Alice' })
    })

    const refused = async (
      result: Awaited<ReturnType<typeof signInWithSso>>,
      reason: string,
      message: RegExp,
    ) => {
      assert.equal(result.last.status, 400, result.last.body)
      const body = JSON.parse(result.last.body)
      assert.equal(body.error.code, 'SSO_FAILED')
      assert.match(body.error.message, message)
      assert.match(body.error.hint, /sso\/start/)
      assert.ok(!result.last.body.includes('code='), 'no code or token in the answer')
      assert.equal((await result.person.api('GET', '/v1/me')).status, 401, 'not signed in')
      const rows = await audit('auth.sso_failed')
      assert.ok(
        rows.some((r) => r.outcome === 'refused' && JSON.parse(r.detail!).reason === reason),
        `${reason} audited`,
      )
    }

    test('a wrong state', async () => {
      const result = await signInWithSso('alice', (url) => {
        if (url.href.startsWith(`${t.url}/v1/auth/sso/callback`)) url.searchParams.set('state', 'forged')
        return url
      })
      await refused(result, 'state mismatch', /state/)
    })

    test('an answer in a browser that started no sign-in (no state cookie)', async () => {
      const jars = new Map<string, CookieJar>()
      const hops = await browse(`${t.url}/v1/auth/sso/start`, {
        login: 'alice',
        jars,
        // The answer is handed to another browser: the step back to Patchbay loses its cookies.
        rewrite: (url) => {
          if (url.href.startsWith(`${t.url}/v1/auth/sso/callback`)) jars.delete(url.origin)
          return url
        },
      })
      const result = { hops, last: hops.at(-1)!, person: new Person(t.url) }
      assert.ok(callbackHop(hops))
      await refused(result, 'no state cookie', /No sign-in was started in this browser/)
    })

    test('a wrong nonce', async () => {
      const result = await signInWithSso('alice', (url) => {
        if (url.origin === idp.issuer && url.pathname === '/auth')
          url.searchParams.set('nonce', 'replayed-nonce')
        return url
      })
      await refused(result, 'nonce mismatch', /nonce/)
    })

    test('a wrong issuer (the answer comes from another provider: a mix-up)', async () => {
      const result = await signInWithSso('alice', (url) => {
        if (url.origin === idp.issuer && url.pathname === '/auth')
          return new URL(url.pathname + url.search, other.issuer)
        return url
      })
      assert.ok(callbackHop(result.hops)!.url.includes(`iss=${encodeURIComponent(other.issuer)}`))
      await refused(result, 'issuer mismatch', /issuer/)
    })

    test('a wrong audience (an ID token for another client)', async () => {
      idp.wrongAudience = true
      try {
        const result = await signInWithSso('alice')
        await refused(result, 'audience mismatch', /audience/)
      } finally {
        idp.wrongAudience = false
      }
    })
  })
})
