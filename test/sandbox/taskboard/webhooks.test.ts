// The task-board emulator: webhooks (HEAD check, models, signed deliveries in order, retries, removal with their token).
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { test } from 'node:test'
import { startTaskboardSandbox } from '../../../sandbox/taskboard/index.ts'
import {
  api,
  cardNamed,
  control,
  controlRaw,
  createWebhook,
  deliveries,
  newCard,
  receiver,
  sandboxForThisFile,
  sb,
  waitFor,
} from './harness.ts'

sandboxForThisFile()

test('webhooks: HEAD check, duplicate refused, list, get, update, delete', async () => {
  const down = await receiver(() => 200, 404)
  try {
    const r = await api('POST', '/1/webhooks', { json: { callbackURL: down.url, idModel: sb.demo.boardId } })
    assert.equal(r.status, 400)
    assert.equal(r.text, 'URL (callbackURL) did not return 200 status code')
    assert.equal(down.got[0]!.method, 'HEAD')
  } finally {
    await down.close()
  }
  const unreachable = await api('POST', '/1/webhooks', {
    json: { callbackURL: 'http://127.0.0.1:1/x', idModel: sb.demo.boardId },
  })
  assert.equal(unreachable.status, 400)

  const rx = await receiver()
  try {
    const hook = await createWebhook(rx.url, sb.demo.boardId)
    assert.deepEqual(Object.keys(hook).sort(), [
      'active',
      'callbackURL',
      'consecutiveFailures',
      'description',
      'firstConsecutiveFailDate',
      'id',
      'idModel',
    ])
    assert.equal(hook.active, true)
    assert.equal(hook.consecutiveFailures, 0)
    assert.equal(hook.firstConsecutiveFailDate, null)
    const dup = await api('POST', `/1/tokens/${sb.demo.token}/webhooks`, {
      token: null,
      json: { callbackURL: rx.url, idModel: sb.demo.boardId },
    })
    assert.equal(dup.status, 400)
    assert.equal(dup.text, 'A webhook with that callback, model, and token already exists')
    assert.equal(
      (await api('POST', '/1/webhooks', { json: { callbackURL: rx.url, idModel: 'f'.repeat(24) } })).text,
      'invalid value for idModel',
    )
    assert.equal(
      (await api('POST', '/1/webhooks', { json: { callbackURL: 'ftp://x', idModel: sb.demo.boardId } })).text,
      'invalid value for callbackURL',
    )

    const viaToken = await api('POST', `/1/tokens/${sb.demo.token}/webhooks`, {
      json: { callbackURL: `${rx.url}?list`, idModel: sb.demo.listIds[0], description: 'list hook' },
    })
    assert.equal(viaToken.status, 200, viaToken.text)
    const listed = (await api('GET', `/1/tokens/${sb.demo.token}/webhooks`)).json
    assert.deepEqual(listed.map((h: any) => h.id).sort(), [hook.id, viaToken.json.id].sort())

    assert.equal((await api('GET', `/1/webhooks/${hook.id}`)).json.callbackURL, rx.url)
    const updated = await api('PUT', `/1/webhooks/${hook.id}`, {
      json: { description: 'renamed', active: false },
    })
    assert.equal(updated.json.description, 'renamed')
    assert.equal(updated.json.active, false)
    const mate = (await control('GET', '/state')).tokens[1].token
    assert.equal((await api('GET', `/1/webhooks/${hook.id}`, { token: mate })).status, 401)
    assert.deepEqual((await api('DELETE', `/1/webhooks/${hook.id}`)).json, { _value: null })
    assert.equal((await api('GET', `/1/webhooks/${hook.id}`)).status, 404)
  } finally {
    await rx.close()
  }
})

