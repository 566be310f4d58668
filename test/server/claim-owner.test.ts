// The owner-setup link of a workspace without an owner (a database from the release before people):
// the first person makes their account with it and owns the workspace, whatever PATCHBAY_SIGNUP
// says; a forged token makes nothing, and the link works once.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
before(async () => {
  t = await startTestService()
})
after(() => t.close())

const claim = (body: unknown) =>
  fetch(`${t.url}/v1/auth/claim-owner`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: await r.json(), cookie: r.headers.getSetCookie() }))

test('the owner-setup link makes the first person the owner, once; a forged one makes nothing', async () => {
  const url = t.service.ownerSetupUrl
  assert.ok(url, 'a workspace with no owner prints its owner-setup link')
  const token = decodeURIComponent(url.slice(url.indexOf('#claim-owner=') + '#claim-owner='.length))
  const account = { email: 'first@example.test', password: 'a long enough password', name: 'First' }

  const forged = await claim({ ...account, token: `${token.slice(0, -4)}AAAA` })
  assert.equal(forged.status, 400)
  assert.equal(forged.body.error.code, 'OWNER_SETUP_INVALID')
  const signIn = await fetch(`${t.url}/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
  })
  assert.equal(signIn.status, 401, 'the forged link made no account')

  // PATCHBAY_SIGNUP is its default (invite): the link is what lets this person in.
  const claimed = await claim({ ...account, token })
  assert.equal(claimed.status, 201, JSON.stringify(claimed.body))
  assert.deepEqual(
    claimed.body.workspaces.map((w: { id: string; role: string }) => [w.id, w.role]),
    [[t.service.workspaceId, 'owner']],
  )
  assert.ok(
    claimed.cookie.some((c) => c.includes('patchbay_session')),
    'signed in',
  )

  const again = await claim({ ...account, email: 'second@example.test', token })
  assert.equal(again.status, 409)
  assert.equal(again.body.error.code, 'OWNER_SETUP_INVALID')
})
