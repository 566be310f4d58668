// The README's quick start, call by call, against a fresh Patchbay and the sandbox task-board:
// connect the demo account with its key, token and secret, run Create Card and Get Card, then an
// agent with a New Card trigger on the demo board fires for the next card made.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
before(async () => {
  t = await startTestService()
})
after(() => t.close())

test('the README walkthrough: connect with key, token and secret, run Create Card and Get Card, and the first trigger fires', async () => {
  const demo = t.taskboard.demo
  const LIST = demo.listIds[0]
  const BOARD = demo.boardId
  // 1. Connect the account, with the API secret instant triggers verify deliveries with.
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: demo.key, token: demo.token, secret: demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  assert.equal(conn.body.accountName, 'demo')
  const CONN = conn.body.id
  // 2. Create Card, 3. Get Card.
  const made = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: CONN,
    input: { idList: LIST, name: 'Hello from Patchbay', pos: 'top' },
  })
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const read = await t.api('POST', '/v1/steps/taskboard.get_card/run', {
    connectionId: CONN,
    input: { idCard: made.body.output.id },
  })
  assert.equal(read.body.output.name, 'Hello from Patchbay')
  // 4. An agent for the demo board whose events are streamed, with a New Card trigger on it.
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Watcher',
    scope: { boards: [BOARD] },
    connectionIds: [CONN],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const AGENT = agent.body.id
  const trigger = await t.api('POST', `/v1/agents/${AGENT}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: CONN,
    config: { idBoard: BOARD },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
  // 5. The next card made on the board fires it: the agent has a delivery of the event.
  await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: CONN,
    input: { idList: LIST, name: 'The first trigger fires' },
  })
  const delivered = await eventually(
    () => t.api('GET', `/v1/deliveries?agentId=${AGENT}`),
    (r) => (r.body.deliveries ?? []).length > 0,
  )
  const delivery = delivered.body.deliveries[0]
  assert.equal(delivery.triggerId, trigger.body.id)
  const event = await t.api('GET', `/v1/events/${delivery.eventId}`)
  assert.equal(event.body.type, 'createCard')
  assert.match(JSON.stringify(event.body.data), /The first trigger fires/)
})