test('webhook deliveries are signed, carry action and model, and go out in action order', async () => {
  const rx = await receiver(async () => {
    // A slow receiver: order must hold even when each delivery takes a while.
    await new Promise((r) => setTimeout(r, 15))
    return 200
  })
  try {
    const hook = await createWebhook(rx.url, sb.demo.boardId)
    const card = await newCard('Hooked')
    for (let i = 1; i <= 4; i++)
      await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: `c${i}` } })
    await api('PUT', `/1/cards/${card.id}`, { json: { idList: sb.demo.listIds[1] } })
    const posts = await waitFor(() => (rx.posts().length >= 6 ? rx.posts() : undefined))
    const bodies = posts.map((p) => JSON.parse(p.body))
    assert.deepEqual(
      bodies.map((b) => b.action.type),
      ['createCard', 'commentCard', 'commentCard', 'commentCard', 'commentCard', 'updateCard'],
    )
    assert.deepEqual(
      bodies.slice(1, 5).map((b) => b.action.data.text),
      ['c1', 'c2', 'c3', 'c4'],
    )
    for (const p of posts) {
      const expected = createHmac('sha1', sb.demo.secret)
        .update(p.body + rx.url)
        .digest('base64')
      assert.equal(p.headers['x-taskboard-webhook'], expected)
      assert.match(String(p.headers['content-type']), /application\/json/)
    }
    const move = bodies[5]
    // The webhook itself rides along, as on the real service.
    assert.deepEqual(move.webhook, {
      id: hook.id,
      description: 'test',
      idModel: sb.demo.boardId,
      callbackURL: rx.url,
      active: true,
      consecutiveFailures: 0,
      firstConsecutiveFailDate: null,
    })
    assert.equal(move.model.id, sb.demo.boardId)
    assert.equal(move.model.name, 'Demo Board')
    assert.equal(move.action.data.listAfter.id, sb.demo.listIds[1])
    assert.equal(move.action.memberCreator.username, 'demo')
    assert.equal(move.action.display.translationKey, 'action_move_card_from_list_to_list')
    const recorded = await waitFor(async () => {
      const list = await deliveries(hook.id)
      return list.every((d) => d.outcome !== 'pending') ? list : undefined
    })
    assert.equal(recorded.length, 6)
    assert.ok(recorded.every((d) => d.outcome === 'delivered'))
  } finally {
    await rx.close()
  }
})

test('webhook models: card, list and member webhooks hear only their own actions', async () => {
  const rxCard = await receiver()
  const rxList = await receiver()
  const rxMember = await receiver()
  try {
    const card = await newCard('Watched')
    const other = await newCard('Unwatched')
    await createWebhook(rxCard.url, card.id)
    await createWebhook(rxList.url, sb.demo.listIds[2])
    await createWebhook(rxMember.url, sb.demo.memberId)
    await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: 'on watched' } })
    await api('POST', `/1/cards/${other.id}/actions/comments`, { json: { text: 'on unwatched' } })
    await api('PUT', `/1/cards/${other.id}`, { json: { idList: sb.demo.listIds[2] } })
    const board = await api('POST', '/1/boards', { json: { name: 'Fresh' } })

    const cardPosts = await waitFor(() => (rxCard.posts().length >= 1 ? rxCard.posts() : undefined))
    const listPosts = await waitFor(() => (rxList.posts().length >= 1 ? rxList.posts() : undefined))
    const memberPosts = await waitFor(() => (rxMember.posts().length >= 4 ? rxMember.posts() : undefined))
    await new Promise((r) => setTimeout(r, 50))
    assert.deepEqual(
      rxCard.posts().map((p) => JSON.parse(p.body).action.data.text),
      ['on watched'],
    )
    assert.equal(JSON.parse(cardPosts[0]!.body).model.id, card.id)
    assert.deepEqual(
      rxList.posts().map((p) => JSON.parse(p.body).action.type),
      ['updateCard'],
    )
    assert.equal(JSON.parse(listPosts[0]!.body).model.id, sb.demo.listIds[2])
    const memberTypes = rxMember.posts().map((p) => JSON.parse(p.body).action.type)
    assert.deepEqual(memberTypes, ['commentCard', 'commentCard', 'updateCard', 'createBoard'])
    const createBoard = JSON.parse(memberPosts[3]!.body)
    assert.equal(createBoard.action.data.board.id, board.json.id)
    assert.equal(createBoard.model.username, 'demo')
  } finally {
    await Promise.all([rxCard.close(), rxList.close(), rxMember.close()])
  }
})

