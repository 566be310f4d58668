// The task-board emulator: notifications, page addresses (.json) and the token page.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  api,
  cardNamed,
  control,
  demoCards,
  readForm,
  sandboxForThisFile,
  sb,
  submitForm,
  teammateId,
} from './harness.ts'

sandboxForThisFile()

test("notifications: another member's comment, move and add reach the demo member; filters and marking read", async () => {
  const docs = await cardNamed('Write the docs')
  assert.ok(docs.idMembers.includes(sb.demo.memberId))
  await control('POST', '/act', { as: 'teammate', type: 'comment', id: docs.id, text: 'Looks good' })
  await control('POST', '/act', { as: 'teammate', type: 'moveCard', id: docs.id, idList: sb.demo.listIds[2] })
  const welcome = await cardNamed('Set up the board')
  await control('POST', '/act', {
    as: 'teammate',
    type: 'addMemberToCard',
    id: welcome.id,
    value: sb.demo.memberId,
  })
  await control('POST', '/act', { as: 'teammate', type: 'comment', id: welcome.id, text: 'ping @demo' })

  const all = (await api('GET', '/1/members/me/notifications')).json
  assert.deepEqual(
    all.map((n: any) => n.type),
    ['mentionedOnCard', 'addedToCard', 'changeCard', 'commentCard'],
  )
  const comment = all[3]
  assert.deepEqual(Object.keys(comment).sort(), [
    'data',
    'date',
    'id',
    'idAction',
    'idMemberCreator',
    'type',
    'unread',
  ])
  assert.equal(comment.unread, true)
  assert.equal(comment.data.text, 'Looks good')
  assert.equal(comment.data.card.id, docs.id)
  assert.equal(comment.data.board.id, sb.demo.boardId)
  assert.equal(comment.data.list.name, 'Doing')
  assert.equal(comment.idMemberCreator, await teammateId())
  assert.equal(all[2].data.listAfter.name, 'Done')

  // One's own changes do not notify oneself.
  await api('POST', `/1/cards/${docs.id}/actions/comments`, { json: { text: 'self' } })
  assert.equal((await api('GET', '/1/members/me/notifications')).json.length, 4)

  const marked = await api('PUT', `/1/notifications/${comment.id}`, { json: { unread: false } })
  assert.equal(marked.json.unread, false)
  const unread = (await api('GET', '/1/members/me/notifications', { query: { read_filter: 'unread' } })).json
  assert.equal(unread.length, 3)
  const read = (await api('GET', '/1/members/me/notifications', { query: { read_filter: 'read' } })).json
  assert.deepEqual(
    read.map((n: any) => n.id),
    [comment.id],
  )
  const since = (await api('GET', '/1/members/me/notifications', { query: { since: all[2].id } })).json
  assert.deepEqual(
    since.map((n: any) => n.id),
    [all[0].id, all[1].id],
  )
  assert.equal((await api('GET', '/1/members/me/notifications', { query: { limit: '1' } })).json.length, 1)
  assert.equal(
    (await api('GET', '/1/members/me/notifications', { query: { read_filter: 'some' } })).text,
    'invalid value for read_filter',
  )
  const foreign = await api('GET', `/1/notifications/${comment.id}`, {
    token: (await control('GET', '/state')).tokens[1].token,
  })
  assert.equal(foreign.status, 401)
})

// ---- page addresses --------------------------------------------------------------------------

test('page addresses: .json returns the data with auth; without auth a private board is refused', async () => {
  const board = (await api('GET', `/1/boards/${sb.demo.boardId}`)).json
  assert.ok(board.url.startsWith(`${sb.webUrl}/b/`))
  const data = await api('GET', '', { base: `${board.url}.json` })
  assert.equal(data.status, 200, data.text)
  assert.equal(data.json.id, sb.demo.boardId)
  assert.equal(data.json.lists.length, 3)
  assert.ok(data.json.cards.length >= 2)
  assert.ok(Array.isArray(data.json.actions))
  const anon = await api('GET', '', { base: `${board.url}.json`, key: null, token: null })
  assert.equal(anon.status, 401)
  assert.equal(anon.text, 'unauthorized permission requested')
  assert.equal((await api('GET', '', { base: `${board.shortUrl}.json` })).json.id, sb.demo.boardId)
  const html = await api('GET', '', { base: board.url, key: null, token: null })
  assert.match(html.headers.get('content-type')!, /text\/html/)
  assert.match(html.text, /Demo Board/)

  const card = (await demoCards())[0]
  const cardData = await api('GET', '', { base: `${card.url}.json` })
  assert.equal(cardData.json.id, card.id)
  assert.ok(Array.isArray(cardData.json.checklists))
  assert.equal((await api('GET', '', { base: `${sb.webUrl}/c/ZZZZZZZZ/1-x.json` })).status, 404)
})

