// The MCP endpoint, driven by the official MCP client over Streamable HTTP against a real
// Patchbay and the sandbox task-board: the agent sees exactly its allowed tools (from the
// registry), calls run as the agent (scope checked before anything is sent upstream), errors
// are tool errors with code and hint, and the agent's events are resources.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { eventually } from '../helpers/receiver.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control, mintTaskboardToken } from '../helpers/taskboard.ts'

let t: TestService
let conn: string
let contactConn: string
let agentId: string
let agentKey: string
let toolId: string
const outside = { board: '', list: '' }

async function connect(key: string, query = ''): Promise<Client> {
  const client = new Client({ name: 'patchbay-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  })
  await client.connect(transport)
  return client
}

const tbAuth = () =>
  `OAuth oauth_consumer_key="${t.taskboard.demo.key}", oauth_token="${t.taskboard.demo.token}"`

/** Rejects with the transport's HTTP error: its status and the API's error body. */
const refused = (status: number, code: string) => (err: any) => {
  assert.equal(err.code, status, String(err))
  assert.match(err.message, new RegExp(code))
  return true
}

const errorOf = (result: any) => {
  assert.equal(result.isError, true, JSON.stringify(result))
  return JSON.parse(result.content[0].text).error
}

before(async () => {
  t = await startTestService({ contactdata: true })
  conn = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: {
        key: t.taskboard.demo.key,
        token: t.taskboard.demo.token,
        secret: t.taskboard.demo.secret,
      },
    })
  ).body.id
  // A contact-data connection in the workspace that the agent is not given.
  contactConn = (
    await t.api('POST', '/v1/connections', {
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey: t.contactdata!.demo.apiKey },
    })
  ).body.id
  assert.ok(contactConn)
  const seeded = await control(t.taskboard, 'POST', '/seed', {
    as: 'demo',
    boards: [{ name: 'Outside', lists: [{ name: 'Secret' }] }],
  })
  outside.board = seeded.boards[0].id
  outside.list = seeded.boards[0].lists[0].id
  const agent = await t.api('POST', '/v1/agents', {
    name: 'MCP agent',
    scope: { boards: [t.taskboard.demo.boardId] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  agentId = agent.body.id
  agentKey = (await t.api('POST', `/v1/agents/${agentId}/keys`, { name: 'mcp' })).body.key
  const tool = await t.api('POST', `/v1/agents/${agentId}/tools`, {
    name: 'Copy a card',
    description: 'Copies a card to a list.',
    steps: [
      {
        name: 'source',
        stepId: 'taskboard.get_card',
        connectionId: conn,
        input: { idCard: '{{input.cardId}}' },
      },
      {
        stepId: 'taskboard.create_card',
        connectionId: conn,
        input: { idList: '{{input.targetList}}', name: 'Copy of {{steps.source.output.name}}' },
      },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  toolId = tool.body.id
})
after(() => t.close())

test("tools/list shows exactly the agent's allowed steps and tools, described from the registry", async () => {
  const client = await connect(agentKey)
  try {
    const { tools } = await client.listTools()
    // Every task-board step (the agent has a task-board connection) and the agent's tool.
    const steps = [...t.service.engine.registry.steps.keys()].filter((id) => id.startsWith('taskboard.'))
    assert.deepEqual(
      tools.map((x) => x.name).sort(),
      [...steps.map((id) => id.replace('.', '_')), 'tool_copy_a_card', 'describe_tool'].sort(),
    )
    const catalog = (await t.api('GET', '/v1/steps/taskboard.get_card')).body
    const getCard = tools.find((x) => x.name === 'taskboard_get_card')!
    assert.equal(getCard.title, catalog.name)
    // The list is lean: the step's whole description and the schema without the fields' guidance…
    assert.equal(getCard.description, catalog.description)
    assert.deepEqual(getCard.annotations, { readOnlyHint: true, idempotentHint: true })
    const { description: _guidance, title: _label, ...idCard } = catalog.inputSchema.properties.idCard
    assert.deepEqual(getCard.inputSchema.properties!.idCard, idCard)
    assert.deepEqual((getCard.inputSchema.properties as any).connectionId.enum, [conn])
    assert.deepEqual(getCard.inputSchema.required, ['idCard'])
    assert.equal(getCard.outputSchema, undefined)
    // …and describe_tool tells the rest: the whole description, the fields' guidance and the output.
    const described: any = await client.callTool({
      name: 'describe_tool',
      arguments: { name: 'taskboard_get_card' },
    })
    const full = JSON.parse(described.content[0].text)
    assert.match(full.description, new RegExp(catalog.description.slice(0, 40)))
    assert.equal(
      full.inputSchema.properties.idCard.description,
      catalog.inputSchema.properties.idCard.description,
    )
    assert.equal(full.outputSchema.type, 'object')
    assert.ok(tools.some((x) => x.name === 'describe_tool'))
    const apiCall = tools.find((x) => x.name === 'taskboard_api_call')!
    // MCP's defaults (destructive, not read-only) go unsaid.
    assert.equal(apiCall.annotations, undefined)
    const copy = tools.find((x) => x.name === 'tool_copy_a_card')!
    assert.deepEqual(Object.keys(copy.inputSchema.properties!).sort(), ['cardId', 'targetList'])
    assert.match(copy.description!, /Copies a card/)
  } finally {
    await client.close()
  }
})

test('a tool call runs the step against the sandbox and returns structured content', async () => {
  const client = await connect(agentKey)
  try {
    const result: any = await client.callTool({
      name: 'taskboard_create_card',
      arguments: { idList: t.taskboard.demo.listIds[0], name: 'Made over MCP' },
    })
    assert.equal(result.isError, undefined, JSON.stringify(result))
    assert.equal(result.structuredContent.name, 'Made over MCP')
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent)
    const upstream = await fetch(`${t.taskboard.url}/1/cards/${result.structuredContent.id}`, {
      headers: { authorization: tbAuth() },
    }).then((r) => r.json())
    assert.equal(upstream.name, 'Made over MCP')
    const read: any = await client.callTool({
      name: 'taskboard_get_card',
      arguments: { idCard: result.structuredContent.id, connectionId: conn },
    })
    assert.equal(read.structuredContent.name, 'Made over MCP')
  } finally {
    await client.close()
  }
})

test('an out-of-scope call is a tool error (SCOPE_DENIED with a hint) and reaches no upstream card route', async () => {
  const client = await connect(agentKey)
  const cards = await countRequests(t.taskboard, '/1/cards')
  try {
    const result = await client.callTool({
      name: 'taskboard_create_card',
      arguments: { idList: outside.list, name: 'Not allowed' },
    })
    const error = errorOf(result)
    assert.equal(error.code, 'SCOPE_DENIED')
    assert.match(error.message, new RegExp(outside.board))
    assert.ok(error.hint)
    assert.equal(await cards.count(), 0)
  } finally {
    await cards.stop()
    await client.close()
  }
})

test('a malformed call is a tool error naming the field; an unknown tool is a protocol error', async () => {
  const client = await connect(agentKey)
  try {
    const error = errorOf(
      await client.callTool({
        name: 'taskboard_create_card',
        arguments: { idList: t.taskboard.demo.listIds[0] },
      }),
    )
    assert.equal(error.code, 'VALIDATION_FAILED')
    assert.match(error.message, /name/)
    assert.ok(error.hint)
    const other = await mintTaskboardToken(t.taskboard)
    const notTheAgents = (
      await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: other.key, token: other.token },
      })
    ).body.id
    const notMine = errorOf(
      await client.callTool({
        name: 'taskboard_get_card',
        arguments: { idCard: 'a'.repeat(24), connectionId: notTheAgents },
      }),
    )
    assert.equal(notMine.code, 'CONNECTION_NOT_ALLOWED')
    const wrongKind = errorOf(
      await client.callTool({
        name: 'taskboard_get_card',
        arguments: { idCard: 'a'.repeat(24), connectionId: contactConn },
      }),
    )
    assert.equal(wrongKind.code, 'CONNECTION_CONNECTOR_MISMATCH')
    await assert.rejects(
      client.callTool({ name: 'contactdata_find_company', arguments: { domain: 'acme.com' } }),
      /no tool "contactdata_find_company"/,
    )
  } finally {
    await client.close()
  }
})

