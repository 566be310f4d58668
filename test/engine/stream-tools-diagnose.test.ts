// Pull deliveries (the agent's event stream), tools started by triggers across boards, and
// trigger diagnosis of the four causes the spec names.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { mintDemoToken } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let connectionId: string
let boardB: string
let listB: string

const tb = (method: string, path: string, body?: unknown) =>
  fetch(`${sandbox.url}${path}`, {
    method,
    headers: {
      authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  }).then((r) => r.json())

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
  boardB = (await tb('POST', '/1/boards', { name: 'Board B', defaultLists: false })).id
  listB = (await tb('POST', '/1/lists', { name: 'Mirror', idBoard: boardB })).id
})
after(async () => {
  await t.close()
  await sandbox.close()
})

async function makeAgent(delivery: unknown, boards = [sandbox.demo.boardId, boardB], conns = [connectionId]) {
  const res = await t.api('POST', '/v1/agents', {
    name: `agent-${Math.random()}`,
    scope: { boards },
    connectionIds: conns,
    delivery,
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id as string
}

/** Reads an agent's SSE stream until `count` deliveries arrived. */
async function readStream(agentId: string, count: number, lastEventId?: string) {
  const ctrl = new AbortController()
  const res = await fetch(`${t.url}/v1/agents/${agentId}/stream`, {
    headers: {
      authorization: `Bearer ${t.adminKey}`,
      ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
    },
    signal: ctrl.signal,
  })
  assert.equal(res.headers.get('content-type'), 'text/event-stream')
  const got: Array<{ id: string; data: any }> = []
  const decoder = new TextDecoder()
  let buffer = ''
  const timer = setTimeout(() => ctrl.abort(), 10_000)
  try {
    for await (const chunk of res.body as any) {
      buffer += decoder.decode(chunk, { stream: true })
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, i)
        buffer = buffer.slice(i + 2)
        const id = /^id: (.*)$/m.exec(frame)?.[1]
        const data = /^data: (.*)$/m.exec(frame)?.[1]
        if (id && data) got.push({ id, data: JSON.parse(data) })
      }
      if (got.length >= count) break
    }
  } finally {
    clearTimeout(timer)
    ctrl.abort()
  }
  return got
}

test('a stream agent receives its events over SSE and resumes after Last-Event-ID', async () => {
  const agentId = await makeAgent({ type: 'stream' })
  const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trig.status, 201)
  const live = readStream(agentId, 2)
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'stream one' })
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'stream two' })
  const first = await live
  assert.deepEqual(
    first.map((f) => f.data.data.event.data.card.name),
    ['stream one', 'stream two'],
  )
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'stream three' })
  // Reconnecting after the first message replays what came after it, in order.
  const resumed = await readStream(agentId, 2, first[0].id)
  assert.deepEqual(
    resumed.map((f) => f.data.data.event.data.card.name),
    ['stream two', 'stream three'],
  )
})

test("a quiet agent's open stream gets each of its deliveries, and only those, while another agent of the workspace gets many", async () => {
  const quiet = await makeAgent({ type: 'stream' })
  const busy = await makeAgent({ type: 'stream' })
  for (const [agentId, idBoard] of [
    [quiet, boardB],
    [busy, sandbox.demo.boardId],
  ])
    assert.equal(
      (
        await t.api('POST', `/v1/agents/${agentId}/triggers`, {
          trigger: 'taskboard.new_card',
          connectionId,
          config: { idBoard },
        })
      ).status,
      201,
    )
  const busyDeliveries = async () =>
    (await t.api('GET', `/v1/deliveries?agentId=${busy}&limit=100`)).body.deliveries.length as number
  const before = await busyDeliveries()
  const live = readStream(quiet, 2)
  // Between the quiet agent's two deliveries, and before the first, the busy agent gets many: the
  // stream reads on from the workspace's newest delivery each time, and must still miss none.
  for (const round of [1, 2]) {
    for (let i = 0; i < 15; i++)
      await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: `busy ${round}.${i}` })
    await eventually(busyDeliveries, (n) => n === before + 15 * round)
    await tb('POST', '/1/cards', { idList: listB, name: `quiet ${round}` })
  }
  const got = await live
  assert.deepEqual(
    got.map((f) => f.data.data.event.data.card.name),
    ['quiet 1', 'quiet 2'],
  )
  // Resuming after the first replays the second, past the busy agent's deliveries between them.
  const resumed = await readStream(quiet, 1, got[0].id)
  assert.deepEqual(
    resumed.map((f) => f.data.data.event.data.card.name),
    ['quiet 2'],
  )
})

