// A run's timeline from the stored records: a card made upstream → the upstream's webhook → the
// event → the delivery to a tool → the tool run → its step → the step's upstream request, with the
// request's route template, status and waits; and a step run made over REST. No query string,
// credential or body in any of it.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { taskboardRest } from '../helpers/taskboard.ts'

let t: TestService
let conn: string
let toolId: string
before(async () => {
  t = await startTestService()
  const demo = t.taskboard.demo
  conn = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: demo.key, token: demo.token, secret: demo.secret },
    })
  ).body.id
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Timeline agent',
    scope: { boards: [demo.boardId] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const tool = await t.api('POST', `/v1/agents/${agent.body.id}/tools`, {
    name: 'Read the new card',
    steps: [
      {
        name: 'read',
        stepId: 'taskboard.get_card',
        connectionId: conn,
        input: { idCard: '{{event.data.card.id}}' },
      },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  toolId = tool.body.id
  const trig = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn,
    config: { idBoard: demo.boardId },
    target: { type: 'tool', toolId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
})
after(() => t?.close())

const secretsOf = () => [t.taskboard.demo.key, t.taskboard.demo.token, t.taskboard.demo.secret]

test('an upstream change through to the tool run’s upstream request, as one timeline', async () => {
  const card = await taskboardRest(t.taskboard, 'POST', '/1/cards', {
    idList: t.taskboard.demo.listIds[0],
    name: 'A card for the timeline',
  })
  const delivery = await eventually(
    async () => (await t.api('GET', '/v1/deliveries?limit=10')).body.deliveries as any[],
    (ds) => ds.some((d) => d.toolRunId && d.status === 'delivered'),
  ).then((ds) => ds.find((d) => d.toolRunId))
  const res = await t.api('GET', `/v1/timelines/${delivery.toolRunId}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const tl = res.body
  assert.equal(tl.kind, 'tool_run')
  const kinds = tl.spans.map((s: any) => [s.kind, s.depth])
  assert.deepEqual(
    kinds.filter(([k]: [string]) => k !== 'upstream'),
    [
      ['event', 0],
      ['delivery', 1],
      ['attempt', 2],
      ['tool_run', 3],
      ['step', 4],
      ['request', 5],
    ],
  )
  const request = tl.spans.find((s: any) => s.kind === 'request')
  assert.equal(request.label, 'GET /1/cards/{id} → 200')
  assert.equal(request.status, '200')
  assert.equal(typeof request.waits.pacingMs, 'number')
  assert.equal(typeof request.waits.budgetMs, 'number')
  const step = tl.spans.find((s: any) => s.kind === 'step')
  assert.match(step.label, /step 1 \(read\): taskboard\.get_card/)
  assert.equal(step.status, 'succeeded')
  // In order: received, matched, run, the step and its request inside the run.
  const at = (kind: string) => Date.parse(tl.spans.find((s: any) => s.kind === kind).start)
  assert.ok(at('event') <= at('delivery'))
  assert.ok(at('tool_run') <= at('step') + 1)
  assert.ok(at('step') <= at('request') + 1)
  const run = tl.spans.find((s: any) => s.kind === 'tool_run')
  assert.ok(request.offsetMs + request.durationMs <= run.offsetMs + run.durationMs + 2)
  assert.ok(!JSON.stringify(tl).includes(card.id), 'identifiers in routes are templated')
  for (const secret of secretsOf()) assert.ok(!JSON.stringify(tl).includes(secret))

  // The same run from its event and from its delivery.
  const byEvent = (await t.api('GET', `/v1/timelines/${delivery.eventId}`)).body
  assert.equal(byEvent.kind, 'event')
  assert.deepEqual(
    byEvent.spans.map((s: any) => s.id),
    tl.spans.map((s: any) => s.id),
  )
  const byDelivery = (await t.api('GET', `/v1/timelines/${delivery.id}`)).body
  assert.equal(byDelivery.kind, 'delivery')
  assert.equal(byDelivery.spans.length, tl.spans.length)
})

test('a step run over REST: the step and each of its upstream requests', async () => {
  const made = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: conn,
    input: { idList: t.taskboard.demo.listIds[0], name: 'Made over REST' },
  })
  assert.equal(made.status, 200)
  const tl = (await t.api('GET', `/v1/timelines/${made.body.meta.runId}`)).body
  assert.equal(tl.kind, 'step_run')
  assert.deepEqual(
    tl.spans.map((s: any) => [s.kind, s.depth, s.label]),
    [
      ['step', 0, 'taskboard.create_card'],
      ['request', 1, 'POST /1/cards → 200'],
    ],
  )
  for (const secret of secretsOf()) assert.ok(!JSON.stringify(tl).includes(secret))
  const missing = await t.api('GET', '/v1/timelines/run_nothing')
  assert.equal(missing.status, 404)
  assert.equal(missing.body.error.code, 'RUN_NOT_FOUND')
  const other = await t.api('GET', '/v1/timelines/xyz')
  assert.equal(other.status, 400)
})