test("the agent's tools are MCP tools: a run that succeeds is structured, one that fails is a tool error", async () => {
  const client = await connect(agentKey)
  try {
    const card = (
      await t.api('POST', '/v1/steps/taskboard.create_card/run', {
        connectionId: conn,
        input: { idList: t.taskboard.demo.listIds[0], name: 'Original' },
      })
    ).body.output
    const ok: any = await client.callTool({
      name: 'tool_copy_a_card',
      arguments: { cardId: card.id, targetList: t.taskboard.demo.listIds[1] },
    })
    assert.equal(ok.isError, undefined, JSON.stringify(ok))
    assert.equal(ok.structuredContent.status, 'succeeded')
    assert.equal(ok.structuredContent.toolId, toolId)
    assert.equal(ok.structuredContent.steps[1].output.name, 'Copy of Original')
    const failed = errorOf(
      await client.callTool({
        name: 'tool_copy_a_card',
        arguments: { cardId: card.id, targetList: outside.list },
      }),
    )
    assert.equal(failed.code, 'SCOPE_DENIED')
    assert.equal(failed.details.run.steps[1].status, 'failed')
  } finally {
    await client.close()
  }
})

test('a wrong or revoked key is refused with 401 and no session; a workspace key must name the agent', async () => {
  await assert.rejects(connect('pb_agent_not_a_key'), refused(401, 'UNAUTHORIZED'))
  const key = await t.api('POST', `/v1/agents/${agentId}/keys`, { name: 'short-lived' })
  const client = await connect(key.body.key)
  assert.ok((await client.listTools()).tools.length > 0)
  await client.close()
  assert.equal((await t.api('DELETE', `/v1/agents/${agentId}/keys/${key.body.id}`)).status, 204)
  await assert.rejects(connect(key.body.key), refused(401, 'revoked'))
  const res = await fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
  assert.equal(res.status, 401)
  assert.equal(res.headers.get('mcp-session-id'), null)

  await assert.rejects(connect(t.adminKey), refused(403, 'AGENT_REQUIRED'))
  const asAgent = await connect(t.adminKey, `?agent=${agentId}`)
  try {
    assert.ok((await asAgent.listTools()).tools.some((x) => x.name === 'taskboard_get_card'))
    const denied = errorOf(
      await asAgent.callTool({
        name: 'taskboard_create_card',
        arguments: { idList: outside.list, name: 'x' },
      }),
    )
    assert.equal(denied.code, 'SCOPE_DENIED')
  } finally {
    await asAgent.close()
  }
})

