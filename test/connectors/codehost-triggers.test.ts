// Every code-host trigger end to end against the sandbox: a change upstream → the code-host's
// signed webhook (repository hook or organization hook, registered by Patchbay) or Patchbay's poll → the ingress → the
// pipeline → a signed push to the agent. Each scenario checks exactly which triggers fired, so a
// trigger's neighbours not firing is checked too; a second agent's filtered triggers show the
// filters.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { CodehostSandbox } from '../../sandbox/codehost/index.ts'
import { act, api, ch, connectDemoCodehost, settle as settleCodehost } from '../helpers/codehost.ts'
import { Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let sb: CodehostSandbox
let conn: string
const everything = new Receiver()
const picky = new Receiver()

const REPO_TRIGGERS = [
  'new_fork',
  'new_star',
  'new_watcher',
  'new_tag',
  'new_issue',
  'updated_issue',
  'new_pull_request',
  'updated_pull_request',
  'new_comment',
  'new_label_on_issue',
  'new_review_request',
  'new_pull_request_review',
  'new_commit',
  'new_push',
  'new_branch',
  'workflow_run_completed',
  'workflow_job_completed',
  'new_collaborator',
  'new_mention',
  'new_card_in_column',
  'new_release',
  'new_discussion',
  'new_discussion_comment',
]
/** Triggers on an organization's webhook or, for a personal account, polled. */
const ACCOUNT_TRIGGERS = ['new_repository', 'project_item_status_changed', 'new_snippet']
const R = { owner: 'octo-demo', repo: 'hello-world' }

/** The second agent's triggers, each with a filter. */
const FILTERED: Record<string, Record<string, unknown>> = {
  updated_issue: { ...R, changes: ['state'] },
  new_pull_request: { ...R, includeDrafts: true, readyForReview: false },
  updated_pull_request: { ...R, changes: ['merged'] },
  new_comment: { ...R, on: 'pull_request' },
  new_label_on_issue: { ...R, label: 'Urgent' },
  new_review_request: { ...R, reviewer: 'octo-demo' },
  new_pull_request_review: { ...R, states: ['changes_requested'] },
  new_commit: { ...R, branch: 'main' },
  new_push: { ...R, branch: 'main' },
  workflow_run_completed: { ...R, conclusions: ['failure'], workflow: 'ci.yml' },
  workflow_job_completed: { ...R, conclusions: ['success'] },
  new_card_in_column: { ...R, columnId: 30000003 },
  new_release: { ...R, includePrereleases: false },
  new_discussion: { ...R, category: 'ideas' },
  new_mention: { ...R, login: 'alice' },
}

async function agentWith(
  name: string,
  receiver: Receiver,
  triggers: Record<string, Record<string, unknown>>,
) {
  const agent = await t.api('POST', '/v1/agents', {
    name,
    scope: { repositories: ['octo-demo/hello-world'] },
    connectionIds: [conn],
    delivery: { type: 'webhook', url: receiver.url },
  })
  assert.equal(agent.status, 201, JSON.stringify(agent.body))
  receiver.secret = agent.body.signingSecret
  for (const [key, config] of Object.entries(triggers)) {
    const res = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
      trigger: `codehost.${key}`,
      connectionId: conn,
      config,
    })
    assert.equal(res.status, 201, `${key}: ${JSON.stringify(res.body)}`)
  }
  return agent.body.id as string
}

/** Waits until the sandbox has sent every webhook and Patchbay has pushed every delivery. */
const settle = () => settleCodehost(t)

const keysOf = (r: Receiver, from: number) =>
  r.received
    .slice(from)
    .map((x) => String(x.body.data.trigger).replace(/^codehost\./, ''))
    .sort()

/**
 * Runs `change` upstream and returns which triggers fired for each agent (sorted, with repeats).
 * `until` waits for a delivery that only comes later (a workflow run completing).
 */
async function fired(change: () => Promise<unknown>, until?: (keys: string[]) => boolean) {
  await settle()
  const a = everything.received.length
  const b = picky.received.length
  await change()
  if (until) await everything.until(() => until(keysOf(everything, a)))
  await settle()
  return { all: keysOf(everything, a), filtered: keysOf(picky, b), got: everything.received.slice(a) }
}

const unique = (xs: string[]) => [...new Set(xs)].sort()

