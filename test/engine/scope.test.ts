// An agent touches only what it is configured for. Against the sandbox task-board, over real
// HTTP: steps on boards in the agent's scope run; anything else is refused with SCOPE_DENIED
// before it reaches the upstream (counted at the sandbox), API Calls are attributed to the
// resources their path and body name, and workspace keys are not scoped.
import assert from 'node:assert/strict'
import { after, afterEach, before, test } from 'node:test'
import { z } from 'zod'
import { taskboard } from '../../src/connectors/taskboard/index.ts'
import { ScopeGuard } from '../../src/engine/access/scope-guard.ts'
import { Registry } from '../../src/engine/registry.ts'
import { defineTrigger } from '../../src/kit/define.ts'
import { eventually } from '../helpers/receiver.ts'
import { countRequests, type RequestCounter } from '../helpers/request-counter.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { connectDemoTaskboard, control, mintTaskboardToken } from '../helpers/taskboard.ts'

let t: TestService
let conn: string
let agentId: string
let agentKey: string
/** Board A is the demo board; B is another board of the demo member; C is the demo member's too, but outside the scope. */
const A = { board: '', shortLink: '', list: '', card: '', checklist: '', label: '' }
const B = { board: '', list: '', label: '' }
const C = { board: '', shortLink: '', list: '', card: '', checklist: '', label: '' }
let strangerCard: string
const counters: RequestCounter[] = []

/** ctx.http with the demo account's credentials, for a scope guard's placement lookups. */
const demoLookups = () =>
  t.service.engine.clients.create({
    connector: taskboard,
    credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
    paced: false,
    storedConnection: false,
  })

async function counter(prefix: string) {
  const c = await countRequests(t.taskboard, prefix)
  counters.push(c)
  return c
}

