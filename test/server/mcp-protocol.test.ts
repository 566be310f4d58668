// /mcp speaks JSON-RPC to the end: a body that is not JSON, a message that is not JSON-RPC and
// params that do not fit the method are answered with JSON-RPC errors (-32700, -32600, -32602),
// not the REST API's error body; every answer carries X-Request-Id; and each tool's annotations
// say what its step does (from the registry's hints), checked through the official MCP client.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let agentKey: string

before(async () => {
  t = await startTestService()
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: {
      key: t.taskboard.demo.key,
      token: t.taskboard.demo.token,
      secret: t.taskboard.demo.secret,
    },
  })
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Protocol',
    scope: { boards: [t.taskboard.demo.boardId] },
    connectionIds: [conn.body.id],
    delivery: { type: 'stream' },
  })
  agentKey = (await t.api('POST', `/v1/agents/${agent.body.id}/keys`, {})).body.key
})
after(() => t.close())

async function post(body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${agentKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  })
  return { status: res.status, requestId: res.headers.get('x-request-id'), body: await res.json() }
}

test('a body that is not JSON is a JSON-RPC parse error (-32700), with X-Request-Id', async () => {
  for (const body of ['{"jsonrpc": "2.0", "method": ', '']) {
    const r = await post(body)
    assert.equal(r.status, 400)
    assert.equal(r.body.jsonrpc, '2.0')
    assert.equal(r.body.id, null)
    assert.equal(r.body.error.code, -32700, JSON.stringify(r.body))
    assert.ok(r.requestId)
  }
})

test('a message that is not JSON-RPC 2.0 is an invalid request (-32600), answered with its id', async () => {
  for (const [message, id] of [
    [{ jsonrpc: '1.0', id: 7, method: 'tools/list' }, 7],
    [{ jsonrpc: '2.0', id: 'a', method: 42 }, 'a'],
    ['tools/list', null],
    [[], null],
  ] as const) {
    const r = await post(JSON.stringify(message))
    assert.equal(r.status, 400, JSON.stringify(message))
    assert.equal(r.body.error.code, -32600, JSON.stringify(r.body))
    assert.equal(r.body.id, id)
    assert.ok(r.requestId)
  }
})

test('params that do not fit the method are invalid params (-32602), naming the field', async () => {
  const call = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: {} }))
  assert.equal(call.status, 400)
  assert.equal(call.body.id, 3)
  assert.equal(call.body.error.code, -32602)
  assert.match(call.body.error.message, /params\.name/)
  const read = await post(
    JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 5 } }),
  )
  assert.equal(read.body.error.code, -32602)
  assert.match(read.body.error.message, /params\.uri/)
  // A method the server does not have is the server's own answer: -32601.
  const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/destroy' }))
  assert.equal(unknown.body.error.code, -32601)
})

test('every /mcp answer carries X-Request-Id, the caller’s own when it gives a sane one', async () => {
  const init = await post(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
    { 'x-request-id': 'trace-123' },
  )
  assert.equal(init.status, 200, JSON.stringify(init.body))
  assert.equal(init.requestId, 'trace-123')
  const list = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }))
  assert.equal(list.status, 200)
  assert.ok(list.requestId)
  const get = await fetch(`${t.url}/mcp`, { headers: { authorization: `Bearer ${agentKey}` } })
  assert.equal(get.status, 405)
  assert.ok(get.headers.get('x-request-id'))
})

test('tool annotations say what each step does', async () => {
  const client = new Client({ name: 'patchbay-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${agentKey}` } },
    }),
  )
  try {
    const { tools } = await client.listTools()
    const of = (name: string) => tools.find((x) => x.name === name)!.annotations ?? {}
    // MCP's defaults: readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true.
    const effective = (name: string) => ({
      readOnly: of(name).readOnlyHint ?? false,
      destructive: of(name).readOnlyHint ? false : (of(name).destructiveHint ?? true),
      idempotent: of(name).idempotentHint ?? false,
      openWorld: of(name).openWorldHint ?? true,
    })
    assert.deepEqual(effective('taskboard_get_card'), {
      readOnly: true,
      destructive: false,
      idempotent: true,
      openWorld: true,
    })
    // Adds a card: not destructive, and a second call adds another.
    assert.deepEqual(effective('taskboard_create_card'), {
      readOnly: false,
      destructive: false,
      idempotent: false,
      openWorld: true,
    })
    // Replaces the name or description that was there.
    assert.deepEqual(effective('taskboard_update_card'), {
      readOnly: false,
      destructive: true,
      idempotent: true,
      openWorld: true,
    })
    assert.deepEqual(effective('taskboard_api_call'), {
      readOnly: false,
      destructive: true,
      idempotent: false,
      openWorld: true,
    })
    // describe_tool reads Patchbay's own registry only.
    assert.deepEqual(effective('describe_tool'), {
      readOnly: true,
      destructive: false,
      idempotent: true,
      openWorld: false,
    })
    for (const tool of tools.filter((x) => x.name !== 'describe_tool')) {
      const hints = t.service.engine.registry.stepSummary(tool.name.replace('_', '.')).hints
      const e = effective(tool.name)
      assert.deepEqual(
        { readOnly: e.readOnly, destructive: e.destructive, idempotent: e.idempotent },
        hints,
        tool.name,
      )
    }
  } finally {
    await client.close()
  }
})