test('with several connections of a connector, connectionId must be given', async () => {
  const other = await mintTaskboardToken(t.taskboard)
  const second = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: other.key, token: other.token },
    })
  ).body.id
  const agent = (
    await t.api('POST', '/v1/agents', {
      name: 'Two connections',
      scope: { boards: [t.taskboard.demo.boardId] },
      connectionIds: [conn, second],
      delivery: { type: 'stream' },
    })
  ).body
  const key = (await t.api('POST', `/v1/agents/${agent.id}/keys`, {})).body.key
  const client = await connect(key)
  try {
    const tools = (await client.listTools()).tools
    const create = tools.find((x) => x.name === 'taskboard_create_card')!
    assert.deepEqual((create.inputSchema.properties as any).connectionId.enum, [conn, second])
    const error = errorOf(
      await client.callTool({
        name: 'taskboard_create_card',
        arguments: { idList: t.taskboard.demo.listIds[0], name: 'Which one?' },
      }),
    )
    assert.equal(error.code, 'CONNECTION_AMBIGUOUS')
    assert.match(error.message, new RegExp(`${conn}.*${second}`))
    const ok: any = await client.callTool({
      name: 'taskboard_create_card',
      arguments: { idList: t.taskboard.demo.listIds[0], name: 'This one', connectionId: conn },
    })
    assert.equal(ok.structuredContent.name, 'This one')
    // The REST route asks the same of an agent key.
    const rest = await t.api(
      'POST',
      '/v1/steps/taskboard.create_card/run',
      { input: { idList: t.taskboard.demo.listIds[0], name: 'Which one?' } },
      key,
    )
    assert.equal(rest.status, 400)
    assert.equal(rest.body.error.code, 'CONNECTION_AMBIGUOUS')
  } finally {
    await client.close()
  }
})