before(async () => {
  await everything.start()
  await picky.start()
  t = await startTestService({
    codehost: true,
    env: { PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '50,100,200', PATCHBAY_DELIVERY_SCAN_MS: '25' },
  })
  sb = t.codehost!
  conn = await connectDemoCodehost(t)
  await ch(sb, 'POST', '/users', { login: 'alice', name: 'Alice', password: 'pw' })
  await agentWith('everything', everything, Object.fromEntries(REPO_TRIGGERS.map((k) => [k, R])))
  await agentWith('picky', picky, FILTERED)
})
after(async () => {
  await t.close()
  await everything.close()
  await picky.close()
})

describe('webhooks', () => {
  test('one repository hook, made with a secret, shared by every repository trigger; no account hook exists upstream', async () => {
    const repoHooks = (await api(sb, sb.demo.token, 'GET', '/repos/octo-demo/hello-world/hooks')).body
    assert.equal(repoHooks.length, 1)
    assert.deepEqual(repoHooks[0].events, ['*'])
    const h = repoHooks[0]
    assert.equal(h.config.content_type, 'json')
    assert.equal(h.config.secret, '********', 'made with a secret')
    assert.match(h.config.url, new RegExp(`^${t.url}/hooks/codehost/`))
    // The real code host has no /user/hooks; neither has the sandbox.
    assert.equal((await api(sb, sb.demo.token, 'GET', '/user/hooks')).status, 404)
    const agents = (await t.api('GET', '/v1/agents')).body.agents
    const triggers = (await t.api('GET', `/v1/agents/${agents[0].id}/triggers`)).body.triggers
    assert.equal(triggers.length, REPO_TRIGGERS.length)
    const hookIds = new Set(triggers.map((tr: any) => tr.webhook.upstreamHookId))
    assert.deepEqual([...hookIds], [`octo-demo/hello-world/hooks/${repoHooks[0].id}`])
    for (const tr of triggers) {
      assert.equal(tr.instant, true)
      assert.equal(tr.delivery.kind, 'webhook')
      assert.match(tr.delivery.upstream, /^repository webhook \(/)
    }
  })

  test('the ping sent when a hook is made is answered and ignored', async () => {
    const pings = (await ch(sb, 'GET', '/webhooks/deliveries?event=ping')).deliveries
    assert.ok(pings.length >= 1)
    assert.ok(pings.every((p: any) => p.outcome === 'delivered'))
    const events = (await t.api('GET', '/v1/events?connector=codehost&limit=500')).body.events
    assert.ok(!events.some((e: any) => e.type === 'ping'))
  })

  test('forged and unsigned deliveries are refused; a redelivery (same GUID) fires nothing again', async () => {
    const { got } = await fired(() => act(sb, 'open_issue', { as: 'reviewer', title: 'Redelivered' }))
    const hook = (await api(sb, sb.demo.token, 'GET', '/repos/octo-demo/hello-world/hooks')).body[0]
    const url = hook.config.url
    const body = JSON.stringify({
      action: 'opened',
      issue: { number: 999, title: 'forged' },
      repository: { full_name: 'octo-demo/hello-world' },
    })
    for (const signature of ['sha256=' + '0'.repeat(64), undefined]) {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-codehost-event': 'issues',
          'x-codehost-delivery': 'forged-1',
          ...(signature ? { 'x-hub-signature-256': signature } : {}),
        },
        body,
      })
      assert.equal(res.status, 401)
    }
    const deliveries = (
      await api(sb, sb.demo.token, 'GET', `/repos/octo-demo/hello-world/hooks/${hook.id}/deliveries`)
    ).body
    const original = deliveries.find((d: any) => d.event === 'issues' && d.action === 'opened')
    const again = await fired(() =>
      api(
        sb,
        sb.demo.token,
        'POST',
        `/repos/octo-demo/hello-world/hooks/${hook.id}/deliveries/${original.id}/attempts`,
      ),
    )
    assert.deepEqual(again.all, [])
    assert.equal(got.length, 1)
  })
})

describe('repository', () => {
  test('New Star and New Watcher fire for a star; a watch alone fires New Watcher only', async () => {
    assert.deepEqual((await fired(() => act(sb, 'star', { as: 'reviewer' }))).all, [
      'new_star',
      'new_watcher',
    ])
    assert.deepEqual((await fired(() => act(sb, 'unstar', { as: 'reviewer' }))).all, [])
    assert.deepEqual((await fired(() => act(sb, 'watch', { as: 'alice' }))).all, ['new_watcher'])
  })

  test('New Fork fires for a fork, with the fork', async () => {
    const { all, got } = await fired(() => act(sb, 'fork', { as: 'reviewer' }))
    assert.deepEqual(all, ['new_fork'])
    assert.equal(got[0].body.data.event.data.forkee.full_name, 'reviewer/hello-world')
  })

  test('New Tag fires for a tag (with New Push), not New Branch', async () => {
    const { all, got } = await fired(() => ch(sb, 'POST', '/tags', { ...R, tag: 'v0.9.0', ref: 'main' }))
    assert.deepEqual(all, ['new_push', 'new_tag'])
    assert.equal(
      got.find((g) => g.body.data.trigger === 'codehost.new_tag')!.body.data.event.data.ref,
      'v0.9.0',
    )
  })
})