test('a tool started by a trigger on board A creates a card on board B', async () => {
  const agentId = await makeAgent({ type: 'stream' })
  const tool = await t.api('POST', `/v1/agents/${agentId}/tools`, {
    name: 'mirror',
    steps: [
      {
        name: 'copy',
        stepId: 'taskboard.create_card',
        connectionId,
        input: {
          idList: listB,
          name: 'Mirror of {{event.data.card.name}}',
          desc: 'from board {{event.refs.board}}',
        },
      },
      { stepId: 'taskboard.get_card', connectionId, input: { idCard: '{{steps.copy.output.id}}' } },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: sandbox.demo.boardId },
    target: { type: 'tool', toolId: tool.body.id },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'Ship it' })
  const cards = await eventually(
    () => tb('GET', `/1/lists/${listB}/cards`),
    (cs: any[]) => cs.some((c) => c.name === 'Mirror of Ship it'),
  )
  const mirrored = cards.find((c: any) => c.name === 'Mirror of Ship it')
  assert.equal(mirrored.desc, `from board ${sandbox.demo.boardId}`)
  const runs = await eventually(
    async () =>
      (await t.api('GET', `/v1/agents/${agentId}/tool-runs`)).body.runs ??
      (await t.api('GET', `/v1/agents/${agentId}/tool-runs`)).body.toolRuns,
    (r: any[]) => Array.isArray(r) && r.some((x) => x.status === 'succeeded'),
  )
  assert.equal(runs[0].triggerId, trig.body.id)
  assert.equal(runs[0].steps[1].output.id, mirrored.id)
})

test('a trigger whose tool was deleted fails its delivery with the reason, once', async () => {
  const agentId = await makeAgent({ type: 'stream' })
  const tool = await t.api('POST', `/v1/agents/${agentId}/tools`, {
    name: 'soon gone',
    steps: [{ stepId: 'taskboard.get_card', connectionId, input: { idCard: '{{event.data.card.id}}' } }],
  })
  const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: sandbox.demo.boardId },
    target: { type: 'tool', toolId: tool.body.id },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  assert.equal((await t.api('DELETE', `/v1/agents/${agentId}/tools/${tool.body.id}`)).status, 204)
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'no tool to run' })
  const [failed] = await eventually(
    async () => (await t.api('GET', `/v1/deliveries?triggerId=${trig.body.id}`)).body.deliveries,
    (d: any[]) => d.length === 1 && d[0].status !== 'pending',
  )
  assert.equal(failed.status, 'failed')
  assert.match(failed.lastError, /TOOL_NOT_FOUND|not found/i)
  const detail = await t.api('GET', `/v1/deliveries/${failed.id}`)
  assert.equal(detail.body.attempts.length, 1, 'not picked up again and again')
})

test('diagnose: a Card Moved trigger that sees only title edits names the event type mismatch', async () => {
  const agentId = await makeAgent({ type: 'stream' })
  const trig = (
    await t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.card_moved',
      connectionId,
      config: { idBoard: sandbox.demo.boardId },
    })
  ).body
  const card = await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'edit me' })
  await tb('PUT', `/1/cards/${card.id}`, { name: 'edited' })
  const d = await eventually(
    async () => (await t.api('GET', `/v1/triggers/${trig.id}/diagnose`)).body,
    (b: any) =>
      b.checks.some((c: any) => c.cause === 'event_type_mismatch' && /Card Updated/.test(c.message)),
  )
  const mismatch = d.checks.find((c: any) => c.cause === 'event_type_mismatch')
  assert.match(mismatch.message, /Card Updated/)
  assert.match(mismatch.fix, /use Card Updated instead of Card Moved/)
  assert.equal(d.checks.find((c: any) => c.cause === 'connection_lapsed').status, 'ok')
})

test('diagnose: a trigger on the wrong board names it, with the board events do arrive for', async () => {
  // A board of its own (board B gets the mirror tool's cards): nothing is made there.
  const quiet = (await tb('POST', '/1/boards', { name: 'Quiet board', defaultLists: false })).id
  const agentId = await makeAgent({ type: 'stream' }, [sandbox.demo.boardId, quiet])
  // Events arrive on this connection for the demo board (other triggers watch it); this one watches the quiet board.
  const trig = (
    await t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId,
      config: { idBoard: quiet },
    })
  ).body
  await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[0], name: 'on the demo board' })
  const d = await eventually(
    async () => (await t.api('GET', `/v1/triggers/${trig.id}/diagnose`)).body,
    (b: any) => b.checks.some((c: any) => c.cause === 'wrong_board' && c.status === 'problem'),
  )
  const wrong = d.checks.find((c: any) => c.cause === 'wrong_board' && c.status === 'problem')
  assert.match(wrong.message, new RegExp(sandbox.demo.boardId))
  assert.equal(d.healthy, false)
})

