// Patchbay's own notices (events/notices.ts) go through the one recorder like upstream events:
// stored once, delivered — signed — to each agent named that may still use the connection, with
// the notice's type as the pushed body's type, and listed with the agent's other deliveries.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { noticeSource } from '../../src/engine/events/notices.ts'
import { deliveryPayloadChecker } from '../helpers/delivery-payload.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let sandbox: TaskboardSandbox
let t: TestService
let receiver: Receiver

before(async () => {
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
  t = await startTestService({ taskboard: sandbox })
})
after(async () => {
  await t?.close()
  await receiver?.close()
  await sandbox?.close()
})

test('a notice about a connection reaches the agents that use it, typed as the notice, once', async () => {
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const agent = (connectionIds: string[]) =>
    t.api('POST', '/v1/agents', {
      name: 'told',
      scope: { boards: [sandbox.demo.boardId] },
      connectionIds,
      delivery: { type: 'webhook', url: receiver.url },
    })
  const told = await agent([conn.body.id])
  assert.equal(told.status, 201, JSON.stringify(told.body))
  receiver.secret = told.body.signingSecret
  // An agent named that no longer holds the connection is not told.
  const other = await agent([])
  const { recorder } = t.service.engine.events
  const { workspace_id: workspaceId } = await t.service.engine.store.db
    .selectFrom('agents')
    .select('workspace_id')
    .where('id', '=', told.body.id)
    .executeTakeFirstOrThrow()
  const notice = {
    id: `connection.lapsed:${conn.body.id}:1`,
    type: 'connection.lapsed',
    occurredAt: new Date().toISOString(),
    refs: {},
    data: { connectionId: conn.body.id, reason: 'the upstream refused its credentials' },
  }
  const source = () =>
    noticeSource({
      workspaceId,
      connectionId: conn.body.id,
      type: 'connection.lapsed',
      agentIds: [told.body.id, other.body.id],
      receivedAt: new Date().toISOString(),
    })
  assert.deepEqual(await recorder.record(source(), [notice]), { deliveries: 1 })
  const [got] = await receiver.until((r) => r.length > 0)
  assert.equal(got.verified, true)
  ;(await deliveryPayloadChecker(t.url))(got.body)
  assert.equal(got.body.type, 'connection.lapsed')
  assert.equal(got.body.data.trigger, null)
  assert.equal(got.body.data.agentId, told.body.id)
  assert.deepEqual(got.body.data.event.data, notice.data)
  assert.equal(got.body.data.event.connector, 'patchbay')
  // The same notice again is recorded once.
  assert.deepEqual(await recorder.record(source(), [notice]), { deliveries: 0 })
  const listed = await eventually(
    async () => (await t.api('GET', `/v1/deliveries?agentId=${told.body.id}`)).body.deliveries,
    (d) => d.length === 1 && d[0].status === 'delivered',
  )
  assert.equal(listed[0].id, got.id)
})