describe('commits and branches', () => {
  test('a new branch with two commits: New Branch, New Push once, New Commit twice', async () => {
    const { all, filtered, got } = await fired(() =>
      ch(sb, 'POST', '/push', {
        ...R,
        branch: 'trig-feature',
        as: 'reviewer',
        commits: [
          { message: 'First', files: { 'a.txt': 'a\n' } },
          { message: 'Second', files: { 'b.txt': 'b\n' } },
        ],
      }),
    )
    assert.deepEqual(all, ['new_branch', 'new_commit', 'new_commit', 'new_push'])
    assert.deepEqual(filtered, [], 'the filtered New Commit and New Push watch main only')
    const commits = got
      .filter((g) => g.body.data.trigger === 'codehost.new_commit')
      .map((g) => g.body.data.event.data)
    assert.deepEqual(commits.map((c) => c.commit.message).sort(), ['First', 'Second'])
    assert.ok(commits.every((c) => c.branch === 'trig-feature'))
    const push = got.find((g) => g.body.data.trigger === 'codehost.new_push')!.body.data.event
    assert.equal(push.data.commits.length, 2)
    assert.equal(push.refs.repository, 'octo-demo/hello-world')
  })

  test('a push of one commit to main fires New Push and New Commit, filtered ones too', async () => {
    const { all, filtered } = await fired(() =>
      ch(sb, 'POST', '/push', {
        ...R,
        branch: 'main',
        commits: [{ message: 'On main', files: { 'm.txt': 'm\n' } }],
      }),
    )
    assert.deepEqual(all, ['new_commit', 'new_push'])
    assert.deepEqual(filtered, ['new_commit', 'new_push'])
  })

  test('event payloads are slim: accounts by login, repositories by name, no API addresses', async () => {
    const events = (await t.api('GET', '/v1/events?connector=codehost&type=push&limit=1')).body.events
    const data = events[0].data
    assert.deepEqual(Object.keys(data.repository).sort(), [
      'default_branch',
      'description',
      'full_name',
      'html_url',
      'id',
      'name',
      'owner',
      'private',
    ])
    assert.deepEqual(data.sender, { login: 'octo-demo', id: 1001, type: 'User' })
    const urls = JSON.stringify(data).match(/"[a-z_]*_url"/g) ?? []
    assert.ok(
      urls.every((u) => u === '"html_url"'),
      urls.join(),
    )
  })
})