test('a move to another board: moveCardFromBoard to the board it left, moveCardToBoard to the one it reached', async () => {
  const rxA = await receiver()
  const rxB = await receiver()
  const rxCard = await receiver()
  try {
    const boardB = (await api('POST', '/1/boards', { json: { name: 'Elsewhere' } })).json
    const listB = (await api('GET', `/1/boards/${boardB.id}/lists`)).json[0]
    const card = await newCard('Traveller')
    await createWebhook(rxA.url, sb.demo.boardId)
    await createWebhook(rxB.url, boardB.id)
    await createWebhook(rxCard.url, card.id)
    const moved = await api('PUT', `/1/cards/${card.id}`, { json: { idList: listB.id } })
    assert.equal(moved.json.idBoard, boardB.id)
    // A comment on each board after the move: each webhook delivers in action order, so once the
    // comment has arrived everything the move sent to that webhook has too.
    const stay = await newCard('Stays')
    await api('POST', `/1/cards/${stay.id}/actions/comments`, { json: { text: 'fence' } })
    await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: 'fence' } })
    const types = (rx: Awaited<ReturnType<typeof receiver>>) =>
      rx.posts().map((p) => JSON.parse(p.body).action.type)
    const fenced = (rx: Awaited<ReturnType<typeof receiver>>) => types(rx).includes('commentCard')
    await waitFor(() => fenced(rxA) && fenced(rxB) && fenced(rxCard))
    assert.deepEqual(types(rxA), ['moveCardFromBoard', 'createCard', 'commentCard'])
    assert.deepEqual(types(rxB), ['moveCardToBoard', 'commentCard'])
    assert.deepEqual(types(rxCard), ['moveCardFromBoard', 'moveCardToBoard', 'commentCard'])
    const from = JSON.parse(rxA.posts()[0]!.body).action
    assert.equal(from.data.board.id, sb.demo.boardId)
    assert.equal(from.data.boardTarget.id, boardB.id)
    assert.equal(from.data.list.id, sb.demo.listIds[0])
    assert.equal(from.data.card.id, card.id)
    assert.equal(from.display.translationKey, 'action_move_card_from_board')
    const to = JSON.parse(rxB.posts()[0]!.body).action
    assert.equal(to.data.board.id, boardB.id)
    assert.equal(to.data.boardSource.id, sb.demo.boardId)
    assert.equal(to.data.list.id, listB.id)
    assert.equal(to.display.translationKey, 'action_move_card_to_board')
  } finally {
    await Promise.all([rxA.close(), rxB.close(), rxCard.close()])
  }
})

test('changes made through the control API as another member reach webhooks the same way', async () => {
  const rx = await receiver()
  try {
    await createWebhook(rx.url, sb.demo.boardId)
    const docs = await cardNamed('Write the docs')
    const acted = await control('POST', '/act', { as: 'teammate', type: 'archiveCard', id: docs.id })
    assert.equal(acted.result.closed, true)
    assert.equal(acted.actions[0].type, 'updateCard')
    const label = await control('POST', '/act', {
      as: 'teammate',
      type: 'createLabel',
      idBoard: sb.demo.boardId,
      name: 'Blocked',
      color: 'black',
    })
    assert.equal(label.result.name, 'Blocked')
    const posts = await waitFor(() => (rx.posts().length >= 2 ? rx.posts() : undefined))
    const [archive, create] = posts.map((p) => JSON.parse(p.body).action)
    assert.equal(archive.memberCreator.username, 'teammate')
    assert.equal(archive.data.card.closed, true)
    assert.deepEqual(archive.data.old, { closed: false })
    assert.equal(create.type, 'createLabel')
    const refused = await controlRaw('POST', '/act', {
      as: 'teammate',
      type: 'moveCard',
      id: docs.id,
      idList: 'zz',
    })
    assert.equal(refused.status, 400)
    assert.equal(refused.json.error, 'invalid value for idList')
  } finally {
    await rx.close()
  }
})

