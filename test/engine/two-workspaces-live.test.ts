// Two workspaces on one service, both live at once (issue 22): each connects the same task-board
// account, has an agent with a New Card trigger, a tool and runs. A card is made upstream; each
// workspace's agent gets the event live on its stream — its own workspace's event, through its own
// connection — and the agent of workspace A, on its stream and on MCP, never sees an event, tool,
// connection, delivery or run of workspace B (nor B's of A).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let sandbox: TaskboardSandbox
let t: TestService

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({ taskboard: sandbox })
})
after(async () => {
  await t.close()
  await sandbox.close()
})

interface Side {
  name: string
  key: string
  connectionId: string
  agentId: string
  agentKey: string
  toolId: string
  toolName: string
  triggerId: string
}

/** A workspace's connection of the demo account, its agent with a New Card trigger and a tool. */
async function setUp(name: string, key: string): Promise<Side> {
  const api = (method: string, path: string, body?: unknown) => t.api(method, path, body, key)
  const conn = await api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const connectionId = conn.body.id ?? conn.body.connection?.id
  const agent = await api('POST', '/v1/agents', {
    name: `${name} agent`,
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const trigger = await api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
  const toolName = `${name} boards`
  const tool = await api('POST', `/v1/agents/${agent.body.id}/tools`, {
    name: toolName,
    steps: [{ stepId: 'taskboard.get_boards', connectionId, input: {} }],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  const agentKey = (await api('POST', `/v1/agents/${agent.body.id}/keys`, {})).body.key
  return {
    name,
    key,
    connectionId,
    agentId: agent.body.id,
    agentKey,
    toolId: tool.body.id,
    toolName,
    triggerId: trigger.body.id,
  }
}

/** An agent's SSE stream, read until `count` deliveries came (or 20 s). */
function openStream(agentId: string, key: string, count: number) {
  const ctrl = new AbortController()
  const opened = fetch(`${t.url}/v1/agents/${agentId}/stream`, {
    headers: { authorization: `Bearer ${key}` },
    signal: ctrl.signal,
  })
  const read = (async () => {
    const res = await opened
    assert.equal(res.status, 200)
    const got: any[] = []
    const decoder = new TextDecoder()
    let buffer = ''
    const timer = setTimeout(() => ctrl.abort(), 20_000)
    try {
      for await (const chunk of res.body as any) {
        buffer += decoder.decode(chunk, { stream: true })
        for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
          const data = /^data: (.*)$/m.exec(buffer.slice(0, i))?.[1]
          buffer = buffer.slice(i + 2)
          if (data) got.push(JSON.parse(data))
        }
        if (got.length >= count) break
      }
    } catch {
    } finally {
      clearTimeout(timer)
      ctrl.abort()
    }
    return got
  })()
  return { opened, read }
}

async function mcpOf(agentKey: string): Promise<Client> {
  const client = new Client({ name: 'two-workspaces-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${agentKey}` } },
    }),
  )
  return client
}

test("two workspaces live at once: A's agent, on its stream and on MCP, sees nothing of B's", async () => {
  const other = await t.service.engine.apiKeys.createWorkspace('Workspace B')
  const bKey = (
    await t.service.engine.apiKeys.create({
      workspaceId: other.id,
      kind: 'workspace',
      role: 'owner',
      name: 'b',
    })
  ).key
  const a = await setUp('Alpha', t.adminKey)
  const b = await setUp('Bravo', bKey)

  // Each agent has a run of its tool before the event.
  const runOf = async (s: Side) => {
    const run = await t.api('POST', `/v1/agents/${s.agentId}/tools/${s.toolId}/run`, {}, s.agentKey)
    assert.equal(run.status, 200, JSON.stringify(run.body))
    assert.equal(run.body.status, 'succeeded', JSON.stringify(run.body))
    return run.body.id as string
  }
  const aRun = await runOf(a)
  const bRun = await runOf(b)

  // Both streams open, then one card made upstream: each hears it live.
  const aStream = openStream(a.agentId, a.agentKey, 1)
  const bStream = openStream(b.agentId, b.agentKey, 1)
  await Promise.all([aStream.opened, bStream.opened])
  const card = await fetch(`${sandbox.url}/1/cards`, {
    method: 'POST',
    headers: {
      authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ idList: sandbox.demo.listIds[0], name: 'Heard by both workspaces' }),
  }).then((r) => r.json() as Promise<any>)
  const [aGot, bGot] = await Promise.all([aStream.read, bStream.read])
  assert.equal(aGot.length, 1, 'A heard the card live')
  assert.equal(bGot.length, 1, 'B heard the card live')

  const eventOf = async (s: Side) => {
    const ds = await eventually(
      () => t.api('GET', `/v1/deliveries?agentId=${s.agentId}`, undefined, s.key),
      (r) => r.body.deliveries?.length >= 1,
    )
    assert.equal(ds.body.deliveries.length, 1)
    const e = await t.api('GET', `/v1/events/${ds.body.deliveries[0].eventId}`, undefined, s.key)
    assert.equal(e.status, 200)
    return { delivery: ds.body.deliveries[0], event: e.body }
  }
  const aSeen = await eventOf(a)
  const bSeen = await eventOf(b)
  assert.notEqual(aSeen.event.id, bSeen.event.id, 'one event per workspace')
  assert.deepEqual(aSeen.event.connectionIds, [a.connectionId])
  assert.deepEqual(bSeen.event.connectionIds, [b.connectionId])
  assert.equal(aSeen.event.endUserId, null, "the workspace's own")
  assert.equal(aGot[0].data.event.id, aSeen.event.id)
  assert.equal(bGot[0].data.event.id, bSeen.event.id)
  assert.ok(JSON.stringify(aSeen.event).includes(card.id))

  /** Nothing of `s` in what was read. */
  const nothingOf = (
    s: Side,
    seen: { event: any; delivery: any },
    run: string,
    read: unknown,
    where: string,
  ) => {
    const text = JSON.stringify(read)
    for (const id of [s.connectionId, s.agentId, s.toolId, s.triggerId, seen.event.id, seen.delivery.id, run])
      assert.ok(!text.includes(id), `${where} shows ${id} of workspace ${s.name}`)
    assert.ok(!text.includes(s.toolName), `${where} shows the tool ${s.toolName}`)
  }
  nothingOf(b, bSeen, bRun, aGot, "A's stream")
  nothingOf(a, aSeen, aRun, bGot, "B's stream")

  for (const [me, them, mine, theirs, theirRun] of [
    [a, b, aSeen, bSeen, bRun],
    [b, a, bSeen, aSeen, aRun],
  ] as const) {
    const client = await mcpOf(me.agentKey)
    try {
      const tools = await client.listTools()
      assert.ok(tools.tools.some((x) => x.name.startsWith('tool_') && x.description?.length))
      nothingOf(them, theirs, theirRun, tools, `${me.name}'s MCP tools`)
      const resources = await client.listResources()
      nothingOf(them, theirs, theirRun, resources, `${me.name}'s MCP resources`)
      const recent = await client.readResource({ uri: 'patchbay://events/recent' })
      const listed = JSON.parse((recent.contents[0] as { text: string }).text).deliveries
      assert.deepEqual(
        listed.map((d: any) => [d.id, d.payload.data.event.id]),
        [[mine.delivery.id, mine.event.id]],
      )
      nothingOf(them, theirs, theirRun, recent, `${me.name}'s recent events`)
      await assert.rejects(
        client.readResource({ uri: `patchbay://deliveries/${theirs.delivery.id}` }),
        /no delivery/,
      )
      // The other workspace's connection named in a step: refused, nothing of it in the answer.
      const foreign: any = await client.callTool({
        name: 'taskboard_get_boards',
        arguments: { connectionId: them.connectionId },
      })
      assert.equal(foreign.isError, true)
      assert.match(JSON.stringify(foreign), /CONNECTION_NOT_FOUND/)
      const own: any = await client.callTool({ name: 'taskboard_get_boards', arguments: {} })
      assert.equal(own.isError, undefined, JSON.stringify(own))
    } finally {
      await client.close()
    }
    // Over REST with the agent's key: the other's run, event, delivery and tool are refused (404,
    // or 403 where an agent key reads nothing of the kind), with nothing of theirs in the answer.
    const as = (path: string) => t.api('GET', path, undefined, me.agentKey)
    for (const path of [
      `/v1/tool-runs/${theirRun}`,
      `/v1/events/${theirs.event.id}`,
      `/v1/deliveries/${theirs.delivery.id}`,
      `/v1/agents/${them.agentId}/tools/${them.toolId}`,
      `/v1/connections/${them.connectionId}`,
    ]) {
      const res = await as(path)
      assert.ok([403, 404].includes(res.status), `${path}: ${res.status}`)
      // A refusal may name what was asked for; nothing else of theirs.
      const asked = path.split('/').filter((p) => p.includes('_'))
      const told = asked.reduce((text, id) => text.split(id).join(''), JSON.stringify(res.body))
      nothingOf(them, theirs, theirRun, told, `${me.name}'s GET ${path}`)
    }
    nothingOf(them, theirs, theirRun, (await as('/v1/runs')).body, `${me.name}'s runs`)
  }
})
