// Lapses seen within a minute (issue 24): a connection that has triggers is checked upstream on
// its own, so a token revoked upstream — whose webhooks the task-board deletes with it, so no event
// ever says so — is shown `lapsed` with the reason and time, its triggers `paused` with why, and
// the agents that hold it get a signed `connection.lapsed` notice in their delivery stream, with
// nothing else touching the upstream meanwhile. Reconnecting resumes the triggers, registers the
// webhooks again and sends `connection.reconnected`. An upstream that cannot be reached is no lapse.
// (Here the check runs every 300 ms; by default every 25 s: PATCHBAY_CONNECTION_CHECK_MS.)
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type CodehostSandbox, startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import {
  control,
  createCardDelivery,
  mintDemoToken,
  postSigned,
  taskboardRest,
} from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let codehost: CodehostSandbox
let receiver: Receiver
let t: TestService

before(async () => {
  sandbox = await startTaskboardSandbox()
  codehost = await startCodehostSandbox()
  receiver = await new Receiver().start()
  t = await startTestService({
    taskboard: sandbox,
    codehost,
    env: { PATCHBAY_CONNECTION_CHECK_MS: '300' },
  })
})
after(async () => {
  await t?.close()
  await receiver?.close()
  await codehost?.close()
  await sandbox?.close()
})

/** An agent pushed to the receiver, holding the connection, with one trigger on it. */
async function agentWithTrigger(
  connectionId: string,
  scope: Record<string, string[]>,
  trigger: Record<string, unknown>,
) {
  const agent = await t.api('POST', '/v1/agents', {
    name: `lapse-${Math.random().toString(36).slice(2, 6)}`,
    scope,
    connectionIds: [connectionId],
    delivery: { type: 'webhook', url: receiver.url },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  receiver.secret = agent.body.signingSecret
  const trig = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, { ...trigger, connectionId })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  return { agentId: agent.body.id as string, triggerId: trig.body.id as string }
}

const notices = (type: string, connectionId: string) =>
  receiver.received.filter(
    (r) => r.body.type === type && r.body.data.event.data.connectionId === connectionId,
  )

test('a revoked task-board token: lapsed with reason and time, trigger paused, a signed connection.lapsed notice; reconnecting resumes it', async () => {
  const token = await mintDemoToken(sandbox)
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
    second: true,
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const id = conn.body.id as string
  const { agentId, triggerId } = await agentWithTrigger(
    id,
    { boards: [sandbox.demo.boardId] },
    { trigger: 'taskboard.new_card', config: { idBoard: sandbox.demo.boardId } },
  )
  // Checked while healthy: active, and when it was checked.
  const checked = await eventually(
    async () => (await t.api('GET', `/v1/connections/${id}`)).body,
    (c: any) => c.checkedAt !== null,
  )
  assert.equal(checked.status, 'active')

  // The user revokes the token upstream; the task-board deletes its webhooks with it.
  const revokedAt = Date.now()
  await taskboardRest(sandbox, 'DELETE', `/1/tokens/${token}`, undefined, token)
  // Read as a user would while it lapses, back to back: the connection, then its trigger. The lapse
  // and the pause are one commit, so a trigger read after its connection said lapsed says paused.
  const { lapsed, paused } = await eventually(
    async () => {
      const connection = (await t.api('GET', `/v1/connections/${id}`)).body
      const trigger = (await t.api('GET', `/v1/triggers/${triggerId}`)).body
      return { lapsed: connection, paused: trigger }
    },
    (r: any) => r.lapsed.status === 'lapsed',
  )
  assert.equal(paused.status, 'paused', 'paused in the commit that lapsed its connection')
  assert.match(lapsed.statusReason, /refused the credentials/)
  assert.ok(Date.parse(lapsed.lapsedAt) >= revokedAt - 1000, lapsed.lapsedAt)
  const listed = (await t.api('GET', '/v1/connections')).body.connections.find((c: any) => c.id === id)
  assert.equal(listed.status, 'lapsed', 'the list shows it too')
  assert.match(paused.paused.reason, /lapsed/)
  assert.equal(paused.paused.at, lapsed.lapsedAt)

  // The agent hears of it: its own type, signed like every push, told apart from upstream events.
  await receiver.until(() => notices('connection.lapsed', id).length === 1)
  const [notice] = notices('connection.lapsed', id)
  assert.equal(notice.verified, true, 'signed (Standard Webhooks)')
  assert.equal(notice.body.type, 'connection.lapsed')
  assert.equal(notice.body.data.trigger, null)
  assert.equal(notice.body.data.event.connector, 'patchbay')
  assert.match(notice.body.data.event.data.reason, /refused the credentials/)
  assert.deepEqual(notice.body.data.event.data.pausedTriggers, [triggerId])
  // The push is answered before the delivery's row says so: wait for the row, not the receiver.
  const deliveries = await eventually(
    async () => (await t.api('GET', `/v1/deliveries?agentId=${agentId}`)).body.deliveries,
    (list: any[]) => list.some((d: any) => d.status === 'delivered'),
  )
  assert.ok(
    deliveries.some((d: any) => d.status === 'delivered'),
    'listed with the deliveries',
  )

  // Reconnected with a fresh token: resumed, the webhook registered again, connection.reconnected.
  const fresh = await mintDemoToken(sandbox)
  const fixed = await t.api('POST', `/v1/connections/${id}/reconnect`, {
    credentials: { key: sandbox.demo.key, token: fresh, secret: sandbox.demo.secret },
  })
  assert.equal(fixed.status, 200, JSON.stringify(fixed.body))
  assert.equal(fixed.body.status, 'active')
  assert.equal(fixed.body.lapsedAt, null)
  const resumed = (await t.api('GET', `/v1/triggers/${triggerId}`)).body
  assert.equal(resumed.status, 'active')
  assert.equal(resumed.paused, null)
  assert.equal(resumed.webhook.status, 'active')
  const hooks = await taskboardRest(sandbox, 'GET', `/1/tokens/${fresh}/webhooks`, undefined, fresh)
  assert.equal(hooks.length, 1, 'the webhook is registered again with the new token')
  await receiver.until(() => notices('connection.reconnected', id).length === 1)
  // And the trigger fires again.
  const card = await taskboardRest(
    sandbox,
    'POST',
    '/1/cards',
    { idList: sandbox.demo.listIds[0], name: 'after' },
    fresh,
  )
  await receiver.until((rs) => rs.some((r) => r.body.data.event?.data?.card?.id === card.id))
})

test('a revoked code-host token: lapsed, its trigger paused, and a connection.lapsed notice', async () => {
  const made = await control(codehost, 'POST', '/tokens', {
    login: codehost.demo.login,
    kind: 'classic',
    scopes: ['repo', 'admin:repo_hook'],
  }).catch(() => null)
  const token: string = made?.token ?? made?.value
  assert.ok(token, `a token from the code-host sandbox: ${JSON.stringify(made)}`)
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'codehost',
    authMethod: 'token',
    credentials: { token },
    second: true,
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const id = conn.body.id as string
  const { triggerId } = await agentWithTrigger(
    id,
    { repositories: ['octo-demo/hello-world'] },
    { trigger: 'codehost.new_issue', config: { owner: 'octo-demo', repo: 'hello-world' } },
  )
  await control(codehost, 'DELETE', `/tokens/${token}`)
  const { lapsed, trigger } = await eventually(
    async () => {
      const connection = (await t.api('GET', `/v1/connections/${id}`)).body
      return { lapsed: connection, trigger: (await t.api('GET', `/v1/triggers/${triggerId}`)).body }
    },
    (r: any) => r.lapsed.status === 'lapsed',
  )
  assert.ok(lapsed.lapsedAt)
  assert.equal(trigger.status, 'paused', 'paused in the commit that lapsed its connection')
  await receiver.until(() => notices('connection.lapsed', id).length === 1)
})

test('an upstream that cannot be reached is no lapse: shown as a failed check, active, tried again', async () => {
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: await mintDemoToken(sandbox), secret: sandbox.demo.secret },
    second: true,
  })
  const id = conn.body.id as string
  await agentWithTrigger(
    id,
    { boards: [sandbox.demo.boardId] },
    { trigger: 'taskboard.card_archived', config: { idBoard: sandbox.demo.boardId } },
  )
  // The account lookup answers 503 for a while.
  await control(sandbox, 'POST', '/faults', {
    errorRate: 1,
    errorStatus: 503,
    count: 100_000,
    pathPrefix: '/1/members/me',
  })
  try {
    const failing = await eventually(
      async () => (await t.api('GET', `/v1/connections/${id}`)).body,
      (c: any) => c.checkError !== null,
    )
    assert.equal(failing.status, 'active')
    assert.match(failing.checkError, /not a lapse/)
  } finally {
    await control(sandbox, 'DELETE', '/faults')
  }
  const healthy = await eventually(
    async () => (await t.api('GET', `/v1/connections/${id}`)).body,
    (c: any) => c.checkError === null,
  )
  assert.equal(healthy.status, 'active')
  assert.equal(notices('connection.lapsed', id).length, 0)
})

