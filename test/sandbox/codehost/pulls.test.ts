// The code-host sandbox over real HTTP: pull requests.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, ctl, OWNER, pushBranch, R, REPO, sandboxPerFile } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('pull requests', () => {
  async function openPull(branch = 'feature', extra: Record<string, unknown> = {}) {
    await pushBranch(branch, { [`${branch}.txt`]: 'hello\n' }, `Work on ${branch}`)
    const r = await api('POST', `${R}/pulls`, {
      body: { title: `PR ${branch}`, head: branch, base: 'main', body: 'Please merge', ...extra },
    })
    assert.equal(r.status, 201, r.text)
    return r.json
  }

  test('create, list, get, update', async () => {
    const pr = await openPull()
    assert.equal(pr.number, 2)
    assert.equal(pr.state, 'open')
    assert.equal(pr.head.ref, 'feature')
    assert.equal(pr.base.ref, 'main')
    assert.equal(pr.draft, false)
    assert.equal(pr.merged, false)
    assert.equal(pr.mergeable, true)
    assert.equal(pr.commits, 1)
    const list = await api('GET', `${R}/pulls`)
    assert.deepEqual(
      list.json.map((p: any) => p.number),
      [2],
    )
    const asIssue = await api('GET', `${R}/issues/2`)
    assert.ok(asIssue.json.pull_request)
    const dup = await api('POST', `${R}/pulls`, { body: { title: 'again', head: 'feature', base: 'main' } })
    assert.equal(dup.status, 422)
    assert.match(dup.json.errors[0].message, /already exists/)
    assert.equal(
      (await api('POST', `${R}/pulls`, { body: { title: 'x', head: 'missing', base: 'main' } })).status,
      422,
    )
    assert.equal((await api('POST', `${R}/pulls`, { body: { head: 'feature', base: 'main' } })).status, 422)
    const edited = await api('PATCH', `${R}/pulls/2`, { body: { title: 'Better title', body: 'b' } })
    assert.equal(edited.json.title, 'Better title')
    const closed = await api('PATCH', `${R}/pulls/2`, { body: { state: 'closed' } })
    assert.equal(closed.json.state, 'closed')
    assert.equal((await api('GET', `${R}/pulls?state=closed`)).json.length, 1)
    assert.equal((await api('PATCH', `${R}/pulls/2`, { body: { state: 'open' } })).json.state, 'open')
    const files = await api('GET', `${R}/pulls/2/files`)
    assert.equal(files.json[0].filename, 'feature.txt')
    assert.equal((await api('GET', `${R}/pulls/2/commits`)).json.length, 1)
  })

  test('merge: 200, then 405 when closed or draft or conflicting, 409 on stale sha', async () => {
    const pr = await openPull()
    const stale = await api('PUT', `${R}/pulls/${pr.number}/merge`, { body: { sha: 'a'.repeat(40) } })
    assert.equal(stale.status, 409)
    await ctl('POST', `/_sandbox/pulls/${OWNER}/${REPO}/${pr.number}/mergeable`, { mergeable: false })
    assert.equal((await api('GET', `${R}/pulls/${pr.number}`)).json.mergeable, false)
    const conflict = await api('PUT', `${R}/pulls/${pr.number}/merge`, {})
    assert.equal(conflict.status, 405)
    assert.equal(conflict.json.message, 'Pull Request is not mergeable')
    await ctl('POST', `/_sandbox/pulls/${OWNER}/${REPO}/${pr.number}/mergeable`, { mergeable: null })
    const merged = await api('PUT', `${R}/pulls/${pr.number}/merge`, {
      body: { sha: pr.head.sha, merge_method: 'merge' },
    })
    assert.equal(merged.status, 200)
    assert.equal(merged.json.merged, true)
    assert.match(merged.json.sha, /^[0-9a-f]{40}$/)
    assert.equal(merged.json.message, 'Pull Request successfully merged')
    const after = await api('GET', `${R}/pulls/${pr.number}`)
    assert.equal(after.json.merged, true)
    assert.equal(after.json.state, 'closed')
    assert.equal(after.json.merge_commit_sha, merged.json.sha)
    assert.equal((await api('GET', `${R}/branches/main`)).json.commit.sha, merged.json.sha)
    assert.equal((await api('GET', `${R}/contents/feature.txt`)).status, 200)
    assert.equal((await api('GET', `${R}/pulls/${pr.number}/merge`)).status, 204)
    assert.equal((await api('PUT', `${R}/pulls/${pr.number}/merge`, {})).status, 405)

    const draft = await openPull('drafty', { draft: true })
    assert.equal(draft.draft, true)
    assert.equal((await api('PUT', `${R}/pulls/${draft.number}/merge`, {})).status, 405)
    const ready = await api('PATCH', `${R}/pulls/${draft.number}`, { body: { draft: false } })
    assert.equal(ready.json.draft, false)
    const squash = await api('PUT', `${R}/pulls/${draft.number}/merge`, { body: { merge_method: 'squash' } })
    assert.equal(squash.status, 200)
    const commit = await api('GET', `${R}/commits/${squash.json.sha}`)
    assert.equal(commit.json.parents.length, 1)
    assert.match(commit.json.commit.message, /PR drafty \(#\d+\)/)
  })

  test('real conflicts make a pull request unmergeable', async () => {
    await pushBranch('left', { 'README.md': 'left\n' })
    await pushBranch('main', { 'README.md': 'main changed\n' })
    const pr = await api('POST', `${R}/pulls`, { body: { title: 'left', head: 'left', base: 'main' } })
    assert.equal(pr.json.mergeable, false)
    assert.equal(pr.json.mergeable_state, 'dirty')
    assert.equal((await api('PUT', `${R}/pulls/${pr.json.number}/merge`, {})).status, 405)
  })

  test('requested reviewers and reviews', async () => {
    const pr = await openPull()
    const rt = (await ctl('GET', '/_sandbox/demo')).json.reviewer.token
    const requested = await api('POST', `${R}/pulls/${pr.number}/requested_reviewers`, {
      body: { reviewers: ['reviewer'] },
    })
    assert.equal(requested.status, 201)
    assert.deepEqual(
      requested.json.requested_reviewers.map((u: any) => u.login),
      ['reviewer'],
    )
    const got = await api('GET', `${R}/pulls/${pr.number}/requested_reviewers`)
    assert.deepEqual(got.json, { users: [requested.json.requested_reviewers[0]], teams: [] })
    assert.equal(
      (await api('POST', `${R}/pulls/${pr.number}/requested_reviewers`, { body: { reviewers: [OWNER] } }))
        .status,
      422,
    )
    const stranger = await ctl('POST', '/_sandbox/users', { login: 'stranger' })
    assert.equal(stranger.status, 201)
    assert.equal(
      (
        await api('POST', `${R}/pulls/${pr.number}/requested_reviewers`, {
          body: { reviewers: ['stranger'] },
        })
      ).status,
      422,
    )

    const changes = await api('POST', `${R}/pulls/${pr.number}/reviews`, {
      token: rt,
      body: { event: 'REQUEST_CHANGES', body: 'Please fix' },
    })
    assert.equal(changes.status, 200)
    assert.equal(changes.json.state, 'CHANGES_REQUESTED')
    assert.equal((await api('GET', `${R}/pulls/${pr.number}/requested_reviewers`)).json.users.length, 0)
    const comment = await api('POST', `${R}/pulls/${pr.number}/reviews`, {
      token: rt,
      body: { event: 'COMMENT', body: 'note' },
    })
    assert.equal(comment.json.state, 'COMMENTED')
    const approve = await api('POST', `${R}/pulls/${pr.number}/reviews`, {
      token: rt,
      body: { event: 'APPROVE' },
    })
    assert.equal(approve.json.state, 'APPROVED')
    const reviews = await api('GET', `${R}/pulls/${pr.number}/reviews`)
    assert.deepEqual(
      reviews.json.map((r: any) => r.state),
      ['CHANGES_REQUESTED', 'COMMENTED', 'APPROVED'],
    )
    const self = await api('POST', `${R}/pulls/${pr.number}/reviews`, { body: { event: 'APPROVE' } })
    assert.equal(self.status, 422)

    await api('POST', `${R}/pulls/${pr.number}/requested_reviewers`, { body: { reviewers: ['reviewer'] } })
    const removed = await api('DELETE', `${R}/pulls/${pr.number}/requested_reviewers`, {
      body: { reviewers: ['reviewer'] },
    })
    assert.equal(removed.status, 200)
    assert.equal(removed.json.requested_reviewers.length, 0)
  })
})
