// Disconnecting says what it breaks, and connecting the same account again keeps what was built
// (issue 24): a connection in use is refused with its dependants (409 CONNECTION_IN_USE); forced,
// its triggers and their upstream webhooks go, its agents and tool steps show "connection needed";
// connecting the same upstream account again offers the earlier connection's bindings, and
// restoring puts the triggers, the agent's use of it and the tool steps on the new connection.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { endUserConnects, mintDemoToken, taskboardRest } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({ taskboard: sandbox })
})
after(async () => {
  await t?.close()
  await sandbox?.close()
})

async function connect(token: string) {
  const res = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
    second: true,
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

/** An agent using the connection, a New Card trigger on it and a tool whose step runs through it. */
async function inUse(connectionId: string) {
  const agent = await t.api('POST', '/v1/agents', {
    name: `Builder ${Math.random().toString(36).slice(2, 6)}`,
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
  const tool = await t.api('POST', `/v1/agents/${agent.body.id}/tools`, {
    name: 'File a card',
    steps: [
      {
        stepId: 'taskboard.create_card',
        connectionId,
        input: { idList: sandbox.demo.listIds[0], name: '{{input.title}}' },
      },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  return { agent: agent.body, trigger: trigger.body, tool: tool.body }
}

const hooksOf = async (token: string) =>
  taskboardRest(sandbox, 'GET', `/1/tokens/${token}/webhooks`, undefined, token)

test('a connection in use is not disconnected: 409 CONNECTION_IN_USE lists its agents, triggers and tool steps', async () => {
  const token = await mintDemoToken(sandbox)
  const conn = await connect(token)
  const { agent, trigger, tool } = await inUse(conn.id)

  const refused = await t.api('DELETE', `/v1/connections/${conn.id}`)
  assert.equal(refused.status, 409, JSON.stringify(refused.body))
  assert.equal(refused.body.error.code, 'CONNECTION_IN_USE')
  assert.match(refused.body.error.message, new RegExp(agent.name))
  assert.match(refused.body.error.hint, /force=true/)
  assert.deepEqual(refused.body.error.details.agents, [{ id: agent.id, name: agent.name }])
  assert.deepEqual(
    refused.body.error.details.triggers.map((x: any) => x.id),
    [trigger.id],
  )
  assert.deepEqual(refused.body.error.details.tools, [
    { agentId: agent.id, toolId: tool.id, name: 'File a card', steps: [0] },
  ])
  // Nothing was removed.
  assert.equal((await t.api('GET', `/v1/connections/${conn.id}`)).status, 200)
  assert.equal((await t.api('GET', `/v1/triggers/${trigger.id}`)).status, 200)
  assert.equal((await hooksOf(token)).length, 1)
})

test('forced: triggers removed, agents and tool steps detached and shown as needing a connection; the same account connected again restores them', async () => {
  const token = await mintDemoToken(sandbox)
  const conn = await connect(token)
  const { agent, trigger, tool } = await inUse(conn.id)

  const forced = await t.api('DELETE', `/v1/connections/${conn.id}?force=true`)
  assert.equal(forced.status, 200, JSON.stringify(forced.body))
  assert.deepEqual(forced.body.removed, {
    connectionId: conn.id,
    triggers: [{ id: trigger.id, agentId: agent.id, trigger: 'taskboard.new_card' }],
  })
  assert.deepEqual(forced.body.detached.agents, [{ id: agent.id, name: agent.name }])
  assert.deepEqual(forced.body.detached.toolSteps, [
    { agentId: agent.id, toolId: tool.id, name: 'File a card', steps: [0] },
  ])
  assert.equal(forced.body.restorable, true)
  assert.deepEqual(await hooksOf(token), [], 'the upstream webhook went with the trigger')

  // The agent no longer points at the dead id, and says which connection it needs.
  const detached = (await t.api('GET', `/v1/agents/${agent.id}`)).body
  assert.deepEqual(detached.connectionIds, [])
  assert.equal(detached.connectionsNeeded.length, 1)
  assert.equal(detached.connectionsNeeded[0].connectionId, conn.id)
  assert.equal(detached.connectionsNeeded[0].accountName, 'demo')
  // The tool step likewise; running it says what is missing instead of CONNECTION_NOT_FOUND.
  const step = (await t.api('GET', `/v1/agents/${agent.id}/tools/${tool.id}`)).body.steps[0]
  assert.equal(step.connectionId, null)
  assert.equal(step.connectionNeeded.connectionId, conn.id)
  const run = await t.api('POST', `/v1/agents/${agent.id}/tools/${tool.id}/run`, { input: { title: 'x' } })
  assert.equal(run.body.status, 'failed', JSON.stringify(run.body))
  assert.equal(run.body.errorCode, 'CONNECTION_NEEDED')
  assert.match(run.body.errorMessage, /was disconnected/)

  // The same upstream account connected again: a new connection, offering the earlier bindings.
  const token2 = await mintDemoToken(sandbox)
  const again = await connect(token2)
  assert.notEqual(again.id, conn.id)
  assert.deepEqual(again.restorable, [
    {
      connectionId: conn.id,
      disconnectedAt: again.restorable[0].disconnectedAt,
      agents: 1,
      triggers: 1,
      toolSteps: 1,
    },
  ])
  assert.equal((await t.api('GET', `/v1/connections/${again.id}`)).body.restorable.length, 1)

  const restored = await t.api('POST', `/v1/connections/${again.id}/restore`, {})
  assert.equal(restored.status, 200, JSON.stringify(restored.body))
  assert.deepEqual(restored.body.restoredFrom, [conn.id])
  assert.deepEqual(restored.body.agents, [agent.id])
  assert.deepEqual(restored.body.toolSteps, [{ agentId: agent.id, toolId: tool.id, steps: [0] }])
  assert.equal(restored.body.triggers.length, 1)
  assert.deepEqual(restored.body.failed, [])

  const back = (await t.api('GET', `/v1/agents/${agent.id}`)).body
  assert.deepEqual(back.connectionIds, [again.id])
  assert.deepEqual(back.connectionsNeeded, [])
  const newTrigger = (await t.api('GET', `/v1/triggers/${restored.body.triggers[0].id}`)).body
  assert.equal(newTrigger.connectionId, again.id)
  assert.deepEqual(newTrigger.config, trigger.config)
  assert.equal(newTrigger.webhook.status, 'active')
  assert.equal((await hooksOf(token2)).length, 1, 'the webhook is registered again with the new token')
  const rerun = await t.api('POST', `/v1/agents/${agent.id}/tools/${tool.id}/run`, {
    input: { title: 'again' },
  })
  assert.equal(rerun.body.status, 'succeeded', JSON.stringify(rerun.body))

  // Offered once: nothing is left to restore.
  assert.deepEqual((await t.api('GET', `/v1/connections/${again.id}`)).body.restorable, [])
  const twice = await t.api('POST', `/v1/connections/${again.id}/restore`, {})
  assert.equal(twice.status, 404)
  assert.equal(twice.body.error.code, 'NOTHING_TO_RESTORE')
})

test('a connection nothing uses is disconnected at once (200, nothing detached)', async () => {
  const conn = await connect(await mintDemoToken(sandbox))
  const res = await t.api('DELETE', `/v1/connections/${conn.id}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body.removed.triggers, [])
  assert.deepEqual(res.body.detached, { agents: [], toolSteps: [] })
  assert.equal(res.body.restorable, false)
  assert.equal((await t.api('GET', `/v1/connections/${conn.id}`)).status, 404)
})

test("an end user's disconnected connection is offered to, and restored onto, a connection of that end user only", async () => {
  // Alice (an end user) connects the demo account through a connect link; an agent bound to her uses it.
  const viaLink = async (endUserId: string) =>
    (await endUserConnects(t, sandbox, endUserId, await mintDemoToken(sandbox))).connection
  const endUserId = `alice-${Math.random().toString(36).slice(2, 8)}`
  const hers = await viaLink(endUserId)
  const agent = await t.api('POST', '/v1/agents', {
    name: "Alice's assistant",
    endUserId,
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [hers.id],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const forced = await t.api('DELETE', `/v1/connections/${hers.id}?force=true`)
  assert.equal(forced.status, 200, JSON.stringify(forced.body))

  // The same upstream account connected as the workspace's own: Alice's agent is not offered to it,
  // and a restore onto it finds nothing of hers.
  const workspaces = await connect(await mintDemoToken(sandbox))
  assert.ok(
    workspaces.restorable.every((r: { connectionId: string }) => r.connectionId !== hers.id),
    JSON.stringify(workspaces.restorable),
  )
  const refused = await t.api('POST', `/v1/connections/${workspaces.id}/restore`, { from: hers.id })
  assert.equal(refused.status, 404, JSON.stringify(refused.body))
  assert.equal(refused.body.error.code, 'NOTHING_TO_RESTORE')
  assert.deepEqual((await t.api('GET', `/v1/agents/${agent.body.id}`)).body.connectionIds, [])

  // Nor to another end user's connection of the same account.
  const bobs = await viaLink(`bob-${endUserId}`)
  assert.ok(bobs.restorable.every((r: { connectionId: string }) => r.connectionId !== hers.id))

  // Alice connecting it again gets her agent back.
  const again = await viaLink(endUserId)
  assert.deepEqual(
    again.restorable.map((r: { connectionId: string }) => r.connectionId),
    [hers.id],
  )
  const restored = await t.api('POST', `/v1/connections/${again.id}/restore`, {})
  assert.equal(restored.status, 200, JSON.stringify(restored.body))
  assert.deepEqual(restored.body.agents, [agent.body.id])
  assert.deepEqual((await t.api('GET', `/v1/agents/${agent.body.id}`)).body.connectionIds, [again.id])
})
