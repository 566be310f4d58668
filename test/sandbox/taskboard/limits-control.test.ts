// The task-board emulator: rate limits, faults, the clock, the control API and robustness.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  api,
  control,
  controlRaw,
  createWebhook,
  deliveries,
  demoCards,
  newCard,
  receiver,
  sandboxForThisFile,
  sb,
  waitFor,
} from './harness.ts'

sandboxForThisFile()

test('rate limits per token and per key, with headers on every answer and a JSON 429', async () => {
  const ok = await api('GET', '/1/members/me')
  assert.equal(ok.headers.get('x-rate-limit-api-token-interval-ms'), '10000')
  assert.equal(ok.headers.get('x-rate-limit-api-token-max'), '100')
  assert.equal(ok.headers.get('x-rate-limit-api-token-remaining'), '99')
  assert.equal(ok.headers.get('x-rate-limit-api-key-max'), '300')
  assert.equal(ok.headers.get('x-rate-limit-api-key-remaining'), '299')
  assert.equal(ok.headers.get('x-rate-limit-api-key-interval-ms'), '10000')
  assert.ok((await api('GET', '/1/members/me', { key: null })).headers.get('x-rate-limit-api-token-max'))

  await control('POST', '/rate-limits', { tokenLimit: 3, keyLimit: 5, windowMs: 1000 })
  // The window's time stands still until advanced below, however slow the machine.
  await control('POST', '/clock', { freeze: true })
  const remaining = []
  for (let i = 0; i < 3; i++)
    remaining.push((await api('GET', '/1/members/me')).headers.get('x-rate-limit-api-token-remaining'))
  assert.deepEqual(remaining, ['2', '1', '0'])
  const over = await api('GET', '/1/members/me')
  assert.equal(over.status, 429)
  assert.deepEqual(over.json, { error: 'API_TOKEN_LIMIT_EXCEEDED', message: 'Rate limit exceeded' })
  assert.equal(over.headers.get('retry-after'), null)
  assert.equal(over.headers.get('x-rate-limit-api-token-remaining'), '0')
  assert.equal(over.headers.get('x-rate-limit-api-token-interval-ms'), '1000')

  const mate = (await control('GET', '/state')).tokens[1].token
  assert.equal((await api('GET', '/1/members/me', { token: mate })).status, 200)
  assert.equal((await api('GET', '/1/members/me', { token: mate })).status, 200)
  const keyOver = await api('GET', '/1/members/me', { token: mate })
  assert.equal(keyOver.status, 429)
  assert.equal(keyOver.json.error, 'API_KEY_LIMIT_EXCEEDED')
  assert.equal(keyOver.headers.get('x-rate-limit-api-key-remaining'), '0')

  await control('POST', '/clock', { advanceMs: 1000 })
  assert.equal((await api('GET', '/1/members/me')).status, 200)
})

// ---- faults, clock, robustness ---------------------------------------------------------------

test('faults: latency, injected errors, timeouts and dropped deliveries', async () => {
  await control('POST', '/faults', { latencyMs: 150, count: 1, pathPrefix: '/1/' })
  const t0 = performance.now()
  assert.equal((await api('GET', '/1/members/me')).status, 200)
  assert.ok(performance.now() - t0 >= 140)

  await control('POST', '/faults', { errorRate: 1, errorStatus: 503, count: 1 })
  const failed = await api('GET', '/1/members/me')
  assert.equal(failed.status, 503)
  assert.equal(failed.text, 'Injected fault')
  assert.equal((await api('GET', '/1/members/me')).status, 200)

  await control('POST', '/faults', { timeout: true, count: 1 })
  await assert.rejects(
    fetch(`${sb.url}/1/members/me?key=${sb.demo.key}&token=${sb.demo.token}`, {
      signal: AbortSignal.timeout(200),
    }),
  )
  assert.equal((await api('GET', '/1/members/me')).status, 200)

  const rx = await receiver()
  try {
    const hook = await createWebhook(rx.url, sb.demo.boardId)
    await control('POST', '/faults', { dropWebhooks: true, count: 1 })
    await newCard('Dropped')
    await newCard('Delivered')
    const ds = await waitFor(async () => {
      const list = await deliveries(hook.id)
      return list.length === 2 && list.every((d) => d.outcome !== 'pending') ? list : undefined
    })
    assert.deepEqual(
      ds.map((d) => d.outcome),
      ['dropped', 'delivered'],
    )
    assert.equal(rx.posts().length, 1)
    assert.equal(JSON.parse(rx.posts()[0]!.body).action.data.card.name, 'Delivered')
  } finally {
    await rx.close()
  }
})

test('clock: frozen time stamps new data; advancing moves it', async () => {
  const at = Date.parse('2030-06-01T12:00:00.000Z')
  await control('POST', '/clock', { freeze: true, atMs: at })
  const card = await newCard('Frozen')
  assert.equal(card.dateLastActivity, '2030-06-01T12:00:00.000Z')
  assert.equal(parseInt(card.id.slice(0, 8), 16), at / 1000)
  await control('POST', '/clock', { advanceMs: 60_000 })
  const c = await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: 'later' } })
  assert.equal(c.json.date, '2030-06-01T12:01:00.000Z')
  assert.equal((await control('GET', '/clock')).frozen, true)
})

