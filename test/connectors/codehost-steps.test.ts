// Every code-host tool step against the code-host sandbox over real HTTP, with the bad input
// a user would meet: a repository the connection cannot see, a stale sha, a pull request that
// cannot merge, a workflow that does not exist, a status the project does not have, and the
// Code-Host API Call's accept-header rule.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { request } from 'undici'
import type { CodehostSandbox } from '../../sandbox/codehost/index.ts'
import { act, api, ch, connectWithToken } from '../helpers/codehost.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let sb: CodehostSandbox
let conn: string
const R = { owner: 'octo-demo', repo: 'hello-world' }

async function run(step: string, input: Record<string, unknown>, connectionId = conn, key?: string) {
  return t.api('POST', `/v1/steps/codehost.${step}/run`, { connectionId, input }, key)
}

async function ok(step: string, input: Record<string, unknown>) {
  const res = await run(step, input)
  assert.equal(res.status, 200, `${step}: ${JSON.stringify(res.body)}`)
  return res.body.output
}

async function fails(step: string, input: Record<string, unknown>, status: number, code: string) {
  const res = await run(step, input)
  assert.equal(res.status, status, `${step}: ${JSON.stringify(res.body)}`)
  assert.equal(res.body.error.code, code, JSON.stringify(res.body))
  return res.body.error
}

before(async () => {
  t = await startTestService({ codehost: true })
  sb = t.codehost!
  conn = await connectWithToken(t, sb.demo.token)
})
after(async () => {
  await t.close()
})

test('the catalog lists the 26 code-host steps by the spec’s names, found by searching "code-host"', async () => {
  const res = await t.api('GET', '/v1/steps?q=code-host')
  const names = res.body.steps.map((s: any) => s.name).sort()
  assert.deepEqual(
    names,
    [
      'Code-Host API Call',
      'Create Branch',
      'Create Issue',
      'Create Issue Comment',
      'Create Pull Request',
      'Create Repository',
      'Create Snippet',
      'Create Workflow Dispatch',
      'Create or Update File Contents',
      'Disable Workflow',
      'Enable Workflow',
      'Get Commit',
      'Get Issue Assignees',
      'Get Repository Content',
      'Get Repository Info',
      'Get Reviewers',
      'Get Workflow Run',
      'List Commits',
      'List Releases',
      'List Snippets for a User',
      'List Workflow Runs',
      'Search Issues and Pull Requests',
      'Star Repo',
      'Update Issue',
      'Update Project (V2) Item Status',
      'Update Snippet',
    ].sort(),
  )
  for (const s of res.body.steps) {
    assert.ok(s.description.length > 40, `${s.id} has a description for an LLM`)
    for (const [field, schema] of Object.entries<any>(s.inputSchema.properties ?? {}))
      assert.ok(schema.description || schema.anyOf, `${s.id}.${field} is described`)
  }
  const readOnly = res.body.steps.filter((s: any) => s.hints.readOnly).map((s: any) => s.id)
  assert.ok(readOnly.includes('codehost.get_repository') && !readOnly.includes('codehost.create_issue'))
})

