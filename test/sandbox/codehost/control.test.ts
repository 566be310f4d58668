// The code-host sandbox over real HTTP: control API, faults, clock, robustness.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, ctl, OWNER, R, sandboxPerFile, sb } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('control API, faults, clock, robustness', () => {
  test('users, apps, reset restores the seed', async () => {
    const u = await ctl('POST', '/_sandbox/users', { login: 'temp-user', token: true })
    assert.equal(u.status, 201)
    assert.equal((await api('GET', '/user', { token: u.json.token })).json.login, 'temp-user')
    assert.equal((await ctl('POST', '/_sandbox/users', { login: 'temp-user' })).status, 422)
    await api('POST', `${R}/issues`, { body: { title: 'gone after reset' } })
    await ctl('POST', '/_sandbox/reset')
    assert.equal((await api('GET', '/users/temp-user')).status, 404)
    assert.equal((await api('GET', `${R}/issues`)).json.length, 1)
    assert.equal((await api('GET', '/user')).json.login, OWNER)
    const demo = await ctl('GET', '/_sandbox/demo')
    assert.equal(demo.json.demo.token, sb.demo.token)
    assert.equal(demo.json.oauthApp.clientId, sb.demo.oauthClientId)
    assert.equal((await ctl('POST', '/_sandbox/act', { as: OWNER, action: 'nonsense' })).status, 422)
  })

  test('faults and clock', async () => {
    const f = await ctl('POST', '/_sandbox/faults', {
      errorRate: 1,
      errorStatus: 502,
      pathPrefix: '/user',
      count: 1,
    })
    assert.equal(f.status, 201)
    const failed = await api('GET', '/user')
    assert.equal(failed.status, 502)
    assert.equal(failed.json.message, 'Injected fault')
    assert.equal((await api('GET', '/user')).status, 200)
    const frozen = await ctl('POST', '/_sandbox/clock', {
      freeze: true,
      atMs: Date.parse('2030-01-01T00:00:00Z'),
    })
    assert.equal(frozen.json.now, '2030-01-01T00:00:00.000Z')
    const issue = await api('POST', `${R}/issues`, { body: { title: 'from the future' } })
    assert.equal(issue.json.created_at, '2030-01-01T00:00:00.000Z')
    assert.equal((await ctl('GET', '/_sandbox/clock')).json.frozen, true)
  })

  test('malformed JSON, oversized bodies, wrong methods, unknown ids', async () => {
    const bad = await api('POST', `${R}/issues`, {
      raw: '{"title": ',
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(bad.status, 400)
    assert.equal(bad.json.message, 'Problems parsing JSON')
    const badText = await api('POST', `${R}/issues`, {
      raw: '{oops',
      headers: { 'content-type': 'text/plain' },
    })
    assert.equal(badText.status, 400)
    const big = await api('POST', `${R}/issues`, { body: { title: 'x', body: 'y'.repeat(2 * 1024 * 1024) } })
    assert.equal(big.status, 413)
    const wrongMethod = await api('PATCH', '/rate_limit', { body: {} })
    assert.equal(wrongMethod.status, 404)
    assert.ok(wrongMethod.headers.get('x-ratelimit-limit'))
    assert.equal((await ctl('GET', '/_sandbox/nothing-here')).status, 404)
    assert.equal((await api('DELETE', `${R}/branches`)).status, 404)
    const nf = await api('GET', `/repos/${OWNER}/nope`)
    assert.equal(nf.status, 404)
    assert.deepEqual(Object.keys(nf.json).slice(0, 2), ['message', 'documentation_url'])
    assert.equal((await api('GET', `${R}/issues/abc`)).status, 404)
    assert.equal((await api('GET', `${R}/issues?labels=bug&labels=question&state=open`)).status, 200)
    assert.equal((await api('GET', `${R}/actions/runs/42`)).status, 404)
    assert.equal((await api('GET', '/user')).status, 200)
  })
})
