// A connector is its folder and one line of the connectors list. The shelf connector lives only
// in the tests (test/connectors/extra/shelf: one place kind, `shelf`, listed in a scope as
// `shelves`; one step; one polled trigger), added to the shipped ones by the tests' list
// (test/connectors/extra/index.ts). Nothing else knows it, yet agents are scoped to its shelves
// through the API as they are to boards and repositories: a step on a shelf in the scope runs,
// one on another shelf is refused before anything is sent, a trigger can only watch a shelf in
// the scope, and it fires for the agent while the shelf stays in its scope.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { deliveryPayloadChecker } from '../helpers/delivery-payload.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { testConnectors } from './extra/index.ts'
import { type ShelfUpstream, startShelfUpstream } from './extra/shelf/upstream.ts'

let t: TestService
let up: ShelfUpstream
let conn: string
let agentId: string
let agentKey: string
let triggerId: string
const receiver = new Receiver()

before(async () => {
  up = await startShelfUpstream()
  await receiver.start()
  t = await startTestService({ connectors: testConnectors, baseUrls: { shelf: up.url } })
  const made = await t.api('POST', '/v1/connections', {
    connector: 'shelf',
    authMethod: 'api_key',
    credentials: { apiKey: up.apiKey },
  })
  assert.equal(made.status, 201, JSON.stringify(made.body))
  conn = made.body.id
  up.put('shelf-a', 'i1', 'A cup')
  up.put('shelf-b', 'i2', 'A secret')
})
after(async () => {
  await t.close()
  await receiver.close()
  await up.close()
})

test("an agent's scope takes the shelves the connector declares, in the same shape as boards and repositories", async () => {
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Shelf A',
    scope: { shelves: ['shelf-a'], boards: [] },
    connectionIds: [conn],
    delivery: { type: 'webhook', url: receiver.url },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  assert.deepEqual(agent.body.scope, { boards: [], repositories: [], shelves: ['shelf-a'] })
  agentId = agent.body.id
  receiver.secret = agent.body.signingSecret
  agentKey = (await t.api('POST', `/v1/agents/${agentId}/keys`, {})).body.key

  // The shelf's id format is the connector's, checked where the agent is written.
  const bad = await t.api('POST', '/v1/agents', {
    name: 'Bad shelf',
    scope: { shelves: ['Shelf A'] },
    delivery: { type: 'stream' },
  })
  assert.equal(bad.status, 400, JSON.stringify(bad.body))
  assert.match(JSON.stringify(bad.body.error), /scope\.shelves\.0.*must be a shelf id/)

  // The catalog tells clients (the dashboard's scope editor) the kinds of place there are.
  const catalog = (await t.api('GET', '/v1/catalog')).body
  const places = catalog.connectors.flatMap((c: any) => c.places.map((p: any) => `${c.id}: ${p.scopeKey}`))
  assert.deepEqual(places, ['taskboard: boards', 'codehost: repositories', 'shelf: shelves'])
  // Forms label a field with the title its connector gives the name (and the shipped ones keep theirs).
  const inputOf = (id: string) =>
    catalog.connectors.flatMap((c: any) => c.steps).find((st: any) => st.id === id).inputSchema.properties
  assert.equal(inputOf('shelf.get_item').shelf.title, 'Shelf id')
  assert.equal(inputOf('shelf.get_item').item.title, 'Item')
  assert.equal(inputOf('codehost.get_repository').repo.title, 'Repository')

  // The API document says so too: the agent's scope lists shelves beside boards and repositories.
  const doc = (await t.api('GET', '/openapi.json')).body
  assert.deepEqual(Object.keys(doc.components.schemas.Agent.properties.scope.properties), [
    'boards',
    'repositories',
    'shelves',
  ])
})