test('diagnose: a polled trigger reports its last and next poll', async () => {
  const agentId = await makeAgent({ type: 'stream' })
  const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.card_due_date_reminder',
    connectionId,
    config: { idBoard: sandbox.demo.boardId, minutesBefore: 60 },
    pollIntervalMs: 3_600_000,
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  await eventually(
    async () => (await t.api('GET', `/v1/triggers/${trig.body.id}`)).body.poll.lastPollAt,
    (v) => Boolean(v),
  )
  const d = (await t.api('GET', `/v1/triggers/${trig.body.id}/diagnose`)).body
  const polling = d.checks.find((c: any) => c.cause === 'polling_interval')
  assert.match(polling.message, /next poll .* the interval has not elapsed yet/)
  assert.match(polling.fix, /pollIntervalMs/)
})

test('Card Due Date Reminder fires once per card and due date, and again when the due date changes', async () => {
  const agentId = await makeAgent({ type: 'stream' })
  const soon = new Date(Date.now() + 30 * 60_000).toISOString()
  const card = await tb('POST', '/1/cards', { idList: sandbox.demo.listIds[2], name: 'due soon', due: soon })
  const trig = (
    await t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.card_due_date_reminder',
      connectionId,
      config: { idBoard: sandbox.demo.boardId, minutesBefore: 60 },
      pollIntervalMs: 3_600_000,
    })
  ).body
  const poll = async () => (await t.api('POST', `/v1/triggers/${trig.id}/poll`)).body
  await eventually(
    async () => (await t.api('GET', `/v1/deliveries?triggerId=${trig.id}`)).body.deliveries.length,
    (n) => n === 1,
  )
  assert.equal((await poll()).events, 0, 'a second poll emits nothing twice')
  await tb('PUT', `/1/cards/${card.id}`, { due: new Date(Date.now() + 40 * 60_000).toISOString() })
  assert.equal((await poll()).events, 1, 'a changed due date fires again')
})

test('diagnose: a lapsed connection is named first, with the fix', async () => {
  const token = await mintDemoToken(sandbox)
  const conn = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
      // A connection of its own, beside the one made before.
      second: true,
    })
  ).body.id
  const agentId = await makeAgent({ type: 'stream' }, [sandbox.demo.boardId], [conn])
  const trig = (
    await t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.card_archived',
      connectionId: conn,
      config: { idBoard: sandbox.demo.boardId },
    })
  ).body
  await fetch(`${sandbox.url}/1/tokens/${token}`, {
    method: 'DELETE',
    headers: { authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${token}"` },
  })
  // The lapse is noticed on the next upstream call (here, the diagnosis's own check of the webhook).
  await t.api('POST', '/v1/steps/taskboard.api_call/run', {
    connectionId: conn,
    input: { method: 'GET', endpoint: '/1/members/me' },
  })
  const d = (await t.api('GET', `/v1/triggers/${trig.id}/diagnose`)).body
  const lapsed = d.checks.find((c: any) => c.cause === 'connection_lapsed')
  assert.equal(lapsed.status, 'problem')
  assert.match(lapsed.fix, /reconnect/)

  // Deleting it still works; the webhook cleanup the upstream refuses is reported, not fatal.
  const deleted = await t.api('DELETE', `/v1/triggers/${trig.id}`)
  assert.equal(deleted.status, 200)
  assert.equal(deleted.body.cleanup.ok, false)
  assert.match(deleted.body.cleanup.error, /could not be removed/)
  assert.equal((await t.api('GET', `/v1/triggers/${trig.id}`)).status, 404)
})

test('reconnecting with a new token moves the webhook to it: the old token keeps none', async () => {
  const oldToken = await mintDemoToken(sandbox)
  const conn = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: oldToken, secret: sandbox.demo.secret },
      // A connection of its own, beside the one made before.
      second: true,
    })
  ).body.id
  const agentId = await makeAgent({ type: 'stream' }, [sandbox.demo.boardId], [conn])
  const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  const hooksOf = async (token: string) =>
    (await fetch(`${sandbox.url}/1/tokens/${token}/webhooks`, {
      headers: { authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${token}"` },
    }).then((r) => r.json())) as any[]
  assert.equal((await hooksOf(oldToken)).length, 1)

  const newToken = await mintDemoToken(sandbox)
  const fixed = await t.api('POST', `/v1/connections/${conn}/reconnect`, {
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: newToken, secret: sandbox.demo.secret },
  })
  assert.equal(fixed.status, 200, JSON.stringify(fixed.body))
  assert.equal((await hooksOf(newToken)).length, 1)
  assert.equal((await hooksOf(oldToken)).length, 0, 'no second webhook left delivering the same changes')
  const view = (await t.api('GET', `/v1/triggers/${trig.body.id}`)).body
  assert.equal(view.webhook.upstreamHookId, (await hooksOf(newToken))[0].id)
})
