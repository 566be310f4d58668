// The code-host sandbox over real HTTP: gists, releases.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, OWNER, R, sandboxPerFile, token } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('gists, releases', () => {
  test('snippets: create, get, update, list', async () => {
    const created = await api('POST', '/gists', {
      body: { description: 'demo', public: true, files: { 'hello.md': { content: '# hi' } } },
    })
    assert.equal(created.status, 201)
    assert.match(created.json.id, /^[0-9a-f]{32}$/)
    assert.equal(created.json.files['hello.md'].content, '# hi')
    assert.equal(created.json.owner.login, OWNER)
    const got = await api('GET', `/gists/${created.json.id}`, { token: null })
    assert.equal(got.json.description, 'demo')
    const patched = await api('PATCH', `/gists/${created.json.id}`, {
      body: {
        description: 'changed',
        files: { 'hello.md': { content: '# bye' }, 'extra.txt': { content: 'x' } },
      },
    })
    assert.equal(patched.status, 200)
    assert.equal(patched.json.files['hello.md'].content, '# bye')
    assert.deepEqual(Object.keys(patched.json.files).sort(), ['extra.txt', 'hello.md'])
    await api('POST', '/gists', {
      body: { description: 'secret', public: false, files: { 's.txt': { content: 's' } } },
    })
    assert.equal((await api('GET', `/users/${OWNER}/gists`, { token: null })).json.length, 1)
    assert.equal((await api('GET', `/users/${OWNER}/gists`)).json.length, 2)
    assert.equal((await api('GET', '/gists')).json.length, 2)
    assert.equal((await api('POST', '/gists', { body: { files: {} } })).status, 422)
    const noScope = await token({ login: OWNER, scopes: ['repo'] })
    assert.equal(
      (await api('POST', '/gists', { token: noScope, body: { files: { 'a.txt': { content: 'a' } } } }))
        .status,
      404,
    )
    assert.equal((await api('GET', '/gists/0000')).status, 404)
  })

  test('releases: create, list, get, duplicates', async () => {
    const r = await api('POST', `${R}/releases`, {
      body: { tag_name: 'v1.0.0', name: 'First', body: 'notes' },
    })
    assert.equal(r.status, 201)
    assert.equal(r.json.tag_name, 'v1.0.0')
    assert.equal(r.json.draft, false)
    assert.ok(r.json.published_at)
    assert.equal((await api('GET', `${R}/releases`)).json.length, 1)
    assert.equal((await api('GET', `${R}/releases/${r.json.id}`)).json.name, 'First')
    assert.equal((await api('GET', `${R}/releases/latest`)).json.id, r.json.id)
    assert.equal((await api('GET', `${R}/tags`)).json[0].name, 'v1.0.0')
    const dup = await api('POST', `${R}/releases`, { body: { tag_name: 'v1.0.0' } })
    assert.equal(dup.status, 422)
    assert.equal(dup.json.errors[0].code, 'already_exists')
    assert.equal((await api('GET', `${R}/releases/123`)).status, 404)
  })
})
