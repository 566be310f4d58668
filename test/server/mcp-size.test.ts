// How much of an agent's context the tool list takes: MCP tools/list for the whole catalog (an
// agent with a connection of every connector) stays within 40 % of what it was before the
// list was made lean, and nothing an agent needs to call a tool is lost (every tool keeps its
// schema; describe_tool, and the describe resource of each tool, tell each one in full).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { connectWithToken, mintToken } from '../helpers/codehost.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

/**
 * tools/list for this same agent (45 steps of the three connectors) before it was made lean,
 * measured on 2026-11-23: full descriptions, every field's guidance and the output schemas.
 */
const BEFORE_BYTES = 108_704

let t: TestService
let client: Client
let agentId: string
let agentKey: string

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
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Everything',
    scope: { boards: [], repositories: [] },
    connectionIds: [taskboard.body.id, contactdata.body.id, codehost],
    delivery: { type: 'stream' },
  })
  agentId = agent.body.id
  agentKey = (await t.api('POST', `/v1/agents/${agentId}/keys`, { name: 'size' })).body.key
  client = new Client({ name: 'patchbay-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${agentKey}` } },
    }),
  )
})
after(async () => {
  await client?.close()
  await t.close()
})

/**
 * The budget: 40 % of the former size. It was a third while descriptions were cut to their first
 * sentence; since issue 25 each tool carries its whole description (never cut with "…"), and an
 * agent that needs a smaller list is given a tool selection or the discovery mode instead.
 */
const BUDGET = Math.floor(BEFORE_BYTES * 0.4)

test('tools/list for the whole catalog is at most 40 % of its former size', async () => {
  const list = await client.listTools()
  const steps = [...t.service.engine.registry.steps.keys()].filter((id) =>
    /^(taskboard|codehost|contactdata)\./.test(id),
  )
  assert.equal(list.tools.length, steps.length + 1, 'every step of the three connectors, and describe_tool')
  const bytes = JSON.stringify(list).length
  assert.ok(bytes <= BUDGET, `tools/list is ${bytes} bytes; at most ${BUDGET}`)
})

test('every tool keeps its schema and its whole description; describe_tool has the rest', async () => {
  const { tools } = await client.listTools()
  for (const tool of tools) {
    assert.ok(tool.description && !tool.description.endsWith('…'), `${tool.name}: ${tool.description}`)
    assert.equal(tool.inputSchema.type, 'object', tool.name)
    if (tool.name === 'describe_tool') continue
    const stepId = tool.name.replace('_', '.')
    const catalog = (await t.api('GET', `/v1/steps/${stepId}`)).body
    // Every field is there with what makes a value valid (types, enums, patterns, required).
    assert.deepEqual(
      Object.keys(tool.inputSchema.properties ?? {}).sort(),
      [...Object.keys(catalog.inputSchema.properties ?? {}), 'connectionId'].sort(),
      tool.name,
    )
    assert.deepEqual(tool.inputSchema.required ?? [], catalog.inputSchema.required ?? [], tool.name)
    const result: any = await client.callTool({ name: 'describe_tool', arguments: { name: tool.name } })
    const full = JSON.parse(result.content[0].text)
    assert.equal(full.description.includes(catalog.description), true, tool.name)
    assert.deepEqual(full.outputSchema ?? null, objectOrNull(catalog.outputSchema), tool.name)
  }
})

test('the function-calling exports are as lean, and describe_tool is one of their functions', async () => {
  const openai = (await t.api('GET', `/v1/agents/${agentId}/tools.json?format=openai`, undefined, agentKey))
    .body
  assert.ok(JSON.stringify(openai).length <= BUDGET)
  const call = await t.api(
    'POST',
    `/v1/agents/${agentId}/function-call`,
    { name: 'describe_tool', arguments: JSON.stringify({ name: 'taskboard_create_card' }) },
    agentKey,
  )
  assert.equal(call.status, 200, JSON.stringify(call.body))
  assert.match(call.body.output.inputSchema.properties.idList.description, /Create List/)
  const unknown = await t.api(
    'POST',
    `/v1/agents/${agentId}/function-call`,
    { name: 'describe_tool', arguments: { name: 'nope' } },
    agentKey,
  )
  assert.equal(unknown.status, 400)
  assert.match(unknown.body.error.message, /no tool "nope"/)
})

test('each tool in full is also a resource, patchbay://tools/{name}/describe, as describe_tool tells it', async () => {
  const { tools } = await client.listTools()
  const { resources } = await client.listResources()
  const describeUris = resources.map((r) => r.uri).filter((u) => u.endsWith('/describe'))
  assert.deepEqual(
    describeUris.sort(),
    tools
      .filter((x) => x.name !== 'describe_tool')
      .map((x) => `patchbay://tools/${x.name}/describe`)
      .sort(),
  )
  const { resourceTemplates } = await client.listResourceTemplates()
  assert.ok(resourceTemplates.some((r) => r.uriTemplate === 'patchbay://tools/{name}/describe'))
  for (const name of ['taskboard_create_card', 'codehost_create_pull_request']) {
    const read = await client.readResource({ uri: `patchbay://tools/${name}/describe` })
    assert.equal(read.contents[0].mimeType, 'application/json')
    const told: any = await client.callTool({ name: 'describe_tool', arguments: { name } })
    assert.deepEqual(await describeResource(name), JSON.parse(told.content[0].text), name)
  }
  const card = await describeResource('taskboard_create_card')
  assert.match(card.inputSchema.properties.idList.description, /Create List/)
  assert.ok(card.outputSchema.properties.id, 'the output schema is there')
  await assert.rejects(
    client.readResource({ uri: 'patchbay://tools/taskboard_nope/describe' }),
    /no tool "taskboard_nope"/,
  )
  // The instructions say where the full descriptions are.
  assert.match(client.getInstructions() ?? '', /patchbay:\/\/tools\/\{name\}\/describe/)
})

/** A tool's describe resource, read and parsed. */
async function describeResource(name: string): Promise<any> {
  const read = await client.readResource({ uri: `patchbay://tools/${name}/describe` })
  const [content] = read.contents
  assert.ok('text' in content, 'the resource is text')
  return JSON.parse(content.text)
}

function objectOrNull(schema: any) {
  if (schema?.type !== 'object') return null
  const { $schema: _dialect, ...rest } = schema
  return rest
}
