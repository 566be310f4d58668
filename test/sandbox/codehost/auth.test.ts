// The code-host sandbox over real HTTP: auth and token kinds.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startCodehostSandbox } from '../../../sandbox/codehost/index.ts'
import { api, b64, ctl, OWNER, R, REPO, sandboxPerFile, sb, token } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('auth and token kinds', () => {
  test('GET /user names the account; bad and missing credentials', async () => {
    const r = await api('GET', '/user')
    assert.equal(r.status, 200)
    assert.equal(r.json.login, OWNER)
    assert.equal(typeof r.json.id, 'number')
    assert.equal(r.json.name, 'Octo Demo')
    assert.match(r.headers.get('x-oauth-scopes') ?? '', /repo/)
    const viaTokenScheme = await api('GET', '/user', {
      token: null,
      headers: { authorization: `token ${sb.demo.token}` },
    })
    assert.equal(viaTokenScheme.json.login, OWNER)
    const bad = await api('GET', '/user', { token: 'chp_not_a_real_token' })
    assert.equal(bad.status, 401)
    assert.equal(bad.json.message, 'Bad credentials')
    assert.ok(bad.json.documentation_url)
    const none = await api('GET', '/user', { token: null })
    assert.equal(none.status, 401)
    assert.equal(none.json.message, 'Requires authentication')
    const other = await api('GET', '/users/reviewer')
    assert.equal(other.status, 200)
    assert.equal(other.json.login, 'reviewer')
    assert.equal((await api('GET', '/users/nobody-here')).status, 404)
  })

  test('demo credentials are fixed across starts', async () => {
    const second = await startCodehostSandbox()
    try {
      assert.deepEqual(second.demo, sb.demo)
      assert.match(sb.demo.token, /^chp_[A-Za-z0-9]{36}$/)
      // The README documents these exact values.
      assert.equal(sb.demo.token, 'chp_YvwvOwYcUqQKiM2LCkyO9YVunvCtmuKSOzsv')
      assert.equal(sb.demo.password, 'octo-demo-password')
      assert.equal(sb.demo.oauthClientId, 'Ov23libNrvauLGoJqOc6')
      assert.equal(sb.demo.oauthClientSecret, 'bb363a48fa24de9e04d230966cdcf7f8bc24220d')
      assert.equal(sb.demo.login, 'octo-demo')
      assert.deepEqual(sb.demo.repo, { owner: 'octo-demo', name: 'hello-world' })
    } finally {
      await second.close()
    }
  })

  test('classic token without repo scope cannot write; public reads still work', async () => {
    const t = await token({ login: OWNER, kind: 'classic', scopes: ['gist'] })
    assert.match(t, /^chp_/)
    assert.equal((await api('GET', R, { token: t })).status, 200)
    const w = await api('POST', `${R}/issues`, { token: t, body: { title: 'x' } })
    assert.equal(w.status, 404)
    assert.equal(w.headers.get('x-accepted-oauth-scopes'), 'repo, public_repo')
  })

  test('fine-grained token reaches its selected repositories only', async () => {
    const created = await api('POST', '/user/repos', { body: { name: 'second', auto_init: true } })
    assert.equal(created.status, 201)
    const t = await token({
      login: OWNER,
      kind: 'fine_grained',
      owner: OWNER,
      repositories: [`${OWNER}/${REPO}`],
    })
    assert.match(t, /^codehost_pat_/)
    assert.equal((await api('GET', R, { token: t })).status, 200)
    assert.equal((await api('GET', `/repos/${OWNER}/second`, { token: t })).status, 404)
    assert.equal(
      (await api('POST', `/repos/${OWNER}/second/issues`, { token: t, body: { title: 'x' } })).status,
      404,
    )
    const list = await api('GET', '/user/repos', { token: t })
    assert.deepEqual(
      list.json.map((r: any) => r.name),
      [REPO],
    )
    const readOnly = await token({
      login: OWNER,
      kind: 'fine_grained',
      repositories: [REPO],
      permissions: { contents: 'read', issues: 'write' },
    })
    const put = await api('PUT', `${R}/contents/x.txt`, {
      token: readOnly,
      body: { message: 'm', content: b64('x') },
    })
    assert.equal(put.status, 403)
    assert.equal(put.json.message, 'Resource not accessible by personal access token')
    assert.equal((await api('POST', `${R}/issues`, { token: readOnly, body: { title: 'ok' } })).status, 201)
  })

  test('OAuth tokens and expiry on the sandbox clock', async () => {
    const t = await token({ login: 'reviewer', kind: 'oauth', scopes: ['repo'], expiresInMs: 60_000 })
    assert.match(t, /^cho_/)
    assert.equal((await api('GET', '/user', { token: t })).json.login, 'reviewer')
    await ctl('POST', '/_sandbox/clock', { advanceMs: 61_000 })
    assert.equal((await api('GET', '/user', { token: t })).status, 401)
    assert.equal((await ctl('DELETE', `/_sandbox/tokens/${sb.demo.token}`)).status, 204)
    assert.equal((await api('GET', '/user')).status, 401)
  })
})