before(async () => {
  t = await startTestService()
  conn = await connectDemoTaskboard(t, t.taskboard)
  const seeded = await control(t.taskboard, 'POST', '/seed', {
    as: 'demo',
    boards: [
      { name: 'Other', labels: [{ name: 'B', color: 'blue' }], lists: [{ name: 'Inbox' }] },
      {
        name: 'Outside',
        labels: [{ name: 'C', color: 'red' }],
        lists: [{ name: 'Secret', cards: [{ name: 'Not for the agent' }] }],
      },
    ],
  })
  const [b, c] = seeded.boards
  Object.assign(B, { board: b.id, list: b.lists[0].id, label: b.labels[0].id })
  Object.assign(C, {
    board: c.id,
    shortLink: c.shortLink,
    list: c.lists[0].id,
    card: c.lists[0].cards[0].id,
    label: c.labels[0].id,
  })
  A.board = t.taskboard.demo.boardId
  A.list = t.taskboard.demo.listIds[0]
  const state = await control(t.taskboard, 'GET', '/state')
  A.shortLink = state.boards.find((x: any) => x.id === A.board).shortLink
  const cardA = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: conn,
    input: { idList: A.list, name: 'In scope' },
  })
  A.card = cardA.body.output.id
  A.checklist = (
    await control(t.taskboard, 'POST', '/act', { as: 'demo', type: 'addChecklist', id: A.card, name: 'A' })
  ).result.id
  C.checklist = (
    await control(t.taskboard, 'POST', '/act', { as: 'demo', type: 'addChecklist', id: C.card, name: 'C' })
  ).result.id
  const labels = await t.api('POST', '/v1/steps/taskboard.api_call/run', {
    connectionId: conn,
    input: { method: 'GET', endpoint: `/1/boards/${A.board}/labels` },
  })
  A.label = labels.body.output.body[0].id

  // A board of another member the demo account cannot see.
  await control(t.taskboard, 'POST', '/members', { username: 'stranger' })
  const hidden = await control(t.taskboard, 'POST', '/seed', {
    as: 'stranger',
    boards: [{ name: 'Hidden', permissionLevel: 'private', lists: [{ name: 'L', cards: [{ name: 'x' }] }] }],
  })
  strangerCard = hidden.boards[0].lists[0].cards[0].id

  const agent = await t.api('POST', '/v1/agents', {
    name: 'Board A and B',
    scope: { boards: [A.board, B.board] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  agentId = agent.body.id
  agentKey = (await t.api('POST', `/v1/agents/${agentId}/keys`, {})).body.key
})
afterEach(async () => {
  for (const c of counters.splice(0)) await c.stop()
})
after(() => t.close())

const runAs = (key: string, stepId: string, input: unknown, connectionId = conn) =>
  t.api('POST', `/v1/steps/${stepId}/run`, { connectionId, input }, key)
const asAgent = (stepId: string, input: unknown) => runAs(agentKey, stepId, input)
const apiCall = (method: string, endpoint: string, body?: unknown, key = agentKey) =>
  runAs(key, 'taskboard.api_call', { method, endpoint, ...(body ? { body } : {}) })
const cardsOn = async (board: string) =>
  (await control(t.taskboard, 'GET', '/state')).boards.find((b: any) => b.id === board).cards as number

function assertDenied(res: { status: number; body: any }, ...mentions: string[]) {
  assert.equal(res.status, 403, JSON.stringify(res.body))
  assert.equal(res.body.error.code, 'SCOPE_DENIED')
  for (const m of mentions)
    assert.ok(res.body.error.message.includes(m), `${res.body.error.message} names ${m}`)
}

test('steps on boards in the scope run: a card on board A is read, a card is made on board B', async () => {
  const got = await asAgent('taskboard.get_card', { idCard: A.card })
  assert.equal(got.status, 200, JSON.stringify(got.body))
  assert.equal(got.body.output.idBoard, A.board)
  const made = await asAgent('taskboard.create_card', { idList: B.list, name: 'On board B' })
  assert.equal(made.status, 200, JSON.stringify(made.body))
  assert.equal(made.body.output.idBoard, B.board)
})

test('a card made on a list outside the scope is refused, and nothing reaches the upstream but the lookup of the list', async () => {
  const before = await cardsOn(C.board)
  const cardRequests = await counter('/1/cards')
  const listLookups = await counter('/1/lists')
  const res = await asAgent('taskboard.create_card', { idList: C.list, name: 'Sneaky' })
  assertDenied(res, `list ${C.list}`, `board ${C.board}`, A.board, B.board)
  assert.deepEqual(res.body.error.details.place, { kind: 'board', id: C.board })
  assert.equal(await cardRequests.count(), 0, 'no card request was sent')
  assert.equal(await listLookups.count(), 1, 'one read-only lookup placed the list on its board')
  assert.equal(await cardsOn(C.board), before, 'board C has no new card')
})

test('reading a card outside the scope is refused after its one lookup; places are cached, so a repeated check sends nothing more', async () => {
  const onC = await counter(`/1/cards/${C.card}`)
  assertDenied(await asAgent('taskboard.get_card', { idCard: C.card }), `card ${C.card}`, `board ${C.board}`)
  assert.equal(await onC.count(), 1, 'the lookup only; Get Card itself was not sent')
  assertDenied(await asAgent('taskboard.get_card', { idCard: C.card }))
  assert.equal(await onC.count(), 1, 'the second refusal came from the cache')

  const fresh = await asAgent('taskboard.create_card', { idList: A.list, name: 'Cache me' })
  const id = fresh.body.output.id
  const onA = await counter(`/1/cards/${id}`)
  assert.equal((await asAgent('taskboard.get_card', { idCard: id })).status, 200)
  assert.equal(await onA.count(), 2, 'first time: the lookup and Get Card')
  assert.equal((await asAgent('taskboard.get_card', { idCard: id })).status, 200)
  assert.equal(await onA.count(), 3, 'second time: Get Card only')
})

test('a connection the agent may not use is refused with CONNECTION_NOT_ALLOWED before anything is sent', async () => {
  const other = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
      second: true,
    })
  ).body.id
  const sent = await counter('/1/')
  const res = await runAs(agentKey, 'taskboard.get_card', { idCard: A.card }, other)
  assert.equal(res.status, 403)
  assert.equal(res.body.error.code, 'CONNECTION_NOT_ALLOWED')
  assert.match(res.body.error.message, new RegExp(other))
  assert.equal(await sent.count(), 0)
})