describe('issues and pull requests', () => {
  let issue: number

  test('New Issue fires for an opened issue only', async () => {
    const { all, got } = await fired(async () => {
      issue = (await act(sb, 'open_issue', { as: 'reviewer', title: 'Trigger me' })).result.number
    })
    assert.deepEqual(all, ['new_issue'])
    assert.equal(got[0].body.data.event.data.issue.title, 'Trigger me')
  })

  test('Updated Issue fires for title, labels, assignees and status; New Label on Issue only for a label', async () => {
    assert.deepEqual((await fired(() => act(sb, 'update_issue', { number: issue, title: 'Renamed' }))).all, [
      'updated_issue',
    ])
    const labeled = await fired(() => act(sb, 'label', { number: issue, label: 'urgent' }))
    assert.deepEqual(labeled.all, ['new_label_on_issue', 'updated_issue'])
    assert.deepEqual(labeled.filtered, ['new_label_on_issue'], 'the label filter ignores case')
    const other = await fired(() => act(sb, 'label', { number: issue, label: 'bug' }))
    assert.deepEqual(other.filtered, [])
    assert.deepEqual(
      (await fired(() => act(sb, 'update_issue', { number: issue, assignees: ['reviewer'] }))).all,
      ['updated_issue'],
    )
    const closed = await fired(() => act(sb, 'update_issue', { number: issue, state: 'closed' }))
    assert.deepEqual(closed.all, ['updated_issue'])
    assert.deepEqual(closed.filtered, ['updated_issue'], 'the state filter')
  })

  test('New Comment fires for a comment on an issue (filtered: pull requests only)', async () => {
    const { all, filtered } = await fired(() => act(sb, 'comment', { number: issue, body: 'A comment' }))
    assert.deepEqual(all, ['new_comment'])
    assert.deepEqual(filtered, [])
  })

  let pull: number

  test('New Pull Request fires for an opened pull request, not New Issue', async () => {
    const { all, filtered, got } = await fired(async () => {
      pull = (await act(sb, 'open_pull', { as: 'reviewer', title: 'Feature', head: 'trig-feature' })).result
        .number
    })
    assert.deepEqual(all, ['new_pull_request'])
    assert.deepEqual(filtered, ['new_pull_request'])
    assert.equal(got[0].body.data.event.data.pull_request.head.ref, 'trig-feature')
  })

  test('a draft: New Pull Request once, when it is marked ready (by default), or when opened (includeDrafts, readyForReview false)', async () => {
    await ch(sb, 'POST', '/push', {
      ...R,
      branch: 'trig-draft',
      commits: [{ message: 'Draft work', files: { 'd.txt': 'd' } }],
    })
    let draft = 0
    const opened = await fired(async () => {
      draft = (await act(sb, 'open_pull', { title: 'Draft', head: 'trig-draft', draft: true })).result.number
    })
    assert.deepEqual(opened.all, [], 'by default a draft waits until it is ready')
    assert.deepEqual(opened.filtered, ['new_pull_request'], 'includeDrafts fires at the opening')
    const ready = await fired(() => act(sb, 'ready_for_review', { number: draft }))
    assert.deepEqual(ready.all, ['new_pull_request', 'updated_pull_request'], 'once, when it is ready')
    assert.deepEqual(ready.filtered, [], 'readyForReview false: it fired at the opening already')
    assert.deepEqual((await fired(() => act(sb, 'convert_to_draft', { number: draft }))).all, [
      'updated_pull_request',
    ])
    assert.deepEqual(
      (await fired(() => act(sb, 'update_pull', { number: draft, title: 'Draft (renamed)' }))).all,
      ['updated_pull_request'],
    )
    const closed = await fired(() => act(sb, 'update_pull', { number: draft, state: 'closed' }))
    assert.deepEqual(closed.all, ['updated_pull_request'])
    assert.deepEqual(closed.filtered, [], 'closed without merging is not merged')
  })

  test('New Review Request fires for a review request, with the reviewer', async () => {
    const { all, filtered, got } = await fired(() =>
      act(sb, 'request_review', { as: 'reviewer', number: pull, reviewer: 'octo-demo' }),
    )
    assert.deepEqual(all, ['new_review_request'])
    assert.deepEqual(filtered, ['new_review_request'])
    assert.equal(got[0].body.data.event.data.requested_reviewer.login, 'octo-demo')
  })

  test('New Pull Request Review fires for each verdict (filtered: changes requested only)', async () => {
    const approved = await fired(() => act(sb, 'review', { number: pull, event: 'APPROVE' }))
    assert.deepEqual(approved.all, ['new_pull_request_review'])
    assert.deepEqual(approved.filtered, [])
    assert.equal(approved.got[0].body.data.event.data.review.state, 'approved')
    const changes = await fired(() =>
      act(sb, 'review', { number: pull, event: 'REQUEST_CHANGES', body: 'Fix it' }),
    )
    assert.deepEqual(changes.filtered, ['new_pull_request_review'])
    const commented = await fired(() => act(sb, 'review', { number: pull, event: 'COMMENT', body: 'Hm' }))
    assert.deepEqual(commented.all, ['new_pull_request_review'])
  })

  test('a comment on a pull request fires New Comment (the filtered one too)', async () => {
    const { all, filtered } = await fired(() => act(sb, 'comment', { number: pull, body: 'On the PR' }))
    assert.deepEqual(all, ['new_comment'])
    assert.deepEqual(filtered, ['new_comment'])
  })

  test('merging fires Updated Pull Request (merged), New Push and New Commit on main', async () => {
    const { all, filtered } = await fired(() => act(sb, 'merge', { number: pull }))
    assert.deepEqual(unique(all), ['new_commit', 'new_push', 'updated_pull_request'])
    assert.ok(unique(filtered).includes('updated_pull_request'), 'the merged filter')
    assert.equal(all.filter((k) => k === 'new_push').length, 1)
  })
})