test('a task-board connection whose webhook keeps delivering is not asked upstream meanwhile; asked again once they stop', async () => {
  // The task-board removes a revoked token's webhooks: a verified delivery shows the token still
  // worked, so a thousand busy connections cost no checks (issue 22). Silent, it is checked again.
  const token = await mintDemoToken(sandbox)
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
    second: true,
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const id = conn.body.id as string
  const { triggerId } = await agentWithTrigger(
    id,
    { boards: [sandbox.demo.boardId] },
    { trigger: 'taskboard.new_card', config: { idBoard: sandbox.demo.boardId } },
  )
  const checkedAt = async () => (await t.api('GET', `/v1/connections/${id}`)).body.checkedAt as string | null
  await eventually(checkedAt, (at) => at !== null)
  const hookId = (await t.api('GET', `/v1/triggers/${triggerId}`)).body.webhook.id as string
  const callbackUrl = `${t.url}/hooks/taskboard/${hookId}`
  let delivering = true
  const deliveries = (async () => {
    for (let i = 0; delivering; i++) {
      const res = await postSigned(
        sandbox,
        callbackUrl,
        JSON.stringify(createCardDelivery(sandbox, `busy-${i}`)),
      )
      assert.equal(res.status, 200)
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  // A check already under way when the deliveries began may finish; then none while they come
  // (the check runs every 300 ms here).
  await new Promise((r) => setTimeout(r, 1000))
  const during = await checkedAt()
  await new Promise((r) => setTimeout(r, 2000))
  const after = await checkedAt()
  delivering = false
  await deliveries
  assert.equal(after, during, 'not asked upstream while its deliveries came')
  await eventually(checkedAt, (at) => at !== during)
  assert.equal((await t.api('GET', `/v1/connections/${id}`)).body.status, 'active')
})
