// A small tool surface, through the official MCP client against a real Patchbay and the sandboxes:
// an agent lists exactly the steps and tools it is given (by step, by whole connector, by tool);
// a call for a tool it was not given is refused saying so; and in discovery mode two tools,
// find_tools and call_tool, reach every step of its selection in a few kilobytes. An agent
// without a selection lists what it always did.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { toStrictJsonSchema } from 'openai/lib/transform.js'
import { connectWithToken, mintToken } from '../helpers/codehost.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let connections: string[]
const clients: Client[] = []

before(async () => {
  t = await startTestService({ contactdata: true, codehost: true })
  const taskboard = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: {
      key: t.taskboard.demo.key,
      token: t.taskboard.demo.token,
      secret: t.taskboard.demo.secret,
    },
  })
  const contactdata = await t.api('POST', '/v1/connections', {
    connector: 'contactdata',
    authMethod: 'api_key',
    credentials: { apiKey: t.contactdata!.demo.apiKey },
  })
  const codehost = await connectWithToken(
    t,
    await mintToken(t.codehost!, { kind: 'classic', scopes: ['repo', 'workflow', 'gist', 'project'] }),
  )
  connections = [taskboard.body.id, contactdata.body.id, codehost]
})
after(async () => {
  for (const c of clients) await c.close()
  await t.close()
})