describe('repositories', () => {
  test('Get Repository Info reads a slim repository', async () => {
    const out = await ok('get_repository', R)
    assert.equal(out.fullName, 'octo-demo/hello-world')
    assert.equal(out.defaultBranch, 'main')
    assert.equal(out.private, false)
    assert.equal(typeof out.openIssues, 'number')
    assert.equal(out.owner, 'octo-demo')
  })

  test('a repository the connection cannot see is UPSTREAM_NOT_FOUND with a hint', async () => {
    const e = await fails(
      'get_repository',
      { owner: 'octo-demo', repo: 'no-such-repo' },
      404,
      'UPSTREAM_NOT_FOUND',
    )
    assert.match(e.hint, /fine-grained token reaches only/)
    assert.equal(e.upstream.status, 404)
  })

  test('input naming no valid repository is refused before anything is sent', async () => {
    const counter = await countRequests(sb, '/repos')
    try {
      const res = await run('get_repository', { owner: 'octo demo', repo: 'a/b' })
      assert.equal(res.status, 400)
      assert.equal(res.body.error.code, 'VALIDATION_FAILED')
      assert.match(res.body.error.message, /input\.owner/)
      assert.match(res.body.error.message, /input\.repo/)
      assert.equal(await counter.count(), 0)
    } finally {
      await counter.stop()
    }
  })

  test('Create Repository makes one with a README; the same name again is refused with the upstream’s reason', async () => {
    const out = await ok('create_repository', { name: 'made-by-patchbay', description: 'From a step' })
    assert.equal(out.fullName, 'octo-demo/made-by-patchbay')
    assert.equal(out.description, 'From a step')
    const readme = await ok('get_repository_content', {
      owner: 'octo-demo',
      repo: 'made-by-patchbay',
      path: 'README.md',
    })
    assert.equal(readme.type, 'file')
    const e = await fails('create_repository', { name: 'made-by-patchbay' }, 422, 'UPSTREAM_REJECTED')
    assert.match(e.message, /Repository creation failed/)
    assert.match(e.message, /already exists/)
  })

  test('Get Repository Content reads a file’s text and sha, lists a folder, and 404s a missing path', async () => {
    const file = await ok('get_repository_content', { ...R, path: 'README.md' })
    assert.equal(file.type, 'file')
    assert.match(file.text, /Hello/i)
    assert.match(file.sha, /^[0-9a-f]{40}$/)
    assert.equal(file.truncated, false)
    const cut = await ok('get_repository_content', { ...R, path: 'README.md', maxBytes: 5 })
    assert.equal(cut.text.length, 5)
    assert.equal(cut.truncated, true)
    const dir = await ok('get_repository_content', R)
    assert.equal(dir.type, 'dir')
    assert.ok(dir.entries.some((e: any) => e.name === 'README.md' && e.type === 'file'))
    assert.ok(dir.entries.some((e: any) => e.name === '.codehost' && e.type === 'dir'))
    await fails('get_repository_content', { ...R, path: 'nope.txt' }, 404, 'UPSTREAM_NOT_FOUND')
    const res = await run('get_repository_content', { ...R, path: '../secrets' })
    assert.equal(res.body.error.code, 'VALIDATION_FAILED')
  })

  test('Star Repo stars it for the connected account', async () => {
    const out = await ok('star_repo', R)
    assert.deepEqual(out, { starred: true, repository: 'octo-demo/hello-world' })
    const check = await api(sb, sb.demo.token, 'GET', '/user/starred/octo-demo/hello-world')
    assert.equal(check.status, 204)
    assert.equal((await run('star_repo', R)).status, 200, 'starring twice is fine')
  })
})

