// The loop guard on the code host: a New Issue trigger whose tool opens an issue in the same
// repository, and a New Comment trigger whose tool comments on the same issue. The code host's
// deliveries name what they are about by web address (an issue's, a comment's), which is also
// what the tool's steps answer with, so each change a run makes is known as the run's own; the
// chain stops at the depth limit with the reason recorded.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { CodehostSandbox } from '../../sandbox/codehost/index.ts'
import { act, connectDemoCodehost } from '../helpers/codehost.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let sb: CodehostSandbox
let conn: string

before(async () => {
  t = await startTestService({ codehost: true, env: { PATCHBAY_LOOP_DEPTH_LIMIT: '3' } })
  sb = t.codehost!
  conn = await connectDemoCodehost(t)
})
after(async () => {
  await t?.close()
})

/** An agent on hello-world whose `trigger` starts a tool of one `step`; returns their ids. */
async function echo(name: string, trigger: string, config: object, step: { stepId: string; input: object }) {
  const agent = await t.api('POST', '/v1/agents', {
    name,
    scope: { repositories: ['octo-demo/hello-world'] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  const tool = await t.api('POST', `/v1/agents/${agent.body.id}/tools`, {
    name,
    description: 'Answers the change it hears with another of the same kind.',
    steps: [{ ...step, connectionId: conn }],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  const made = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger,
    connectionId: conn,
    config: { owner: 'octo-demo', repo: 'hello-world', ...config },
    target: { type: 'tool', toolId: tool.body.id },
  })
  assert.equal(made.status, 201, JSON.stringify(made.body))
  return { agentId: agent.body.id as string, triggerId: made.body.id as string }
}

/** Waits for the refused run; checks it and the three runs before it. */
async function stopsAtTheLimit(agentId: string, triggerId: string) {
  const refused = await eventually(
    async () => (await t.api('GET', `/v1/deliveries?triggerId=${triggerId}&status=failed`)).body.deliveries,
    (ds) => ds.length > 0,
    30_000,
  )
  assert.equal(refused.length, 1)
  assert.equal(refused[0].toolRunId, null, 'no tool run was started for it')
  assert.match(refused[0].lastError, /LOOP_DETECTED/)
  assert.match(refused[0].lastError, /depth 3/)
  await t.service.engine.events.jobs.idle()
  const runs = (await t.api('GET', `/v1/agents/${agentId}/tool-runs?limit=100`)).body.runs
  assert.equal(runs.length, 3, 'the change by hand and the changes of runs 1 and 2 each started a run')
  assert.ok(runs.every((r: any) => r.status === 'succeeded'))
  const all = (await t.api('GET', `/v1/deliveries?triggerId=${triggerId}&limit=100`)).body.deliveries
  assert.equal(all.length, 4)
}

test('a New Issue trigger whose tool opens an issue in the same repository stops at the depth limit', {
  timeout: 60_000,
}, async () => {
  const { agentId, triggerId } = await echo(
    'issue echo',
    'codehost.new_issue',
    {},
    {
      stepId: 'codehost.create_issue',
      input: { owner: 'octo-demo', repo: 'hello-world', title: 'echo of {{event.data.issue.title}}' },
    },
  )
  const opens = () =>
    sb.emulator.requests.filter((r) => r.method === 'POST' && r.url === '/repos/octo-demo/hello-world/issues')
      .length
  const before = opens()
  await act(sb, 'open_issue', { title: 'by hand' })
  await stopsAtTheLimit(agentId, triggerId)
  assert.equal(opens() - before, 3, 'the three runs opened one issue each; nothing more was opened')
})

test('a New Comment trigger whose tool comments on the same issue stops at the depth limit', {
  timeout: 60_000,
}, async () => {
  const { agentId, triggerId } = await echo(
    'comment echo',
    'codehost.new_comment',
    {},
    {
      stepId: 'codehost.create_issue_comment',
      input: { owner: 'octo-demo', repo: 'hello-world', issueNumber: 1, body: 'echo' },
    },
  )
  await act(sb, 'comment', { number: 1, body: 'by hand' })
  await stopsAtTheLimit(agentId, triggerId)
})