test('API Call: a path on a board in the scope passes; a card of another board, a move out of the scope and /1/members/me do not', async () => {
  const lists = await apiCall('GET', `/1/boards/${A.board}/lists`)
  assert.equal(lists.status, 200, JSON.stringify(lists.body))
  assert.equal(lists.body.output.status, 200)
  assert.equal((await apiCall('GET', `/1/boards/${A.shortLink}`)).status, 200, 'a shortLink is placed too')
  assert.equal((await apiCall('GET', `/1/checklists/${A.checklist}`)).status, 200)
  assert.equal((await apiCall('GET', `/1/labels/${B.label}`)).status, 200)
  assert.equal((await apiCall('GET', `/lists/${B.list}/cards`)).status, 200, 'without the /1 prefix')

  assertDenied(await apiCall('GET', `/1/cards/${C.card}`), `card ${C.card}`)
  assertDenied(await apiCall('GET', `/1/boards/${C.board}/cards`), `board ${C.board}`)
  assertDenied(await apiCall('GET', `/1/boards/${C.shortLink}`), `board ${C.shortLink}`, C.board)
  assertDenied(await apiCall('GET', `/1/checklists/${C.checklist}`), `checklist ${C.checklist}`)
  assertDenied(await apiCall('PUT', `/1/labels/${C.label}`, { name: 'mine' }), `label ${C.label}`)

  const members = await counter('/1/members')
  assertDenied(await apiCall('GET', '/1/members/me'), '/1/members/me')
  assert.equal(await members.count(), 0, '/1/members/me was never sent')

  const cards = await counter('/1/cards')
  const before = await cardsOn(C.board)
  assertDenied(await apiCall('POST', '/1/cards', { idList: C.list, name: 'via API Call' }), `list ${C.list}`)
  assertDenied(await apiCall('POST', `/1/cards?idList=${C.list}&name=q`), `list ${C.list}`)
  assertDenied(await apiCall('POST', '/1/cards', { name: 'no list' }), 'POST /1/cards')
  // Moving a card of board A to a list on board C is leaving the scope.
  assertDenied(await apiCall('PUT', `/1/cards/${A.card}`, { idList: C.list }), `list ${C.list}`)
  assertDenied(await apiCall('POST', `/1/cards/${A.card}/idLabels`, { value: C.label }), `label ${C.label}`)
  assertDenied(await apiCall('POST', '/1/boards', { name: 'A new board no scope names' }), 'POST /1/boards')
  // Nothing was sent for any of them but the lookups that place card A where it is now: each of
  // the two writes naming it (a write is checked against the upstream, not a remembered place).
  assert.equal(await cards.count(), 2, 'no card request was sent for any of them but the two lookups')
  assert.equal(await cardsOn(C.board), before)
  const stillOnA = await asAgent('taskboard.get_card', { idCard: A.card })
  assert.equal(stillOnA.body.output.idBoard, A.board)

  // Admin keys are not scoped.
  const me = await apiCall('GET', '/1/members/me', undefined, t.adminKey)
  assert.equal(me.status, 200)
  assert.equal(me.body.output.body.username, 'demo')
})

test('an endpoint the API Call refuses is refused with its own error, not a scope one', async () => {
  const res = await apiCall('GET', '/1/cards/../members/me')
  assert.equal(res.status, 400)
  assert.equal(res.body.error.code, 'INVALID_ENDPOINT')
})

test('a resource the connection cannot see is denied without lapsing the connection', async () => {
  const res = await asAgent('taskboard.get_card', { idCard: strangerCard })
  assertDenied(res, `card ${strangerCard}`, 'could not be placed')
  assert.equal(res.body.error.upstream.status, 401)
  const c = await t.api('GET', `/v1/connections/${conn}`)
  assert.equal(c.body.status, 'active')
})