describe('branches, commits and files', () => {
  test('Create Branch starts at the default branch, another branch or a sha; a taken name is BRANCH_EXISTS', async () => {
    const main = await api(sb, sb.demo.token, 'GET', '/repos/octo-demo/hello-world/branches/main')
    const out = await ok('create_branch', { ...R, branch: 'feature/steps' })
    assert.deepEqual(out, {
      branch: 'feature/steps',
      ref: 'refs/heads/feature/steps',
      sha: main.body.commit.sha,
    })
    const fromBranch = await ok('create_branch', { ...R, branch: 'from-feature', from: 'feature/steps' })
    assert.equal(fromBranch.sha, main.body.commit.sha)
    const fromSha = await ok('create_branch', { ...R, branch: 'from-sha', from: main.body.commit.sha })
    assert.equal(fromSha.sha, main.body.commit.sha)
    await fails('create_branch', { ...R, branch: 'feature/steps' }, 409, 'BRANCH_EXISTS')
    const e = await fails(
      'create_branch',
      { ...R, branch: 'x', from: 'no-such-branch' },
      404,
      'BRANCH_NOT_FOUND',
    )
    assert.match(e.message, /no-such-branch/)
    const bad = await run('create_branch', { ...R, branch: 'has space' })
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED')
  })

  test('Create or Update File Contents creates, then updates reading the sha itself; a stale sha is STALE_SHA', async () => {
    const created = await ok('create_or_update_file', {
      ...R,
      path: 'docs/notes.md',
      content: '# Notes\n',
      message: 'Add notes',
      branch: 'feature/steps',
    })
    assert.equal(created.created, true)
    assert.equal(created.path, 'docs/notes.md')
    assert.match(created.commit.sha, /^[0-9a-f]{40}$/)
    const firstSha = created.contentSha

    const updated = await ok('create_or_update_file', {
      ...R,
      path: 'docs/notes.md',
      content: '# Notes\n\nMore.\n',
      message: 'Extend notes',
      branch: 'feature/steps',
    })
    assert.equal(updated.created, false, 'the existing file was updated, its sha read by Patchbay')
    assert.notEqual(updated.contentSha, firstSha)

    const e = await fails(
      'create_or_update_file',
      { ...R, path: 'docs/notes.md', content: 'x', message: 'Stale', branch: 'feature/steps', sha: firstSha },
      409,
      'STALE_SHA',
    )
    assert.match(e.hint, /Read the file again/)
    const now = await ok('get_repository_content', { ...R, path: 'docs/notes.md', ref: 'feature/steps' })
    assert.equal(now.text, '# Notes\n\nMore.\n', 'nothing was written by the stale update')

    const withSha = await ok('create_or_update_file', {
      ...R,
      path: 'docs/notes.md',
      content: 'Final\n',
      message: 'With the current sha',
      branch: 'feature/steps',
      sha: now.sha,
    })
    assert.equal(withSha.created, false)
    await fails(
      'create_or_update_file',
      { ...R, path: 'docs', content: 'x', message: 'm', branch: 'feature/steps' },
      409,
      'PATH_IS_NOT_A_FILE',
    )
  })

  test('Get Commit reads a commit with its files; an unknown sha is refused with the upstream’s message', async () => {
    const head = await api(sb, sb.demo.token, 'GET', '/repos/octo-demo/hello-world/branches/feature/steps')
    const out = await ok('get_commit', { ...R, ref: head.body.commit.sha })
    assert.equal(out.sha, head.body.commit.sha)
    assert.equal(out.message, 'With the current sha')
    assert.equal(out.parents.length, 1)
    assert.ok(out.files.some((f: any) => f.filename === 'docs/notes.md'))
    assert.ok(out.stats.total >= 1)
    const slim = await ok('get_commit', { ...R, ref: 'main', includeFiles: false })
    assert.equal(slim.files, null)
    const e = await fails('get_commit', { ...R, ref: 'f'.repeat(40) }, 422, 'UPSTREAM_REJECTED')
    assert.match(e.message, /No commit found/)
  })

  test('List Commits pages through a branch and says whether another page follows', async () => {
    const first = await ok('list_commits', { ...R, sha: 'feature/steps', perPage: 2 })
    assert.equal(first.commits.length, 2)
    assert.equal(first.hasNextPage, true)
    assert.equal(first.commits[0].message, 'With the current sha')
    const all = await ok('list_commits', { ...R, sha: 'feature/steps', perPage: 100 })
    assert.equal(all.hasNextPage, false)
    const last = await ok('list_commits', {
      ...R,
      sha: 'feature/steps',
      perPage: 2,
      page: Math.ceil(all.commits.length / 2),
    })
    assert.equal(last.hasNextPage, false)
    const onPath = await ok('list_commits', { ...R, sha: 'feature/steps', path: 'docs/notes.md' })
    assert.equal(onPath.commits.length, 3)
  })
})