test('control API: members, apps, tokens, seed, act, state', async () => {
  const m = await control('POST', '/members', {
    username: 'alice',
    fullName: 'Alice Example',
    password: 'pw',
  })
  assert.match(m.id, /^[0-9a-f]{24}$/)
  assert.equal(m.password, 'pw')
  assert.equal((await controlRaw('POST', '/members', { username: 'alice' })).status, 409)
  const app = await control('POST', '/apps', { memberId: m.id, name: 'Alice app' })
  assert.match(app.key, /^[0-9a-f]{32}$/)
  assert.match(app.secret, /^[0-9a-f]{64}$/)
  const t = await control('POST', '/tokens', {
    memberId: m.id,
    key: app.key,
    scope: 'read,write',
    expiration: '1day',
  })
  assert.match(t.token, /^[0-9a-f]{64}$/)
  assert.equal(
    (await api('GET', '/1/members/me', { key: app.key, token: t.token })).json.fullName,
    'Alice Example',
  )

  const seeded = await control('POST', '/seed', {
    as: 'alice',
    boards: [
      {
        name: 'Sprint',
        members: ['demo'],
        labels: [{ name: 'P1', color: 'red' }],
        lists: [
          {
            name: 'Backlog',
            cards: [
              { name: 'A', labels: ['P1'], members: ['demo'], due: '2030-01-01T00:00:00Z' },
              { name: 'B' },
            ],
          },
          { name: 'Done', cards: [{ name: 'C', closed: true }] },
        ],
      },
    ],
  })
  const board = seeded.boards[0]
  assert.equal(board.lists.length, 2)
  const cards = (await api('GET', `/1/boards/${board.id}/cards`, { query: { filter: 'all' } })).json
  assert.deepEqual(cards.map((c: any) => c.name).sort(), ['A', 'B', 'C'])
  const a = cards.find((c: any) => c.name === 'A')
  assert.equal(a.labels[0].name, 'P1')
  assert.deepEqual(a.idMembers, [sb.demo.memberId])
  assert.equal(cards.find((c: any) => c.name === 'C').closed, true)
  // alice added demo to card A, so demo was notified.
  const notes = (await api('GET', '/1/members/me/notifications')).json
  assert.ok(notes.some((n: any) => n.type === 'addedToCard' && n.data.card.id === a.id))

  const moved = await control('POST', '/act', {
    as: 'alice',
    type: 'moveCard',
    id: a.id,
    idList: board.lists[1].id,
  })
  assert.equal(moved.result.idList, board.lists[1].id)
  assert.equal(moved.actions[0].data.listAfter.name, 'Done')
  const bad = await controlRaw('POST', '/act', { as: 'alice', type: 'fly' })
  assert.equal(bad.status, 400)
  const nobody = await controlRaw('POST', '/act', { as: 'ghost', type: 'comment' })
  assert.equal(nobody.status, 400)

  const limits = await control('POST', '/rate-limits', { tokenLimit: 7 })
  assert.equal(limits.tokenLimit, 7)
  const state = await control('GET', '/state')
  assert.ok(state.members.some((x: any) => x.username === 'alice'))
  assert.ok(state.boards.some((x: any) => x.name === 'Sprint'))
  assert.equal(state.rateLimits.tokenLimit, 7)
  assert.ok(state.actions > 0)
})

test('robustness: malformed JSON, unknown routes, wrong methods and oversized bodies', async () => {
  const malformed = await fetch(`${sb.url}/1/cards?key=${sb.demo.key}&token=${sb.demo.token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"idList": ',
  })
  assert.equal(malformed.status, 400)
  assert.match(malformed.headers.get('content-type')!, /text\/plain/)
  assert.equal((await api('GET', '/1/nothing/here')).status, 404)
  // A trailing slash answers as the path without one, as on the real service.
  assert.equal((await api('GET', `/1/boards/${sb.demo.boardId}/`)).json.id, sb.demo.boardId)
  assert.equal((await api('POST', '/1/boards/', { json: { name: 'Slashed' } })).json.name, 'Slashed')
  assert.equal((await api('PATCH', `/1/cards/${(await demoCards())[0].id}`, { json: {} })).status, 404)
  const huge = await fetch(`${sb.url}/1/cards?key=${sb.demo.key}&token=${sb.demo.token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ idList: sb.demo.listIds[0], name: 'x'.repeat(2 * 1024 * 1024) }),
  })
  assert.equal(huge.status, 413)
  const textBody = await fetch(
    `${sb.url}/1/cards?key=${sb.demo.key}&token=${sb.demo.token}&idList=${sb.demo.listIds[0]}`,
    {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    },
  )
  assert.equal(textBody.status, 200)
  const arrayBody = await api('POST', '/1/cards', { json: [1, 2, 3] })
  assert.equal(arrayBody.text, 'invalid value for idList')
  assert.equal((await api('GET', '/1/members/me')).status, 200, 'still alive')
})
