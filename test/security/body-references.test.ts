// Isolation through request bodies (issue 22): the route walk proves every path id of workspace A
// is refused to workspace B, but a write can also name A's objects inside its body. Here workspace
// B's owner names A's connection, agent and tool in every body that takes one: each is a clear 4xx
// (never 2xx, never 5xx), B gains nothing, and A's objects are as they were.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { mintDemoToken, taskboardRest } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let otherKey: string
const a = {} as { connection: string; agent: string; tool: string; trigger: string }
let bAgent: string

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({ taskboard: sandbox })
  const token = await mintDemoToken(sandbox)
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
    second: true,
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  a.connection = conn.body.id
  const agent = await t.api('POST', '/v1/agents', {
    name: 'A agent',
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [a.connection],
    delivery: { type: 'stream' },
  })
  a.agent = agent.body.id
  const trigger = await t.api('POST', `/v1/agents/${a.agent}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: a.connection,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
  a.trigger = trigger.body.id
  const tool = await t.api('POST', `/v1/agents/${a.agent}/tools`, {
    name: 'File a card',
    steps: [
      {
        stepId: 'taskboard.create_card',
        connectionId: a.connection,
        input: { idList: sandbox.demo.listIds[0], name: '{{input.title}}' },
      },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  a.tool = tool.body.id

  const other = await t.service.engine.apiKeys.createWorkspace('B')
  otherKey = (
    await t.service.engine.apiKeys.create({
      workspaceId: other.id,
      kind: 'workspace',
      role: 'owner',
      name: 'b',
    })
  ).key
  const mine = await t.api(
    'POST',
    '/v1/agents',
    { name: 'B agent', scope: { boards: [sandbox.demo.boardId] }, delivery: { type: 'stream' } },
    otherKey,
  )
  assert.equal(mine.status, 201, JSON.stringify(mine.body))
  bAgent = mine.body.id
})
after(async () => {
  await t?.close()
  await sandbox?.close()
})

test("a body naming another workspace's connection, agent or tool is refused, and nothing changes on either side", async () => {
  const attempts: Array<[string, string, unknown]> = [
    ['POST', '/v1/agents', { name: 'B thief', connectionIds: [a.connection], delivery: { type: 'stream' } }],
    ['PATCH', `/v1/agents/${bAgent}`, { connectionIds: [a.connection] }],
    [
      'POST',
      `/v1/agents/${bAgent}/triggers`,
      {
        trigger: 'taskboard.new_card',
        connectionId: a.connection,
        config: { idBoard: sandbox.demo.boardId },
      },
    ],
    [
      'POST',
      `/v1/agents/${bAgent}/tools`,
      {
        name: 'Steal',
        steps: [
          {
            stepId: 'taskboard.create_card',
            connectionId: a.connection,
            input: { idList: sandbox.demo.listIds[0], name: 'x' },
          },
        ],
      },
    ],
    ['POST', '/v1/steps/taskboard.get_boards/run', { connectionId: a.connection, input: {} }],
    [
      'POST',
      '/v1/steps/taskboard.create_card/run',
      { connectionId: a.connection, input: { idList: sandbox.demo.listIds[0], name: 'from B' } },
    ],
  ]
  const cardsOnList = async () =>
    ((await taskboardRest(sandbox, 'GET', `/1/lists/${sandbox.demo.listIds[0]}/cards`)) as unknown[]).length
  const cardsBefore = await cardsOnList()
  for (const [method, path, body] of attempts) {
    const res = await t.api(method, path, body, otherKey)
    assert.ok(
      res.status >= 400 && res.status < 500,
      `${method} ${path} naming A's connection: ${res.status} ${JSON.stringify(res.body)}`,
    )
    // Refused for the connection it names (CONNECTION_NOT_FOUND, or NOT_ALLOWED for the agent),
    // not for the shape of the body: the check under test ran.
    assert.match(res.body.error?.code ?? '', /^CONNECTION_NOT_(FOUND|ALLOWED)$/, `${method} ${path}`)
    assert.ok(!JSON.stringify(res.body).includes('A agent'), `${method} ${path}: nothing of A in the answer`)
  }
  assert.equal(await cardsOnList(), cardsBefore, 'no card was made with A’s credentials')

  // B gained nothing.
  const bAgents = (await t.api('GET', '/v1/agents', undefined, otherKey)).body.agents
  assert.deepEqual(
    bAgents.map((x: { name: string }) => x.name),
    ['B agent'],
  )
  const bSelf = (await t.api('GET', `/v1/agents/${bAgent}`, undefined, otherKey)).body
  assert.deepEqual(bSelf.connectionIds, [])
  assert.deepEqual(
    (await t.api('GET', `/v1/agents/${bAgent}/triggers`, undefined, otherKey)).body.triggers,
    [],
  )
  assert.deepEqual((await t.api('GET', `/v1/agents/${bAgent}/tools`, undefined, otherKey)).body.tools, [])
  assert.deepEqual((await t.api('GET', '/v1/runs', undefined, otherKey)).body.runs ?? [], [])

  // A is as it was.
  const aSelf = (await t.api('GET', `/v1/agents/${a.agent}`)).body
  assert.deepEqual(aSelf.connectionIds, [a.connection])
  assert.equal((await t.api('GET', `/v1/triggers/${a.trigger}`)).body.status, 'active')
  assert.equal((await t.api('GET', `/v1/agents/${a.agent}/tools/${a.tool}`)).status, 200)
  assert.equal((await t.api('GET', `/v1/connections/${a.connection}`)).body.status, 'active')
})
