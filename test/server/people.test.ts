// People: sign-up, sign-in, the session cookie and its CSRF token, sessions, members and
// invitations (mailed through a real SMTP server started here), all through the HTTP API as the
// dashboard uses it. Each bad input gets its code and changes nothing; each step is audited.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Mailbox, startMailbox } from '../helpers/mailbox.ts'
import { Person } from '../helpers/person.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let other: TestService
let mailbox: Mailbox
const PASSWORD = 'correct horse battery'

/** The audit log's rows (newest last), as the store keeps them. */
async function audit(service: TestService, action?: string) {
  let q = service.service.engine.store.db
    .selectFrom('audit_log')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
  if (action) q = q.where('action', '=', action)
  return q.execute()
}

/** The text of a mail (quoted-printable soft breaks and escapes undone). */
const mailText = (raw: string) =>
  raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)))

before(async () => {
  mailbox = await startMailbox()
  t = await startTestService({
    env: {
      PATCHBAY_SIGNUP: 'open',
      PATCHBAY_SMTP_URL: mailbox.url,
      PATCHBAY_MAIL_FROM: 'Patchbay <patchbay@example.test>',
    },
  })
  // Another Patchbay (its own store, sign-up by invitation: the default), behind a proxy on loopback.
  other = await startTestService({ taskboard: t.taskboard, env: { PATCHBAY_TRUST_PROXY: '127.0.0.1' } })
})
after(async () => {
  await other?.close()
  await t?.close()
  await mailbox?.close()
})

/** Signs up a fresh person (sign-up is open on `t`). */
async function newPerson(label: string) {
  const p = new Person(t.url)
  const email = `${label}-${Math.random().toString(36).slice(2, 8)}@example.test`
  const res = await p.signUp(email, PASSWORD, label)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { p, email, id: res.body.person.id as string }
}

/** Makes a person owner of the first workspace with the first-start key (until workspaces are theirs to create). */
async function ownerOfDefault(label: string) {
  const who = await newPerson(label)
  const added = await t.api('POST', `/v1/workspaces/${t.service.workspaceId}/members`, {
    email: who.email,
    role: 'owner',
  })
  assert.equal(added.status, 201, JSON.stringify(added.body))
  return who
}

