// An agent touches only the repositories it is configured for. Against the code-host sandbox:
// ready-made steps on other repositories are refused before anything is sent, API Calls are
// attributed to the repository their path (or search query) names and refused when they name
// none, and a search across repositories covers only the agent's own.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { CodehostSandbox } from '../../sandbox/codehost/index.ts'
import { act, ch, connectWithToken } from '../helpers/codehost.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let sb: CodehostSandbox
let conn: string
let agentId: string
let key: string
const accept = { accept: 'application/vnd.codehost+json' }

before(async () => {
  t = await startTestService({ codehost: true })
  sb = t.codehost!
  conn = await connectWithToken(t, sb.demo.token)
  await act(sb, 'create_repo', { name: 'private-stuff', private: true })
  await act(sb, 'open_issue', { repo: 'private-stuff', title: 'Secret bug', labels: ['bug'] })
  const agent = await t.api('POST', '/v1/agents', {
    name: 'scoped',
    scope: { repositories: ['octo-demo/hello-world'] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  agentId = agent.body.id
  key = (await t.api('POST', `/v1/agents/${agentId}/keys`, {})).body.key
})
after(async () => {
  await t.close()
})

const asAgent = (step: string, input: Record<string, unknown>) =>
  t.api('POST', `/v1/steps/codehost.${step}/run`, { connectionId: conn, input }, key)

test('steps on the agent’s repository run; on another they are SCOPE_DENIED with nothing sent', async () => {
  assert.equal((await asAgent('get_repository', { owner: 'octo-demo', repo: 'hello-world' })).status, 200)
  assert.equal(
    (await asAgent('get_repository', { owner: 'OCTO-DEMO', repo: 'Hello-World' })).status,
    200,
    'names ignore case',
  )
  const counter = await countRequests(sb, '/repos/octo-demo/private-stuff')
  try {
    for (const [step, input] of [
      ['get_repository', { owner: 'octo-demo', repo: 'private-stuff' }],
      ['create_issue', { owner: 'octo-demo', repo: 'private-stuff', title: 'x' }],
      ['list_commits', { owner: 'octo-demo', repo: 'private-stuff' }],
    ] as const) {
      const res = await asAgent(step, input)
      assert.equal(res.status, 403, `${step}: ${JSON.stringify(res.body)}`)
      assert.equal(res.body.error.code, 'SCOPE_DENIED')
      assert.match(res.body.error.message, /octo-demo\/private-stuff/)
    }
    assert.equal(await counter.count(), 0)
  } finally {
    await counter.stop()
  }
  // A workspace key is not scoped.
  const admin = await t.api('POST', '/v1/steps/codehost.get_repository/run', {
    connectionId: conn,
    input: { owner: 'octo-demo', repo: 'private-stuff' },
  })
  assert.equal(admin.status, 200)
})

test('an API Call is attributed to the repository its path names; paths naming none are refused', async () => {
  const allowed = [
    '/repos/octo-demo/hello-world/issues?state=all',
    '/search/issues?q=repo:octo-demo/hello-world+is:open',
  ]
  for (const endpoint of allowed) {
    const res = await asAgent('api_call', { method: 'GET', endpoint, headers: accept })
    assert.equal(res.status, 200, `${endpoint}: ${JSON.stringify(res.body)}`)
  }
  const star = await asAgent('api_call', {
    method: 'PUT',
    endpoint: '/user/starred/octo-demo/hello-world',
    headers: accept,
  })
  assert.equal(star.status, 200)
  const refused = [
    ['GET', '/repos/octo-demo/private-stuff'],
    ['GET', '/user'],
    ['GET', '/user/repos'],
    ['POST', '/graphql'],
    ['GET', '/gists'],
    ['GET', '/search/issues?q=bug'],
    ['GET', '/search/issues?q=repo:octo-demo/private-stuff'],
    ['GET', '/search/issues?q=repo:octo-demo/hello-world+user:octo-demo'],
    ['PUT', '/user/starred/octo-demo/private-stuff'],
  ]
  for (const [method, endpoint] of refused) {
    const res = await asAgent('api_call', {
      method,
      endpoint,
      headers: accept,
      body: method === 'POST' ? {} : undefined,
    })
    assert.equal(res.status, 403, `${method} ${endpoint}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.error.code, 'SCOPE_DENIED')
  }
})

test('Search Issues and Pull Requests covers only the agent’s repositories', async () => {
  const admin = await t.api('POST', '/v1/steps/codehost.search_issues_and_pull_requests/run', {
    connectionId: conn,
    input: { q: 'label:bug' },
  })
  assert.ok(admin.body.output.items.some((i: any) => i.repository === 'octo-demo/private-stuff'))

  const res = await asAgent('search_issues_and_pull_requests', { q: 'label:bug' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.match(res.body.output.query, /repo:octo-demo\/hello-world/)
  assert.ok(res.body.output.items.length > 0)
  assert.ok(res.body.output.items.every((i: any) => i.repository === 'octo-demo/hello-world'))

  for (const input of [
    { q: 'label:bug repo:octo-demo/private-stuff' },
    { q: 'bug', repositories: ['octo-demo/private-stuff'] },
    { q: 'user:octo-demo bug' },
    { q: 'org:octo-org bug', repositories: ['octo-demo/hello-world'] },
  ]) {
    const denied = await asAgent('search_issues_and_pull_requests', input)
    assert.equal(denied.status, 403, JSON.stringify({ input, body: denied.body }))
    assert.equal(denied.body.error.code, 'SCOPE_DENIED')
  }
})

test('Create Repository: an agent may create only a repository its scope lists', async () => {
  const denied = await asAgent('create_repository', { name: 'agent-made' })
  assert.equal(denied.status, 403)
  assert.equal(denied.body.error.code, 'SCOPE_DENIED')
  await t.api('PATCH', `/v1/agents/${agentId}`, {
    scope: { repositories: ['octo-demo/hello-world', 'octo-demo/agent-made'] },
  })
  const made = await asAgent('create_repository', { name: 'agent-made' })
  assert.equal(made.status, 200, JSON.stringify(made.body))
  assert.equal(made.body.output.fullName, 'octo-demo/agent-made')
})

test('Update Project (V2) Item Status: only items of issues in the agent’s repositories', async () => {
  const demo = await ch(sb, 'GET', '/demo')
  const issueItem = demo.projectV2.items.find((i: any) => i.type === 'Issue').id
  const draftItem = demo.projectV2.items.find((i: any) => i.type === 'DraftIssue').id
  const ok = await asAgent('update_project_v2_item_status', { itemId: issueItem, status: 'Done' })
  assert.equal(ok.status, 200, JSON.stringify(ok.body))
  const draft = await asAgent('update_project_v2_item_status', { itemId: draftItem, status: 'Done' })
  assert.equal(draft.status, 403)
  assert.equal(draft.body.error.code, 'SCOPE_DENIED')
  assert.match(draft.body.error.message, /no repository/)
})
