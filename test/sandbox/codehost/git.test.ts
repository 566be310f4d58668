// The code-host sandbox over real HTTP: branches, refs, commits, tags.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, ctl, OWNER, pushBranch, R, REPO, sandboxPerFile, sb } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('branches, refs, commits, tags', () => {
  test('branches and git refs', async () => {
    const branches = await api('GET', `${R}/branches`)
    assert.deepEqual(
      branches.json.map((b: any) => b.name),
      ['main'],
    )
    const main = await api('GET', `${R}/branches/main`)
    assert.equal(main.json.name, 'main')
    assert.equal(main.json.protected, false)
    const sha = main.json.commit.sha
    const made = await api('POST', `${R}/git/refs`, { body: { ref: 'refs/heads/topic', sha } })
    assert.equal(made.status, 201)
    assert.equal(made.json.ref, 'refs/heads/topic')
    assert.equal(made.json.object.sha, sha)
    const again = await api('POST', `${R}/git/refs`, { body: { ref: 'refs/heads/topic', sha } })
    assert.equal(again.status, 422)
    assert.equal(again.json.message, 'Reference already exists')
    assert.equal(
      (await api('POST', `${R}/git/refs`, { body: { ref: 'refs/heads/x', sha: 'f'.repeat(40) } })).status,
      422,
    )
    assert.equal((await api('POST', `${R}/git/refs`, { body: { ref: 'topic2', sha } })).status, 422)
    assert.equal((await api('GET', `${R}/git/ref/heads/topic`)).json.object.sha, sha)
    assert.equal((await api('GET', `${R}/git/ref/heads/none`)).status, 404)
    assert.equal((await api('GET', `${R}/branches/none`)).status, 404)
    assert.equal((await api('DELETE', `${R}/git/refs/heads/topic`)).status, 204)
  })

  test('commit list filters and pagination, commit detail, tags', async () => {
    await pushBranch('main', { 'a.txt': 'a\n' }, 'Add a')
    await ctl('POST', '/_sandbox/clock', { advanceMs: 5_000 })
    await pushBranch('main', { 'b.txt': 'b\nb2\n' }, 'Add b', 'reviewer')
    const page1 = await api('GET', `${R}/commits?per_page=1`)
    assert.equal(page1.json.length, 1)
    assert.equal(page1.json[0].commit.message, 'Add b')
    const link = page1.headers.get('link') ?? ''
    assert.match(link, /rel="next"/)
    assert.match(link, /rel="last"/)
    const next = /<([^>]+)>; rel="next"/.exec(link)![1]
    const page2 = await api('GET', next.slice(sb.url.length))
    assert.equal(page2.json[0].commit.message, 'Add a')
    assert.equal((await api('GET', `${R}/commits?path=b.txt`)).json.length, 1)
    assert.equal((await api('GET', `${R}/commits?author=reviewer`)).json[0].commit.message, 'Add b')
    const all = await api('GET', `${R}/commits`)
    assert.equal(all.json.length, 4)
    const mid = all.json[1].commit.committer.date
    assert.equal((await api('GET', `${R}/commits?until=${encodeURIComponent(mid)}`)).json.length, 3)
    assert.equal((await api('GET', `${R}/commits?since=${encodeURIComponent(mid)}`)).json.length, 2)

    const detail = await api('GET', `${R}/commits/${page1.json[0].sha}`)
    assert.equal(detail.status, 200)
    assert.equal(detail.json.sha, page1.json[0].sha)
    assert.equal(detail.json.commit.author.name, 'Rae Viewer')
    assert.equal(detail.json.parents.length, 1)
    assert.deepEqual(detail.json.stats, { total: 2, additions: 2, deletions: 0 })
    assert.equal(detail.json.files[0].filename, 'b.txt')
    assert.equal(detail.json.files[0].status, 'added')
    assert.equal((await api('GET', `${R}/commits/main`)).json.sha, page1.json[0].sha)
    assert.equal((await api('GET', `${R}/commits/${'0'.repeat(40)}`)).status, 422)

    assert.equal(
      (await ctl('POST', '/_sandbox/tags', { owner: OWNER, repo: REPO, tag: 'v1.0.0' })).status,
      201,
    )
    const tags = await api('GET', `${R}/tags`)
    assert.equal(tags.json[0].name, 'v1.0.0')
    assert.equal(tags.json[0].commit.sha, page1.json[0].sha)
  })
})
