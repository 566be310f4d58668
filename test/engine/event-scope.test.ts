// Scope holds at every moment: an event is matched against the agent's scope and connections as
// they are now, not as they were when the trigger was made — for instant and polled triggers.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { taskboardRest } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let receiver: Receiver
let connectionId: string
let agentId: string
let boardA: string
let listA: string
let boardB: string
let listB: string
const trig: Record<string, string> = {}

const tb = (method: string, path: string, body?: unknown) => taskboardRest(sandbox, method, path, body)

/**
 * Creates a card (due in an hour) and returns it once its createCard event is stored and both
 * webhooks that hear it (its board's and the account's) have been answered: Patchbay answers
 * once the delivery and its matches are committed.
 */
async function cardOn(idList: string, name: string) {
  const card = await tb('POST', '/1/cards', {
    idList,
    name,
    due: new Date(Date.now() + 3_600_000).toISOString(),
  })
  await eventually(
    async () =>
      sandbox.emulator.webhooks.deliveries.filter(
        (d) => d.event === 'createCard' && d.body.includes(card.id) && d.outcome === 'delivered',
      ).length,
    (n) => n === 2,
  )
  const event = await eventually(
    async () =>
      (await t.api('GET', '/v1/events?type=createCard&limit=500')).body.events.find(
        (e: any) => e.data.card?.id === card.id,
      ),
    (e) => e !== undefined,
  )
  return { card, event }
}

