// Triggers end to end against the sandbox task-board: a change on a board → the upstream's
// signed webhook → Patchbay's ingress → the pipeline → a signed push to the agent.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { deliveryPayloadChecker } from '../helpers/delivery-payload.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { taskboardRest } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let receiver: Receiver
let connectionId: string
let agentId: string
let boardB: string
let listB: string
const triggerIds: Record<string, string> = {}

const tb = (method: string, path: string, body?: unknown) => taskboardRest(sandbox, method, path, body)

/** Creates a card and waits for its New Card delivery, so later changes are counted alone. */
async function newCard(name: string) {
  const card = await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name })
  await receiver.until((r) => r.some((x) => x.body.data.event.data.card?.id === card.id))
  await deliveredSince(0)
  return card
}

/** Waits until the pipeline has nothing left to do, then returns the triggers delivered since `from`. */
async function deliveredSince(from: number): Promise<string[]> {
  await eventually(
    async () => (await t.api('GET', '/v1/deliveries?status=pending&limit=500')).body.deliveries.length,
    (n) => n === 0,
  )
  await t.service.engine.events.jobs.idle()
  return receiver.received
    .slice(from)
    .map((r) => r.body.data.trigger)
    .sort()
}

before(async () => {
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
  t = await startTestService({
    taskboard: sandbox,
    env: { PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '50,100,200', PATCHBAY_DELIVERY_SCAN_MS: '25' },
  })
  connectionId = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
    })
  ).body.id
  const b = await tb('POST', '/1/boards', { name: 'Board B', defaultLists: false })
  boardB = b.id
  listB = (await tb('POST', '/1/lists', { name: 'Inbox', idBoard: boardB })).id
  const agent = await t.api('POST', '/v1/agents', {
    name: 'watcher',
    scope: { boards: [sandbox.demo.boardId, boardB] },
    connectionIds: [connectionId],
    delivery: { type: 'webhook', url: receiver.url },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  agentId = agent.body.id
  receiver.secret = agent.body.signingSecret
  for (const key of ['new_card', 'card_updated', 'card_moved', 'card_archived']) {
    const res = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: `taskboard.${key}`,
      connectionId,
      config: { idBoard: sandbox.demo.boardId },
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    triggerIds[key] = res.body.id
  }
})
after(async () => {
  await t.close()
  await receiver.close()
  await sandbox.close()
})

test('the four triggers share one upstream webhook on the board, its id stored', async () => {
  const hooks = await tb('GET', `/1/tokens/${sandbox.demo.token}/webhooks`)
  const onBoard = hooks.filter((h: any) => h.idModel === sandbox.demo.boardId)
  assert.equal(onBoard.length, 1)
  const view = await t.api('GET', `/v1/triggers/${triggerIds.card_moved}`)
  assert.equal(view.body.webhook.upstreamHookId, onBoard[0].id)
  assert.equal(view.body.webhook.status, 'active')
  assert.equal(view.body.instant, true)
})

test('New Card fires for a new card, and only New Card', async () => {
  const from = receiver.received.length
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'fresh card' })
  await receiver.until((r) => r.length > from)
  assert.deepEqual(await deliveredSince(from), ['taskboard.new_card'])
  const got = receiver.received[from]
  assert.equal(got.verified, true, 'signed per Standard Webhooks')
  assert.equal(got.body.data.event.data.card.name, 'fresh card')
  assert.equal(got.body.data.event.refs.board, sandbox.demo.boardId)
  // The API shows the delivery with the very payload the agent received.
  const shown = await t.api('GET', `/v1/deliveries/${got.body.id}`)
  assert.equal(shown.status, 200)
  assert.deepEqual(shown.body.payload, got.body)
})

test('a title edit fires Card Updated, not Card Moved or Card Archived', async () => {
  const card = await newCard('to rename')
  const from = receiver.received.length
  await tb('PUT', `/1/cards/${card.id}`, { name: 'renamed' })
  await receiver.until((r) => r.length > from)
  assert.deepEqual(await deliveredSince(from), ['taskboard.card_updated'])
})

