// trigger.paused / trigger.resumed notices to the operator (issue 23, Build 4), over real HTTP
// against the sandbox task-board: an end user's connection with a trigger on it lapses (its token
// revoked upstream), which pauses the trigger and tells the workspace's notification URL, signed;
// the end user reconnects through a new connect link, which resumes it and says so.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { endUserConnects, mintDemoToken } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let operator: Receiver

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({ taskboard: sandbox })
  operator = await new Receiver().start()
})
after(async () => {
  await t.close()
  await sandbox.close()
  await operator.close()
})

test('a lapse pauses the triggers and the operator is told of each, signed; reconnecting resumes them and says so', async () => {
  const settings = await t.api('PATCH', '/v1/workspace/settings', { notificationUrl: operator.url })
  assert.equal(settings.status, 200, JSON.stringify(settings.body))
  operator.secret = settings.body.notificationSecret

  const token = await mintDemoToken(sandbox)
  const conn = (await endUserConnects(t, sandbox, 'carol', token)).connection.id
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Carol agent',
    endUserId: 'carol',
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const trigger = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
  const agentKey = (await t.api('POST', `/v1/agents/${agent.body.id}/keys`, {})).body.key

  // The token is revoked upstream; the agent's next step meets the refusal and the connection lapses.
  const revoked = await fetch(`${sandbox.url}/1/tokens/${token}?key=${sandbox.demo.key}&token=${token}`, {
    method: 'DELETE',
  })
  assert.equal(revoked.status, 200, await revoked.text())
  const run = await t.api(
    'POST',
    '/v1/steps/taskboard.get_boards/run',
    { connectionId: conn, input: {} },
    agentKey,
  )
  assert.notEqual(run.status, 200)

  const isPaused = (n: { body: any }) => n.body.type === 'trigger.paused'
  const paused = (await operator.until((r) => r.some(isPaused))).filter(isPaused)
  assert.equal(paused.length, 1)
  assert.ok(paused[0].verified, 'signed with the notification secret')
  assert.equal(paused[0].id, paused[0].body.id)
  const pausedData = paused[0].body.data
  assert.equal(pausedData.triggerId, trigger.body.id)
  assert.equal(pausedData.agentId, agent.body.id)
  assert.equal(pausedData.connectionId, conn)
  assert.equal(pausedData.endUserId, 'carol')
  assert.deepEqual(pausedData.endUser, { id: 'carol', displayName: null, email: null })
  assert.equal(pausedData.status, 'lapsed')
  assert.match(pausedData.reason, /lapsed/)
  assert.ok(!paused[0].raw.includes(token), 'no credential in the notice')
  const seen = await t.api('GET', `/v1/triggers/${trigger.body.id}`)
  assert.equal(seen.body.status, 'paused')
  assert.equal(seen.body.paused.reason, pausedData.reason, 'the reason the trigger shows')

  // Carol reconnects the same account through a new link: in place, and the trigger runs again.
  const again = await endUserConnects(t, sandbox, 'carol', await mintDemoToken(sandbox))
  assert.equal(again.reconnected, true)
  assert.equal(again.connection.id, conn)
  const isResumed = (n: { body: any }) => n.body.type === 'trigger.resumed'
  const resumed = (await operator.until((r) => r.some(isResumed))).filter(isResumed)
  assert.equal(resumed.length, 1)
  assert.ok(resumed[0].verified, 'signed with the notification secret')
  assert.equal(resumed[0].body.data.triggerId, trigger.body.id)
  assert.equal(resumed[0].body.data.agentId, agent.body.id)
  assert.equal(resumed[0].body.data.status, 'active')
  assert.equal(resumed[0].body.data.endUserId, 'carol')
  assert.equal((await t.api('GET', `/v1/triggers/${trigger.body.id}`)).body.status, 'active')

  // Both are listed as notices, delivered.
  const listed = await eventually(
    () => t.api('GET', '/v1/notices'),
    (r) =>
      ['trigger.paused', 'trigger.resumed'].every((type) =>
        r.body.notices.some((n: any) => n.type === type && n.status === 'delivered'),
      ),
  )
  assert.ok(listed.body.notices.some((n: any) => n.body.data.triggerId === trigger.body.id))
})