test('a step on a shelf in the scope runs; one on another shelf is refused before anything is sent', async () => {
  const run = (shelf: string, item: string) =>
    t.api('POST', '/v1/steps/shelf.get_item/run', { connectionId: conn, input: { shelf, item } }, agentKey)
  const got = await run('shelf-a', 'i1')
  assert.equal(got.status, 200, JSON.stringify(got.body))
  assert.equal(got.body.output.name, 'A cup')

  const asked = up.requests.length
  const refused = await run('shelf-b', 'i2')
  assert.equal(refused.status, 403, JSON.stringify(refused.body))
  assert.equal(refused.body.error.code, 'SCOPE_DENIED')
  assert.match(refused.body.error.message, /shelf shelf-b.*outside the agent's scope \(shelves: shelf-a\)/)
  assert.equal(up.requests.length, asked, 'nothing reached the upstream')
})

test("its trigger watches only a shelf in the agent's scope, and fires for the agent while it stays there", async () => {
  const make = (shelf: string) =>
    t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'shelf.new_item',
      connectionId: conn,
      config: { shelf },
    })
  const outside = await make('shelf-b')
  assert.equal(outside.status, 403, JSON.stringify(outside.body))
  assert.equal(outside.body.error.code, 'SCOPE_DENIED')
  assert.match(outside.body.error.message, /shelf shelf-b is outside the agent's scope/)

  const made = await make('shelf-a')
  assert.equal(made.status, 201, JSON.stringify(made.body))
  triggerId = made.body.id
  const pollNow = async () => {
    const res = await t.api('POST', `/v1/triggers/${triggerId}/poll`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body.events as number
  }
  assert.equal(await pollNow(), 0, 'the first poll notes what is on the shelf')

  up.put('shelf-a', 'i3', 'A plate')
  assert.equal(await pollNow(), 1)
  const got = await receiver.until((r) => r.length > 0)
  assert.equal(got[0].verified, true)
  assert.equal(got[0].body.data.trigger, 'shelf.new_item')
  assert.deepEqual(got[0].body.data.event.refs, { shelf: 'shelf-a', item: 'i3' })
  assert.equal(got[0].body.data.event.data.item.name, 'A plate')
  // The push is the agent payload of the contract, whose refs name the shelf: the schema it is
  // serialised from and the /openapi.json `delivery` webhook (what the SDK's types come from).
  ;(await deliveryPayloadChecker(t.url, testConnectors))(got[0].body)
  const doc = (await t.api('GET', '/openapi.json')).body
  assert.equal(
    doc.webhooks.delivery.post.requestBody.content['application/json'].schema.$ref,
    '#/components/schemas/DeliveryPayload',
  )
  const refs = doc.components.schemas.EventRefs
  assert.deepEqual(Object.keys(refs.properties), [
    'board',
    'list',
    'card',
    'repository',
    'owner',
    'shelf',
    'item',
    'account',
    'resource',
    'unattributed',
  ])
  assert.equal(
    doc.components.schemas.DeliveryPayload.properties.data.properties.event.properties.refs.$ref,
    '#/components/schemas/EventRefs',
  )

  // Taken out of the scope, the shelf's new items no longer reach the agent.
  const narrowed = await t.api('PATCH', `/v1/agents/${agentId}`, { scope: { shelves: [] } })
  assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body))
  up.put('shelf-a', 'i4', 'A fork')
  assert.equal(await pollNow(), 0)
  assert.equal(receiver.received.length, 1)
})

test("the loop guard knows an item the agent's own tool put on the shelf by the ref the connector declares", {
  timeout: 60_000,
}, async () => {
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Echo',
    scope: { shelves: ['shelf-loop'] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const tool = await t.api('POST', `/v1/agents/${agent.body.id}/tools`, {
    name: 'Echo',
    description: 'Answers every new item with another on the same shelf.',
    steps: [
      {
        stepId: 'shelf.put_item',
        connectionId: conn,
        input: { shelf: 'shelf-loop', name: 'echo of {{event.data.item.name}}' },
      },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  const trigger = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'shelf.new_item',
    connectionId: conn,
    config: { shelf: 'shelf-loop' },
    target: { type: 'tool', toolId: tool.body.id },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
  const pollNow = async () => {
    const res = await t.api('POST', `/v1/triggers/${trigger.body.id}/poll`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    await t.service.engine.events.jobs.idle()
    return res.body.events as number
  }
  assert.equal(await pollNow(), 0)
  up.put('shelf-loop', 'by-hand', 'By hand')
  // The item by hand (depth 0) and each echo (the event's `item` is the id the step's output
  // named): depths 1, 2 and 3; the run for the third echo is refused.
  for (let i = 0; i < 4; i++) assert.equal(await pollNow(), 1)
  const refused = await eventually(
    async () =>
      (await t.api('GET', `/v1/deliveries?triggerId=${trigger.body.id}&status=failed`)).body.deliveries,
    (ds) => ds.length > 0,
    30_000,
  )
  assert.equal(refused.length, 1)
  assert.match(refused[0].lastError, /LOOP_DETECTED/)
  assert.match(refused[0].lastError, /depth 3/)
  const runs = (await t.api('GET', `/v1/agents/${agent.body.id}/tool-runs?limit=100`)).body.runs
  assert.equal(runs.length, 3)
  assert.equal(await pollNow(), 0, 'nothing more was put on the shelf')
})
