// The task-board emulator: the demo account and authentication (key and token in the query, the OAuth header, JSON and form bodies), board access, scopes and token expiry.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTaskboardSandbox } from '../../../sandbox/taskboard/index.ts'
import { api, cardNamed, control, demoCards, demoLists, sandboxForThisFile, sb } from './harness.ts'

sandboxForThisFile()

test('demo credentials and seeded ids are the same on every start and after a reset', async () => {
  assert.match(sb.demo.key, /^[0-9a-f]{32}$/)
  assert.match(sb.demo.token, /^[0-9a-f]{64}$/)
  assert.equal(sb.demo.username, 'demo')
  assert.equal(sb.demo.fullName, 'Demo User')
  assert.equal(sb.demo.listIds.length, 3)
  const other = await startTaskboardSandbox()
  try {
    assert.deepEqual(other.demo, sb.demo)
  } finally {
    await other.close()
  }
  const lists = await demoLists()
  assert.deepEqual(
    lists.map((l) => l.name),
    ['To Do', 'Doing', 'Done'],
  )
  assert.deepEqual(
    lists.map((l) => l.id),
    sb.demo.listIds,
  )
  const cards = await demoCards()
  assert.ok(cards.length >= 2)
  assert.equal(sb.authUrl, sb.url)
  assert.equal(sb.webUrl, sb.url)
})

// ---- auth ------------------------------------------------------------------------------------

test('auth failures are plain-text 401/400/404 bodies', async () => {
  const noKey = await api('GET', '/1/members/me', { key: null })
  assert.equal(noKey.status, 401)
  assert.equal(noKey.text, 'invalid key')
  assert.match(noKey.headers.get('content-type')!, /^text\/plain/)
  assert.equal((await api('GET', '/1/members/me', { key: 'f'.repeat(32) })).text, 'invalid key')
  const badToken = await api('GET', '/1/members/me', { token: 'e'.repeat(64) })
  assert.equal(badToken.status, 401)
  assert.equal(badToken.text, 'invalid token')
  const noToken = await api('GET', '/1/members/me', { token: null })
  assert.equal(noToken.status, 401)
  assert.equal(noToken.text, 'unauthorized permission requested')
  const badId = await api('GET', '/1/cards/not-an-id')
  assert.equal(badId.status, 400)
  assert.equal(badId.text, 'invalid id')
  const missing = await api('GET', `/1/cards/${'a'.repeat(24)}`)
  assert.equal(missing.status, 404)
  assert.equal(missing.text, 'The requested resource was not found.')
  // A token works only with the key it was issued for.
  const otherApp = await control('POST', '/apps', { member: 'demo', name: 'Other' })
  assert.equal((await api('GET', '/1/members/me', { key: otherApp.key })).text, 'invalid token')
})

test('key and token are accepted in the OAuth header, a JSON body and a form body', async () => {
  const header = await api('GET', '/1/members/me', {
    key: null,
    token: null,
    headers: { authorization: `OAuth oauth_consumer_key="${sb.demo.key}", oauth_token="${sb.demo.token}"` },
  })
  assert.equal(header.status, 200)
  assert.equal(header.json.username, 'demo')
  const json = await api('POST', '/1/cards', {
    key: null,
    token: null,
    json: { key: sb.demo.key, token: sb.demo.token, idList: sb.demo.listIds[0], name: 'json creds' },
  })
  assert.equal(json.status, 200, json.text)
  const form = await api('POST', '/1/cards', {
    key: null,
    token: null,
    form: { key: sb.demo.key, token: sb.demo.token, idList: sb.demo.listIds[0], name: 'form creds' },
  })
  assert.equal(form.status, 200, form.text)
  assert.equal(form.json.name, 'form creds')
  // Parameters in the query string count too, as the real API takes them.
  const query = await api('POST', '/1/cards', { query: { idList: sb.demo.listIds[0], name: 'query params' } })
  assert.equal(query.json.name, 'query params')
})