test('failed deliveries are retried 3 times; success resets failures, 410 Gone deletes the webhook', async () => {
  // Fails twice, then succeeds.
  const flaky = await receiver((_r, i) => (i < 2 ? 500 : 200))
  const broken = await receiver(() => 503)
  const gone = await receiver(() => 410)
  try {
    const h1 = await createWebhook(flaky.url, sb.demo.boardId)
    const h2 = await createWebhook(broken.url, sb.demo.boardId)
    const h3 = await createWebhook(gone.url, sb.demo.boardId)
    await newCard('Retry me')
    const d1 = await waitFor(async () => (await deliveries(h1.id)).find((d) => d.outcome !== 'pending'))
    assert.equal(d1.outcome, 'delivered')
    assert.deepEqual(
      d1.attempts.map((a: any) => a.status),
      [500, 500, 200],
    )
    const d2 = await waitFor(async () => (await deliveries(h2.id)).find((d) => d.outcome !== 'pending'))
    assert.equal(d2.outcome, 'failed')
    assert.equal(d2.attempts.length, 4)
    const failing = (await api('GET', `/1/webhooks/${h2.id}`)).json
    assert.equal(failing.consecutiveFailures, 1)
    assert.ok(failing.firstConsecutiveFailDate)
    assert.equal((await api('GET', `/1/webhooks/${h1.id}`)).json.consecutiveFailures, 0)
    const d3 = await waitFor(async () => (await deliveries(h3.id)).find((d) => d.outcome !== 'pending'))
    assert.equal(d3.outcome, 'gone')
    assert.equal(d3.attempts.length, 1)
    assert.equal((await api('GET', `/1/webhooks/${h3.id}`)).status, 404)
  } finally {
    await Promise.all([flaky.close(), broken.close(), gone.close()])
  }
})

test('closing the sandbox ends pending retries at once', async () => {
  const other = await startTaskboardSandbox()
  const rx = await receiver(() => 500)
  try {
    const hook = await api('POST', '/1/webhooks', {
      base: other.url,
      key: other.demo.key,
      token: other.demo.token,
      json: { callbackURL: rx.url, idModel: other.demo.boardId },
    })
    await api('POST', '/1/cards', {
      base: other.url,
      key: other.demo.key,
      token: other.demo.token,
      json: { idList: other.demo.listIds[0], name: 'never delivered' },
    })
    await waitFor(() => rx.posts().length >= 1)
    // The first retry is 30 s away (the delay scale is 1 on this instance).
    const record = other.emulator.webhooks.deliveries.find((d) => d.hookId === hook.json.id)!
    const t0 = Date.now()
    await other.close()
    // Well before the retry was due: closing ended it rather than waiting for it.
    await waitFor(() => record.outcome !== 'pending', 20_000)
    assert.equal(record.outcome, 'failed')
    assert.equal(record.attempts.length, 1)
    assert.ok(Date.now() - t0 < 20_000)
  } finally {
    await rx.close()
  }
})

test('a callback that does not answer in time counts as a failed attempt', async () => {
  // Long enough for the answering retry to make it on a loaded machine; the first never answers.
  await control('POST', '/webhooks/timeout', { ms: 1000 })
  const slow = await receiver((_r, i) => (i === 0 ? 'hang' : 200))
  try {
    const hook = await createWebhook(slow.url, sb.demo.boardId)
    await newCard('Slow')
    const d = await waitFor(async () => (await deliveries(hook.id)).find((x) => x.outcome !== 'pending'))
    assert.equal(d.outcome, 'delivered')
    assert.equal(d.attempts[0].error, 'timeout')
    assert.equal(d.attempts[1].status, 200)
  } finally {
    await slow.close()
  }
})

test('revoking or expiring a token deletes its webhooks', async () => {
  const rx = await receiver()
  try {
    const t1 = (await control('POST', '/tokens', { member: 'demo', expiration: 'never' })).token
    const t2 = (await control('POST', '/tokens', { member: 'demo', expiration: '1hour' })).token
    const h1 = await createWebhook(rx.url, sb.demo.boardId, t1)
    const h2 = await createWebhook(`${rx.url}?two`, sb.demo.boardId, t2)
    assert.equal((await api('GET', `/1/tokens/${t1}/webhooks`, { token: t1 })).json.length, 1)

    const revoked = await api('DELETE', `/1/tokens/${t1}`, { token: t1 })
    assert.equal(revoked.status, 200)
    assert.equal((await api('GET', '/1/members/me', { token: t1 })).text, 'invalid token')
    let state = await control('GET', '/state')
    assert.ok(!state.webhooks.some((w: any) => w.id === h1.id))
    assert.ok(state.webhooks.some((w: any) => w.id === h2.id))

    await control('POST', '/clock', { advanceMs: 3600_000 + 1 })
    await newCard('After expiry')
    state = await control('GET', '/state')
    assert.ok(!state.webhooks.some((w: any) => w.id === h2.id))
    await new Promise((r) => setTimeout(r, 50))
    assert.equal(rx.posts().length, 0)
  } finally {
    await rx.close()
  }
})