async function agentWith(toolSelection?: unknown) {
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Selective',
    scope: { boards: [t.taskboard.demo.boardId], repositories: [] },
    connectionIds: connections,
    delivery: { type: 'stream' },
    ...(toolSelection === undefined ? {} : { toolSelection }),
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const key = (await t.api('POST', `/v1/agents/${agent.body.id}/keys`, {})).body.key
  const client = new Client({ name: 'patchbay-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  )
  clients.push(client)
  return { id: agent.body.id as string, view: agent.body, key: key as string, client }
}

const FIVE = [
  'taskboard.create_card',
  'taskboard.get_card',
  'codehost.get_issue_assignees',
  'codehost.list_commits',
  'contactdata.find_company',
]

test('an agent without a selection lists every step of its connections and describe_tool, as before', async () => {
  const { client, view } = await agentWith()
  assert.equal(view.toolSelection, null)
  const list = await client.listTools()
  const steps = [...t.service.engine.registry.steps.keys()].filter((id) => !id.startsWith('http.'))
  assert.equal(list.tools.length, steps.length + 1)
  assert.ok(list.tools.some((x) => x.name === 'describe_tool'))
})

test('an agent with a selection of 5 steps lists those 5 tools; any other is refused saying so', async () => {
  const { id, key, client, view } = await agentWith({ steps: FIVE })
  assert.deepEqual(view.toolSelection, { steps: FIVE, discovery: false })
  const { tools } = await client.listTools()
  assert.deepEqual(tools.map((x) => x.name).sort(), FIVE.map((s) => s.replace('.', '_')).sort())
  // A selected step runs.
  const made: any = await client.callTool({
    name: 'taskboard_create_card',
    arguments: { idList: t.taskboard.demo.listIds[0], name: 'Selected' },
  })
  assert.equal(made.isError, undefined, JSON.stringify(made))
  assert.equal(made.structuredContent.name, 'Selected')
  // One of its connections' steps it was not given: a clear refusal, over MCP and function calling.
  await assert.rejects(client.callTool({ name: 'taskboard_get_boards', arguments: {} }), (err: any) => {
    assert.equal(err.code, -32602)
    assert.match(
      err.message,
      /"taskboard_get_boards" is not among this agent's tools: its tool selection leaves it out/,
    )
    return true
  })
  const refused = await t.api('POST', `/v1/agents/${id}/function-call`, { name: 'taskboard_get_boards' }, key)
  assert.equal(refused.body.error.code, 'TOOL_NOT_FOUND')
  assert.match(refused.body.error.hint, /toolSelection/)
  // The exports list the same five.
  const openai = await t.api('GET', `/v1/agents/${id}/tools.json?format=openai`, undefined, key)
  assert.equal(openai.body.length, 5)
})

test('a whole connector, and the agent’s own tools by name', async () => {
  const { id, client } = await agentWith({ steps: ['contactdata'], tools: ['Copy a card'] })
  for (const name of ['Copy a card', 'Other']) {
    const made = await t.api('POST', `/v1/agents/${id}/tools`, {
      name,
      steps: [
        { stepId: 'taskboard.get_card', connectionId: connections[0], input: { idCard: '{{input.card}}' } },
      ],
    })
    assert.equal(made.status, 201, JSON.stringify(made.body))
  }
  const { tools } = await client.listTools()
  const contactdata = [...t.service.engine.registry.steps.keys()].filter((s) => s.startsWith('contactdata.'))
  assert.deepEqual(
    tools.map((x) => x.name).sort(),
    [...contactdata.map((s) => s.replace('.', '_')), 'tool_copy_a_card'].sort(),
  )
})

test('discovery mode: two tools in a few kilobytes find and call any step of the selection', async () => {
  const { id, key, client } = await agentWith({ discovery: true })
  const list = await client.listTools()
  assert.deepEqual(list.tools.map((x) => x.name).sort(), ['call_tool', 'find_tools'])
  const bytes = JSON.stringify(list).length
  assert.ok(bytes < 3000, `tools/list is ${bytes} bytes`)
  const found: any = await client.callTool({ name: 'find_tools', arguments: { query: 'create a card' } })
  assert.equal(
    found.structuredContent.tools[0].name,
    'taskboard_create_card',
    JSON.stringify(found.structuredContent),
  )
  assert.ok(found.structuredContent.tools[0].inputSchema.properties.idList)
  const runs: any = await client.callTool({
    name: 'find_tools',
    arguments: { query: 'workflow runs', limit: 2 },
  })
  assert.deepEqual(runs.structuredContent.tools.map((x: any) => x.name).sort(), [
    'codehost_get_workflow_run',
    'codehost_list_workflow_runs',
  ])
  const made: any = await client.callTool({
    name: 'call_tool',
    arguments: {
      name: 'taskboard_create_card',
      arguments: { idList: t.taskboard.demo.listIds[0], name: 'Found and called' },
    },
  })
  assert.equal(made.isError, undefined, JSON.stringify(made))
  assert.equal(made.structuredContent.name, 'Found and called')
  // What call_tool refuses comes back as the tool's own error (an unknown argument, named).
  const wrong: any = await client.callTool({
    name: 'call_tool',
    arguments: { name: 'contactdata_search_companies', arguments: { query: 'acme' } },
  })
  assert.equal(wrong.isError, true)
  assert.match(wrong.content[0].text, /input\.query: is not an argument here/)
  // As OpenAI strict writes a call_tool call: the arguments as JSON text.
  const strict = await t.api('GET', `/v1/agents/${id}/tools.json?format=openai&strict=true`, undefined, key)
  for (const f of strict.body)
    assert.deepEqual(toStrictJsonSchema(f.function.parameters), f.function.parameters)
  const call = await t.api(
    'POST',
    `/v1/agents/${id}/function-call`,
    {
      name: 'call_tool',
      arguments: JSON.stringify({
        name: 'taskboard_get_card',
        arguments: JSON.stringify({ idCard: made.structuredContent.id, connectionId: null }),
      }),
    },
    key,
  )
  assert.equal(call.status, 200, JSON.stringify(call.body))
  assert.equal(call.body.output.name, 'Found and called')
})

test('a selection naming no step or connector is refused by name; null lists everything again', async () => {
  const { id, client } = await agentWith({ steps: ['taskboard.get_card'] })
  const bad = await t.api('PATCH', `/v1/agents/${id}`, {
    toolSelection: { steps: ['taskboard.get_card', 'taskbord'] },
  })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'VALIDATION_FAILED')
  assert.match(bad.body.error.message, /steps\.1: "taskbord" is neither a step id nor a connector id/)
  const cleared = await t.api('PATCH', `/v1/agents/${id}`, { toolSelection: null })
  assert.equal(cleared.status, 200, JSON.stringify(cleared.body))
  assert.equal(cleared.body.toolSelection, null)
  const { tools } = await client.listTools()
  assert.ok(tools.length > 40)
})