test('a move fires Card Moved and Card Updated (a move is an update), not the others', async () => {
  const card = await newCard('to move')
  const from = receiver.received.length
  await tb('PUT', `/1/cards/${card.id}`, { idList: sandbox.demo.listIds[1] })
  await receiver.until((r) => r.length >= from + 2)
  assert.deepEqual(await deliveredSince(from), ['taskboard.card_moved', 'taskboard.card_updated'])
  const moved = receiver.received.slice(from).find((r) => r.body.data.trigger === 'taskboard.card_moved')!
  assert.equal(moved.body.data.event.data.listAfter.id, sandbox.demo.listIds[1])
})

test('archiving fires Card Archived and Card Updated, not Card Moved', async () => {
  const card = await newCard('to archive')
  const from = receiver.received.length
  await tb('PUT', `/1/cards/${card.id}`, { closed: true })
  await receiver.until((r) => r.length >= from + 2)
  assert.deepEqual(await deliveredSince(from), ['taskboard.card_archived', 'taskboard.card_updated'])
})

test('changes on another board fire nothing here', async () => {
  const from = receiver.received.length
  await tb('POST', '/1/cards', { idList: listB, name: 'elsewhere' })
  // The board B card makes no delivery: wait for the sandbox's deliveries, then for the pipeline.
  await new Promise((r) => setTimeout(r, 200))
  assert.deepEqual(await deliveredSince(from), [])
})

test("a trigger on a board outside the agent's scope is refused", async () => {
  const other = await tb('POST', '/1/boards', { name: 'Secret board' })
  const res = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: other.id },
  })
  assert.equal(res.status, 403)
  assert.equal(res.body.error.code, 'SCOPE_DENIED')
  assert.match(res.body.error.message, new RegExp(other.id))
  const hooks = await tb('GET', `/1/tokens/${sandbox.demo.token}/webhooks`)
  assert.ok(!hooks.some((h: any) => h.idModel === other.id), 'no webhook was made for it')
})

