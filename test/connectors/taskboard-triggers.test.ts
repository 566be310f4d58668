// Every task-board trigger against the sandbox: each fires for its change and not for its
// neighbours'. Changes are made as sandbox members (POST /_sandbox/act), which answers with the
// upstream action ids; a change counts as settled once the sandbox's webhook deliveries of those
// actions have all been acknowledged by Patchbay, which stores the deliveries before it answers.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let connectionId: string
let agentId: string
let boardB: { id: string; list: string; card: string }
let boardC: { id: string; list: string; card: string }
let card: string
let todo: string
let doing: string
let done: string
/** Trigger id → a name for assertions. */
const names = new Map<string, string>()

const tb = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: {
      authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

type Action = { id: string; data: { board?: { id: string } } }

/** A change made as a sandbox member; answers the upstream actions it recorded. */
async function act(body: Record<string, unknown>): Promise<{ result: any; actions: Action[] }> {
  const res = await control(sandbox, 'POST', '/act', { as: 'demo', ...body })
  return { result: res.result, actions: res.actions }
}

/** The names of the triggers that fired for these upstream actions, once every webhook delivered them. */
async function fired(actions: Action[]): Promise<string[]> {
  const hooks: Array<{ id: string; idModel: string }> = await tb(
    'GET',
    `/1/tokens/${sandbox.demo.token}/webhooks`,
  )
  // Each action reaches the webhook on its board and the account's (the demo member is on every
  // board here); once each has been acknowledged, Patchbay has stored its deliveries.
  const expected = actions.map((a) => ({
    id: a.id,
    hooks: hooks
      .filter((h) => h.idModel === a.data.board?.id || h.idModel === sandbox.demo.memberId)
      .map((h) => h.id),
  }))
  await eventually(
    async () => (await control(sandbox, 'GET', '/webhooks/deliveries?outcome=delivered')).deliveries,
    (ds: any[]) =>
      expected.every((x) =>
        x.hooks.every((hookId) =>
          ds.some((d) => d.hookId === hookId && JSON.parse(d.body).action.id === x.id),
        ),
      ),
  )
  const actionIds = actions.map((a) => a.id)
  const { events } = (await t.api('GET', '/v1/events?limit=500')).body
  const out: string[] = []
  for (const e of events.filter((x: any) => actionIds.includes(x.upstreamId))) {
    const detail = (await t.api('GET', `/v1/events/${e.id}`)).body
    for (const d of detail.deliveries)
      if (d.agentId === agentId) out.push(names.get(d.triggerId) ?? d.triggerId)
  }
  return out.sort()
}

async function addTrigger(name: string, trigger: string, config: Record<string, unknown>) {
  const res = await t.api('POST', `/v1/agents/${agentId}/triggers`, { trigger, connectionId, config })
  assert.equal(res.status, 201, `${name}: ${JSON.stringify(res.body)}`)
  names.set(res.body.id, name)
  return res.body
}

async function seedBoard(name: string) {
  const board = await tb('POST', '/1/boards', { name, defaultLists: false })
  const list = await tb('POST', '/1/lists', { name: 'Inbox', idBoard: board.id })
  const c = await tb('POST', '/1/cards', { idList: list.id, name: `${name} card` })
  return { id: board.id as string, list: list.id as string, card: c.id as string, shortLink: board.shortLink }
}

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({ taskboard: sandbox, env: { PATCHBAY_MIN_POLL_INTERVAL_MS: '100' } })
  connectionId = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
    })
  ).body.id
  ;[todo, doing, done] = sandbox.demo.listIds
  boardB = await seedBoard('Board B')
  boardC = await seedBoard('Board C')
  const agent = await t.api('POST', '/v1/agents', {
    name: 'watcher',
    scope: { boards: [sandbox.demo.boardId, boardB.id, boardC.id] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  agentId = agent.body.id
  const demo = { idBoard: sandbox.demo.boardId }
  for (const key of [
    'new_card',
    'card_updated',
    'card_moved',
    'card_archived',
    'new_member_on_card',
    'new_label_created',
    'new_label_added_to_card',
    'new_checklist',
    'new_attachment',
  ])
    await addTrigger(key, `taskboard.${key}`, demo)
  // A board page address is read into the board's identifier.
  const board = await tb('GET', `/1/boards/${sandbox.demo.boardId}`)
  const byPage = await addTrigger('new_comment', 'taskboard.new_comment', { idBoard: board.url })
  assert.equal(byPage.config.idBoard, sandbox.demo.boardId)
  await addTrigger('activity:comments+createLabel', 'taskboard.new_board_activity', {
    ...demo,
    types: ['comments', 'createLabel'],
  })
  await addTrigger('custom:A+B comments,moves', 'taskboard.custom_webhook_events', {
    boards: [sandbox.demo.boardId, boardB.id],
    types: ['comments', 'card_moves'],
  })
  await addTrigger('custom:A moves via Done', 'taskboard.custom_webhook_events', {
    boards: [sandbox.demo.boardId],
    types: ['card_moves'],
    lists: [done],
  })
  // `create` is something made (a card, a label, a list …), not something added to a card.
  await addTrigger('custom:A create', 'taskboard.custom_webhook_events', {
    boards: [sandbox.demo.boardId],
    types: ['create'],
  })
  await addTrigger('new_board', 'taskboard.new_board', {})
  card = (await act({ type: 'createCard', idList: todo, name: 'Subject' })).result.id
})
after(async () => {
  await t.close()
  await sandbox.close()
})

test("the catalog lists the spec's task-board triggers, each described with a sample payload", async () => {
  const { body } = await t.api('GET', '/v1/catalog')
  const tb = body.connectors.find((c: any) => c.id === 'taskboard')
  assert.deepEqual(
    tb.triggers.map((x: any) => x.name),
    [
      'New Card',
      'Card Updated',
      'Card Moved',
      'Card Archived',
      'Card Due Date Reminder',
      'New Comment Added to Card',
      'New Member on Card',
      'New Label Created',
      'New Label Added To Card',
      'New Checklist',
      'New Board',
      'New Board Activity',
      'New Notification',
      'New Attachment',
      'Custom Webhook Events',
    ],
  )
  for (const x of tb.triggers) {
    assert.ok(x.description.length > 30, x.name)
    assert.ok(x.sample?.data, `${x.name} has a sample payload`)
    assert.equal(typeof x.instant, 'boolean')
  }
  const instant = Object.fromEntries(tb.triggers.map((x: any) => [x.name, x.instant]))
  assert.equal(instant['New Notification'], false)
  assert.equal(instant['Card Due Date Reminder'], false)
  assert.equal(instant['New Board'], true)
})

test("triggers on one board share its webhook; New Board and a multi-board filter share the account's", async () => {
  const hooks = await tb('GET', `/1/tokens/${sandbox.demo.token}/webhooks`)
  assert.deepEqual(
    hooks.map((h: any) => h.idModel).sort(),
    [sandbox.demo.boardId, sandbox.demo.memberId].sort(),
  )
})

test('New Card fires for a new card only', async () => {
  const { actions } = await act({ type: 'createCard', idList: todo, name: 'fresh' })
  assert.deepEqual(await fired(actions), ['custom:A create', 'new_card'])
})

test('a comment fires New Comment, New Board Activity (comments selected) and the comment filter', async () => {
  const { actions } = await act({ type: 'comment', id: card, text: 'Looks good' })
  assert.deepEqual(await fired(actions), [
    'activity:comments+createLabel',
    'custom:A+B comments,moves',
    'new_comment',
  ])
  const e = (await t.api('GET', '/v1/events?type=commentCard&limit=5')).body.events[0]
  assert.equal(e.data.text, 'Looks good')
  assert.equal(e.refs.card, card)
})

test('a member added to a card fires New Member on Card and Card Updated', async () => {
  const teammate = (await tb('GET', '/1/members/teammate')).id
  const { actions } = await act({ type: 'addMemberToCard', id: card, value: teammate })
  assert.deepEqual(await fired(actions), ['card_updated', 'new_member_on_card'])
})

test('creating a label fires New Label Created (and the activity filter), not New Label Added To Card', async () => {
  const { result, actions } = await act({
    type: 'createLabel',
    idBoard: sandbox.demo.boardId,
    name: 'Blocked',
    color: 'purple',
  })
  assert.deepEqual(await fired(actions), [
    'activity:comments+createLabel',
    'custom:A create',
    'new_label_created',
  ])
  // Applying it is the neighbour: New Label Added To Card and Card Updated, not New Label Created.
  const applied = await act({ type: 'addLabelToCard', id: card, value: result.id })
  assert.deepEqual(await fired(applied.actions), ['card_updated', 'new_label_added_to_card'])
})

test('a checklist added to a card fires New Checklist and Card Updated', async () => {
  const { actions } = await act({ type: 'addChecklist', id: card, name: 'Steps' })
  assert.deepEqual(await fired(actions), ['card_updated', 'new_checklist'])
})

test('a link attached to a card fires New Attachment and Card Updated', async () => {
  const { actions } = await act({ type: 'addAttachment', id: card, url: 'https://example.com/spec.pdf' })
  assert.deepEqual(await fired(actions), ['card_updated', 'new_attachment'])
})

test('a rename fires Card Updated alone', async () => {
  const { actions } = await act({ type: 'updateCard', id: card, name: 'Subject (renamed)' })
  assert.deepEqual(await fired(actions), ['card_updated'])
})

test('moves fire Card Moved, Card Updated and the move filter; the Done-list filter only for moves through Done', async () => {
  const first = await act({ type: 'moveCard', id: card, idList: doing })
  assert.deepEqual(await fired(first.actions), ['card_moved', 'card_updated', 'custom:A+B comments,moves'])
  const second = await act({ type: 'moveCard', id: card, idList: done })
  assert.deepEqual(await fired(second.actions), [
    'card_moved',
    'card_updated',
    'custom:A moves via Done',
    'custom:A+B comments,moves',
  ])
})

test('archiving fires Card Archived and Card Updated', async () => {
  const { actions } = await act({ type: 'archiveCard', id: card })
  assert.deepEqual(await fired(actions), ['card_archived', 'card_updated'])
})

test('Custom Webhook Events hears the other boards it names, and not boards it does not', async () => {
  const onB = await act({ type: 'comment', id: boardB.card, text: 'on board B' })
  assert.deepEqual(await fired(onB.actions), ['custom:A+B comments,moves'])
  const onC = await act({ type: 'comment', id: boardC.card, text: 'on board C' })
  assert.deepEqual(await fired(onC.actions), [])
})

test('many Custom Webhook Events on one webhook, each on its lists or cards: each fires for the lists a move left or reached and for its own cards, beside the unfiltered triggers', async () => {
  const sieved = (await act({ type: 'createCard', idList: todo, name: 'Sieved' })).result.id as string
  const other = (await act({ type: 'createCard', idList: todo, name: 'Not sieved' })).result.id as string
  const boards = [sandbox.demo.boardId]
  const added = [
    await addTrigger('lists:Todo moves', 'taskboard.custom_webhook_events', {
      boards,
      types: ['card_moves'],
      lists: [todo],
    }),
    await addTrigger('lists:Doing moves', 'taskboard.custom_webhook_events', {
      boards,
      types: ['card_moves'],
      lists: [doing],
    }),
    await addTrigger('lists:Done', 'taskboard.custom_webhook_events', { boards, lists: [done] }),
    await addTrigger('cards:Sieved', 'taskboard.custom_webhook_events', { boards, cards: [sieved] }),
  ]
  const ours = (names: string[]) => names.filter((n) => n.startsWith('lists:') || n.startsWith('cards:'))
  try {
    const move = await act({ type: 'moveCard', id: sieved, idList: doing })
    assert.deepEqual(await fired(move.actions), [
      'card_moved',
      'card_updated',
      'cards:Sieved',
      'custom:A+B comments,moves',
      'lists:Doing moves',
      'lists:Todo moves',
    ])
    const onOther = await act({ type: 'comment', id: other, text: 'not on the sieved card' })
    assert.deepEqual(ours(await fired(onOther.actions)), [])
    const onSieved = await act({ type: 'comment', id: sieved, text: 'on the sieved card' })
    assert.deepEqual(ours(await fired(onSieved.actions)), ['cards:Sieved'])
    const toDone = await act({ type: 'moveCard', id: other, idList: done })
    assert.deepEqual(ours(await fired(toDone.actions)), ['lists:Done', 'lists:Todo moves'])
  } finally {
    for (const trigger of added) await t.api('DELETE', `/v1/triggers/${trigger.id}`)
  }
})

test('a move to another board fires Card Moved and Card Updated once on each board, as moveCardFromBoard and moveCardToBoard', async () => {
  await addTrigger('B:card_moved', 'taskboard.card_moved', { idBoard: boardB.id })
  await addTrigger('B:card_updated', 'taskboard.card_updated', { idBoard: boardB.id })
  await addTrigger('B:activity:update', 'taskboard.new_board_activity', {
    idBoard: boardB.id,
    types: ['update'],
  })
  const traveller = (await act({ type: 'createCard', idList: todo, name: 'Traveller' })).result.id
  const { actions } = await act({ type: 'moveCard', id: traveller, idList: boardB.list })
  // The board it left hears moveCardFromBoard, the board it reached moveCardToBoard; no updateCard.
  assert.deepEqual(
    actions.map((a: any) => [a.type, a.data.board.id]),
    [
      ['moveCardFromBoard', sandbox.demo.boardId],
      ['moveCardToBoard', boardB.id],
    ],
  )
  // Each board's triggers fire once; the filter on both boards hears each board's half.
  assert.deepEqual(await fired(actions), [
    'B:activity:update',
    'B:card_moved',
    'B:card_updated',
    'card_moved',
    'card_updated',
    'custom:A+B comments,moves',
    'custom:A+B comments,moves',
  ])
  const arrived = (await t.api('GET', '/v1/events?type=moveCardToBoard&limit=5')).body.events[0]
  assert.equal(arrived.refs.board, boardB.id)
  assert.equal(arrived.refs.list, boardB.list)
  assert.equal(arrived.data.boardSource.id, sandbox.demo.boardId)
  const left = (await t.api('GET', '/v1/events?type=moveCardFromBoard&limit=5')).body.events[0]
  assert.equal(left.refs.board, sandbox.demo.boardId)
  assert.equal(left.refs.list, todo)
  assert.equal(left.data.boardTarget.id, boardB.id)
})

test('New Board fires when the account creates a board', async () => {
  const { result, actions } = await act({ type: 'createBoard', name: 'Launch plan' })
  assert.deepEqual(await fired(actions), ['new_board'])
  const e = (await t.api('GET', '/v1/events?type=createBoard&limit=5')).body.events[0]
  assert.equal(e.refs.board, result.id)
  assert.equal(e.data.board.name, 'Launch plan')
})

test('trigger configs are checked: unknown activity types, boards outside the scope, foreign page addresses', async () => {
  const badType = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_board_activity',
    connectionId,
    config: { idBoard: sandbox.demo.boardId, types: ['comments', 'telepathy'] },
  })
  assert.equal(badType.status, 400)
  assert.match(badType.body.error.message, /config\.types\.1/)
  const other = await tb('POST', '/1/boards', { name: 'Not in scope' })
  const outside = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.custom_webhook_events',
    connectionId,
    config: { boards: [sandbox.demo.boardId, other.id] },
  })
  assert.equal(outside.status, 403)
  assert.equal(outside.body.error.code, 'SCOPE_DENIED')
  assert.match(outside.body.error.message, new RegExp(other.id))
  const foreign = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: 'https://elsewhere.example/b/AbCd1234/x' },
  })
  assert.equal(foreign.status, 400)
  assert.equal(foreign.body.error.code, 'PAGE_ADDRESS_INVALID')
  assert.match(foreign.body.error.message, /config\.idBoard/)
  const noBoards = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.custom_webhook_events',
    connectionId,
    config: { boards: [] },
  })
  assert.equal(noBoards.status, 400)
  assert.match(noBoards.body.error.message, /config\.boards/)
})

