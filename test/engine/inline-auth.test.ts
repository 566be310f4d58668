// Credentials given inline only where the workspace allows them (issue 24): an agent key running
// the Task-Board API Call with `auth: api_key_token` is refused unless the workspace turns
// allowInlineAuth on, and the `auth` field is offered to models (tools.json, MCP) only then. A
// workspace key keeps using inline credentials as before.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let agentId: string
let agentKey: string
let boardConnection: string

before(async () => {
  t = await startTestService()
  boardConnection = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
    })
  ).body.id
  const agent = await t.api('POST', '/v1/agents', {
    name: 'inline',
    scope: { boards: [t.taskboard.demo.boardId] },
    connectionIds: [boardConnection],
    delivery: { type: 'stream' },
  })
  agentId = agent.body.id
  agentKey = (await t.api('POST', `/v1/agents/${agentId}/keys`, {})).body.key
})
after(() => t.close())

const inlineCall = {
  input: {
    auth: { type: 'api_key_token', key: '', token: '' },
    method: 'GET',
    endpoint: `/1/boards/{board}`,
  },
}
const call = () => {
  const body = structuredClone(inlineCall)
  body.input.auth.key = t.taskboard.demo.key
  body.input.auth.token = t.taskboard.demo.token
  body.input.endpoint = `/1/boards/${t.taskboard.demo.boardId}`
  return body
}
const apiCallSchema = async (format: 'openai' | 'mcp') => {
  const tools = (await t.api('GET', `/v1/agents/${agentId}/tools.json?format=${format}`, undefined, agentKey))
    .body
  const tool =
    format === 'openai'
      ? tools.find((x: any) => x.function.name === 'taskboard_api_call').function.parameters
      : tools.find((x: any) => x.name === 'taskboard_api_call').inputSchema
  return tool
}

test('by default an agent key may not give credentials inline, and models are not offered the auth field', async () => {
  assert.deepEqual((await t.api('GET', '/v1/workspace/settings')).body, {
    allowInlineAuth: false,
    allowedOrigins: [],
    notificationUrl: null,
  })
  const refused = await t.api('POST', '/v1/steps/taskboard.api_call/run', call(), agentKey)
  assert.equal(refused.status, 403, JSON.stringify(refused.body))
  assert.equal(refused.body.error.code, 'INLINE_CREDENTIALS_NOT_ALLOWED')
  assert.match(refused.body.error.hint, /allowInlineAuth/)
  // Through MCP's and function calling's schemas: no auth field to fill in.
  assert.equal('auth' in (await apiCallSchema('openai')).properties, false)
  assert.equal('auth' in (await apiCallSchema('mcp')).properties, false)
  // The same call through the agent's connection works.
  const viaConnection = await t.api(
    'POST',
    '/v1/steps/taskboard.api_call/run',
    {
      connectionId: boardConnection,
      input: { method: 'GET', endpoint: `/1/boards/${t.taskboard.demo.boardId}` },
    },
    agentKey,
  )
  assert.equal(viaConnection.status, 200, JSON.stringify(viaConnection.body))
  // A workspace key still may (server-to-server use).
  const admin = await t.api('POST', '/v1/steps/taskboard.api_call/run', call())
  assert.equal(admin.status, 200, JSON.stringify(admin.body))
})

test('a workspace that turns allowInlineAuth on lets agent keys give credentials inline, and offers the field', async () => {
  const asAgent = await t.api('PATCH', '/v1/workspace/settings', { allowInlineAuth: true }, agentKey)
  assert.equal(asAgent.status, 403, 'an agent key cannot change the workspace settings')
  const on = await t.api('PATCH', '/v1/workspace/settings', { allowInlineAuth: true })
  assert.equal(on.status, 200, JSON.stringify(on.body))
  assert.equal(on.body.allowInlineAuth, true)
  const ran = await t.api('POST', '/v1/steps/taskboard.api_call/run', call(), agentKey)
  assert.equal(ran.status, 200, JSON.stringify(ran.body))
  assert.equal(ran.body.output.body.id, t.taskboard.demo.boardId)
  assert.equal('auth' in (await apiCallSchema('openai')).properties, true)

  const off = await t.api('PATCH', '/v1/workspace/settings', { allowInlineAuth: false })
  assert.equal(off.body.allowInlineAuth, false)
  assert.equal((await t.api('POST', '/v1/steps/taskboard.api_call/run', call(), agentKey)).status, 403)
  const bad = await t.api('PATCH', '/v1/workspace/settings', { allowInlineAuth: 'yes' })
  assert.equal(bad.status, 400)
  assert.match(bad.body.error.message, /allowInlineAuth/)
})
