// A revoked task-board token takes its webhooks with it upstream. Patchbay sees that from the
// event side: diagnose's own probe gets a 401, and so does the periodic reconcile — the
// connection becomes lapsed, the trigger's webhook missing, and diagnose says what it found.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { Leases } from '../../src/store/leases.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { mintDemoToken } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox

before(async () => {
  sandbox = await startTaskboardSandbox()
})
after(async () => {
  await sandbox?.close()
})

/** A connection on a fresh token of the demo member, an agent and a New Card trigger on it. */
async function watched(t: TestService) {
  const token = await mintDemoToken(sandbox)
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const agent = await t.api('POST', '/v1/agents', {
    name: 'watcher',
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [conn.body.id],
    delivery: { type: 'stream' },
  })
  const trig = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn.body.id,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  assert.equal(trig.body.webhook.status, 'active')
  return { token, connectionId: conn.body.id as string, triggerId: trig.body.id as string }
}

/** The user revokes the token upstream; the upstream deletes the webhooks made with it. */
async function revoke(token: string) {
  const res = await fetch(`${sandbox.url}/1/tokens/${token}`, {
    method: 'DELETE',
    headers: { authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${token}"` },
  })
  assert.equal(res.status, 200, await res.text())
}

test('diagnose probes the webhook upstream: a 401 lapses the connection and the webhook is missing', async () => {
  const t = await startTestService({ taskboard: sandbox })
  try {
    const w = await watched(t)
    await revoke(w.token)
    const diagnosis = await t.api('GET', `/v1/triggers/${w.triggerId}/diagnose`)
    assert.equal(diagnosis.status, 200, JSON.stringify(diagnosis.body))
    assert.equal(diagnosis.body.healthy, false)
    const byCause = (c: string) => diagnosis.body.checks.find((x: any) => x.cause === c)
    assert.equal(byCause('connection_lapsed').status, 'problem')
    assert.match(byCause('connection_lapsed').message, /lapsed/)
    // The one cause is the connection: the webhook that went with its credentials is not a second one.
    assert.equal(byCause('wrong_board').status, 'info')
    assert.match(byCause('wrong_board').message, /reconnecting registers it again/)
    assert.match(byCause('connection_lapsed').fix, /[Rr]econnect/)

    assert.equal((await t.api('GET', `/v1/connections/${w.connectionId}`)).body.status, 'lapsed')
    const trigger = (await t.api('GET', `/v1/triggers/${w.triggerId}`)).body
    assert.equal(trigger.webhook.status, 'missing')
    assert.match(trigger.webhook.lastError, /reconnect/)
  } finally {
    await t.close()
  }
})

test('the periodic reconcile sees a revoked token: connection lapsed, webhook missing', async () => {
  const t = await startTestService({ taskboard: sandbox, env: { PATCHBAY_RECONCILE_INTERVAL_MS: '100' } })
  try {
    const w = await watched(t)
    await revoke(w.token)
    await eventually(
      async () => (await t.api('GET', `/v1/connections/${w.connectionId}`)).body.status,
      (s) => s === 'lapsed',
    )
    const trigger = await eventually(
      async () => (await t.api('GET', `/v1/triggers/${w.triggerId}`)).body,
      (tr) => tr.webhook.status === 'missing',
    )
    assert.match(trigger.webhook.lastError, /revoked or expired/)
  } finally {
    await t.close()
  }
})

test('the reconcile lease is held by one instance at a time, and taken over once it expires', async () => {
  const t = await startTestService({ taskboard: sandbox })
  try {
    const leases = new Leases(t.service.engine.store.db)
    const [a, b] = await Promise.all([
      leases.take('test-lease', 'a', 60_000),
      leases.take('test-lease', 'b', 60_000),
    ])
    assert.equal(Number(a) + Number(b), 1, 'exactly one of two instances holds it')
    const holder = a ? 'a' : 'b'
    const other = a ? 'b' : 'a'
    assert.equal(await leases.take('test-lease', holder, 1), true, 'the holder renews it')
    await eventually(
      () => leases.take('test-lease', other, 60_000),
      (mine) => mine,
    )
    assert.equal(await leases.take('test-lease', holder, 60_000), false)
  } finally {
    await t.close()
  }
})