describe('workflow, collaboration, projects and the rest', () => {
  test('Workflow Run Completed and Workflow Job Completed fire once a run completes, not while it runs', async () => {
    let runId = 0
    const { all, filtered, got } = await fired(
      async () => {
        runId = (await act(sb, 'dispatch_workflow', { workflow: 'ci.yml' })).result.id
        await ch(sb, 'POST', `/workflow-runs/${runId}/complete`, { conclusion: 'failure' })
      },
      (keys) => keys.includes('workflow_run_completed') && keys.includes('workflow_job_completed'),
    )
    assert.deepEqual(all, ['workflow_job_completed', 'workflow_run_completed'])
    assert.deepEqual(
      filtered,
      ['workflow_run_completed'],
      'failure passes the run filter, not the job filter',
    )
    const run = got.find((g) => g.body.data.trigger === 'codehost.workflow_run_completed')!.body.data.event
      .data
    assert.equal(run.workflow_run.id, runId)
    assert.equal(run.workflow_run.conclusion, 'failure')

    const ok = await fired(
      async () => {
        const id = (await act(sb, 'dispatch_workflow', { workflow: 'ci.yml' })).result.id
        await ch(sb, 'POST', `/workflow-runs/${id}/complete`, { conclusion: 'success' })
      },
      (keys) => keys.includes('workflow_run_completed') && keys.includes('workflow_job_completed'),
    )
    assert.deepEqual(ok.filtered, ['workflow_job_completed'])
  })

  test('New Collaborator fires when someone is added to the repository', async () => {
    const { all, got } = await fired(() => act(sb, 'add_collaborator', { login: 'alice' }))
    assert.deepEqual(all, ['new_collaborator'])
    assert.equal(got[0].body.data.event.data.member.login, 'alice')
  })

  test('New Mention fires instantly for an @-mention in a watched repository (issue, comment, review), besides their own triggers', async () => {
    const opened = await fired(() =>
      act(sb, 'mention', {
        as: 'reviewer',
        login: 'octo-demo',
        title: 'Question',
        body: '@octo-demo could you look?',
      }),
    )
    assert.deepEqual(opened.all, ['new_issue', 'new_mention'])
    assert.deepEqual(opened.filtered, [], 'the picky agent waits for @alice')
    const mention = opened.got.find((g) => g.body.data.trigger === 'codehost.new_mention')!.body.data.event
    assert.equal(mention.type, 'issues.opened')
    assert.match(mention.data.issue.body, /@octo-demo/)
    const number = mention.data.issue.number
    const comment = await fired(() =>
      act(sb, 'comment', { as: 'reviewer', number, body: 'Also @alice, what do you think?' }),
    )
    assert.deepEqual(comment.all, ['new_comment'], 'octo-demo is not mentioned')
    assert.deepEqual(comment.filtered, ['new_mention'], 'alice is')
    const self = await fired(() => act(sb, 'comment', { number, body: 'Note to self, @octo-demo' }))
    assert.deepEqual(self.all, ['new_comment'], 'mentioning yourself notifies nobody')
    const mail = await fired(() =>
      act(sb, 'comment', { as: 'reviewer', number, body: 'Mail me at me@octo-demo.example' }),
    )
    assert.deepEqual(mail.all, ['new_comment'], 'an e-mail address is no mention')
  })

  test('New Card in Column fires for a card created in or moved into a column, not moved within one', async () => {
    let card = 0
    const created = await fired(async () => {
      card = (await act(sb, 'create_project_card', { column_id: 30000001, note: 'Write the changelog' }))
        .result.id
    })
    assert.deepEqual(created.all, ['new_card_in_column'])
    assert.deepEqual(created.filtered, [])
    assert.deepEqual(
      (await fired(() => act(sb, 'move_project_card', { card_id: card, position: 'bottom' }))).all,
      [],
    )
    const moved = await fired(() =>
      act(sb, 'move_project_card', { card_id: card, position: 'top', column_id: 30000003 }),
    )
    assert.deepEqual(moved.all, ['new_card_in_column'])
    assert.deepEqual(moved.filtered, ['new_card_in_column'])
  })

  test('New Release fires for a published release (filtered: not pre-releases)', async () => {
    const pre = await fired(() => act(sb, 'publish_release', { tag_name: 'v3.0.0-rc.1', prerelease: true }))
    assert.ok(pre.all.includes('new_release'))
    assert.deepEqual(
      pre.all.filter((k) => k !== 'new_release'),
      pre.all.filter((k) => ['new_tag', 'new_push'].includes(k)),
      'besides New Release, only the new tag’s triggers',
    )
    assert.ok(!pre.filtered.includes('new_release'))
    const final = await fired(() => act(sb, 'publish_release', { tag_name: 'v3.0.0' }))
    assert.ok(final.filtered.includes('new_release'))
    const draft = await fired(() => act(sb, 'create_release', { tag_name: 'v4.0.0', draft: true }))
    assert.ok(!draft.all.includes('new_release'), 'a draft is not published')
  })

  test('New Discussion and New Discussion Comment', async () => {
    let number = 0
    const started = await fired(async () => {
      number = (await act(sb, 'create_discussion', { as: 'reviewer', title: 'An idea', category: 'Ideas' }))
        .result.number
    })
    assert.deepEqual(started.all, ['new_discussion'])
    assert.deepEqual(started.filtered, ['new_discussion'])
    const general = await fired(() => act(sb, 'create_discussion', { title: 'Hello', category: 'General' }))
    assert.deepEqual(general.filtered, [])
    assert.deepEqual((await fired(() => act(sb, 'discussion_comment', { number, body: 'Nice' }))).all, [
      'new_discussion_comment',
    ])
  })

  test('changes in another repository fire no repository trigger', async () => {
    await act(sb, 'create_repo', { name: 'brand-new' })
    const { all } = await fired(async () => {
      await act(sb, 'open_issue', { repo: 'brand-new', title: 'Elsewhere' })
      await act(sb, 'star', { as: 'alice', repo: 'brand-new' })
    })
    assert.deepEqual(all, [])
  })
})

