// The code-host sandbox over real HTTP: webhooks.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  api,
  ctl,
  OWNER,
  pushBranch,
  R,
  REPO,
  receiver,
  repoHook,
  sandboxPerFile,
  sign,
  until,
} from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('webhooks', () => {
  test('ping, signature, events from API and control API, redelivery keeps the GUID', async () => {
    const rec = await receiver()
    const hook = await repoHook(rec.url, ['*'], 's3cret')
    assert.equal(hook.name, 'web')
    assert.equal(hook.config.url, rec.url)
    assert.equal(hook.config.secret, '********')
    assert.deepEqual(hook.events, ['*'])
    const ping = await rec.wait('ping')
    assert.equal(ping.json.hook_id, hook.id)
    assert.equal(typeof ping.json.zen, 'string')
    assert.equal(ping.json.hook.id, hook.id)
    assert.equal(ping.headers['x-hub-signature-256'], sign('s3cret', ping.body))
    assert.equal(ping.headers['x-codehost-hook-id'], String(hook.id))
    assert.match(String(ping.headers['x-codehost-delivery']), /^[0-9a-f-]{36}$/)
    assert.match(String(ping.headers['user-agent']), /^Codehost-Hookshot\//)

    await api('POST', `${R}/issues`, { body: { title: 'Hook me', body: 'cc @reviewer' } })
    const opened = await rec.wait('issues', (j) => j.action === 'opened')
    assert.equal(opened.json.issue.title, 'Hook me')
    assert.equal(opened.json.repository.full_name, `${OWNER}/${REPO}`)
    assert.equal(opened.json.sender.login, OWNER)
    assert.equal(opened.headers['x-hub-signature-256'], sign('s3cret', opened.body))

    await api('PATCH', `${R}/issues/2`, {
      body: { title: 'Hooked', labels: ['bug'], assignees: ['reviewer'] },
    })
    const edited = await rec.wait('issues', (j) => j.action === 'edited')
    assert.equal(edited.json.changes.title.from, 'Hook me')
    await rec.wait('issues', (j) => j.action === 'labeled' && j.label.name === 'bug')
    await rec.wait('issues', (j) => j.action === 'assigned' && j.assignee.login === 'reviewer')
    await api('PATCH', `${R}/issues/2`, { body: { state: 'closed', labels: [], assignees: [] } })
    await rec.wait('issues', (j) => j.action === 'closed')
    await rec.wait('issues', (j) => j.action === 'unlabeled')
    await rec.wait('issues', (j) => j.action === 'unassigned')
    await api('PATCH', `${R}/issues/2`, { body: { state: 'open' } })
    await rec.wait('issues', (j) => j.action === 'reopened')
    await api('POST', `${R}/issues/2/comments`, { body: { body: 'a comment' } })
    assert.equal((await rec.wait('issue_comment')).json.comment.body, 'a comment')

    await ctl('POST', '/_sandbox/push', {
      owner: OWNER,
      repo: REPO,
      branch: 'topic',
      as: 'reviewer',
      commits: [{ message: 'c1', files: { 'x.txt': 'x' } }],
    })
    const created = await rec.wait('create', (j) => j.ref === 'topic')
    assert.equal(created.json.ref_type, 'branch')
    const push = await rec.wait('push', (j) => j.ref === 'refs/heads/topic' && j.head_commit)
    assert.equal(push.json.head_commit.message, 'c1')
    assert.equal(push.json.commits.length, 1)
    assert.deepEqual(push.json.commits[0].added, ['x.txt'])
    assert.match(push.json.after, /^[0-9a-f]{40}$/)

    const deliveries = await api('GET', `${R}/hooks/${hook.id}/deliveries`)
    assert.equal(deliveries.status, 200)
    const issueDelivery = deliveries.json.find((d: any) => d.event === 'issues' && d.action === 'opened')
    assert.equal(issueDelivery.status_code, 200)
    assert.equal(issueDelivery.status, 'OK')
    const before = rec.hits.length
    const again = await api('POST', `${R}/hooks/${hook.id}/deliveries/${issueDelivery.id}/attempts`)
    assert.equal(again.status, 202)
    const redelivered = await until(() =>
      rec.hits.slice(before).find((h) => h.headers['x-codehost-event'] === 'issues'),
    )
    assert.equal(redelivered.headers['x-codehost-delivery'], issueDelivery.guid)
    assert.equal(redelivered.body, opened.body)
    assert.equal(redelivered.headers['x-hub-signature-256'], sign('s3cret', redelivered.body))
    const list2 = await api('GET', `${R}/hooks/${hook.id}/deliveries`)
    assert.ok(list2.json.some((d: any) => d.redelivery && d.guid === issueDelivery.guid))
  })

  test('hook CRUD, event filter, failures not retried, form content type', async () => {
    const rec = await receiver(500)
    const hook = await repoHook(rec.url, ['issues'], 'k')
    await rec.wait('ping')
    assert.equal((await api('GET', `${R}/hooks`)).json.length, 1)
    assert.equal((await api('GET', `${R}/hooks/${hook.id}`)).json.id, hook.id)
    const dup = await api('POST', `${R}/hooks`, { body: { config: { url: rec.url } } })
    assert.equal(dup.status, 422)
    assert.equal((await api('POST', `${R}/hooks`, { body: { config: {} } })).status, 422)
    await pushBranch('main', { 'n.txt': 'n' })
    await api('POST', `${R}/issues`, { body: { title: 'only issues' } })
    await rec.wait('issues')
    assert.equal(rec.events('push').length, 0)
    await new Promise((r) => setTimeout(r, 100))
    assert.equal(rec.events('issues').length, 1)
    const d = await until(async () => {
      const r = await api('GET', `${R}/hooks/${hook.id}/deliveries`)
      const x = r.json.find((y: any) => y.event === 'issues')
      return x && x.status_code === 500 ? x : undefined
    })
    assert.equal(d.status, 'Invalid HTTP Response: 500')
    const recorded = await ctl('GET', `/_sandbox/webhooks/deliveries?hookId=${hook.id}&event=issues`)
    assert.equal(recorded.json.deliveries[0].attempts.length, 1)
    assert.equal(recorded.json.deliveries[0].outcome, 'failed')

    const patched = await api('PATCH', `${R}/hooks/${hook.id}`, {
      body: { events: ['push'], active: true, config: { url: rec.url, content_type: 'form', secret: 'k' } },
    })
    assert.deepEqual(patched.json.events, ['push'])
    assert.equal(patched.json.config.content_type, 'form')
    rec.state.status = 200
    await pushBranch('main', { 'm.txt': 'm' })
    const push = await rec.wait('push')
    assert.match(String(push.headers['content-type']), /x-www-form-urlencoded/)
    assert.equal(push.headers['x-hub-signature-256'], sign('k', push.body))
    assert.equal(JSON.parse(new URLSearchParams(push.body).get('payload')!).ref, 'refs/heads/main')
    assert.equal((await api('DELETE', `${R}/hooks/${hook.id}`)).status, 204)
    assert.equal((await api('GET', `${R}/hooks/${hook.id}`)).status, 404)
    const rt = (await ctl('GET', '/_sandbox/demo')).json.reviewer.token
    assert.equal((await api('GET', `${R}/hooks`, { token: rt })).status, 403)
  })

  test('repository events: fork, star, watch, member, release, pull requests, reviews, discussions', async () => {
    const rec = await receiver()
    await repoHook(rec.url)
    await ctl('POST', '/_sandbox/act', { as: 'reviewer', action: 'star', owner: OWNER, repo: REPO })
    assert.equal((await rec.wait('star')).json.action, 'created')
    assert.equal((await rec.wait('watch')).json.sender.login, 'reviewer')
    await ctl('POST', '/_sandbox/act', { as: 'reviewer', action: 'fork', owner: OWNER, repo: REPO })
    assert.equal((await rec.wait('fork')).json.forkee.full_name, `reviewer/${REPO}`)
    await ctl('POST', '/_sandbox/users', { login: 'helper' })
    await ctl('POST', '/_sandbox/act', {
      as: OWNER,
      action: 'add_collaborator',
      owner: OWNER,
      repo: REPO,
      login: 'helper',
    })
    assert.equal((await rec.wait('member')).json.member.login, 'helper')
    await api('POST', `${R}/releases`, { body: { tag_name: 'v2.0.0' } })
    assert.equal((await rec.wait('release', (j) => j.action === 'published')).json.release.tag_name, 'v2.0.0')
    assert.equal((await rec.wait('create', (j) => j.ref_type === 'tag')).json.ref, 'v2.0.0')

    await pushBranch('feat', { 'f.txt': 'f' })
    await ctl('POST', '/_sandbox/act', {
      as: 'reviewer',
      action: 'open_pull',
      owner: OWNER,
      repo: REPO,
      title: 'From reviewer',
      head: 'feat',
      draft: true,
    })
    const opened = await rec.wait('pull_request', (j) => j.action === 'opened')
    assert.equal(opened.json.pull_request.draft, true)
    const n = opened.json.number
    await api('PATCH', `${R}/pulls/${n}`, { body: { title: 'Retitled' } })
    assert.equal(
      (await rec.wait('pull_request', (j) => j.action === 'edited')).json.changes.title.from,
      'From reviewer',
    )
    await ctl('POST', '/_sandbox/act', {
      as: 'reviewer',
      action: 'ready_for_review',
      owner: OWNER,
      repo: REPO,
      number: n,
    })
    await rec.wait('pull_request', (j) => j.action === 'ready_for_review')
    await ctl('POST', '/_sandbox/act', {
      as: 'reviewer',
      action: 'convert_to_draft',
      owner: OWNER,
      repo: REPO,
      number: n,
    })
    await rec.wait('pull_request', (j) => j.action === 'converted_to_draft')
    await api('PATCH', `${R}/pulls/${n}`, { body: { draft: false } })
    await pushBranch('feat', { 'f2.txt': 'f2' })
    const sync = await rec.wait('pull_request', (j) => j.action === 'synchronize')
    assert.notEqual(sync.json.before, sync.json.after)
    await api('POST', `${R}/pulls/${n}/requested_reviewers`, { body: { reviewers: ['helper'] } })
    assert.equal(
      (await rec.wait('pull_request', (j) => j.action === 'review_requested')).json.requested_reviewer.login,
      'helper',
    )
    await ctl('POST', '/_sandbox/act', {
      as: 'helper',
      action: 'review',
      owner: OWNER,
      repo: REPO,
      number: n,
      event: 'APPROVE',
    })
    const review = await rec.wait('pull_request_review')
    assert.equal(review.json.action, 'submitted')
    assert.equal(review.json.review.state, 'approved')
    await api('PATCH', `${R}/pulls/${n}`, { body: { state: 'closed' } })
    assert.equal(
      (await rec.wait('pull_request', (j) => j.action === 'closed')).json.pull_request.merged,
      false,
    )
    await api('PATCH', `${R}/pulls/${n}`, { body: { state: 'open' } })
    await rec.wait('pull_request', (j) => j.action === 'reopened')
    await api('PUT', `${R}/pulls/${n}/merge`, {})
    const merged = await rec.wait('pull_request', (j) => j.action === 'closed' && j.pull_request.merged)
    assert.equal(merged.json.pull_request.merged, true)

    await ctl('POST', '/_sandbox/act', {
      as: 'reviewer',
      action: 'create_discussion',
      owner: OWNER,
      repo: REPO,
      title: 'Ideas?',
      body: 'Let us talk',
    })
    const disc = await rec.wait('discussion')
    assert.equal(disc.json.action, 'created')
    assert.equal(disc.json.discussion.title, 'Ideas?')
    await ctl('POST', '/_sandbox/act', {
      as: OWNER,
      action: 'discussion_comment',
      owner: OWNER,
      repo: REPO,
      number: disc.json.discussion.number,
      body: 'Sure',
    })
    assert.equal((await rec.wait('discussion_comment')).json.comment.body, 'Sure')
    assert.equal((await ctl('GET', `/_sandbox/discussions/${OWNER}/${REPO}`)).json.discussions.length, 1)
    const subscribe = await api('PUT', `${R}/subscription`, {
      token: (await ctl('GET', '/_sandbox/demo')).json.reviewer.token,
      body: { subscribed: true },
    })
    assert.equal(subscribe.status, 200)
  })

  test('organization hooks: an owner’s, for repository and projects_v2_item events of the organization; personal accounts have none', async () => {
    assert.equal((await api('GET', '/user/hooks')).status, 404, 'the code host has no /user/hooks')
    const rec = await receiver()
    const hook = await api('POST', '/orgs/octo-org/hooks', {
      body: {
        config: { url: rec.url, content_type: 'json', secret: 'org' },
        events: ['repository', 'projects_v2_item'],
      },
    })
    assert.equal(hook.status, 201, JSON.stringify(hook.json))
    assert.equal(hook.json.type, 'Organization')
    assert.match(hook.json.url, /\/orgs\/octo-org\/hooks\/\d+$/)
    const ping = await rec.wait('ping')
    assert.equal(ping.json.organization.login, 'octo-org')
    assert.equal(ping.headers['x-codehost-hook-installation-target-type'], 'organization')
    await api('POST', '/orgs/octo-org/repos', { body: { name: 'org-new' } })
    const created = await rec.wait('repository')
    assert.equal(created.json.action, 'created')
    assert.equal(created.json.repository.full_name, 'octo-org/org-new')
    assert.equal(created.json.organization.login, 'octo-org')
    assert.equal(created.headers['x-hub-signature-256'], sign('org', created.body))
    const project = await ctl('POST', '/_sandbox/projects-v2', {
      owner: 'octo-org',
      items: [{ owner: OWNER, repo: REPO, number: 1 }],
    })
    const added = await rec.wait('projects_v2_item')
    assert.equal(added.json.action, 'created')
    const set = await ctl('POST', '/_sandbox/act', {
      as: OWNER,
      action: 'set_project_item_status',
      item_id: project.json.items[0].id,
      status: 'Done',
    })
    assert.equal(set.status, 201, set.text)
    const edited = await rec.wait('projects_v2_item', (j) => j.action === 'edited')
    assert.equal(edited.json.changes.field_value.to.name, 'Done')
    assert.equal(edited.json.organization.login, 'octo-org')
    // A personal account's snippets, repositories and projects reach no hook at all.
    const before = (await ctl('GET', '/_sandbox/webhooks/deliveries')).json.deliveries.length
    await api('POST', '/gists', { body: { files: { 'a.txt': { content: 'a' } } } })
    await api('POST', '/user/repos', { body: { name: 'personal-quiet' } })
    assert.equal((await ctl('GET', '/_sandbox/webhooks/deliveries')).json.deliveries.length, before)
    // A member who is not an owner, and a token without admin:org_hook, see no hooks (404).
    const demo = (await ctl('GET', '/_sandbox/demo')).json
    const reviewer = await api('GET', '/orgs/octo-org/hooks', { token: demo.reviewer.token })
    assert.equal(reviewer.status, 404)
    const narrow = await ctl('POST', '/_sandbox/tokens', { login: OWNER, kind: 'classic', scopes: ['repo'] })
    const refused = await api('GET', '/orgs/octo-org/hooks', { token: narrow.json.token })
    assert.equal(refused.status, 404)
    assert.equal(refused.headers.get('x-accepted-oauth-scopes'), 'admin:org_hook')
    const deliveries = await api('GET', `/orgs/octo-org/hooks/${hook.json.id}/deliveries`)
    assert.ok(deliveries.json.length >= 3)
  })
})