test("New Notification polls the account's notifications: new ones fire once, filtered by type", async () => {
  const all = await addTrigger('notifications', 'taskboard.new_notification', {})
  const added = await addTrigger('notifications:addedToCard', 'taskboard.new_notification', {
    types: ['addedToCard'],
  })
  // The first poll (right after creation) marks where each trigger starts.
  for (const trig of [all, added])
    await eventually(
      async () => (await t.api('GET', `/v1/triggers/${trig.id}`)).body.poll.lastPollAt,
      (v) => Boolean(v),
    )
  const poll = async (id: string) => (await t.api('POST', `/v1/triggers/${id}/poll`)).body.events
  assert.equal(await poll(all.id), 0, 'older notifications are not news')

  // The teammate comments on a card the demo account is on: demo gets a commentCard notification.
  const welcome = (await tb('GET', `/1/lists/${todo}/cards`)).find(
    (c: any) => c.name === 'Welcome to Patchbay',
  )
  await control(sandbox, 'POST', '/act', {
    as: 'teammate',
    type: 'comment',
    id: welcome.id,
    text: 'ping @demo',
  })
  assert.equal(await poll(all.id), 1)
  assert.equal(await poll(all.id), 0, 'a second poll emits nothing twice')
  assert.equal(await poll(added.id), 0, 'a comment is not addedToCard')

  // The teammate adds demo to a card: addedToCard, for both triggers.
  const teammateCard = (
    await control(sandbox, 'POST', '/act', {
      as: 'teammate',
      type: 'createCard',
      idList: doing,
      name: 'Pair on this',
    })
  ).result
  await control(sandbox, 'POST', '/act', {
    as: 'teammate',
    type: 'addMemberToCard',
    id: teammateCard.id,
    value: sandbox.demo.memberId,
  })
  assert.equal(await poll(added.id), 1)
  assert.equal(await poll(all.id), 1)
  const ds = (await t.api('GET', `/v1/deliveries?triggerId=${added.id}`)).body.deliveries
  assert.equal(ds.length, 1)
  const event = (await t.api('GET', `/v1/events/${ds[0].eventId}`)).body
  assert.equal(event.type, 'addedToCard')
  assert.equal(event.refs.card, teammateCard.id)

  // Being added to a board outside the agent's scope is news to the account, not to the agent.
  const elsewhere = (
    await control(sandbox, 'POST', '/act', { as: 'teammate', type: 'createBoard', name: 'Elsewhere' })
  ).result
  await control(sandbox, 'POST', '/act', {
    as: 'teammate',
    type: 'addMemberToBoard',
    id: elsewhere.id,
    idMember: sandbox.demo.memberId,
  })
  const notes = await tb('GET', '/1/members/me/notifications?limit=1')
  assert.equal(notes[0].type, 'addedToBoard', 'the account was notified')
  assert.equal(await poll(all.id), 0)
})