test('an agent with an empty scope touches nothing; workspace keys are not scoped', async () => {
  const empty = await t.api('POST', '/v1/agents', {
    name: 'Nothing',
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  const key = (await t.api('POST', `/v1/agents/${empty.body.id}/keys`, {})).body.key
  assertDenied(await runAs(key, 'taskboard.get_card', { idCard: A.card }), 'boards: none')
  const admin = await runAs(t.adminKey, 'taskboard.create_card', { idList: C.list, name: 'admin may' })
  assert.equal(admin.status, 200)
  assert.equal(admin.body.output.idBoard, C.board)
})

test('scope changes apply at once', async () => {
  const a = (
    await t.api('POST', '/v1/agents', {
      name: 'Grows',
      scope: { boards: [A.board] },
      connectionIds: [conn],
      delivery: { type: 'stream' },
    })
  ).body
  const key = (await t.api('POST', `/v1/agents/${a.id}/keys`, {})).body.key
  assertDenied(await runAs(key, 'taskboard.get_card', { idCard: C.card }))
  await t.api('PATCH', `/v1/agents/${a.id}`, { scope: { boards: [A.board, C.board] } })
  assert.equal((await runAs(key, 'taskboard.get_card', { idCard: C.card })).status, 200)
})

test('the engine API for triggers: checkResources places what it is given and refuses what lies outside', async () => {
  const engine = t.service.engine
  const agent = await engine.agents.get(t.service.workspaceId, agentId)
  const connector = engine.registry.connector('taskboard')!
  const http = engine.clients.create({
    connector,
    credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
    paced: false,
    storedConnection: false,
  })
  await engine.scope.checkResources(agent, 'taskboard', [{ kind: 'board', value: A.board }], http)
  await engine.scope.checkResources(agent, 'taskboard', [{ kind: 'card', value: A.card }], http)
  await assert.rejects(
    engine.scope.checkResources(agent, 'taskboard', [{ kind: 'board', value: C.board }], http),
    (err: any) => err.code === 'SCOPE_DENIED' && err.status === 403 && err.message.includes(C.board),
  )
  // Repositories need no lookup: owner/repo is its own place.
  const repoAgent = { ...agent, scope: { boards: [], repositories: ['Acme/Web'] } }
  await engine.scope.checkResources(repoAgent, 'taskboard', [{ kind: 'repository', value: 'acme/web' }], http)
  await assert.rejects(
    engine.scope.checkResources(repoAgent, 'taskboard', [{ kind: 'repository', value: 'acme/api' }], http),
    (err: any) => err.code === 'SCOPE_DENIED',
  )
  assert.equal(engine.scope.allows(agent, { kind: 'board', id: B.board }), true)
  assert.equal(engine.scope.allows(agent, { kind: 'board', id: C.board }), false)
})

test("the engine API for triggers: checkTriggerConfig reads the trigger's scoped config fields", async () => {
  const engine = t.service.engine
  // A trigger configured by a list (placed on its board by a lookup) and an optional board.
  const onList = defineTrigger({
    key: 'test_on_list',
    name: 'On a list',
    description: 'For this test.',
    instant: true,
    config: z.object({ idList: z.string(), idBoard: z.string().optional() }),
    scoped: [
      { kind: 'list', field: 'idList' },
      { kind: 'board', field: 'idBoard' },
    ],
  })
  const guard = new ScopeGuard({
    agents: engine.agents,
    clients: engine.clients,
    registry: new Registry([{ ...taskboard, triggers: [onList] }]),
    placements: engine.placements,
  })
  const agent = await engine.agents.get(t.service.workspaceId, agentId)
  const http = demoLookups()
  await guard.checkTriggerConfig(agent, 'taskboard.test_on_list', { idList: B.list }, http)
  await guard.checkTriggerConfig(agent, 'taskboard.test_on_list', { idList: A.list, idBoard: A.board }, http)
  await assert.rejects(
    guard.checkTriggerConfig(agent, 'taskboard.test_on_list', { idList: C.list }, http),
    (err: any) =>
      err.code === 'SCOPE_DENIED' && err.message.includes(`list ${C.list}`) && err.message.includes(C.board),
  )
  await assert.rejects(
    guard.checkTriggerConfig(agent, 'taskboard.test_on_list', { idList: A.list, idBoard: C.board }, http),
    (err: any) => err.code === 'SCOPE_DENIED' && err.message.includes(`board ${C.board}`),
  )
})

test("a card moved out of the scope is refused as soon as the move's event arrives, whatever the cache's lifetime", async () => {
  const engine = t.service.engine
  // A guard that would trust a place for an hour: only the move's event can make it look again.
  const guard = new ScopeGuard({
    agents: engine.agents,
    clients: engine.clients,
    registry: engine.registry,
    placements: engine.placements,
    options: { cacheTtlMs: 3_600_000 },
  })
  // Webhooks need the key's secret to verify deliveries: reconnect with it.
  const reconnected = await t.api('POST', `/v1/connections/${conn}/reconnect`, {
    authMethod: 'api_key_token',
    credentials: {
      key: t.taskboard.demo.key,
      token: t.taskboard.demo.token,
      secret: t.taskboard.demo.secret,
    },
  })
  assert.equal(reconnected.status, 200, JSON.stringify(reconnected.body))
  const trigger = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.card_moved',
    connectionId: conn,
    config: { idBoard: A.board },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
  const made = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: conn,
    input: { idList: A.list, name: 'About to move' },
  })
  const card = made.body.output.id
  const agent = await engine.agents.get(t.service.workspaceId, agentId)
  const http = demoLookups()
  const check = () =>
    guard.checkResources(agent, 'taskboard', [{ kind: 'card', value: card }], http).then(
      () => 'allowed',
      (err) => err.code as string,
    )
  assert.equal(await check(), 'allowed')
  const lookups = guard.stats.lookups
  const moved = await t.api('POST', '/v1/steps/taskboard.api_call/run', {
    connectionId: conn,
    input: { method: 'PUT', endpoint: `/1/cards/${card}`, body: { idBoard: C.board, idList: C.list } },
  })
  assert.equal(moved.status, 200, JSON.stringify(moved.body))
  assert.equal(await eventually(check, (v) => v === 'SCOPE_DENIED'), 'SCOPE_DENIED')
  assert.ok(guard.stats.lookups > lookups, 'the card was looked up again')
  await t.api('DELETE', `/v1/triggers/${trigger.body.id}`)
})