/** The triggers an event was delivered to (deliveries are made in the commit that stores it). */
async function deliveredTo(eventId: string): Promise<string[]> {
  const res = await t.api('GET', `/v1/events/${eventId}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.deliveries.map((d: any) => d.triggerId).sort()
}

/** Polls the due-date trigger now; returns the deliveries it made for `cardId`. */
async function pollFor(cardId: string): Promise<number> {
  const polled = await t.api('POST', `/v1/triggers/${trig.due}/poll`)
  assert.equal(polled.status, 200, JSON.stringify(polled.body))
  const ds = (await t.api('GET', `/v1/deliveries?triggerId=${trig.due}&limit=500`)).body.deliveries
  let n = 0
  for (const d of ds) {
    const e = (await t.api('GET', `/v1/events/${d.eventId}`)).body
    if (e.data.card?.id === cardId) n++
  }
  return n
}

before(async () => {
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
  t = await startTestService({ taskboard: sandbox, env: { PATCHBAY_MIN_POLL_INTERVAL_MS: '10' } })
  connectionId = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
    })
  ).body.id
  boardA = sandbox.demo.boardId
  listA = sandbox.demo.listIds[0]
  boardB = (await tb('POST', '/1/boards', { name: 'Board B', defaultLists: false })).id
  listB = (await tb('POST', '/1/lists', { name: 'Inbox', idBoard: boardB })).id
  const agent = await t.api('POST', '/v1/agents', {
    name: 'narrowed',
    scope: { boards: [boardA, boardB] },
    connectionIds: [connectionId],
    delivery: { type: 'webhook', url: receiver.url },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  agentId = agent.body.id
  receiver.secret = agent.body.signingSecret
  const make = async (name: string, trigger: string, config: unknown, extra: object = {}) => {
    const res = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger,
      connectionId,
      config,
      ...extra,
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    trig[name] = res.body.id
  }
  await make('a', 'taskboard.new_card', { idBoard: boardA })
  await make('b', 'taskboard.new_card', { idBoard: boardB })
  // Several boards: one webhook on the account, which hears every board the account is on.
  await make('both', 'taskboard.custom_webhook_events', { boards: [boardA, boardB], types: ['create'] })
  await make(
    'due',
    'taskboard.card_due_date_reminder',
    { idBoard: boardB, minutesBefore: 120 },
    {
      pollIntervalMs: 3_600_000,
    },
  )
})

after(async () => {
  await t?.close()
  await receiver?.close()
  await sandbox?.close()
})

test('before the scope changes, cards on both boards are delivered (instant and polled)', async () => {
  const onB = await cardOn(listB, 'on B, in scope')
  assert.deepEqual(await deliveredTo(onB.event.id), [trig.b, trig.both].sort())
  assert.equal(await pollFor(onB.card.id), 1)
})

test('a retry or a replay of a delivery matched before the scope narrowed is not sent', async () => {
  // The agent's endpoint fails until the scope is narrowed, so the deliveries wait for a retry.
  receiver.failNext = 1_000
  const onB = await cardOn(listB, 'on B, failing before the scope narrows')
  const pending = await eventually(
    async () =>
      (await t.api('GET', `/v1/events/${onB.event.id}`)).body.deliveries.filter(
        // The first attempt made and failed (a push is claimed, attempt 1, as it is stored).
        (d: any) => d.status === 'pending' && d.attempts >= 1 && d.lastError !== null,
      ),
    (ds) => ds.length === 2,
  )
  const patched = await t.api('PATCH', `/v1/agents/${agentId}`, { scope: { boards: [boardA] } })
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  receiver.failNext = 0
  for (const d of pending) assert.equal((await t.api('POST', `/v1/deliveries/${d.id}/replay`)).status, 202)
  const settled = await eventually(
    async () => (await t.api('GET', `/v1/events/${onB.event.id}`)).body.deliveries,
    (ds: any[]) => ds.every((d) => d.status === 'dead'),
  )
  for (const d of settled) assert.match(d.lastError, /board .* is outside the agent's scope/)
  assert.ok(
    !receiver.received.some((r) => r.body.data.event.id === onB.event.id),
    'the endpoint received nothing of the event once the scope was narrowed',
  )
  // Put the scope back for the tests that follow.
  const restored = await t.api('PATCH', `/v1/agents/${agentId}`, { scope: { boards: [boardA, boardB] } })
  assert.equal(restored.status, 200, JSON.stringify(restored.body))
})

test('narrowing the scope from boards A and B to A stops deliveries of B at once', async () => {
  const patched = await t.api('PATCH', `/v1/agents/${agentId}`, { scope: { boards: [boardA] } })
  assert.equal(patched.status, 200, JSON.stringify(patched.body))

  const onB = await cardOn(listB, 'on B, outside the scope now')
  assert.deepEqual(await deliveredTo(onB.event.id), [], 'no trigger may deliver an event on board B')
  assert.equal(onB.event.matchedTriggers, 0)
  assert.equal(await pollFor(onB.card.id), 0, 'the due-date poll of board B delivers nothing')

  const onA = await cardOn(listA, 'on A, still in scope')
  assert.deepEqual(await deliveredTo(onA.event.id), [trig.a, trig.both].sort())
})

test('removing the connection from the agent stops every delivery at once', async () => {
  const patched = await t.api('PATCH', `/v1/agents/${agentId}`, {
    scope: { boards: [boardA, boardB] },
    connectionIds: [],
  })
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  const onA = await cardOn(listA, 'on A, connection withdrawn')
  assert.deepEqual(await deliveredTo(onA.event.id), [])
  const onB = await cardOn(listB, 'on B, connection withdrawn')
  assert.deepEqual(await deliveredTo(onB.event.id), [])
  // A manual poll says why it delivered nothing: the failure's own code.
  const polled = await t.api('POST', `/v1/triggers/${trig.due}/poll`)
  assert.equal(polled.status, 403, JSON.stringify(polled.body))
  assert.equal(polled.body.error.code, 'CONNECTION_NOT_ALLOWED')
  const trigger = await t.api('GET', `/v1/triggers/${trig.due}`)
  assert.match(trigger.body.poll.lastError, /connection/i)

  // Given back, the connection delivers again.
  await t.api('PATCH', `/v1/agents/${agentId}`, { connectionIds: [connectionId] })
  const again = await cardOn(listA, 'on A, connection given back')
  assert.deepEqual(await deliveredTo(again.event.id), [trig.a, trig.both].sort())
})