// ---- token page ------------------------------------------------------------------------------

test('token page: log in, approve, token returned in the return_url fragment; expiration honoured', async () => {
  const q = new URLSearchParams({
    key: sb.demo.key,
    name: 'Patchbay',
    expiration: '1hour',
    scope: 'read,write',
    response_type: 'token',
    return_url: 'http://localhost:9999/done',
    callback_method: 'fragment',
  })
  const page = await fetch(`${sb.authUrl}/1/authorize?${q}`)
  assert.equal(page.status, 200)
  const html = await page.text()
  assert.match(html, /Let Patchbay use your account\?/)
  const { action, fields } = readForm(html)
  assert.equal(fields.return_url, 'http://localhost:9999/done')

  const wrong = await submitForm(action, { ...fields, username: 'demo', password: 'nope', approve: 'Allow' })
  assert.equal(wrong.res.status, 401)
  assert.match(wrong.text, /Invalid username or password/)

  const ok = await submitForm(action, { ...fields, username: 'demo', password: 'demo', approve: 'Allow' })
  assert.equal(ok.res.status, 302)
  const location = new URL(ok.res.headers.get('location')!)
  assert.equal(`${location.origin}${location.pathname}`, 'http://localhost:9999/done')
  const token = /^#token=([0-9a-f]{64})$/.exec(location.hash)![1]!
  const me = await api('GET', '/1/members/me', { token })
  assert.equal(me.json.username, 'demo')
  assert.equal(
    (await api('POST', '/1/cards', { token, json: { idList: sb.demo.listIds[0], name: 'w' } })).status,
    200,
  )
  await control('POST', '/clock', { advanceMs: 3600_000 + 1000 })
  assert.equal((await api('GET', '/1/members/me', { token })).text, 'invalid token')

  const denied = await submitForm(action, { ...fields, approve: 'Deny' })
  assert.equal(denied.res.status, 302)
  assert.equal(new URL(denied.res.headers.get('location')!).hash, '#error=access_denied')
})

test('token page: without return_url the token is shown; postMessage; never expires; bad key', async () => {
  for (const expiration of ['1day', '30days', 'never']) {
    const q = new URLSearchParams({
      key: sb.demo.key,
      name: 'Agent',
      expiration,
      scope: 'read',
      response_type: 'token',
    })
    const { action, fields } = readForm(await (await fetch(`${sb.authUrl}/1/authorize?${q}`)).text())
    const shown = await submitForm(action, {
      ...fields,
      username: 'teammate',
      password: 'teammate',
      approve: 'Allow',
    })
    assert.equal(shown.res.status, 200)
    const token = /<pre id="token">([0-9a-f]{64})<\/pre>/.exec(shown.text)![1]!
    const info = (await api('GET', `/1/tokens/${token}`, { token })).json
    assert.equal(info.identifier, 'Agent')
    if (expiration === 'never') assert.equal(info.dateExpires, null)
    else {
      const ms = Date.parse(info.dateExpires) - Date.parse(info.dateCreated)
      assert.equal(ms, expiration === '1day' ? 86_400_000 : 30 * 86_400_000)
    }
    // A read-only token from the page cannot write.
    assert.equal((await api('POST', '/1/boards', { token, json: { name: 'x' } })).status, 401)
  }
  const pm = new URLSearchParams({
    key: sb.demo.key,
    expiration: 'never',
    scope: 'read,write,account',
    response_type: 'token',
    return_url: 'https://app.example',
    callback_method: 'postMessage',
  })
  const { action, fields } = readForm(await (await fetch(`${sb.authUrl}/1/authorize?${pm}`)).text())
  const posted = await submitForm(action, { ...fields, username: 'demo', password: 'demo', approve: 'Allow' })
  assert.equal(posted.res.status, 200)
  assert.match(posted.text, /window\.opener\.postMessage\("[0-9a-f]{64}", "https:\/\/app\.example"\)/)

  const badKey = await fetch(`${sb.authUrl}/1/authorize?key=${'0'.repeat(32)}&scope=read`)
  assert.equal(badKey.status, 401)
  assert.equal(await badKey.text(), 'invalid key')
  const badExp = await fetch(`${sb.authUrl}/1/authorize?key=${sb.demo.key}&expiration=forever`)
  assert.equal(await badExp.text(), 'invalid value for expiration')
})