describe('sign-up and sign-in', () => {
  test('sign-up sets an HttpOnly, SameSite session cookie and answers the person and a CSRF token', async () => {
    const p = new Person(t.url)
    const res = await p.signUp('Ada@Example.test', PASSWORD, 'Ada')
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(res.body.person.email, 'ada@example.test', 'stored lower-cased')
    assert.equal(res.body.person.emailVerified, false)
    assert.ok(res.body.csrfToken.length >= 32)
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('patchbay_session='))!
    assert.match(cookie, /HttpOnly/i)
    assert.match(cookie, /SameSite=Lax/i)
    assert.doesNotMatch(cookie, /Secure/i, 'not Secure behind plain http')
    const me = await p.api('GET', '/v1/me')
    assert.equal(me.status, 200)
    assert.equal(me.body.person.name, 'Ada')
    assert.deepEqual(me.body.workspaces, [])
    // The session token is stored hashed: the cookie's value is nowhere in the table.
    const token = p.jar.cookies.get('patchbay_session')!.value
    const rows = await t.service.engine.store.db.selectFrom('person_sessions').selectAll().execute()
    assert.ok(!JSON.stringify(rows).includes(token))
    const again = await new Person(t.url).signUp('ada@example.test', PASSWORD, 'Ada 2')
    assert.equal(again.status, 409)
    assert.equal(again.body.error.code, 'EMAIL_TAKEN')
  })

  test('a weak password is refused with the rules, and no account is made', async () => {
    const p = new Person(t.url)
    for (const [password, why] of [
      ['short', /at least 10/],
      ['weak@example.test', /email/],
      ['aaaaaaaaaaaa', /repeats/],
    ] as const) {
      const res = await p.signUp('weak@example.test', password, 'Weak')
      assert.equal(res.status, 400)
      assert.equal(res.body.error.code, 'WEAK_PASSWORD')
      assert.match(res.body.error.message, why)
      assert.match(res.body.error.hint, /10 to 200 characters/)
    }
    assert.equal(await t.service.engine.accounts.people.byEmail('weak@example.test'), undefined)
  })

  test('PATCHBAY_SIGNUP=invite (the default) refuses a sign-up without an invitation', async () => {
    const res = await new Person(other.url).signUp('nobody@example.test', PASSWORD, 'Nobody')
    assert.equal(res.status, 403)
    assert.equal(res.body.error.code, 'SIGN_UP_CLOSED')
    assert.match(res.body.error.hint, /invitation/)
    assert.equal((await audit(other, 'auth.sign_up'))[0].outcome, 'refused')
  })

  test('a wrong password and an unknown account get the same answer; both are audited', async () => {
    const { email } = await ownerOfDefault('grace')
    const wrong = await new Person(t.url).signIn(email, 'not the password')
    const unknown = await new Person(t.url).signIn('nobody-at-all@example.test', 'not the password')
    assert.equal(wrong.status, 401)
    assert.deepEqual(wrong.body, unknown.body)
    assert.equal(wrong.body.error.code, 'SIGN_IN_FAILED')
    const failed = await audit(t, 'auth.sign_in_failed')
    const mine = failed.find((r) => r.actor_label === email)!
    assert.equal(
      mine.workspace_id,
      t.service.workspaceId,
      'in the log of the workspace the account belongs to',
    )
    assert.equal(JSON.parse(mine.detail!).reason, 'wrong password')
    assert.ok(failed.some((r) => r.actor_label === 'nobody-at-all@example.test' && r.workspace_id === null))
    const ok = await new Person(t.url).signIn(email, PASSWORD)
    assert.equal(ok.status, 200)
    assert.equal(ok.body.workspaces[0].role, 'owner')
    const signIns = await audit(t, 'auth.sign_in')
    assert.ok(signIns.some((r) => r.actor_label === email && r.workspace_id === t.service.workspaceId))
    assert.ok(
      signIns.every((r) => !JSON.stringify(r).includes(PASSWORD)),
      'no password in the log',
    )
  })

  test('failed sign-ins are limited per account: the sixth try is 429 with Retry-After, even with the right password', async () => {
    const { email } = await newPerson('limited')
    for (let i = 0; i < 5; i++)
      assert.equal((await new Person(t.url).signIn(email, `wrong ${i}`)).status, 401)
    const limited = await new Person(t.url).signIn(email, PASSWORD)
    assert.equal(limited.status, 429)
    assert.equal(limited.body.error.code, 'SIGN_IN_RATE_LIMITED')
    const retryAfter = Number(limited.headers.get('retry-after'))
    assert.ok(retryAfter > 60 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`)
    assert.match(limited.body.error.message, /this account/)
    // Counted in the store: another instance on it would refuse as well.
    const row = await t.service.engine.store.db
      .selectFrom('sign_in_attempts')
      .selectAll()
      .where('key', '=', `account:${email}`)
      .executeTakeFirstOrThrow()
    assert.equal(row.failures, 5)
  })

  test('failed sign-ins are limited per address across accounts (the client’s, behind a trusted proxy)', async () => {
    // On the other Patchbay, behind a proxy it trusts (PATCHBAY_TRUST_PROXY): the client's address
    // is the forwarded one, so one client's failures do not lock out the others behind the proxy.
    const from = (ip: string) => ({ 'x-forwarded-for': ip })
    for (let i = 0; i < 30; i++) {
      const res = await new Person(other.url).signIn(
        `guess-${i}@example.test`,
        'whatever it is',
        from('203.0.113.7'),
      )
      assert.equal(res.status, 401)
    }
    const target = `victim-${Math.random().toString(36).slice(2, 6)}@example.test`
    const res = await new Person(other.url).signIn(target, 'whatever it is', from('203.0.113.7'))
    assert.equal(res.status, 429)
    assert.match(res.body.error.message, /your address/)
    assert.ok(Number(res.headers.get('retry-after')) > 0)
    const neighbour = await new Person(other.url).signIn(target, 'whatever it is', from('203.0.113.8'))
    assert.equal(neighbour.status, 401, 'another client behind the proxy is not limited')
    const failed = await audit(other, 'auth.sign_in_failed')
    assert.ok(
      failed.some((r) => r.address === '203.0.113.7'),
      'the audit log has the client’s address',
    )
  })
})

describe('the session cookie', () => {
  test('a change made with the cookie needs the session’s CSRF token: missing or another’s is 403, audited, and changes nothing', async () => {
    const a = await ownerOfDefault('csrf-a')
    const b = await newPerson('csrf-b')
    const invite = { email: 'csrf-target@example.test', role: 'viewer' }
    const path = `/v1/workspaces/${t.service.workspaceId}/invitations`
    const missing = await a.p.api('POST', path, invite, { csrf: false })
    assert.equal(missing.status, 403)
    assert.equal(missing.body.error.code, 'CSRF_TOKEN_INVALID')
    assert.match(missing.body.error.hint, /X-CSRF-Token/)
    const forged = await a.p.api('POST', path, invite, { csrf: b.p.csrfToken! })
    assert.equal(forged.status, 403)
    assert.equal(forged.body.error.code, 'CSRF_TOKEN_INVALID')
    const listed = await a.p.api('GET', path)
    assert.equal(listed.status, 200, 'a read needs no CSRF token')
    assert.ok(!listed.body.invitations.some((i: any) => i.email === invite.email), 'nothing was made')
    const refused = (await audit(t, 'auth.csrf_refused')).filter((r) => r.actor_id === a.id)
    assert.equal(refused.length, 2)
    assert.equal(refused[0].outcome, 'refused')
    const ok = await a.p.api('POST', path, invite)
    assert.equal(ok.status, 201)
  })

  test('a cookie of another Patchbay, a made-up one or an ended one is a clear 401', async () => {
    const elsewhere = new Person(other.url)
    // A person of the other Patchbay (signed up there by invitation of its key).
    const inv = await other.api('POST', `/v1/workspaces/${other.service.workspaceId}/invitations`, {
      email: 'elsewhere@example.test',
      role: 'member',
    })
    assert.equal(inv.status, 201, JSON.stringify(inv.body))
    assert.equal(inv.body.mailed, false, 'no SMTP there: the inviter copies the link')
    assert.equal(
      (await elsewhere.signUp('elsewhere@example.test', PASSWORD, 'E', inv.body.token)).status,
      201,
    )
    const token = elsewhere.jar.cookies.get('patchbay_session')!.value
    const res = await fetch(`${t.url}/v1/me`, { headers: { cookie: `patchbay_session=${token}` } })
    assert.equal(res.status, 401)
    const body = await res.json()
    assert.equal(body.error.code, 'UNAUTHORIZED')
    assert.match(body.error.message, /not known here/)
    assert.match(body.error.hint, /Sign in again/)
    assert.match(res.headers.getSetCookie().join(), /patchbay_session=;/, 'the stale cookie is cleared')
    const madeUp = await fetch(`${t.url}/v1/me`, { headers: { cookie: 'patchbay_session=pbs_made_up' } })
    assert.equal(madeUp.status, 401)
    // Signed out: the same cookie is refused from then on.
    assert.equal((await elsewhere.api('POST', '/v1/auth/sign-out')).status, 204)
    const after = await fetch(`${other.url}/v1/me`, { headers: { cookie: `patchbay_session=${token}` } })
    assert.equal(after.status, 401)
    assert.match((await after.json()).error.message, /ended/)
  })

  test('a person sees their sessions, ends one, and signs out everywhere', async () => {
    const { p, email } = await newPerson('sessions')
    const laptop = new Person(t.url)
    assert.equal((await laptop.signIn(email, PASSWORD)).status, 200)
    const list = await p.api('GET', '/v1/me/sessions')
    assert.equal(list.status, 200)
    assert.equal(list.body.sessions.length, 2)
    const current = list.body.sessions.find((s: any) => s.current)
    const theOther = list.body.sessions.find((s: any) => !s.current)
    assert.equal(current.method, 'password')
    assert.equal(current.address, '127.0.0.1')
    assert.equal((await p.api('DELETE', `/v1/me/sessions/${theOther.id}`)).status, 204)
    assert.equal((await laptop.api('GET', '/v1/me')).status, 401, 'the laptop is signed out at once')
    const again = await p.api('DELETE', `/v1/me/sessions/${theOther.id}`)
    assert.equal(again.status, 404)
    assert.equal(again.body.error.code, 'SESSION_NOT_FOUND')
    const phone = new Person(t.url)
    assert.equal((await phone.signIn(email, PASSWORD)).status, 200)
    const ended = await p.api('POST', '/v1/me/sessions/end-all')
    assert.equal(ended.status, 200)
    assert.equal(ended.body.ended, 2)
    assert.equal((await phone.api('GET', '/v1/me')).status, 401)
    assert.equal((await p.api('GET', '/v1/me')).status, 401)
  })

  test('a route that acts for a person refuses a key with PERSON_REQUIRED', async () => {
    const res = await t.api('GET', '/v1/me')
    assert.equal(res.status, 403)
    assert.equal(res.body.error.code, 'PERSON_REQUIRED')
  })
})

describe('members and invitations', () => {
  test('an owner invites by mail; the invited person follows the mailed link, signs up with it and joins; the link works once', async () => {
    const owner = await ownerOfDefault('inviter')
    const email = `invited-${Math.random().toString(36).slice(2, 6)}@example.test`
    const res = await owner.p.api('POST', `/v1/workspaces/${t.service.workspaceId}/invitations`, {
      email,
      role: 'member',
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(res.body.mailed, true)
    assert.equal(res.body.invitation.status, 'pending')
    const mail = await mailbox.mailTo(email)
    assert.equal(mail.from, 'patchbay@example.test')
    const text = mailText(mail.raw)
    assert.match(text, /Subject: You are invited to Default on Patchbay/)
    const link = /(http:\/\/\S+\/#\/invitations\/(\S+))/.exec(text)
    assert.ok(link, text)
    assert.equal(link[1], res.body.url)
    // The link opens the dashboard, whose invitation page accepts with the token.
    const page = await fetch(link[1])
    assert.equal(page.status, 200)
    assert.match(await page.text(), /<html/i)
    const token = link[2]
    const invited = new Person(t.url)
    const wrongEmail = await invited.signUp(`someone-else@example.test`, PASSWORD, 'X', token)
    assert.equal(wrongEmail.status, 403)
    assert.equal(wrongEmail.body.error.code, 'INVITATION_EMAIL_MISMATCH')
    const joined = await invited.signUp(email, PASSWORD, 'Invited', token)
    assert.equal(joined.status, 201, JSON.stringify(joined.body))
    assert.equal(joined.body.person.emailVerified, true, 'the mailed link proves the address')
    assert.deepEqual(
      joined.body.workspaces.map((w: any) => [w.id, w.role]),
      [[t.service.workspaceId, 'member']],
    )
    assert.equal(joined.body.session.method, 'invitation')
    const reused = await invited.api('POST', `/v1/invitations/${token}/accept`)
    assert.equal(reused.status, 410)
    assert.equal(reused.body.error.code, 'INVITATION_NOT_USABLE')
    assert.match(reused.body.error.message, /used already/)
    const listed = await owner.p.api('GET', `/v1/workspaces/${t.service.workspaceId}/invitations`)
    assert.equal(listed.body.invitations.find((i: any) => i.id === res.body.invitation.id).status, 'accepted')
    assert.ok(!JSON.stringify(listed.body).includes(token), 'tokens are never listed')
    const actions = (await audit(t))
      .filter((r) => r.workspace_id === t.service.workspaceId)
      .map((r) => r.action)
    for (const a of [
      'invitation.created',
      'auth.sign_up',
      'invitation.accepted',
      'member.added',
      'auth.sign_in',
    ])
      assert.ok(actions.includes(a), `${a} in ${actions}`)
  })

  test('a signed-in person accepts an invitation; a revoked, expired or unknown one is refused', async () => {
    const owner = await ownerOfDefault('acceptor-owner')
    const guest = await newPerson('guest')
    const path = `/v1/workspaces/${t.service.workspaceId}/invitations`
    const first = await owner.p.api('POST', path, { email: guest.email, role: 'viewer' })
    const second = await owner.p.api('POST', path, { email: guest.email, role: 'admin' })
    assert.equal((await owner.p.api('DELETE', `${path}/${second.body.invitation.id}`)).status, 204)
    const revoked = await guest.p.api('POST', `/v1/invitations/${second.body.token}/accept`)
    assert.equal(revoked.status, 410)
    assert.match(revoked.body.error.message, /revoked/)
    // An invitation past its expiry (as if a week had gone by) is refused, and stays unused.
    const third = await owner.p.api('POST', path, { email: guest.email, role: 'member' })
    await t.service.engine.store.db
      .updateTable('invitations')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', third.body.invitation.id)
      .execute()
    const expired = await guest.p.api('POST', `/v1/invitations/${third.body.token}/accept`)
    assert.equal(expired.status, 410)
    assert.match(expired.body.error.message, /expired/)
    const listed = await owner.p.api('GET', path)
    assert.equal(
      listed.body.invitations.find((i: any) => i.id === third.body.invitation.id).status,
      'expired',
    )
    const unknown = await guest.p.api('POST', '/v1/invitations/pbi_nothing/accept')
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body.error.code, 'INVITATION_NOT_FOUND')
    const ok = await guest.p.api('POST', `/v1/invitations/${first.body.token}/accept`)
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.deepEqual(ok.body, { workspaceId: t.service.workspaceId, role: 'viewer' })
    const me = await guest.p.api('GET', '/v1/me')
    assert.equal(me.body.workspaces[0].role, 'viewer')
  })

  test('an admin cannot make owners; no change leaves a workspace without an owner; each refusal is audited', async () => {
    const owner = await ownerOfDefault('sole-owner')
    const admin = await newPerson('an-admin')
    const ws = t.service.workspaceId
    assert.equal(
      (await owner.p.api('POST', `/v1/workspaces/${ws}/members`, { email: admin.email, role: 'admin' }))
        .status,
      201,
    )
    const promote = await admin.p.api('PATCH', `/v1/workspaces/${ws}/members/${admin.id}`, { role: 'owner' })
    assert.equal(promote.status, 403)
    assert.equal(promote.body.error.code, 'ROLE_FORBIDDEN')
    const demoteOwner = await admin.p.api('DELETE', `/v1/workspaces/${ws}/members/${owner.id}`)
    assert.equal(demoteOwner.status, 403)
    // The other owners (made by earlier tests) are demoted with the first-start key, an owner key.
    const members = (await t.api('GET', `/v1/workspaces/${ws}/members`)).body.members
    for (const m of members.filter((x: any) => x.role === 'owner' && x.personId !== owner.id))
      assert.equal(
        (await t.api('PATCH', `/v1/workspaces/${ws}/members/${m.personId}`, { role: 'member' })).status,
        200,
      )
    const last = await owner.p.api('PATCH', `/v1/workspaces/${ws}/members/${owner.id}`, { role: 'admin' })
    assert.equal(last.status, 409)
    assert.equal(last.body.error.code, 'LAST_OWNER')
    assert.match(last.body.error.hint, /another member an owner/)
    const leave = await owner.p.api('DELETE', `/v1/workspaces/${ws}/members/${owner.id}`)
    assert.equal(leave.status, 409)
    const still = (await t.api('GET', `/v1/workspaces/${ws}/members`)).body.members
    assert.equal(still.find((m: any) => m.personId === owner.id).role, 'owner', 'nothing changed')
    const refused = (await audit(t)).filter((r) => r.outcome === 'refused' && r.action.startsWith('member.'))
    assert.ok(refused.some((r) => JSON.parse(r.detail!).reason === 'last owner'))
    assert.ok(refused.some((r) => JSON.parse(r.detail!).reason === 'owner role needed'))
  })

  test("changing a member's role or removing them ends their sessions at once", async () => {
    const owner = await ownerOfDefault('cutter')
    const ws = t.service.workspaceId
    const m = await newPerson('cut-member')
    assert.equal(
      (await owner.p.api('POST', `/v1/workspaces/${ws}/members`, { email: m.email, role: 'member' })).status,
      201,
    )
    assert.equal((await m.p.api('GET', '/v1/me')).status, 200)
    const changed = await owner.p.api('PATCH', `/v1/workspaces/${ws}/members/${m.id}`, { role: 'viewer' })
    assert.equal(changed.status, 200)
    assert.equal(changed.body.role, 'viewer')
    assert.equal((await m.p.api('GET', '/v1/me')).status, 401, 'signed out by the role change')
    assert.equal((await m.p.signIn(m.email, PASSWORD)).status, 200)
    assert.equal((await m.p.api('GET', '/v1/me')).body.workspaces[0].role, 'viewer')
    assert.equal((await owner.p.api('DELETE', `/v1/workspaces/${ws}/members/${m.id}`)).status, 204)
    assert.equal((await m.p.api('GET', '/v1/me')).status, 401, 'signed out by the removal')
    assert.equal((await m.p.signIn(m.email, PASSWORD)).status, 200)
    assert.deepEqual((await m.p.api('GET', '/v1/me')).body.workspaces, [])
    const listed = await m.p.api('GET', `/v1/workspaces/${ws}/members`)
    assert.equal(listed.status, 404, 'no longer sees the members')
  })
})

describe('passwords: change and reset', () => {
  /** The reset link's token from the newest mail to `email`. */
  async function resetToken(email: string, before: number) {
    await mailbox.mailTo(email)
    const mail = mailbox.mails
      .filter((m) => m.to.includes(email))
      .slice(before)
      .at(-1)
    assert.ok(mail, `a new mail to ${email}`)
    const text = mailText(mail.raw)
    assert.match(text, /Subject: Reset your Patchbay password/)
    const token = /#\/reset-password\/(\S+)/.exec(text)?.[1]
    assert.ok(token, `a reset link in the mail:\n${text}`)
    return token
  }
  const mailsTo = (email: string) => mailbox.mails.filter((m) => m.to.includes(email)).length
  const post = (path: string, body: unknown) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json(), headers: r.headers }))

  test('a forgotten password: the mailed link sets a new one once, ends every session and signs in', async () => {
    const { p: laptop, email } = await newPerson('rosa')
    const before = mailsTo(email)
    const asked = await post('/v1/auth/password-reset', { email: email.toUpperCase() })
    assert.equal(asked.status, 202, JSON.stringify(asked.body))
    const token = await resetToken(email, before)

    // An unknown email gets the very same answer, and nothing is mailed.
    const unknown = await post('/v1/auth/password-reset', { email: 'nobody-here@example.test' })
    assert.equal(unknown.status, 202)
    assert.deepEqual(unknown.body, asked.body)
    assert.equal(mailsTo('nobody-here@example.test'), 0)

    const weak = await post('/v1/auth/password-reset/confirm', { token, password: 'short' })
    assert.equal(weak.status, 400)
    assert.equal(weak.body.error.code, 'WEAK_PASSWORD')
    const forged = await post('/v1/auth/password-reset/confirm', {
      token: `${token.slice(0, -4)}AAAA`,
      password: 'a brand new password',
    })
    assert.equal(forged.status, 400)
    assert.equal(forged.body.error.code, 'PASSWORD_RESET_INVALID')

    const phone = new Person(t.url)
    const reset = await phone.api('POST', '/v1/auth/password-reset/confirm', {
      token,
      password: 'a brand new password',
    })
    assert.equal(reset.status, 200, JSON.stringify(reset.body))
    assert.equal(reset.body.person.emailVerified, true, 'the mailed link proves the mailbox')
    assert.equal((await phone.api('GET', '/v1/me')).status, 200, 'signed in with the new session')
    assert.equal((await laptop.api('GET', '/v1/me')).status, 401, 'the old session ended')
    assert.equal((await new Person(t.url).signIn(email, PASSWORD)).status, 401, 'the old password is refused')
    assert.equal((await new Person(t.url).signIn(email, 'a brand new password')).status, 200)

    const again = await post('/v1/auth/password-reset/confirm', { token, password: 'yet another password' })
    assert.equal(again.status, 400, 'the link worked once')
    assert.equal(again.body.error.code, 'PASSWORD_RESET_INVALID')
    const outcomes = (await audit(t, 'auth.password_reset')).map((r) => r.outcome)
    assert.deepEqual(outcomes.slice(-4), ['refused', 'refused', 'ok', 'refused'])
    const rows = JSON.stringify(await audit(t))
    assert.ok(!rows.includes(token.slice(token.lastIndexOf('.') + 1)), 'the link is in no audit row')
  })

  test('reset requests are limited per email: the sixth is 429 with Retry-After', async () => {
    const { email } = await newPerson('sam')
    for (let i = 0; i < 5; i++) assert.equal((await post('/v1/auth/password-reset', { email })).status, 202)
    const limited = await post('/v1/auth/password-reset', { email })
    assert.equal(limited.status, 429)
    assert.equal(limited.body.error.code, 'PASSWORD_RESET_RATE_LIMITED')
    assert.ok(Number(limited.headers.get('retry-after')) > 0)
  })

  test('without SMTP a reset is refused in words, and the sign-in page is told', async () => {
    const res = await fetch(`${other.url}/v1/auth/password-reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'anyone@example.test' }),
    })
    assert.equal(res.status, 409)
    assert.equal((await res.json()).error.code, 'PASSWORD_RESET_UNAVAILABLE')
    const settings = await (await fetch(`${other.url}/v1/auth/sso`)).json()
    assert.equal(settings.passwordReset, false)
    assert.equal((await (await fetch(`${t.url}/v1/auth/sso`)).json()).passwordReset, true)
  })

  test('changing the password needs the current one; other sessions end, this one stays', async () => {
    const { p: laptop, email } = await newPerson('tove')
    const phone = new Person(t.url)
    assert.equal((await phone.signIn(email, PASSWORD)).status, 200)
    const wrong = await laptop.api('POST', '/v1/me/password', {
      currentPassword: 'not the password',
      newPassword: 'a different password',
    })
    assert.equal(wrong.status, 400)
    assert.equal(wrong.body.error.code, 'CURRENT_PASSWORD_WRONG')
    assert.equal((await phone.api('GET', '/v1/me')).status, 200, 'a refused change ends nothing')
    const changed = await laptop.api('POST', '/v1/me/password', {
      currentPassword: PASSWORD,
      newPassword: 'a different password',
    })
    assert.equal(changed.status, 200, JSON.stringify(changed.body))
    assert.deepEqual(changed.body, { otherSessionsEnded: 1 })
    assert.equal((await laptop.api('GET', '/v1/me')).status, 200, 'this session stays')
    assert.equal((await phone.api('GET', '/v1/me')).status, 401, 'the other one ended')
    assert.equal((await new Person(t.url).signIn(email, 'a different password')).status, 200)
    const noCsrf = await fetch(`${t.url}/v1/me/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: laptop.jar.header()! },
      body: JSON.stringify({
        currentPassword: 'a different password',
        newPassword: 'stolen cookie password',
      }),
    })
    assert.equal(noCsrf.status, 403, 'a cookie without its CSRF token changes nothing')
    const rows = await audit(t, 'auth.password_changed')
    assert.deepEqual(
      rows.slice(-2).map((r) => r.outcome),
      ['refused', 'ok'],
    )
  })
})