describe('issues and pull requests', () => {
  let issue: number

  test('Create Issue, Create Issue Comment, Update Issue and Get Issue Assignees', async () => {
    const made = await ok('create_issue', {
      ...R,
      title: 'Steps test',
      body: 'Made by a step',
      labels: ['bug'],
    })
    issue = made.number
    assert.equal(made.title, 'Steps test')
    assert.deepEqual(made.labels, ['bug'])
    assert.equal(made.state, 'open')
    assert.equal(made.repository, 'octo-demo/hello-world')

    const comment = await ok('create_issue_comment', { ...R, issueNumber: issue, body: 'A comment' })
    assert.equal(comment.issueNumber, issue)
    assert.equal(comment.author, 'octo-demo')

    const updated = await ok('update_issue', {
      ...R,
      issueNumber: issue,
      title: 'Steps test (renamed)',
      labels: ['bug', 'documentation'],
      assignees: ['octo-demo', 'reviewer'],
    })
    assert.equal(updated.title, 'Steps test (renamed)')
    assert.deepEqual(updated.labels.sort(), ['bug', 'documentation'])
    assert.equal(updated.comments, 1)

    const assignees = await ok('get_issue_assignees', { ...R, issueNumber: issue })
    assert.deepEqual(assignees.assignees.map((a: any) => a.login).sort(), ['octo-demo', 'reviewer'])

    const closed = await ok('update_issue', {
      ...R,
      issueNumber: issue,
      state: 'closed',
      stateReason: 'not_planned',
    })
    assert.equal(closed.state, 'closed')
    assert.equal(closed.stateReason, 'not_planned')

    const empty = await run('update_issue', { ...R, issueNumber: issue })
    assert.equal(empty.body.error.code, 'VALIDATION_FAILED')
    assert.match(empty.body.error.message, /at least one/)
    await fails('get_issue_assignees', { ...R, issueNumber: 99999 }, 404, 'UPSTREAM_NOT_FOUND')
  })

  test('Search Issues and Pull Requests across repositories, narrowed by repository, type and state, paged', async () => {
    await ok('create_issue', {
      owner: 'octo-demo',
      repo: 'made-by-patchbay',
      title: 'Crash on start',
      labels: ['bug'],
    })
    const everywhere = await ok('search_issues_and_pull_requests', {
      q: 'label:bug',
      state: 'open',
      perPage: 1,
    })
    assert.ok(everywhere.totalCount >= 2)
    assert.equal(everywhere.items.length, 1)
    assert.equal(everywhere.hasNextPage, true)
    const repos = new Set(
      (await ok('search_issues_and_pull_requests', { q: 'label:bug', state: 'open' })).items.map(
        (i: any) => i.repository,
      ),
    )
    assert.ok(
      repos.has('octo-demo/hello-world') && repos.has('octo-demo/made-by-patchbay'),
      [...repos].join(),
    )

    const one = await ok('search_issues_and_pull_requests', {
      q: 'crash',
      repositories: ['octo-demo/made-by-patchbay'],
      type: 'issue',
    })
    assert.equal(one.totalCount, 1)
    assert.equal(one.items[0].title, 'Crash on start')
    assert.match(one.query, /repo:octo-demo\/made-by-patchbay/)
    assert.match(one.query, /is:issue/)

    const closed = await ok('search_issues_and_pull_requests', { q: 'Steps test', ...{ state: 'closed' } })
    assert.ok(closed.items.every((i: any) => i.state === 'closed'))
    const empty = await run('search_issues_and_pull_requests', {})
    assert.equal(empty.body.error.code, 'VALIDATION_FAILED')
  })

  let pull: number

  test('Create Pull Request into the default branch; no commits between and duplicates are PULL_REQUEST_REJECTED', async () => {
    const out = await ok('create_pull_request', {
      ...R,
      title: 'Add notes',
      head: 'feature/steps',
      body: 'Adds docs/notes.md',
    })
    pull = out.number
    assert.equal(out.base.ref, 'main')
    assert.equal(out.head.ref, 'feature/steps')
    assert.equal(out.state, 'open')
    assert.equal(out.draft, false)
    assert.equal(out.merged, false)
    const dup = await fails(
      'create_pull_request',
      { ...R, title: 'Again', head: 'feature/steps' },
      422,
      'PULL_REQUEST_REJECTED',
    )
    assert.match(dup.message, /already exists/i)
    const none = await fails(
      'create_pull_request',
      { ...R, title: 'Nothing', head: 'from-sha' },
      422,
      'PULL_REQUEST_REJECTED',
    )
    assert.match(none.message, /No commits between/i)
    await fails(
      'create_pull_request',
      { ...R, title: 'Ghost', head: 'no-such-branch' },
      422,
      'PULL_REQUEST_REJECTED',
    )
  })

  test('Get Reviewers: requested reviewers, reviews and each reviewer’s latest verdict', async () => {
    await act(sb, 'request_review', { number: pull, reviewers: ['reviewer'] })
    let out = await ok('get_reviewers', { ...R, pullNumber: pull })
    assert.deepEqual(out.requested.users, ['reviewer'])
    assert.deepEqual(out.reviews, [])
    await act(sb, 'review', { as: 'reviewer', number: pull, event: 'REQUEST_CHANGES', body: 'Please fix' })
    await act(sb, 'review', { as: 'reviewer', number: pull, event: 'APPROVE' })
    out = await ok('get_reviewers', { ...R, pullNumber: pull })
    assert.deepEqual(
      out.reviews.map((r: any) => [r.reviewer, r.state]),
      [
        ['reviewer', 'CHANGES_REQUESTED'],
        ['reviewer', 'APPROVED'],
      ],
    )
    assert.deepEqual(out.latestByReviewer, { reviewer: 'APPROVED' })
  })

  test('a pull request that cannot merge: the API Call’s merge is PULL_REQUEST_NOT_MERGEABLE', async () => {
    await ch(sb, 'POST', `/pulls/octo-demo/hello-world/${pull}/mergeable`, { mergeable: false })
    const res = await run('api_call', {
      method: 'PUT',
      endpoint: `/repos/octo-demo/hello-world/pulls/${pull}/merge`,
      headers: { accept: 'application/vnd.codehost+json' },
      body: {},
    })
    assert.equal(res.status, 409)
    assert.equal(res.body.error.code, 'PULL_REQUEST_NOT_MERGEABLE')
    assert.match(res.body.error.message, /not mergeable/)
    await ch(sb, 'POST', `/pulls/octo-demo/hello-world/${pull}/mergeable`, { mergeable: null })
  })
})