test('forged, unsigned and unknown-hook deliveries are refused and stored nowhere', async () => {
  const view = await t.api('GET', `/v1/triggers/${triggerIds.new_card}`)
  const hookUrl = `${t.url}/hooks/taskboard/${view.body.webhook.id}`
  const before = (await t.api('GET', '/v1/events?limit=500')).body.events.length
  const body = JSON.stringify({
    action: {
      id: 'f'.repeat(24),
      type: 'createCard',
      date: new Date().toISOString(),
      data: { board: { id: sandbox.demo.boardId }, card: { id: 'e'.repeat(24), name: 'forged' } },
    },
    model: {},
  })
  const forged = await fetch(hookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-taskboard-webhook': 'AAAA' },
    body,
  })
  assert.equal(forged.status, 401)
  assert.equal((await forged.json()).error.code, 'SIGNATURE_INVALID')
  const unsigned = await fetch(hookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  assert.equal(unsigned.status, 401)
  const unknown = await fetch(`${t.url}/hooks/taskboard/hook_nope`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  assert.equal(unknown.status, 410)
  // A known hook id under another connector's address (the hook is cached by now) is gone too.
  for (const other of ['nope', 'codehost', 'contactdata']) {
    const misplaced = await fetch(`${t.url}/hooks/${other}/${view.body.webhook.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    assert.equal(misplaced.status, 410, other)
    assert.equal((await misplaced.json()).error.code, 'UNKNOWN_HOOK')
  }
  await t.service.engine.events.jobs.idle()
  assert.equal((await t.api('GET', '/v1/events?limit=500')).body.events.length, before)
})

test('a delivery survives a failing agent endpoint and arrives when it recovers', async () => {
  receiver.failNext = 2
  const from = receiver.received.length
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'after an outage' })
  await receiver.until((r) =>
    r.some((x, i) => i >= from && x.body.data.event.data.card?.name === 'after an outage'),
  )
  const got = receiver.received
    .slice(from)
    .find((x) => x.body.data.event.data.card?.name === 'after an outage')!
  // The receiver has it before the outcome is committed.
  const detail = await eventually(
    () => t.api('GET', `/v1/deliveries/${got.id}`),
    (d) => d.body.status === 'delivered',
  )
  assert.equal(detail.body.attempts.length, 3)
  assert.deepEqual(
    detail.body.attempts.map((a: any) => a.status),
    [500, 500, 200],
  )
})

test('a delivery to an endpoint that never recovers is dead-lettered, then replay delivers it with the same id', async () => {
  receiver.failNext = 100
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'dead letter' })
  const dead = await eventually(
    async () => (await t.api('GET', `/v1/deliveries?status=dead&agentId=${agentId}`)).body.deliveries,
    (d) => d.length > 0,
  )
  assert.equal(dead[0].attempts, 4)
  receiver.failNext = 0
  const from = receiver.received.length
  const replay = await t.api('POST', `/v1/deliveries/${dead[0].id}/replay`)
  assert.equal(replay.status, 202)
  const [got] = (await receiver.until((r) => r.length > from)).slice(from)
  assert.equal(got.id, dead[0].id, 'the webhook-id is the delivery id, stable across replays')
  assert.equal(got.verified, true)
})

test('a group commit with an event stored before and a new one: the new one is stored and delivered, the old one not again', async () => {
  const from = receiver.received.length
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'stored before' })
  await receiver.until((r) => r.length > from)
  await deliveredSince(from)
  const before = (await t.api('GET', '/v1/events?limit=500')).body.events.length
  const pushed = receiver.received.length
  // The upstream's delivery again, and a new one made from it (another action id), in one group.
  const sent = await fetch(`${sandbox.url}/_sandbox/webhooks/deliveries`).then((r) => r.json())
  const last = sent.deliveries.filter((d: any) => d.outcome === 'delivered').at(-1)
  const hookId = new URL(last.url).pathname.split('/').at(-1)!
  const { events: system, registry } = t.service.engine
  const sub = (await system.triggers.subscription(hookId))!
  const parse = (body: string) => {
    const parsed = registry
      .connector('taskboard')!
      .webhooks!.parse({ headers: last.headers, rawBody: body, callbackUrl: '' })
    assert.ok(!('ignore' in parsed))
    return parsed.events
  }
  const fresh = JSON.parse(last.body)
  fresh.action.id = 'f0'.repeat(12)
  const receivedAt = new Date().toISOString()
  const source = await system.ingress.sourceOf(sub, receivedAt)
  await system.recorder.recordMany([
    { source, events: parse(last.body) },
    { source, events: parse(JSON.stringify(fresh)) },
  ])
  await deliveredSince(pushed)
  assert.equal((await t.api('GET', '/v1/events?limit=500')).body.events.length, before + 1)
  const again = receiver.received.slice(pushed)
  assert.deepEqual(
    again.map((r) => r.body.data.event.upstreamId),
    again.map(() => fresh.action.id),
    'only the new event is pushed',
  )
  assert.ok(again.length >= 1)
})

test('the same upstream delivery twice makes one event and one delivery per trigger', async () => {
  const before = (await t.api('GET', '/v1/events?limit=500')).body.events.length
  const from = receiver.received.length
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'once only' })
  await receiver.until((r) => r.length > from)
  // Redeliver the upstream's own delivery byte for byte, signature included.
  const sent = await fetch(`${sandbox.url}/_sandbox/webhooks/deliveries`).then((r) => r.json())
  const last = sent.deliveries.filter((d: any) => d.outcome === 'delivered').at(-1)
  const again = await fetch(last.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...last.headers },
    body: last.body,
  })
  assert.equal(again.status, 200)
  await deliveredSince(from)
  const events = (await t.api('GET', '/v1/events?limit=500')).body.events
  assert.equal(events.length, before + 1)
  assert.equal(receiver.received.slice(from).length, 1)
})

test('every push this file received is the delivery payload of the contract (engine/events/payload.ts, /openapi.json)', async () => {
  const check = await deliveryPayloadChecker(t.url)
  assert.ok(receiver.received.length > 10)
  for (const r of receiver.received) check(r.body)
})
