// Isolation of events between end users: the same task-board account connected by two end users
// is two connections; an agent bound to each, with a New Card trigger on its own connection,
// receives the card's event through its own connection only: in its deliveries, on its stream and
// in its MCP resources.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { endUserConnects } from '../helpers/taskboard.ts'

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

async function boundAgent(endUserId: string, connectionId: string): Promise<string> {
  const agent = await t.api('POST', '/v1/agents', {
    name: `${endUserId} agent`,
    endUserId,
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const trigger = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
  return agent.body.id
}

/** The first `count` deliveries of an agent's SSE stream. */
async function readStream(agentId: string, key: string, count: number) {
  const ctrl = new AbortController()
  const res = await fetch(`${t.url}/v1/agents/${agentId}/stream`, {
    headers: { authorization: `Bearer ${key}` },
    signal: ctrl.signal,
  })
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
}

// An event's identity includes its owner (migration 0015): the card seen through alice's webhook
// and through bob's is two events, each naming its own end user's connection.
test("each end user's agent receives the event through its own connection only, on its stream too", async () => {
  const aliceConn = (await endUserConnects(t, sandbox, 'alice')).connection.id
  const bobConn = (await endUserConnects(t, sandbox, 'bob')).connection.id
  assert.notEqual(aliceConn, bobConn)
  const aliceAgent = await boundAgent('alice', aliceConn)
  const bobAgent = await boundAgent('bob', bobConn)
  const aliceKey = (await t.api('POST', `/v1/agents/${aliceAgent}/keys`, {})).body.key

  const card = await fetch(`${sandbox.url}/1/cards`, {
    method: 'POST',
    headers: {
      authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ idList: sandbox.demo.listIds[0], name: 'Seen by both, through their own' }),
  }).then((r) => r.json() as Promise<any>)

  const deliveriesOf = (agentId: string) =>
    eventually(
      () => t.api('GET', `/v1/deliveries?agentId=${agentId}`),
      (r) => r.body.deliveries?.length >= 1,
    )
  const toAlice = (await deliveriesOf(aliceAgent)).body.deliveries
  const toBob = (await deliveriesOf(bobAgent)).body.deliveries
  assert.equal(toAlice.length, 1)
  assert.equal(toBob.length, 1)
  const eventOf = async (d: any) => (await t.api('GET', `/v1/events/${d.eventId}`)).body
  const aliceEvent = await eventOf(toAlice[0])
  const bobEvent = await eventOf(toBob[0])
  assert.equal(aliceEvent.connectionId, aliceConn, "alice's agent hears it through alice's connection")
  assert.equal(bobEvent.connectionId, bobConn, "bob's agent hears it through bob's connection")
  assert.ok(JSON.stringify(aliceEvent).includes(card.id))

  assert.notEqual(aliceEvent.id, bobEvent.id, 'one event per end user')
  assert.deepEqual(aliceEvent.connectionIds, [aliceConn])
  assert.deepEqual(bobEvent.connectionIds, [bobConn])
  assert.equal(aliceEvent.endUserId, 'alice')
  assert.equal(bobEvent.endUserId, 'bob')
  // Listed by whose they are.
  const listed = async (endUserId: string) =>
    (await t.api('GET', `/v1/events?endUserId=${endUserId}`)).body.events.map((e: any) => e.id)
  assert.deepEqual(await listed('alice'), [aliceEvent.id])
  assert.deepEqual(await listed('bob'), [bobEvent.id])
  assert.deepEqual(await listed(''), [], "none is the workspace's own")

  // Alice's stream (read with her agent's key) has her delivery, of her event, and nothing of bob's.
  const streamed = await readStream(aliceAgent, aliceKey, 1)
  assert.equal(streamed.length, 1)
  assert.equal(streamed[0].data.event.id, aliceEvent.id)
  assert.ok(!JSON.stringify(streamed).includes(bobConn))
  assert.ok(!JSON.stringify(streamed).includes(bobEvent.id))

  // On MCP, her agent's recent events are her delivery of her event; bob's delivery is not hers to read.
  const mcp = new Client({ name: 'end-user-test', version: '1.0.0' })
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${aliceKey}` } },
    }),
  )
  try {
    const recent = await mcp.readResource({ uri: 'patchbay://events/recent' })
    const listed = JSON.parse((recent.contents[0] as { text: string }).text).deliveries
    assert.deepEqual(
      listed.map((d: any) => [d.id, d.payload.data.event.id]),
      [[toAlice[0].id, aliceEvent.id]],
    )
    await assert.rejects(mcp.readResource({ uri: `patchbay://deliveries/${toBob[0].id}` }), /no delivery/)
  } finally {
    await mcp.close()
  }
  // Her agent key cannot read bob's deliveries or events.
  const foreign = await t.api('GET', `/v1/deliveries?agentId=${bobAgent}`, undefined, aliceKey)
  assert.ok(!JSON.stringify(foreign.body).includes(bobConn))
})