test("a member cannot reach another member's private board; a public one is readable", async () => {
  const outsider = await control('POST', '/members', { username: 'outsider' })
  const { token } = await control('POST', '/tokens', { member: outsider.id, key: sb.demo.key })
  const r = await api('GET', `/1/boards/${sb.demo.boardId}`, { token })
  assert.equal(r.status, 401)
  assert.equal(r.text, 'unauthorized permission requested')
  const card = (await demoCards())[0]
  assert.equal((await api('GET', `/1/cards/${card.id}`, { token })).status, 401)
  assert.equal((await api('GET', `/1/lists/${sb.demo.listIds[0]}`, { token })).status, 401)
  const created = await api('POST', '/1/cards', { token, json: { idList: sb.demo.listIds[0], name: 'x' } })
  assert.equal(created.status, 401)
  assert.equal((await api('GET', '/1/members/me/boards', { token })).json.length, 0)

  const pub = await api('POST', '/1/boards', { json: { name: 'Open', prefs_permissionLevel: 'public' } })
  assert.equal(pub.json.prefs.permissionLevel, 'public')
  assert.equal((await api('GET', `/1/boards/${pub.json.id}`, { token })).status, 200)
  const lists = (await api('GET', `/1/boards/${pub.json.id}/lists`, { token })).json
  const write = await api('POST', '/1/cards', { token, json: { idList: lists[0].id, name: 'no' } })
  assert.equal(write.status, 401)
})

test('scopes: a read token cannot write; marking notifications read needs account', async () => {
  const { token } = await control('POST', '/tokens', { member: 'demo', scope: 'read' })
  assert.equal((await api('GET', '/1/members/me', { token })).status, 200)
  const w = await api('POST', '/1/cards', { token, json: { idList: sb.demo.listIds[0], name: 'x' } })
  assert.equal(w.status, 401)
  assert.equal(w.text, 'unauthorized permission requested')
  const card = (await demoCards())[0]
  assert.equal((await api('PUT', `/1/cards/${card.id}`, { token, json: { name: 'y' } })).status, 401)
  assert.equal((await api('DELETE', `/1/cards/${card.id}`, { token })).status, 401)

  await control('POST', '/act', {
    as: 'teammate',
    type: 'comment',
    id: (await cardNamed('Write the docs')).id,
    text: 'hi',
  })
  const rw = (await control('POST', '/tokens', { member: 'demo', scope: 'read,write' })).token
  const n = (await api('GET', '/1/members/me/notifications', { token: rw })).json[0]
  assert.equal(
    (await api('PUT', `/1/notifications/${n.id}`, { token: rw, json: { unread: false } })).status,
    401,
  )
  const full = (await control('POST', '/tokens', { member: 'demo', scope: 'read,write,account' })).token
  const ok = await api('PUT', `/1/notifications/${n.id}`, { token: full, json: { unread: false } })
  assert.equal(ok.status, 200)
  assert.equal(ok.json.unread, false)
})

test('tokens expire on the sandbox clock for each expiration; never does not', async () => {
  const hours: Record<string, number> = { '1hour': 1, '1day': 24, '30days': 24 * 30 }
  for (const [expiration, h] of Object.entries(hours)) {
    await control('POST', '/reset')
    const t = await control('POST', '/tokens', { member: 'demo', expiration })
    assert.ok(t.dateExpires)
    await control('POST', '/clock', { advanceMs: h * 3600_000 - 60_000 })
    assert.equal((await api('GET', '/1/members/me', { token: t.token })).status, 200, expiration)
    await control('POST', '/clock', { advanceMs: 120_000 })
    const r = await api('GET', '/1/members/me', { token: t.token })
    assert.equal(r.status, 401, expiration)
    assert.equal(r.text, 'invalid token')
  }
  const forever = await control('POST', '/tokens', { member: 'demo', expiration: 'never' })
  assert.equal(forever.dateExpires, null)
  await control('POST', '/clock', { advanceMs: 3650 * 86_400_000 })
  assert.equal((await api('GET', '/1/members/me', { token: forever.token })).status, 200)
  const info = await api('GET', `/1/tokens/${forever.token}`, { token: forever.token })
  assert.equal(info.json.dateExpires, null)
  assert.equal(info.json.permissions.find((p: any) => p.modelType === 'Board').write, true)
})