test('a manual poll that fails upstream answers the upstream error with its code; the trigger shows the failure and the next attempt', async () => {
  const trig = await addTrigger('notifications:failing', 'taskboard.new_notification', {})
  await eventually(
    async () => (await t.api('GET', `/v1/triggers/${trig.id}`)).body.poll.lastPollAt,
    (v) => Boolean(v),
  )
  // The upstream answers 500 to every notifications read, retries included.
  await fetch(`${sandbox.url}/_sandbox/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pathPrefix: '/1/members/me/notifications', errorRate: 1, errorStatus: 500 }),
  })
  try {
    const polled = await t.api('POST', `/v1/triggers/${trig.id}/poll`)
    assert.equal(polled.status, 502, JSON.stringify(polled.body))
    assert.equal(polled.body.error.code, 'UPSTREAM_ERROR')
    assert.equal(polled.body.error.upstream?.status, 500)
    assert.match(polled.body.error.message, /next poll is due at/)
    const state = (await t.api('GET', `/v1/triggers/${trig.id}`)).body.poll
    assert.match(state.lastError, /^UPSTREAM_ERROR: /)
    assert.ok(Date.parse(state.nextPollAt) > Date.parse(state.lastPollAt), JSON.stringify(state))
  } finally {
    await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'DELETE' })
  }
  const again = await t.api('POST', `/v1/triggers/${trig.id}/poll`)
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.equal((await t.api('GET', `/v1/triggers/${trig.id}`)).body.poll.lastError, null)
})