test("POST /v1/steps/:id/run with an agent key defaults to the agent's only connection of the connector, like MCP", async () => {
  const run = await t.api(
    'POST',
    '/v1/steps/taskboard.create_card/run',
    { input: { idList: t.taskboard.demo.listIds[0], name: 'No connectionId given' } },
    agentKey,
  )
  assert.equal(run.status, 200, JSON.stringify(run.body))
  assert.equal(run.body.output.name, 'No connectionId given')
  const runs = (await t.api('GET', '/v1/runs?limit=5', undefined, agentKey)).body.runs
  assert.equal(runs.find((r: any) => r.id === run.body.meta.runId).connectionId, conn)
  // A connector the agent has no connection of is still refused, naming what to do.
  const none = await t.api(
    'POST',
    '/v1/steps/contactdata.find_company/run',
    { input: { domain: 'acme.com' } },
    agentKey,
  )
  assert.equal(none.status, 400)
  assert.equal(none.body.error.code, 'CONNECTION_REQUIRED')
  // A workspace key still names its connection.
  const admin = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    input: { idList: t.taskboard.demo.listIds[0], name: 'x' },
  })
  assert.equal(admin.body.error.code, 'CONNECTION_REQUIRED')
})

test("the agent's recent events are MCP resources", async () => {
  const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn,
    config: { idBoard: t.taskboard.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: conn,
    input: { idList: t.taskboard.demo.listIds[0], name: 'An event for MCP' },
  })
  const client = await connect(agentKey)
  try {
    const recent = await eventually(
      async () => {
        const r = await client.readResource({ uri: 'patchbay://events/recent' })
        return JSON.parse((r.contents[0] as { text: string }).text)
      },
      (b: any) => b.deliveries.some((d: any) => d.payload.data.event.data.card.name === 'An event for MCP'),
    )
    const delivery = recent.deliveries.find(
      (d: any) => d.payload.data.event.data.card.name === 'An event for MCP',
    )
    assert.equal(delivery.payload.data.trigger, 'taskboard.new_card')
    const { resources } = await client.listResources()
    assert.ok(resources.some((r) => r.uri === 'patchbay://events/recent'))
    assert.ok(resources.some((r) => r.uri === `patchbay://deliveries/${delivery.id}`))
    const { resourceTemplates } = await client.listResourceTemplates()
    assert.equal(resourceTemplates[0].uriTemplate, 'patchbay://deliveries/{deliveryId}')
    const one = await client.readResource({ uri: `patchbay://deliveries/${delivery.id}` })
    assert.equal(JSON.parse((one.contents[0] as { text: string }).text).payload.id, delivery.payload.id)
    await assert.rejects(client.readResource({ uri: 'patchbay://deliveries/dlv_nope' }), /no delivery/)
  } finally {
    await client.close()
    await t.api('DELETE', `/v1/triggers/${trig.body.id}`)
  }
})

test('tools.json exports the same tools for OpenAI and Anthropic; function-call runs one', async () => {
  const openai = await t.api('GET', `/v1/agents/${agentId}/tools.json?format=openai`, undefined, agentKey)
  assert.equal(openai.status, 200, JSON.stringify(openai.body))
  const create = openai.body.find((f: any) => f.function.name === 'taskboard_create_card')
  assert.equal(create.type, 'function')
  assert.deepEqual(create.function.parameters.required, ['idList', 'name'])
  const anthropic = await t.api('GET', `/v1/agents/${agentId}/tools.json?format=anthropic`)
  assert.deepEqual(
    anthropic.body.map((x: any) => x.name),
    openai.body.map((f: any) => f.function.name),
  )
  assert.deepEqual(
    anthropic.body.find((x: any) => x.name === 'taskboard_create_card').input_schema,
    create.function.parameters,
  )
  const ran = await t.api(
    'POST',
    `/v1/agents/${agentId}/function-call`,
    {
      name: 'taskboard_create_card',
      arguments: JSON.stringify({ idList: t.taskboard.demo.listIds[0], name: 'From a function call' }),
    },
    agentKey,
  )
  assert.equal(ran.status, 200, JSON.stringify(ran.body))
  assert.equal(ran.body.output.name, 'From a function call')
  const denied = await t.api(
    'POST',
    `/v1/agents/${agentId}/function-call`,
    { name: 'taskboard_create_card', arguments: { idList: outside.list, name: 'no' } },
    agentKey,
  )
  assert.equal(denied.status, 403)
  assert.equal(denied.body.error.code, 'SCOPE_DENIED')
  const other = await t.api('GET', `/v1/agents/agt_someone_else/tools.json`, undefined, agentKey)
  assert.equal(other.status, 403)
  const bad = await t.api('GET', `/v1/agents/${agentId}/tools.json?format=mistral`)
  assert.equal(bad.status, 400)
})
