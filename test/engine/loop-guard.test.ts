// A tool that triggers itself: a New Card trigger whose tool creates a card on the same board.
// Each card the tool makes carries the causation depth of the run that made it; once the depth
// reaches the limit the next run is refused with its reason recorded, and the chain stops.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let sandbox: TaskboardSandbox
let t: TestService

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({ taskboard: sandbox, env: { PATCHBAY_LOOP_DEPTH_LIMIT: '3' } })
})

after(async () => {
  await t?.close()
  await sandbox?.close()
})

const tb = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: {
      authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await r.text()
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`)
  return text ? JSON.parse(text) : null
}

test('a New Card trigger whose tool creates a card on the same board stops at the depth limit', {
  timeout: 60_000,
}, async () => {
  const board = (await tb('POST', '/1/boards', { name: 'Echo chamber', defaultLists: false })).id
  const list = (await tb('POST', '/1/lists', { name: 'Cards', idBoard: board })).id
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
  })
  const agent = await t.api('POST', '/v1/agents', {
    name: 'echo',
    scope: { boards: [board] },
    connectionIds: [conn.body.id],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const tool = await t.api('POST', `/v1/agents/${agent.body.id}/tools`, {
    name: 'Echo',
    description: 'Answers every new card with another card on the same list.',
    steps: [
      {
        stepId: 'taskboard.create_card',
        connectionId: conn.body.id,
        input: { idList: list, name: 'echo of {{event.data.card.name}}' },
      },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  const trigger = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn.body.id,
    config: { idBoard: board },
    target: { type: 'tool', toolId: tool.body.id },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))

  await tb('POST', '/1/cards', { idList: list, name: 'by hand' })

  // The run the guard refuses is recorded on its delivery, with the reason.
  const refused = await eventually(
    async () =>
      (await t.api('GET', `/v1/deliveries?triggerId=${trigger.body.id}&status=failed`)).body.deliveries,
    (ds) => ds.length > 0,
    30_000,
  )
  assert.equal(refused.length, 1)
  assert.equal(refused[0].toolRunId, null, 'no tool run was started for it')
  assert.match(refused[0].lastError, /LOOP_DETECTED/)
  assert.match(refused[0].lastError, /depth 3/)
  assert.match(refused[0].lastError, /PATCHBAY_LOOP_DEPTH_LIMIT/)

  // The card by hand (depth 0) and the three runs' cards (depths 1, 2 and 3): the fourth run is
  // the one refused, so nothing more is made.
  await t.service.engine.events.jobs.idle()
  const runs = (await t.api('GET', `/v1/agents/${agent.body.id}/tool-runs?limit=100`)).body.runs
  assert.equal(runs.length, 3)
  assert.ok(runs.every((r: any) => r.status === 'succeeded'))
  const cards = await tb('GET', `/1/lists/${list}/cards`)
  assert.equal(cards.length, 4)
  const all = (await t.api('GET', `/v1/deliveries?triggerId=${trigger.body.id}&limit=100`)).body.deliveries
  assert.equal(all.length, 4)
})