describe('account triggers: an organization through its webhook, a personal account by poll', () => {
  const accounts = new Receiver()
  let agent = ''
  const ids: Record<string, string> = {}
  const keysSince = (from: number) =>
    accounts.received.slice(from).map((x) => String(x.body.data.trigger).replace(/^codehost\./, ''))
  const pollNow = async (name: string) => {
    const res = await t.api('POST', `/v1/triggers/${ids[name]}/poll`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    await settle()
    return res.body.events as number
  }
  let orgItem = ''

  before(async () => {
    await accounts.start()
    // An organization project (octo-demo owns octo-org) holding an issue of hello-world.
    const project = await ch(sb, 'POST', '/projects-v2', {
      owner: 'octo-org',
      title: 'Org roadmap',
      items: [{ owner: 'octo-demo', repo: 'hello-world', number: 1 }],
    })
    orgItem = project.items[0].id
    const made = await t.api('POST', '/v1/agents', {
      name: 'accounts',
      scope: { repositories: ['octo-demo/hello-world', 'octo-org/widgets', 'octo-demo/personal-new'] },
      connectionIds: [conn],
      delivery: { type: 'webhook', url: accounts.url },
    })
    agent = made.body.id
    accounts.secret = made.body.signingSecret
    const create = async (name: string, trigger: string, config: Record<string, unknown>) => {
      const res = await t.api('POST', `/v1/agents/${agent}/triggers`, {
        trigger: `codehost.${trigger}`,
        connectionId: conn,
        config,
      })
      assert.equal(res.status, 201, `${name}: ${JSON.stringify(res.body)}`)
      ids[name] = res.body.id
      return res.body
    }
    const orgRepo = await create('org_repo', 'new_repository', { organization: 'octo-org' })
    assert.equal(orgRepo.instant, true)
    assert.equal(orgRepo.delivery.kind, 'webhook')
    assert.equal(orgRepo.webhook.model, 'org:octo-org')
    await create('org_status', 'project_item_status_changed', { organization: 'octo-org', status: 'Done' })
    const personal = await create('personal_repo', 'new_repository', {})
    assert.equal(personal.instant, false)
    assert.equal(personal.delivery.kind, 'poll')
    assert.match(personal.delivery.reason, /personal account has no webhook/)
    assert.equal(personal.webhook, null)
    await create('snippet', 'new_snippet', {})
    await create('personal_status', 'project_item_status_changed', { projectNumber: 1 })
    // The first poll of each only notes what already exists.
    for (const name of ['personal_repo', 'snippet', 'personal_status']) assert.equal(await pollNow(name), 0)
  })
  after(async () => {
    await accounts.close()
  })

  test('the organization gets one organization hook for repository and projects_v2_item events', async () => {
    const hooks = (await api(sb, sb.demo.token, 'GET', '/orgs/octo-org/hooks')).body
    assert.equal(hooks.length, 1)
    assert.equal(hooks[0].type, 'Organization')
    assert.deepEqual(hooks[0].events.sort(), ['projects_v2_item', 'repository'])
    assert.equal(hooks[0].config.secret, '********')
  })

  test('New Repository fires instantly for a repository created in the organization, through its hook', async () => {
    const from = accounts.received.length
    await act(sb, 'create_repo', { org: 'octo-org', name: 'widgets' })
    const got = await accounts.until((r) => r.length > from)
    await settle()
    assert.deepEqual(keysSince(from), ['new_repository'])
    const event = got[from].body.data.event
    assert.equal(event.data.repository.full_name, 'octo-org/widgets')
    assert.equal(event.data.organization.login, 'octo-org')
    assert.equal(got[from].verified, true, 'signed per Standard Webhooks')
  })

  test('Project Item Status Changed fires for an organization project through the organization hook (filtered: to Done)', async () => {
    let from = accounts.received.length
    await act(sb, 'set_project_item_status', { item_id: orgItem, status: 'In Progress' })
    await settle()
    assert.deepEqual(keysSince(from), [], 'filtered: only moves to Done')
    from = accounts.received.length
    await act(sb, 'set_project_item_status', { item_id: orgItem, status: 'Done' })
    const got = await accounts.until((r) => r.length > from)
    await settle()
    assert.deepEqual(keysSince(from), ['project_item_status_changed'])
    const event = got[from].body.data.event
    assert.equal(event.data.changes.field_value.to.name, 'Done')
    assert.equal(event.data.changes.field_value.from.name, 'In Progress')
    assert.equal(event.data.organization.login, 'octo-org')
    // The item's node id is kept (Update Project (V2) Item Status takes it), as the catalog's sample shows.
    assert.equal(event.data.projects_v2_item.node_id, orgItem)
    const sample = (await t.api('GET', '/v1/catalog')).body.connectors
      .find((c: any) => c.id === 'codehost')
      .triggers.find((x: any) => x.id === 'codehost.project_item_status_changed').sample
    for (const field of Object.keys(sample.data.projects_v2_item))
      assert.ok(field in event.data.projects_v2_item, `the delivered item has ${field}, as the sample does`)
    const moved = await t.api('POST', '/v1/steps/codehost.update_project_v2_item_status/run', {
      connectionId: conn,
      input: { itemId: event.data.projects_v2_item.node_id, status: 'In Progress' },
    })
    assert.equal(moved.status, 200, JSON.stringify(moved.body))
    await settle()
    assert.equal(await pollNow('personal_status'), 0, 'the personal poll does not see the org project')
  })

  test('New Repository fires for a personal repository by poll, once', async () => {
    const from = accounts.received.length
    await act(sb, 'create_repo', { name: 'personal-new' })
    await settle()
    assert.deepEqual(keysSince(from), [], 'no webhook carries it')
    assert.equal(await pollNow('personal_repo'), 1)
    await accounts.until((r) => r.length > from)
    assert.deepEqual(keysSince(from), ['new_repository'])
    assert.equal(accounts.received[from].body.data.event.data.repository.full_name, 'octo-demo/personal-new')
    assert.equal(await pollNow('personal_repo'), 0, 'a second poll finds nothing new')
  })

  test('New Snippet fires by poll for a new snippet, once', async () => {
    const from = accounts.received.length
    await act(sb, 'create_gist', { description: 'Snippet', files: { 'x.md': { content: 'x' } } })
    assert.equal(await pollNow('snippet'), 1)
    await accounts.until((r) => r.length > from)
    assert.deepEqual(keysSince(from), ['new_snippet'])
    assert.equal(accounts.received[from].body.data.event.data.gist.description, 'Snippet')
    assert.equal(await pollNow('snippet'), 0)
  })

  test('Project Item Status Changed fires by poll for the account’s own project; other fields do not', async () => {
    const demo = await ch(sb, 'GET', '/demo')
    const item = demo.projectV2.items.find((i: any) => i.type === 'Issue').id
    await act(sb, 'set_project_item_field', { item_id: item, field: 'Notes', text: 'n' })
    assert.equal(await pollNow('personal_status'), 0, 'another field is not a status change')
    const from = accounts.received.length
    await act(sb, 'set_project_item_status', { item_id: item, status: 'In Progress' })
    assert.equal(await pollNow('personal_status'), 1)
    await accounts.until((r) => r.length > from)
    const event = accounts.received[from].body.data.event
    assert.equal(event.type, 'projects_v2_item.edited')
    assert.equal(event.data.changes.field_value.to.name, 'In Progress')
    assert.equal(event.data.changes.field_value.project_number, 1)
    assert.equal(await pollNow('personal_status'), 0)
  })

  test('diagnose names how each is delivered', async () => {
    for (const [name, pattern] of [
      ['org_repo', /^Instant: delivered by organization webhook \(repository\)/],
      ['personal_repo', /^Polled: delivered by poll of GET \/user\/repos .*personal account has no webhook/],
      ['snippet', /^Polled: .*no webhook for snippets/],
    ] as const) {
      const res = await t.api('GET', `/v1/triggers/${ids[name]}/diagnose`)
      const check = res.body.checks.find((c: any) => c.cause === 'delivery')
      assert.match(check.message, pattern)
    }
  })

  test('an organization hook the account may not make is refused, naming the permission', async () => {
    const demo = await ch(sb, 'GET', '/demo')
    const reviewerConn = (
      await t.api('POST', '/v1/connections', {
        connector: 'codehost',
        authMethod: 'token',
        credentials: { token: demo.reviewer.token },
      })
    ).body.id
    await t.api('PATCH', `/v1/agents/${agent}`, { connectionIds: [conn, reviewerConn] })
    const res = await t.api('POST', `/v1/agents/${agent}/triggers`, {
      trigger: 'codehost.new_repository',
      connectionId: reviewerConn,
      config: { organization: 'octo-org' },
    })
    assert.equal(res.status, 403, JSON.stringify(res.body))
    assert.equal(res.body.error.code, 'WEBHOOK_PERMISSION_MISSING')
    assert.match(res.body.error.message, /owner \(admin\) of octo-org/)
    assert.match(res.body.error.message, /admin:org_hook/)
    assert.match(res.body.error.hint, /leave organization out/)
  })
})

test('a trigger on a repository outside the agent’s scope is refused, and no webhook is made for it', async () => {
  const agents = (await t.api('GET', '/v1/agents')).body.agents
  const res = await t.api('POST', `/v1/agents/${agents[0].id}/triggers`, {
    trigger: 'codehost.new_issue',
    connectionId: conn,
    config: { owner: 'octo-demo', repo: 'brand-new' },
  })
  assert.equal(res.status, 403)
  assert.equal(res.body.error.code, 'SCOPE_DENIED')
  const hooks = (await api(sb, sb.demo.token, 'GET', '/repos/octo-demo/brand-new/hooks')).body
  assert.deepEqual(hooks, [])
})

test('the catalog lists the 26 code-host triggers, each with a sample and how the upstream delivers it', async () => {
  const { body } = await t.api('GET', '/v1/catalog')
  const triggers = body.connectors.find((c: any) => c.id === 'codehost').triggers
  assert.equal(triggers.length, 26)
  assert.deepEqual(
    triggers.map((x: any) => x.id.replace('codehost.', '')).sort(),
    [...REPO_TRIGGERS, ...ACCOUNT_TRIGGERS].sort(),
  )
  const byKey = Object.fromEntries(triggers.map((x: any) => [x.id.replace('codehost.', ''), x]))
  for (const x of triggers) {
    assert.ok(x.sample?.type, `${x.id} has a sample`)
    assert.ok(x.description.length > 30)
    assert.ok(x.delivery.length >= 1)
  }
  for (const k of REPO_TRIGGERS) {
    assert.equal(byKey[k].instant, true, k)
    assert.deepEqual(
      byKey[k].delivery.map((m: any) => m.kind),
      ['webhook'],
    )
  }
  // Instant only where a webhook carries it: an organization's, never a personal account's.
  for (const k of ['new_repository', 'project_item_status_changed']) {
    assert.equal(byKey[k].instant, false, k)
    assert.deepEqual(
      byKey[k].delivery.map((m: any) => [m.kind, m.upstream.split(' (')[0]]),
      [
        ['webhook', 'organization webhook'],
        ['poll', m(byKey[k].delivery[1].upstream)],
      ],
    )
    assert.match(byKey[k].delivery[1].reason, /personal account has no webhook/)
  }
  assert.equal(byKey.new_snippet.instant, false)
  assert.deepEqual(byKey.new_snippet.delivery, [
    {
      kind: 'poll',
      upstream: 'poll of GET /gists?since=',
      reason: 'The code host has no webhook for snippets.',
    },
  ])
  assert.match(byKey.new_mention.delivery[0].reason, /no mention webhook/)
  assert.match(byKey.new_card_in_column.description, /retiring classic project boards/)
})

const m = (upstream: string) => upstream.split(' (')[0]