test('a write is checked against where the card is now: one moved out of the scope a moment ago is refused, though its place was remembered', async () => {
  const made = await asAgent('taskboard.create_card', { idList: A.list, name: 'Moves away' })
  const card = made.body.output.id
  // The agent reads it: its place (board A) is remembered.
  assert.equal((await asAgent('taskboard.get_card', { idCard: card })).status, 200)
  // Moved upstream to board C, with no event to tell Patchbay.
  await control(t.taskboard, 'POST', '/act', {
    as: 'demo',
    type: 'updateCard',
    id: card,
    idBoard: C.board,
    idList: C.list,
  })
  const lookups = await counter(`/1/cards/${card}`)
  const update = await asAgent('taskboard.update_card', { idCard: card, name: 'Changed out of scope' })
  assertDenied(update, `card ${card}`, `board ${C.board}`)
  assert.equal(await lookups.count(), 1, 'one lookup of where the card is now; the update was not sent')
  // An API Call that writes is checked the same way.
  assertDenied(await apiCall('PUT', `/1/cards/${card}`, { name: 'Changed out of scope' }))
  const upstream = await t.api('POST', '/v1/steps/taskboard.get_card/run', {
    connectionId: conn,
    input: { idCard: card },
  })
  assert.equal(upstream.body.output.name, 'Moves away', 'the card was not changed')
})

test('a page address is read only through a connection the agent may use; one it cannot place tells it nothing', async () => {
  const cardC = await t.api('POST', '/v1/steps/taskboard.api_call/run', {
    connectionId: conn,
    input: { method: 'GET', endpoint: `/1/cards/${C.card}` },
  })
  const pageOfC: string = cardC.body.output.body.url
  assert.match(pageOfC, /\/c\//)
  // Another account's connection, which the agent may not use.
  const other = await mintTaskboardToken(t.taskboard)
  const otherConn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: other.key, token: other.token },
  })
  assert.equal(otherConn.status, 201, JSON.stringify(otherConn.body))
  const reads = await counter('/1/cards/')
  const viaOther = await t.api(
    'POST',
    '/v1/steps/taskboard.get_card/run',
    { connectionId: otherConn.body.id, input: { idCard: pageOfC } },
    agentKey,
  )
  assert.equal(viaOther.status, 403, JSON.stringify(viaOther.body))
  assert.equal(viaOther.body.error.code, 'CONNECTION_NOT_ALLOWED')
  assert.equal(await reads.count(), 0, 'nothing was read through a connection the agent may not use')
  // A page the account cannot open, and one outside the scope, answer alike: SCOPE_DENIED.
  for (const idCard of [`${t.taskboard.webUrl}/c/ZZZZZZZZ/1-missing`, pageOfC]) {
    const res = await t.api(
      'POST',
      '/v1/steps/taskboard.get_card/run',
      { connectionId: conn, input: { idCard } },
      agentKey,
    )
    assert.equal(res.status, 403, JSON.stringify(res.body))
    assert.equal(res.body.error.code, 'SCOPE_DENIED', idCard)
  }
})
