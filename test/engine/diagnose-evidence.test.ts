// Diagnosis from evidence (issue 24): each of the four causes the specification names for "a
// trigger does not fire" — connection lapsed, wrong board, event type mismatch, polling interval
// not yet elapsed — produced by a scenario of its own, and diagnose names exactly that cause (the
// others are not problems); a healthy trigger gets no advice at all. Each scenario has a board and
// a connection (a fresh token) of its own, so the evidence of one does not reach another.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { mintDemoToken, taskboardRest } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({ taskboard: sandbox, env: { PATCHBAY_MIN_POLL_INTERVAL_MS: '100' } })
})
after(async () => {
  await t?.close()
  await sandbox?.close()
})

/** A board with two lists, as the demo member. */
async function board(name: string) {
  const b = await taskboardRest(sandbox, 'POST', '/1/boards', { name, defaultLists: false })
  const todo = await taskboardRest(sandbox, 'POST', '/1/lists', { name: 'To do', idBoard: b.id })
  const done = await taskboardRest(sandbox, 'POST', '/1/lists', { name: 'Done', idBoard: b.id })
  return { id: b.id as string, name, todo: todo.id as string, done: done.id as string }
}

/** A connection on a fresh token, and an agent on it whose scope holds these boards. */
async function setup(boards: string[]) {
  const token = await mintDemoToken(sandbox)
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
    second: true,
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const agent = await t.api('POST', '/v1/agents', {
    name: `diag-${Math.random().toString(36).slice(2, 6)}`,
    scope: { boards },
    connectionIds: [conn.body.id],
    delivery: { type: 'stream' },
  })
  const trigger = async (
    key: string,
    config: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => {
    const res = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
      trigger: `taskboard.${key}`,
      connectionId: conn.body.id,
      config,
      ...extra,
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    return res.body.id as string
  }
  return { token, connectionId: conn.body.id as string, trigger }
}

/** Waits until the connection has stored `n` events (or more). */
const stored = (connectionId: string, n: number) =>
  eventually(
    async () => (await t.api('GET', `/v1/events?connectionId=${connectionId}&limit=500`)).body.events.length,
    (count: number) => count >= n,
  )

async function diagnose(triggerId: string) {
  const res = await t.api('GET', `/v1/triggers/${triggerId}/diagnose`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as {
    healthy: boolean
    checks: Array<{ cause: string; status: string; message: string; fix?: string }>
  }
}

/** The causes diagnose calls a problem. */
const problems = (d: Awaited<ReturnType<typeof diagnose>>) =>
  d.checks.filter((c) => c.status === 'problem').map((c) => c.cause)

test('connection lapsed: a revoked token is the one cause named, with the reconnect', async () => {
  const b = await board('Lapse board')
  const s = await setup([b.id])
  const trig = await s.trigger('card_archived', { idBoard: b.id })
  await taskboardRest(sandbox, 'DELETE', `/1/tokens/${s.token}`, undefined, s.token)
  const d = await diagnose(trig)
  assert.deepEqual(problems(d), ['connection_lapsed'], JSON.stringify(d.checks))
  const lapsed = d.checks.find((c) => c.cause === 'connection_lapsed')!
  assert.match(lapsed.fix!, /reconnect/)
  assert.match(d.checks.find((c) => c.cause === 'wrong_board')!.message, /reconnecting registers it again/)
})

test('wrong board: New Card on board B while cards are made on another board — that board is named, no other trigger type advised', async () => {
  const watched = await board('Board B')
  const busy = await board('Busy board')
  const s = await setup([watched.id, busy.id])
  // An old change on board B of a neighbouring kind (a card edited), then the cards the user makes,
  // all on the busy board, which another trigger of the connection watches.
  const old = await taskboardRest(sandbox, 'POST', '/1/cards', { idList: watched.todo, name: 'old' }, s.token)
  const trig = await s.trigger('new_card', { idBoard: watched.id })
  await s.trigger('card_moved', { idBoard: busy.id })
  await taskboardRest(sandbox, 'PUT', `/1/cards/${old.id}`, { name: 'old, edited' }, s.token)
  for (const name of ['one', 'two', 'three'])
    await taskboardRest(sandbox, 'POST', '/1/cards', { idList: busy.todo, name }, s.token)
  await stored(s.connectionId, 4)
  const d = await diagnose(trig)
  assert.deepEqual(problems(d), ['wrong_board'], JSON.stringify(d.checks))
  const wrong = d.checks.find((c) => c.cause === 'wrong_board')!
  assert.match(wrong.message, new RegExp(`Busy board \\(${busy.id}\\): 3`))
  assert.match(wrong.message, new RegExp(watched.id))
  const types = d.checks.find((c) => c.cause === 'event_type_mismatch')!
  assert.equal(types.fix, undefined, 'no other trigger type is advised')
  assert.doesNotMatch(types.message, /Card Updated instead/)
})

test('event type mismatch: a Card Moved trigger that sees only edits advises Card Updated', async () => {
  const b = await board('Edits board')
  const s = await setup([b.id])
  const trig = await s.trigger('card_moved', { idBoard: b.id })
  const card = await taskboardRest(sandbox, 'POST', '/1/cards', { idList: b.todo, name: 'edit me' }, s.token)
  await taskboardRest(sandbox, 'PUT', `/1/cards/${card.id}`, { name: 'edited' }, s.token)
  await taskboardRest(sandbox, 'PUT', `/1/cards/${card.id}`, { desc: 'and described' }, s.token)
  await stored(s.connectionId, 3)
  const d = await diagnose(trig)
  assert.deepEqual(problems(d), ['event_type_mismatch'], JSON.stringify(d.checks))
  const types = d.checks.find((c) => c.cause === 'event_type_mismatch')!
  assert.match(types.fix!, /use Card Updated instead of Card Moved/)
})

test('polling interval not yet elapsed: a polled trigger that has fired nothing is told when the next poll comes', async () => {
  const b = await board('Poll board')
  const s = await setup([b.id])
  const trig = await s.trigger(
    'card_due_date_reminder',
    { idBoard: b.id, minutesBefore: 60 },
    { pollIntervalMs: 3_600_000 },
  )
  await eventually(
    async () => (await t.api('GET', `/v1/triggers/${trig}`)).body.poll.lastPollAt,
    (v) => Boolean(v),
  )
  // A card falls due after the first poll: it fires at the next one, an hour away.
  await taskboardRest(
    sandbox,
    'POST',
    '/1/cards',
    {
      idList: b.todo,
      name: 'due soon',
      due: new Date(Date.now() + 30 * 60_000).toISOString(),
    },
    s.token,
  )
  const d = await diagnose(trig)
  assert.deepEqual(problems(d), ['polling_interval'], JSON.stringify(d.checks))
  const polling = d.checks.find((c) => c.cause === 'polling_interval')!
  assert.match(polling.message, /the interval has not elapsed yet/)
  assert.match(polling.fix!, /poll now/)
})

test('a healthy trigger gets no advice: a Card Moved trigger that fires, and a reminder that fired', async () => {
  const b = await board('Healthy board')
  const s = await setup([b.id])
  const moved = await s.trigger('card_moved', { idBoard: b.id })
  // New cards (a neighbouring kind) and a move (its own).
  const card = await taskboardRest(sandbox, 'POST', '/1/cards', { idList: b.todo, name: 'moving' }, s.token)
  await taskboardRest(sandbox, 'POST', '/1/cards', { idList: b.todo, name: 'staying' }, s.token)
  await taskboardRest(sandbox, 'PUT', `/1/cards/${card.id}`, { idList: b.done }, s.token)
  await stored(s.connectionId, 3)
  const d = await diagnose(moved)
  assert.equal(d.healthy, true, JSON.stringify(d.checks))
  assert.deepEqual(
    d.checks.filter((c) => c.fix !== undefined),
    [],
    'no advice for a trigger that fires',
  )

  await taskboardRest(
    sandbox,
    'POST',
    '/1/cards',
    {
      idList: b.todo,
      name: 'due soon',
      due: new Date(Date.now() + 30 * 60_000).toISOString(),
    },
    s.token,
  )
  const reminder = await s.trigger(
    'card_due_date_reminder',
    { idBoard: b.id, minutesBefore: 60 },
    { pollIntervalMs: 3_600_000 },
  )
  await eventually(
    async () => (await t.api('GET', `/v1/deliveries?triggerId=${reminder}`)).body.deliveries.length,
    (n: number) => n === 1,
  )
  const r = await diagnose(reminder)
  assert.equal(r.healthy, true, JSON.stringify(r.checks))
  assert.deepEqual(
    r.checks.filter((c) => c.fix !== undefined),
    [],
  )
})