describe('projects, workflows, snippets and releases', () => {
  test('Update Project (V2) Item Status resolves the status by name; an unknown name lists the options', async () => {
    const demo = await ch(sb, 'GET', '/demo')
    const item = demo.projectV2.items.find((i: any) => i.type === 'Issue').id
    const out = await ok('update_project_v2_item_status', { itemId: item, status: 'in progress' })
    assert.equal(out.status, 'In Progress')
    assert.equal(out.previousStatus, 'Todo')
    assert.equal(out.project.title, 'Demo roadmap')
    assert.deepEqual(out.content, {
      type: 'Issue',
      number: 1,
      title: 'Found a bug',
      repository: 'octo-demo/hello-world',
    })
    const again = await ok('update_project_v2_item_status', {
      itemId: item,
      status: 'Done',
      projectId: demo.projectV2.id,
    })
    assert.equal(again.previousStatus, 'In Progress')

    const e = await fails(
      'update_project_v2_item_status',
      { itemId: item, status: 'Shipped' },
      422,
      'STATUS_OPTION_NOT_FOUND',
    )
    assert.match(e.message, /Todo, In Progress, Done/)
    const wrongProject = await fails(
      'update_project_v2_item_status',
      { itemId: item, status: 'Done', projectId: 'PVT_other' },
      400,
      'ITEM_NOT_IN_PROJECT',
    )
    assert.match(wrongProject.message, /Demo roadmap/)
    const gone = await fails(
      'update_project_v2_item_status',
      { itemId: 'PVTI_nope', status: 'Done' },
      404,
      'UPSTREAM_NOT_FOUND',
    )
    assert.match(gone.message, /GraphQL/)
    assert.equal(gone.upstream.status, 200, 'GraphQL errors arrive with a 200')
  })

  test('Create Workflow Dispatch starts a run that Get Workflow Run and List Workflow Runs follow', async () => {
    const out = await ok('create_workflow_dispatch', { ...R, workflow: 'ci.yml', inputs: { reason: 'test' } })
    assert.equal(out.dispatched, true)
    assert.equal(out.ref, 'main')
    assert.equal(typeof out.runId, 'number')
    const runRes = await ok('get_workflow_run', { ...R, runId: out.runId })
    assert.equal(runRes.id, out.runId)
    assert.equal(runRes.event, 'workflow_dispatch')
    assert.ok(['queued', 'in_progress', 'completed'].includes(runRes.status))
    await ch(sb, 'POST', `/workflow-runs/${out.runId}/complete`, { conclusion: 'failure' })
    const done = await ok('get_workflow_run', { ...R, runId: out.runId })
    assert.equal(done.status, 'completed')
    assert.equal(done.conclusion, 'failure')

    const list = await ok('list_workflow_runs', { ...R, workflow: 'ci.yml', perPage: 1 })
    assert.equal(list.runs[0].id, out.runId)
    const failed = await ok('list_workflow_runs', { ...R, status: 'failure' })
    assert.ok(failed.runs.every((r: any) => r.conclusion === 'failure'))
    await fails('get_workflow_run', { ...R, runId: 1 }, 404, 'UPSTREAM_NOT_FOUND')
  })

  test('a workflow that does not exist is WORKFLOW_NOT_FOUND, naming the workflows there are', async () => {
    const e = await fails(
      'create_workflow_dispatch',
      { ...R, workflow: 'deploy.yml' },
      404,
      'WORKFLOW_NOT_FOUND',
    )
    assert.match(e.message, /deploy\.yml/)
    assert.match(e.message, /ci\.yml \(CI/)
    await fails('enable_workflow', { ...R, workflow: 'deploy.yml' }, 404, 'WORKFLOW_NOT_FOUND')
    await fails('list_workflow_runs', { ...R, workflow: 'deploy.yml' }, 404, 'WORKFLOW_NOT_FOUND')
  })

  test('Disable Workflow stops dispatches (WORKFLOW_DISABLED) until Enable Workflow', async () => {
    assert.deepEqual(await ok('disable_workflow', { ...R, workflow: 'ci.yml' }), {
      workflow: 'ci.yml',
      state: 'disabled_manually',
    })
    const wf = await api(sb, sb.demo.token, 'GET', '/repos/octo-demo/hello-world/actions/workflows/ci.yml')
    assert.equal(wf.body.state, 'disabled_manually')
    const e = await fails('create_workflow_dispatch', { ...R, workflow: 'ci.yml' }, 409, 'WORKFLOW_DISABLED')
    assert.match(e.hint, /Enable Workflow/)
    assert.deepEqual(await ok('enable_workflow', { ...R, workflow: 'ci.yml' }), {
      workflow: 'ci.yml',
      state: 'active',
    })
    await ok('create_workflow_dispatch', { ...R, workflow: 'ci.yml' })
  })

  test('Create Snippet, Update Snippet and List Snippets for a User', async () => {
    const made = await ok('create_snippet', {
      description: 'Notes',
      files: { 'a.md': '# A', 'b.txt': 'bee' },
    })
    assert.equal(made.public, false)
    assert.equal(made.owner, 'octo-demo')
    assert.deepEqual(made.files.map((f: any) => f.filename).sort(), ['a.md', 'b.txt'])
    const updated = await ok('update_snippet', {
      snippetId: made.id,
      description: 'Notes, revised',
      files: { 'a.md': '# A2', 'b.txt': null, 'c.md': 'new' },
    })
    assert.equal(updated.description, 'Notes, revised')
    assert.deepEqual(updated.files.map((f: any) => [f.filename, f.content]).sort(), [
      ['a.md', '# A2'],
      ['c.md', 'new'],
    ])
    await ok('create_snippet', { public: true, files: { 'second.md': 'two' } })
    const page1 = await ok('list_snippets_for_user', { username: 'octo-demo', perPage: 1 })
    assert.equal(page1.snippets.length, 1)
    assert.equal(page1.hasNextPage, true)
    const all = await ok('list_snippets_for_user', { username: 'octo-demo', perPage: 100 })
    assert.ok(all.snippets.some((s: any) => s.id === made.id && s.files[0].content === undefined))
    assert.equal(all.hasNextPage, false)
    await fails('update_snippet', { snippetId: 'abc123', description: 'x' }, 404, 'UPSTREAM_NOT_FOUND')
    const none = await run('create_snippet', { files: {} })
    assert.equal(none.body.error.code, 'VALIDATION_FAILED')
  })

  test('List Releases pages through published releases', async () => {
    await act(sb, 'publish_release', { tag_name: 'v1.0.0', name: 'One', body: 'First' })
    await act(sb, 'publish_release', { tag_name: 'v1.1.0', name: 'One point one', prerelease: true })
    const out = await ok('list_releases', { ...R, perPage: 1 })
    assert.equal(out.releases.length, 1)
    assert.equal(out.hasNextPage, true)
    const all = await ok('list_releases', R)
    assert.deepEqual(all.releases.map((r: any) => r.tagName).sort(), ['v1.0.0', 'v1.1.0'])
    assert.equal(all.releases.find((r: any) => r.tagName === 'v1.1.0').prerelease, true)
  })
})

describe('Code-Host API Call', () => {
  const accept = { accept: 'application/vnd.codehost+json' }

  test('sends any method and path with the connection’s credentials; pagination headers come back', async () => {
    const res = await run('api_call', {
      method: 'GET',
      endpoint: '/repos/octo-demo/hello-world/issues?state=all&per_page=1',
      headers: accept,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.output.status, 200)
    assert.equal(res.body.output.body.length, 1)
    assert.match(res.body.output.headers.link, /rel="next"/)
    assert.ok(res.body.output.headers['x-ratelimit-remaining'])
    const patched = await run('api_call', {
      method: 'PATCH',
      endpoint: '/repos/octo-demo/hello-world/issues/1',
      headers: { Accept: 'application/vnd.codehost+json' },
      body: { body: 'Edited through the API Call' },
    })
    assert.equal(patched.body.output.body.body, 'Edited through the API Call')
  })

  test('every request names Patchbay in its User-Agent; a blank one cannot be sent, and the sandbox refuses a request without one', async () => {
    const before = (await ch(sb, 'GET', '/requests')).requests.length
    const res = await run('api_call', {
      method: 'GET',
      endpoint: '/repos/octo-demo/hello-world',
      headers: { ...accept, 'user-agent': ' ' },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    await ok('get_repository', R)
    const requests = (await ch(sb, 'GET', '/requests')).requests.slice(before)
    assert.ok(requests.length >= 2)
    for (const r of requests) assert.match(r.headers['user-agent'], /^Patchbay\/\d+\.\d+\.\d+/, r.path)
    // Sent directly without one (undici's request adds none), the code host refuses it.
    const direct = await request(`${sb.url}/repos/octo-demo/hello-world`, {
      headers: { authorization: `Bearer ${sb.demo.token}`, accept: 'application/vnd.codehost+json' },
    })
    assert.equal(direct.statusCode, 403)
    assert.match(
      await direct.body.text(),
      /^Request forbidden by administrative rules\. Please make sure your request has a User-Agent header/,
    )
  })

  test('without the accept header it fails with the spec’s message, what is wrong and the fix — nothing sent', async () => {
    const counter = await countRequests(sb, '/repos')
    try {
      for (const headers of [
        {},
        { accept: 'application/json' },
        { 'content-type': 'application/vnd.codehost+json' },
      ]) {
        const res = await run('api_call', {
          method: 'GET',
          endpoint: '/repos/octo-demo/hello-world',
          headers,
        })
        assert.equal(res.status, 400)
        assert.equal(res.body.error.code, 'ACCEPT_HEADER_REQUIRED')
        assert.match(res.body.error.message, /^Please enter a value for 'response_body' field\./)
        assert.match(res.body.error.message, /accept: application\/vnd\.codehost\+json/)
        assert.match(res.body.error.hint, /Add "accept": "application\/vnd\.codehost\+json" to headers/)
      }
      const noHeaders = await run('api_call', { method: 'GET', endpoint: '/repos/octo-demo/hello-world' })
      assert.match(noHeaders.body.error.message, /had no accept header/)
      assert.equal(await counter.count(), 0)
    } finally {
      await counter.stop()
    }
  })

  test('credential headers, URLs and climbing paths are refused', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ headers: { ...accept, Authorization: 'Bearer x' } }, 'CREDENTIALS_IN_REQUEST'],
      [{ headers: { ...accept, cookie: 'a=b' } }, 'CREDENTIALS_IN_REQUEST'],
      [{ headers: { ...accept, host: 'evil.example' } }, 'INVALID_HEADER'],
      [{ headers: accept, endpoint: 'https://evil.example/repos' }, 'INVALID_ENDPOINT'],
      [{ headers: accept, endpoint: '/repos/../user' }, 'INVALID_ENDPOINT'],
      [{ headers: accept, endpoint: '/user?access_token=x' }, 'CREDENTIALS_IN_REQUEST'],
    ]
    for (const [extra, code] of cases) {
      const res = await run('api_call', { method: 'GET', endpoint: '/repos/octo-demo/hello-world', ...extra })
      assert.equal(res.body.error?.code, code, JSON.stringify({ extra, body: res.body }))
    }
  })

  test('upstream refusals keep the upstream’s own message; the token never appears', async () => {
    const res = await run('api_call', {
      method: 'POST',
      endpoint: '/repos/octo-demo/hello-world/git/refs',
      headers: accept,
      body: { ref: 'refs/heads/main', sha: 'a'.repeat(40) },
    })
    assert.equal(res.status, 422)
    assert.equal(res.body.error.code, 'UPSTREAM_REJECTED')
    assert.match(res.body.error.message, /Reference already exists|Object does not exist/)
    assert.ok(!JSON.stringify(res.body).includes(sb.demo.token))
    const runs = await t.api('GET', '/v1/runs?limit=200')
    assert.ok(!JSON.stringify(runs.body).includes(sb.demo.token))
  })
})
