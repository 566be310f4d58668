// Each upstream change once (issue 24): a change that reaches Patchbay through two connections —
// two webhooks on one repository — is stored once, with both connections recorded, and delivered
// once per trigger; a redelivery of it is the same event.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { act, connectWithToken, mintToken, settle } from '../helpers/codehost.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService

before(async () => {
  t = await startTestService({ codehost: true })
})
after(() => t.close())

const R = { owner: 'octo-demo', repo: 'hello-world' }

async function agentOn(connectionId: string, triggers: number) {
  const agent = await t.api('POST', '/v1/agents', {
    name: `once-${Math.random().toString(36).slice(2, 6)}`,
    scope: { repositories: ['octo-demo/hello-world'] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const ids: string[] = []
  for (let i = 0; i < triggers; i++) {
    const trig = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
      trigger: 'codehost.new_issue',
      connectionId,
      config: R,
    })
    assert.equal(trig.status, 201, JSON.stringify(trig.body))
    ids.push(trig.body.id)
  }
  return ids
}

test('an issue opened on a repository two connections watch is one event, delivered once per trigger, with both connections', async () => {
  const scopes = ['repo', 'admin:repo_hook']
  const a = await connectWithToken(t, await mintToken(t.codehost!, { kind: 'classic', scopes }))
  const b = await connectWithToken(t, await mintToken(t.codehost!, { kind: 'classic', scopes }))
  const onA = await agentOn(a, 1)
  const onB = await agentOn(b, 2)

  const opened = await act(t.codehost!, 'open_issue', { ...R, title: 'Seen twice upstream' })
  await settle(t)
  const number = opened.result.number
  const all = (await t.api('GET', '/v1/events?type=issues.opened&limit=100')).body.events.filter(
    (e: any) => e.data.issue?.number === number,
  )
  assert.equal(all.length, 1, 'stored once, not once per webhook')
  assert.deepEqual([...all[0].connectionIds].sort(), [a, b].sort(), 'both connections recorded')
  const detail = (await t.api('GET', `/v1/events/${all[0].id}`)).body
  assert.deepEqual(
    detail.deliveries.map((d: any) => d.triggerId).sort(),
    [...onA, ...onB].sort(),
    'one delivery per trigger',
  )
})
