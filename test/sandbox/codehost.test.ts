// The code-host sandbox, driven over real HTTP: REST endpoints, token kinds, GraphQL, search,
// the OAuth web flow as a browser drives it, signed webhooks, rate limits, the control API, and
// @octokit/rest pointed at it.
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { after, before, beforeEach, describe, test } from 'node:test'
import { Octokit } from '@octokit/rest'
import { type CodehostSandbox, startCodehostSandbox } from '../../sandbox/codehost/index.ts'

let sb: CodehostSandbox
const OWNER = 'octo-demo'
const REPO = 'hello-world'
const R = `/repos/${OWNER}/${REPO}`

before(async () => {
  sb = await startCodehostSandbox()
})
after(async () => {
  await sb.close()
  for (const r of receivers) await r.close()
})
beforeEach(async () => {
  await ctl('POST', '/_sandbox/reset')
})

interface Res {
  status: number
  headers: Headers
  json: any
  text: string
}

async function call(
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<Res> {
  const headers: Record<string, string> = { accept: 'application/vnd.codehost+json', ...opts.headers }
  const token = opts.token === undefined ? sb.demo.token : opts.token
  if (token) headers.authorization = `Bearer ${token}`
  let payload: string | undefined = opts.raw
  if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(sb.url + path, { method, headers, body: payload, redirect: 'manual' })
  const text = await res.text()
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, json, text }
}

const api = call
const ctl = (method: string, path: string, body?: unknown) => call(method, path, { token: null, body })
const b64 = (s: string) => Buffer.from(s).toString('base64')

async function token(body: Record<string, unknown>): Promise<string> {
  const r = await ctl('POST', '/_sandbox/tokens', body)
  assert.equal(r.status, 201, r.text)
  return r.json.token
}

async function pushBranch(
  branch: string,
  files: Record<string, string | null>,
  message = 'Change',
  as = OWNER,
) {
  const r = await ctl('POST', '/_sandbox/push', {
    owner: OWNER,
    repo: REPO,
    branch,
    as,
    commits: [{ message, files }],
  })
  assert.equal(r.status, 201, r.text)
  return r.json as { before: string | null; after: string; commits: string[] }
}

async function until<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 15))
  }
}

interface Hit {
  headers: IncomingHttpHeaders
  body: string
  json: any
}

const receivers: { close(): Promise<void> }[] = []

/** A local webhook receiver on an ephemeral port. */
async function receiver(status = 200) {
  const hits: Hit[] = []
  const state = { status }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      let json: any
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      hits.push({ headers: req.headers, body, json })
      res.writeHead(state.status).end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const addr = server.address() as { port: number }
  const rec = {
    url: `http://127.0.0.1:${addr.port}/hook`,
    hits,
    state,
    events: (name: string) => hits.filter((h) => h.headers['x-codehost-event'] === name),
    wait: (name: string, pred: (j: any) => boolean = () => true) =>
      until(() => hits.find((h) => h.headers['x-codehost-event'] === name && pred(h.json))),
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
  receivers.push(rec)
  return rec
}

async function repoHook(url: string, events = ['*'], secret = 'topsecret') {
  const r = await api('POST', `${R}/hooks`, {
    body: { name: 'web', config: { url, content_type: 'json', secret }, events, active: true },
  })
  assert.equal(r.status, 201, r.text)
  return r.json
}

const sign = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`

describe('auth and token kinds', () => {
  test('GET /user names the account; bad and missing credentials', async () => {
    const r = await api('GET', '/user')
    assert.equal(r.status, 200)
    assert.equal(r.json.login, OWNER)
    assert.equal(typeof r.json.id, 'number')
    assert.equal(r.json.name, 'Octo Demo')
    assert.match(r.headers.get('x-oauth-scopes') ?? '', /repo/)
    const viaTokenScheme = await api('GET', '/user', {
      token: null,
      headers: { authorization: `token ${sb.demo.token}` },
    })
    assert.equal(viaTokenScheme.json.login, OWNER)
    const bad = await api('GET', '/user', { token: 'chp_not_a_real_token' })
    assert.equal(bad.status, 401)
    assert.equal(bad.json.message, 'Bad credentials')
    assert.ok(bad.json.documentation_url)
    const none = await api('GET', '/user', { token: null })
    assert.equal(none.status, 401)
    assert.equal(none.json.message, 'Requires authentication')
    const other = await api('GET', '/users/reviewer')
    assert.equal(other.status, 200)
    assert.equal(other.json.login, 'reviewer')
    assert.equal((await api('GET', '/users/nobody-here')).status, 404)
  })

  test('demo credentials are fixed across starts', async () => {
    const second = await startCodehostSandbox()
    try {
      assert.deepEqual(second.demo, sb.demo)
      assert.match(sb.demo.token, /^chp_[A-Za-z0-9]{36}$/)
      // The README documents these exact values.
      assert.equal(sb.demo.token, 'chp_YvwvOwYcUqQKiM2LCkyO9YVunvCtmuKSOzsv')
      assert.equal(sb.demo.password, 'octo-demo-password')
      assert.equal(sb.demo.oauthClientId, 'Ov23libNrvauLGoJqOc6')
      assert.equal(sb.demo.oauthClientSecret, 'bb363a48fa24de9e04d230966cdcf7f8bc24220d')
      assert.equal(sb.demo.login, 'octo-demo')
      assert.deepEqual(sb.demo.repo, { owner: 'octo-demo', name: 'hello-world' })
    } finally {
      await second.close()
    }
  })

  test('classic token without repo scope cannot write; public reads still work', async () => {
    const t = await token({ login: OWNER, kind: 'classic', scopes: ['gist'] })
    assert.match(t, /^chp_/)
    assert.equal((await api('GET', R, { token: t })).status, 200)
    const w = await api('POST', `${R}/issues`, { token: t, body: { title: 'x' } })
    assert.equal(w.status, 404)
    assert.equal(w.headers.get('x-accepted-oauth-scopes'), 'repo, public_repo')
  })

  test('fine-grained token reaches its selected repositories only', async () => {
    const created = await api('POST', '/user/repos', { body: { name: 'second', auto_init: true } })
    assert.equal(created.status, 201)
    const t = await token({
      login: OWNER,
      kind: 'fine_grained',
      owner: OWNER,
      repositories: [`${OWNER}/${REPO}`],
    })
    assert.match(t, /^codehost_pat_/)
    assert.equal((await api('GET', R, { token: t })).status, 200)
    assert.equal((await api('GET', `/repos/${OWNER}/second`, { token: t })).status, 404)
    assert.equal(
      (await api('POST', `/repos/${OWNER}/second/issues`, { token: t, body: { title: 'x' } })).status,
      404,
    )
    const list = await api('GET', '/user/repos', { token: t })
    assert.deepEqual(
      list.json.map((r: any) => r.name),
      [REPO],
    )
    const readOnly = await token({
      login: OWNER,
      kind: 'fine_grained',
      repositories: [REPO],
      permissions: { contents: 'read', issues: 'write' },
    })
    const put = await api('PUT', `${R}/contents/x.txt`, {
      token: readOnly,
      body: { message: 'm', content: b64('x') },
    })
    assert.equal(put.status, 403)
    assert.equal(put.json.message, 'Resource not accessible by personal access token')
    assert.equal((await api('POST', `${R}/issues`, { token: readOnly, body: { title: 'ok' } })).status, 201)
  })

  test('OAuth tokens and expiry on the sandbox clock', async () => {
    const t = await token({ login: 'reviewer', kind: 'oauth', scopes: ['repo'], expiresInMs: 60_000 })
    assert.match(t, /^cho_/)
    assert.equal((await api('GET', '/user', { token: t })).json.login, 'reviewer')
    await ctl('POST', '/_sandbox/clock', { advanceMs: 61_000 })
    assert.equal((await api('GET', '/user', { token: t })).status, 401)
    assert.equal((await ctl('DELETE', `/_sandbox/tokens/${sb.demo.token}`)).status, 204)
    assert.equal((await api('GET', '/user')).status, 401)
  })
})

describe('repositories', () => {
  test('create, get, list, duplicate', async () => {
    const r = await api('POST', '/user/repos', {
      body: { name: 'made-here', description: 'd', private: true, auto_init: true },
    })
    assert.equal(r.status, 201)
    assert.equal(r.json.full_name, `${OWNER}/made-here`)
    assert.equal(r.json.private, true)
    assert.equal(r.json.permissions.admin, true)
    assert.equal(r.json.default_branch, 'main')
    const dup = await api('POST', '/user/repos', { body: { name: 'made-here' } })
    assert.equal(dup.status, 422)
    assert.equal(dup.json.message, 'Repository creation failed.')
    assert.equal(dup.json.errors[0].message, 'name already exists on this account')
    const got = await api('GET', `/repos/${OWNER}/made-here`)
    assert.equal(got.json.id, r.json.id)
    assert.equal((await api('GET', `/repos/${OWNER}/made-here/contents/README.md`)).status, 200)
    const mine = await api('GET', '/user/repos')
    assert.deepEqual(mine.json.map((x: any) => x.name).sort(), ['hello-world', 'made-here'])
    const theirs = await api('GET', `/users/${OWNER}/repos`, { token: null })
    assert.deepEqual(
      theirs.json.map((x: any) => x.name),
      ['hello-world'],
    )
    assert.equal((await api('GET', `/repos/${OWNER}/made-here`, { token: null })).status, 404)
    const org = await api('POST', '/orgs/octo-org/repos', { body: { name: 'team-repo' } })
    assert.equal(org.status, 201)
    assert.equal(org.json.owner.login, 'octo-org')
    assert.equal((await api('POST', '/user/repos', { body: { description: 'no name' } })).status, 422)
  })

  test('fork, star, watch', async () => {
    const rt = (await ctl('GET', '/_sandbox/demo')).json.reviewer.token
    const fork = await api('POST', `${R}/forks`, { token: rt, body: {} })
    assert.equal(fork.status, 202)
    assert.equal(fork.json.full_name, `reviewer/${REPO}`)
    assert.equal(fork.json.fork, true)
    assert.equal(fork.json.parent.full_name, `${OWNER}/${REPO}`)
    assert.equal((await api('GET', `${R}/forks`)).json.length, 1)

    assert.equal((await api('GET', `/user/starred/${OWNER}/${REPO}`)).status, 404)
    assert.equal((await api('PUT', `/user/starred/${OWNER}/${REPO}`)).status, 204)
    assert.equal((await api('GET', `/user/starred/${OWNER}/${REPO}`)).status, 204)
    const gazers = await api('GET', `${R}/stargazers`)
    assert.deepEqual(
      gazers.json.map((u: any) => u.login),
      [OWNER],
    )
    assert.equal((await api('GET', R)).json.stargazers_count, 1)
    assert.equal((await api('DELETE', `/user/starred/${OWNER}/${REPO}`)).status, 204)
    assert.equal((await api('GET', `/user/starred/${OWNER}/${REPO}`)).status, 404)

    const sub = await api('PUT', `${R}/subscription`, { token: rt, body: { subscribed: true } })
    assert.equal(sub.status, 200)
    assert.equal(sub.json.subscribed, true)
    const watchers = await api('GET', `${R}/subscribers`)
    assert.ok(watchers.json.some((u: any) => u.login === 'reviewer'))
  })

  test('collaborators: list, permission, invite, accept, update, remove', async () => {
    const list = await api('GET', `${R}/collaborators`)
    assert.deepEqual(list.json.map((u: any) => u.login).sort(), [OWNER, 'reviewer'])
    const perm = await api('GET', `${R}/collaborators/reviewer/permission`)
    assert.equal(perm.json.permission, 'write')
    assert.equal(perm.json.role_name, 'write')
    assert.equal(perm.json.user.login, 'reviewer')
    assert.equal((await api('GET', `${R}/collaborators/${OWNER}/permission`)).json.permission, 'admin')

    const newbie = await ctl('POST', '/_sandbox/users', { login: 'newbie', token: ['repo'] })
    assert.equal(newbie.status, 201)
    assert.equal((await api('GET', `${R}/collaborators/newbie/permission`)).json.permission, 'read')
    const invited = await api('PUT', `${R}/collaborators/newbie`, { body: { permission: 'triage' } })
    assert.equal(invited.status, 201)
    assert.equal(invited.json.invitee.login, 'newbie')
    assert.equal(invited.json.permissions, 'triage')
    const rec = await receiver()
    await repoHook(rec.url, ['member'])
    const accepted = await api('PATCH', `/user/repository_invitations/${invited.json.id}`, {
      token: newbie.json.token,
    })
    assert.equal(accepted.status, 204)
    const member = await rec.wait('member')
    assert.equal(member.json.action, 'added')
    assert.equal(member.json.member.login, 'newbie')
    assert.equal((await api('GET', `${R}/collaborators/newbie/permission`)).json.role_name, 'triage')
    assert.equal(
      (await api('PUT', `${R}/collaborators/newbie`, { body: { permission: 'push' } })).status,
      204,
    )
    assert.equal((await api('GET', `${R}/collaborators/newbie/permission`)).json.permission, 'write')
    assert.equal(
      (await api('PUT', `${R}/collaborators/newbie`, { body: { permission: 'owner' } })).status,
      422,
    )
    assert.equal((await api('DELETE', `${R}/collaborators/newbie`)).status, 204)
    assert.equal((await api('GET', `${R}/collaborators/newbie/permission`)).json.permission, 'read')
    const rt = (await ctl('GET', '/_sandbox/demo')).json.reviewer.token
    assert.equal(
      (await api('PUT', `${R}/collaborators/newbie`, { token: rt, body: { permission: 'push' } })).status,
      403,
    )
  })
})

describe('contents', () => {
  test('read, create, update with sha rules, delete', async () => {
    const readme = await api('GET', `${R}/contents/README.md`)
    assert.equal(readme.status, 200)
    assert.equal(readme.json.type, 'file')
    assert.equal(readme.json.encoding, 'base64')
    assert.match(Buffer.from(readme.json.content, 'base64').toString(), /^# hello-world/)

    const created = await api('PUT', `${R}/contents/docs/notes.md`, {
      body: { message: 'Add notes', content: b64('one\n') },
    })
    assert.equal(created.status, 201)
    assert.equal(created.json.content.path, 'docs/notes.md')
    assert.equal(created.json.commit.message, 'Add notes')
    const sha1 = created.json.content.sha

    const noSha = await api('PUT', `${R}/contents/docs/notes.md`, {
      body: { message: 'Edit', content: b64('two\n') },
    })
    assert.equal(noSha.status, 422)
    assert.match(noSha.json.message, /"sha" wasn't supplied/)
    const stale = await api('PUT', `${R}/contents/docs/notes.md`, {
      body: { message: 'Edit', content: b64('two\n'), sha: readme.json.sha },
    })
    assert.equal(stale.status, 409)
    const updated = await api('PUT', `${R}/contents/docs/notes.md`, {
      body: { message: 'Edit', content: b64('two\n'), sha: sha1 },
    })
    assert.equal(updated.status, 200)
    assert.notEqual(updated.json.content.sha, sha1)
    assert.deepEqual(
      updated.json.commit.parents.map((p: any) => p.sha),
      [created.json.commit.sha],
    )

    const dir = await api('GET', `${R}/contents/docs`)
    assert.deepEqual(
      dir.json.map((e: any) => [e.name, e.type]),
      [['notes.md', 'file']],
    )
    const root = await api('GET', `${R}/contents`)
    assert.deepEqual(root.json.map((e: any) => e.type).sort(), ['dir', 'dir', 'file'])

    const commits = await api('GET', `${R}/commits?per_page=2`)
    assert.equal(commits.json[0].commit.message, 'Edit')
    assert.equal(commits.json[1].commit.message, 'Add notes')

    assert.equal(
      (await api('PUT', `${R}/contents/bad.txt`, { body: { message: 'm', content: '***' } })).status,
      422,
    )
    assert.equal((await api('PUT', `${R}/contents/bad.txt`, { body: { content: b64('x') } })).status, 422)
    assert.equal(
      (await api('PUT', `${R}/contents/x.txt`, { body: { message: 'm', content: b64('x'), branch: 'nope' } }))
        .status,
      404,
    )

    const delNoSha = await api('DELETE', `${R}/contents/docs/notes.md`, { body: { message: 'rm' } })
    assert.equal(delNoSha.status, 422)
    const del = await api('DELETE', `${R}/contents/docs/notes.md`, {
      body: { message: 'rm', sha: updated.json.content.sha },
    })
    assert.equal(del.status, 200)
    assert.equal(del.json.content, null)
    assert.equal((await api('GET', `${R}/contents/docs/notes.md`)).status, 404)
  })

  test('ref and branch parameters', async () => {
    await pushBranch('feature', { 'feature.txt': 'on a branch\n' })
    assert.equal((await api('GET', `${R}/contents/feature.txt`)).status, 404)
    const onBranch = await api('GET', `${R}/contents/feature.txt?ref=feature`)
    assert.equal(Buffer.from(onBranch.json.content, 'base64').toString(), 'on a branch\n')
    const w = await api('PUT', `${R}/contents/feature.txt`, {
      body: { message: 'tweak', content: b64('changed\n'), sha: onBranch.json.sha, branch: 'feature' },
    })
    assert.equal(w.status, 200)
    assert.equal((await api('GET', `${R}/branches/feature`)).json.commit.sha, w.json.commit.sha)
    const raw = await api('GET', `${R}/contents/feature.txt?ref=feature`, {
      headers: { accept: 'application/vnd.codehost.raw+json' },
    })
    assert.equal(raw.text, 'changed\n')
  })
})

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

describe('issues', () => {
  test('list with filters and pagination, get, create, update', async () => {
    const list = await api('GET', `${R}/issues`)
    assert.equal(list.status, 200)
    assert.equal(list.json.length, 1)
    assert.equal(list.json[0].title, 'Found a bug')
    assert.equal(list.json[0].labels[0].name, 'bug')
    for (let i = 0; i < 3; i++)
      assert.equal((await api('POST', `${R}/issues`, { body: { title: `Issue ${i}` } })).status, 201)
    const created = await api('POST', `${R}/issues`, {
      body: {
        title: 'Labelled',
        body: 'text',
        labels: ['enhancement', 'brand-new'],
        assignees: ['reviewer'],
      },
    })
    assert.equal(created.status, 201)
    assert.equal(created.json.number, 5)
    assert.equal(created.json.state, 'open')
    assert.deepEqual(
      created.json.labels.map((l: any) => l.name),
      ['enhancement', 'brand-new'],
    )
    assert.equal(created.json.assignee.login, 'reviewer')
    assert.equal(created.json.user.login, OWNER)
    const missing = await api('POST', `${R}/issues`, { body: { body: 'no title' } })
    assert.equal(missing.status, 422)
    const badAssignee = await api('POST', `${R}/issues`, { body: { title: 't', assignees: ['nobody-here'] } })
    assert.equal(badAssignee.status, 422)
    assert.equal(badAssignee.json.errors[0].field, 'assignees')

    assert.equal((await api('GET', `${R}/issues?labels=enhancement`)).json.length, 1)
    assert.equal((await api('GET', `${R}/issues?assignee=reviewer`)).json[0].number, 5)
    assert.equal((await api('GET', `${R}/issues?assignee=none`)).json.length, 4)
    const paged = await api('GET', `${R}/issues?per_page=2&page=2`)
    assert.equal(paged.json.length, 2)
    assert.match(paged.headers.get('link') ?? '', /rel="prev"/)

    const got = await api('GET', `${R}/issues/5`)
    assert.equal(got.json.body, 'text')
    assert.equal((await api('GET', `${R}/issues/999`)).status, 404)

    const patched = await api('PATCH', `${R}/issues/5`, {
      body: {
        title: 'Renamed',
        body: 'new',
        labels: ['bug'],
        assignees: [],
        state: 'closed',
        state_reason: 'not_planned',
      },
    })
    assert.equal(patched.status, 200)
    assert.equal(patched.json.title, 'Renamed')
    assert.equal(patched.json.state, 'closed')
    assert.equal(patched.json.state_reason, 'not_planned')
    assert.ok(patched.json.closed_at)
    assert.deepEqual(
      patched.json.labels.map((l: any) => l.name),
      ['bug'],
    )
    assert.equal(patched.json.assignees.length, 0)
    assert.equal((await api('GET', `${R}/issues?state=closed`)).json.length, 1)
    assert.equal((await api('GET', `${R}/issues?state=all`)).json.length, 5)
    const reopened = await api('PATCH', `${R}/issues/5`, { body: { state: 'open' } })
    assert.equal(reopened.json.state_reason, 'reopened')
  })

  test('comments, labels, assignees', async () => {
    const c = await api('POST', `${R}/issues/1/comments`, { body: { body: 'Looking into it' } })
    assert.equal(c.status, 201)
    assert.equal(c.json.body, 'Looking into it')
    assert.equal(c.json.user.login, OWNER)
    const cs = await api('GET', `${R}/issues/1/comments`)
    assert.equal(cs.json.length, 1)
    assert.equal((await api('GET', `${R}/issues/1`)).json.comments, 1)
    assert.equal((await api('POST', `${R}/issues/1/comments`, { body: {} })).status, 422)

    const labels = await api('POST', `${R}/issues/1/labels`, { body: { labels: ['question'] } })
    assert.equal(labels.status, 200)
    assert.deepEqual(labels.json.map((l: any) => l.name).sort(), ['bug', 'question'])
    const removed = await api('DELETE', `${R}/issues/1/labels/bug`)
    assert.deepEqual(
      removed.json.map((l: any) => l.name),
      ['question'],
    )
    assert.equal((await api('DELETE', `${R}/issues/1/labels/bug`)).status, 404)
    const label = await api('POST', `${R}/labels`, { body: { name: 'priority', color: 'ff0000' } })
    assert.equal(label.status, 201)
    assert.equal(label.json.color, 'ff0000')
    const dupLabel = await api('POST', `${R}/labels`, { body: { name: 'Priority' } })
    assert.equal(dupLabel.status, 422)
    assert.equal(dupLabel.json.errors[0].code, 'already_exists')
    assert.ok((await api('GET', `${R}/labels`)).json.some((l: any) => l.name === 'priority'))

    const assignees = await api('GET', `${R}/assignees`)
    assert.deepEqual(assignees.json.map((u: any) => u.login).sort(), [OWNER, 'reviewer'])
    const added = await api('POST', `${R}/issues/1/assignees`, { body: { assignees: ['reviewer'] } })
    assert.equal(added.status, 201)
    assert.deepEqual(
      added.json.assignees.map((u: any) => u.login),
      ['reviewer'],
    )
    const dropped = await api('DELETE', `${R}/issues/1/assignees`, { body: { assignees: ['reviewer'] } })
    assert.equal(dropped.json.assignees.length, 0)
  })
})

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

describe('workflows', () => {
  const WF = `${R}/actions/workflows`

  test('list, get by id and file, enable/disable, dispatch errors', async () => {
    const list = await api('GET', WF)
    assert.equal(list.json.total_count, 1)
    const wf = list.json.workflows[0]
    assert.equal(wf.name, 'CI')
    assert.equal(wf.path, '.codehost/workflows/ci.yml')
    assert.equal(wf.state, 'active')
    assert.equal((await api('GET', `${WF}/ci.yml`)).json.id, wf.id)
    assert.equal((await api('GET', `${WF}/${wf.id}`)).json.name, 'CI')
    assert.equal((await api('GET', `${WF}/nope.yml`)).status, 404)
    assert.equal((await api('POST', `${WF}/nope.yml/dispatches`, { body: { ref: 'main' } })).status, 404)
    const noRef = await api('POST', `${WF}/ci.yml/dispatches`, { body: {} })
    assert.equal(noRef.status, 422)
    assert.equal(
      (await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'no-such-branch' } })).status,
      422,
    )
    assert.equal((await api('PUT', `${WF}/ci.yml/disable`)).status, 204)
    assert.equal((await api('GET', `${WF}/ci.yml`)).json.state, 'disabled_manually')
    const disabled = await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'main' } })
    assert.equal(disabled.status, 422)
    assert.match(disabled.json.message, /disabled workflow/)
    assert.equal((await api('PUT', `${WF}/ci.yml/enable`)).status, 204)
    assert.equal((await api('GET', `${WF}/ci.yml`)).json.state, 'active')
  })

  test('dispatched run goes queued → in_progress → completed on the sandbox clock', async () => {
    const rec = await receiver()
    await repoHook(rec.url, ['workflow_run', 'workflow_job'])
    await ctl('POST', '/_sandbox/clock', { freeze: true })
    assert.equal(
      (await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'main', inputs: { reason: 'test' } } }))
        .status,
      204,
    )
    const runs = await api('GET', `${R}/actions/runs`)
    assert.equal(runs.json.total_count, 1)
    const run = runs.json.workflow_runs[0]
    assert.equal(run.status, 'queued')
    assert.equal(run.conclusion, null)
    assert.equal(run.event, 'workflow_dispatch')
    assert.equal(run.head_branch, 'main')
    assert.equal(run.run_number, 1)
    assert.equal(
      (await rec.wait('workflow_run', (j) => j.action === 'requested')).json.workflow_run.id,
      run.id,
    )

    await ctl('POST', '/_sandbox/clock', { advanceMs: 1000 })
    assert.equal((await api('GET', `${R}/actions/runs/${run.id}`)).json.status, 'in_progress')
    const jobs = await api('GET', `${R}/actions/runs/${run.id}/jobs`)
    assert.equal(jobs.json.total_count, 1)
    assert.equal(jobs.json.jobs[0].name, 'build')
    assert.equal(jobs.json.jobs[0].status, 'in_progress')
    await ctl('POST', '/_sandbox/clock', { advanceMs: 3000 })
    const done = await api('GET', `${R}/actions/runs/${run.id}`)
    assert.equal(done.json.status, 'completed')
    assert.equal(done.json.conclusion, 'success')
    const completed = await rec.wait('workflow_run', (j) => j.action === 'completed')
    assert.equal(completed.json.workflow_run.conclusion, 'success')
    const job = await rec.wait('workflow_job', (j) => j.action === 'completed')
    assert.equal(job.json.workflow_job.conclusion, 'success')
    assert.ok(rec.events('workflow_run').some((h) => h.json.action === 'in_progress'))
  })

  test('conclusion chosen through the control API; filters; cancel', async () => {
    await ctl('POST', '/_sandbox/workflow-runs/settings', { autoComplete: false, queuedMs: 0 })
    const dispatched = await api('POST', `${WF}/ci.yml/dispatches`, {
      body: { ref: 'main', return_run_details: true },
    })
    assert.equal(dispatched.status, 200)
    const id = dispatched.json.workflow_run_id
    const failed = await ctl('POST', `/_sandbox/workflow-runs/${id}/complete`, { conclusion: 'failure' })
    assert.equal(failed.json.conclusion, 'failure')
    assert.equal((await api('GET', `${R}/actions/runs/${id}/jobs`)).json.jobs[0].conclusion, 'failure')
    await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'main' } })
    const pushRun = await ctl('POST', '/_sandbox/workflow-runs', {
      owner: OWNER,
      repo: REPO,
      workflow: 'ci.yml',
      event: 'push',
    })
    assert.equal(pushRun.status, 201)
    assert.equal((await api('GET', `${R}/actions/runs?status=failure`)).json.total_count, 1)
    assert.equal((await api('GET', `${R}/actions/runs?status=in_progress`)).json.total_count, 2)
    assert.equal((await api('GET', `${R}/actions/runs?event=push`)).json.total_count, 1)
    assert.equal((await api('GET', `${R}/actions/runs?branch=main`)).json.total_count, 3)
    assert.equal((await api('GET', `${R}/actions/runs?branch=other`)).json.total_count, 0)
    const paged = await api('GET', `${R}/actions/workflows/ci.yml/runs?per_page=2`)
    assert.equal(paged.json.total_count, 3)
    assert.equal(paged.json.workflow_runs.length, 2)
    assert.match(paged.headers.get('link') ?? '', /rel="next"/)
    assert.equal((await api('POST', `${R}/actions/runs/${pushRun.json.id}/cancel`)).status, 202)
    assert.equal((await api('GET', `${R}/actions/runs/${pushRun.json.id}`)).json.conclusion, 'cancelled')
    assert.equal((await api('POST', `${R}/actions/runs/${pushRun.json.id}/cancel`)).status, 409)
    await ctl('POST', '/_sandbox/workflow-runs/settings', {
      defaultConclusion: 'cancelled',
      autoComplete: true,
      inProgressMs: 0,
    })
    await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'main' } })
    const latest = await until(async () => {
      const r = await api('GET', `${R}/actions/runs?status=cancelled`)
      return r.json.total_count >= 3 ? r : undefined
    })
    // The cancelled push run, plus the run left in progress and the new one, both auto-completed.
    assert.equal(latest.json.total_count, 3)
  })
})

describe('gists, releases', () => {
  test('snippets: create, get, update, list', async () => {
    const created = await api('POST', '/gists', {
      body: { description: 'demo', public: true, files: { 'hello.md': { content: '# hi' } } },
    })
    assert.equal(created.status, 201)
    assert.match(created.json.id, /^[0-9a-f]{32}$/)
    assert.equal(created.json.files['hello.md'].content, '# hi')
    assert.equal(created.json.owner.login, OWNER)
    const got = await api('GET', `/gists/${created.json.id}`, { token: null })
    assert.equal(got.json.description, 'demo')
    const patched = await api('PATCH', `/gists/${created.json.id}`, {
      body: {
        description: 'changed',
        files: { 'hello.md': { content: '# bye' }, 'extra.txt': { content: 'x' } },
      },
    })
    assert.equal(patched.status, 200)
    assert.equal(patched.json.files['hello.md'].content, '# bye')
    assert.deepEqual(Object.keys(patched.json.files).sort(), ['extra.txt', 'hello.md'])
    await api('POST', '/gists', {
      body: { description: 'secret', public: false, files: { 's.txt': { content: 's' } } },
    })
    assert.equal((await api('GET', `/users/${OWNER}/gists`, { token: null })).json.length, 1)
    assert.equal((await api('GET', `/users/${OWNER}/gists`)).json.length, 2)
    assert.equal((await api('GET', '/gists')).json.length, 2)
    assert.equal((await api('POST', '/gists', { body: { files: {} } })).status, 422)
    const noScope = await token({ login: OWNER, scopes: ['repo'] })
    assert.equal(
      (await api('POST', '/gists', { token: noScope, body: { files: { 'a.txt': { content: 'a' } } } }))
        .status,
      404,
    )
    assert.equal((await api('GET', '/gists/0000')).status, 404)
  })

  test('releases: create, list, get, duplicates', async () => {
    const r = await api('POST', `${R}/releases`, {
      body: { tag_name: 'v1.0.0', name: 'First', body: 'notes' },
    })
    assert.equal(r.status, 201)
    assert.equal(r.json.tag_name, 'v1.0.0')
    assert.equal(r.json.draft, false)
    assert.ok(r.json.published_at)
    assert.equal((await api('GET', `${R}/releases`)).json.length, 1)
    assert.equal((await api('GET', `${R}/releases/${r.json.id}`)).json.name, 'First')
    assert.equal((await api('GET', `${R}/releases/latest`)).json.id, r.json.id)
    assert.equal((await api('GET', `${R}/tags`)).json[0].name, 'v1.0.0')
    const dup = await api('POST', `${R}/releases`, { body: { tag_name: 'v1.0.0' } })
    assert.equal(dup.status, 422)
    assert.equal(dup.json.errors[0].code, 'already_exists')
    assert.equal((await api('GET', `${R}/releases/123`)).status, 404)
  })
})

describe('GraphQL and projects', () => {
  const gql = (query: string, variables?: Record<string, unknown>, t?: string | null) =>
    api('POST', '/graphql', { token: t, body: { query, variables } })

  test('project fields, options and items; updateProjectV2ItemFieldValue; webhook', async () => {
    const demo = (await ctl('GET', '/_sandbox/demo')).json
    const project = demo.projectV2
    const q = await gql(
      `query($id: ID!) { node(id: $id) { ... on ProjectV2 { id title number
          fields(first: 20) { nodes { ... on ProjectV2FieldCommon { id name dataType } ... on ProjectV2SingleSelectField { options { id name } } } }
          items(first: 10) { totalCount nodes { id type
            content { ... on Issue { number title } ... on DraftIssue { title } }
            status: fieldValueByName(name: "Status") { ... on ProjectV2ItemFieldSingleSelectValue { name optionId } } } } } } }`,
      { id: project.id },
    )
    assert.equal(q.status, 200)
    assert.equal(q.json.errors, undefined, JSON.stringify(q.json.errors))
    const node = q.json.data.node
    assert.equal(node.title, 'Demo roadmap')
    const status = node.fields.nodes.find((f: any) => f.name === 'Status')
    assert.deepEqual(
      status.options.map((o: any) => o.name),
      ['Todo', 'In Progress', 'Done'],
    )
    assert.equal(status.dataType, 'SINGLE_SELECT')
    assert.equal(node.items.totalCount, 2)
    const issueItem = node.items.nodes.find((i: any) => i.type === 'ISSUE')
    assert.equal(issueItem.content.number, 1)
    assert.equal(issueItem.status.name, 'Todo')

    const rec = await receiver()
    const hook = await api('POST', '/user/hooks', {
      body: { config: { url: rec.url, content_type: 'json' }, events: ['projects_v2_item'] },
    })
    assert.equal(hook.status, 201)
    const done = status.options.find((o: any) => o.name === 'Done')
    const m = await gql(
      `mutation($p: ID!, $i: ID!, $f: ID!, $o: String!) { updateProjectV2ItemFieldValue(input: {projectId: $p, itemId: $i, fieldId: $f, value: {singleSelectOptionId: $o}}) { projectV2Item { id fieldValueByName(name: "Status") { ... on ProjectV2ItemFieldSingleSelectValue { name } } } } }`,
      { p: project.id, i: issueItem.id, f: status.id, o: done.id },
    )
    assert.equal(m.status, 200)
    assert.equal(m.json.errors, undefined, JSON.stringify(m.json.errors))
    assert.equal(m.json.data.updateProjectV2ItemFieldValue.projectV2Item.fieldValueByName.name, 'Done')
    const ev = await rec.wait('projects_v2_item')
    assert.equal(ev.json.action, 'edited')
    assert.equal(ev.json.projects_v2_item.node_id, issueItem.id)
    assert.equal(ev.json.changes.field_value.field_name, 'Status')
    assert.equal(ev.json.changes.field_value.from.name, 'Todo')
    assert.equal(ev.json.changes.field_value.to.name, 'Done')

    const viaUser = await gql(
      `{ user(login: "octo-demo") { projectV2(number: 1) { items(first: 1) { nodes { fieldValues(first: 5) { nodes { ... on ProjectV2ItemFieldSingleSelectValue { name field { ... on ProjectV2SingleSelectField { name } } } } } } } } } }`,
    )
    const values = viaUser.json.data.user.projectV2.items.nodes[0].fieldValues.nodes
    assert.ok(values.some((v: any) => v.name === 'Done' && v.field.name === 'Status'))
  })

  test('GraphQL errors arrive as 200 with errors[]', async () => {
    const demo = (await ctl('GET', '/_sandbox/demo')).json.projectV2
    const status = demo.fields.find((f: any) => f.name === 'Status')
    const badOption = await gql(
      `mutation { updateProjectV2ItemFieldValue(input: {projectId: "${demo.id}", itemId: "${demo.items[0].id}", fieldId: "${status.id}", value: {singleSelectOptionId: "nope"}}) { clientMutationId } }`,
    )
    assert.equal(badOption.status, 200)
    assert.equal(badOption.json.data.updateProjectV2ItemFieldValue, null)
    assert.match(badOption.json.errors[0].message, /single select option/)
    const missing = await gql(`{ node(id: "PVTI_nothing") { id } }`)
    assert.equal(missing.status, 200)
    assert.equal(missing.json.errors[0].type, 'NOT_FOUND')
    assert.deepEqual(missing.json.errors[0].path, ['node'])
    const unknownField = await gql(`{ viewer { login nonsense } }`)
    assert.equal(unknownField.status, 200)
    assert.equal(unknownField.json.data, undefined)
    assert.equal(unknownField.json.errors[0].message, "Field 'nonsense' doesn't exist on type 'User'")
    const parseError = await gql(`{ viewer { login }`)
    assert.match(parseError.json.errors[0].message, /^Parse error/)
    const viewer = await gql(`query { viewer { login } rateLimit { remaining limit } }`)
    assert.equal(viewer.json.data.viewer.login, OWNER)
    assert.equal(viewer.json.data.rateLimit.limit, 5000)
    const noProjectScope = await token({ login: OWNER, scopes: ['repo'] })
    const insufficient = await gql(
      `{ user(login: "octo-demo") { projectV2(number: 1) { title } } }`,
      undefined,
      noProjectScope,
    )
    assert.equal(insufficient.json.errors[0].type, 'INSUFFICIENT_SCOPES')
    assert.equal((await gql('{ viewer { login } }', undefined, null)).status, 401)
  })

  test('ready for review through GraphQL', async () => {
    await pushBranch('gql', { 'g.txt': 'g\n' })
    const pr = await api('POST', `${R}/pulls`, {
      body: { title: 'draft', head: 'gql', base: 'main', draft: true },
    })
    const r = await gql(
      `mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft number } } }`,
      { id: pr.json.node_id },
    )
    assert.equal(r.json.errors, undefined, JSON.stringify(r.json.errors))
    assert.equal(r.json.data.markPullRequestReadyForReview.pullRequest.isDraft, false)
    assert.equal((await api('GET', `${R}/pulls/${pr.json.number}`)).json.draft, false)
  })

  test('classic projects: columns, cards, moves with webhooks', async () => {
    const demo = (await ctl('GET', '/_sandbox/demo')).json.classicProject
    const rec = await receiver()
    await repoHook(rec.url, ['project_card'])
    const cols = await api('GET', `/projects/${demo.id}/columns`)
    assert.deepEqual(
      cols.json.map((c: any) => c.name),
      ['To do', 'In progress', 'Done'],
    )
    const todo = cols.json[0].id
    const cards = await api('GET', `/projects/columns/${todo}/cards`)
    assert.equal(cards.json[0].note, 'Try the sandbox')
    const issue = await api('GET', `${R}/issues/1`)
    const card = await api('POST', `/projects/columns/${todo}/cards`, {
      body: { content_id: issue.json.id, content_type: 'Issue' },
    })
    assert.equal(card.status, 201)
    assert.match(card.json.content_url, /issues\/1$/)
    assert.equal(
      (await rec.wait('project_card', (j) => j.action === 'created')).json.project_card.id,
      card.json.id,
    )
    const moved = await api('POST', `/projects/columns/cards/${card.json.id}/moves`, {
      body: { position: 'top', column_id: cols.json[2].id },
    })
    assert.equal(moved.status, 201)
    const ev = await rec.wait('project_card', (j) => j.action === 'moved')
    assert.equal(ev.json.changes.column_id.from, todo)
    assert.equal(ev.json.project_card.column_id, cols.json[2].id)
    assert.equal((await api('GET', `/projects/columns/${cols.json[2].id}/cards`)).json[0].id, card.json.id)
    assert.equal(
      (await api('POST', `/projects/columns/cards/${card.json.id}/moves`, { body: { position: 'sideways' } }))
        .status,
      422,
    )
  })
})

describe('search', () => {
  test('qualifiers, free text, visibility', async () => {
    await api('POST', `${R}/issues`, {
      body: { title: 'Crash on startup', body: 'segfault', labels: ['bug'], assignees: ['reviewer'] },
    })
    await api('POST', `${R}/issues`, { body: { title: 'Feature idea', labels: ['enhancement'] } })
    await api('POST', '/user/repos', { body: { name: 'hidden', private: true, auto_init: true } })
    await api('POST', `/repos/${OWNER}/hidden/issues`, { body: { title: 'Secret crash' } })
    const q = (s: string, t?: string | null) =>
      api('GET', `/search/issues?q=${encodeURIComponent(s)}`, { token: t })
    const bugs = await q(`repo:${OWNER}/${REPO} is:open is:issue label:bug`)
    assert.equal(bugs.status, 200)
    assert.equal(bugs.json.total_count, 2)
    assert.equal(bugs.json.incomplete_results, false)
    assert.equal(bugs.headers.get('x-ratelimit-resource'), 'search')
    assert.equal((await q(`repo:${OWNER}/${REPO} crash`)).json.items[0].title, 'Crash on startup')
    assert.equal((await q('crash')).json.total_count, 2)
    assert.equal((await q('crash', null)).json.total_count, 1)
    assert.equal((await q('assignee:reviewer')).json.total_count, 1)
    assert.equal((await q('author:reviewer')).json.items[0].title, 'Found a bug')
    assert.equal((await q('is:pr')).json.total_count, 0)
    assert.equal((await q('-label:bug is:issue')).json.total_count, 2)
    assert.equal((await q(`repo:${OWNER}/${REPO} state:closed`)).json.total_count, 0)
    const ft = await token({ login: OWNER, kind: 'fine_grained', repositories: [REPO] })
    assert.equal((await q('crash', ft)).json.total_count, 1)
    assert.equal((await q(`repo:${OWNER}/hidden crash`, ft)).status, 422)
    const empty = await api('GET', '/search/issues')
    assert.equal(empty.status, 422)
    assert.equal(empty.json.errors[0].field, 'q')
  })
})

describe('rate limits', () => {
  test('/rate_limit is free and every response carries the headers', async () => {
    const a = await api('GET', '/rate_limit')
    const b = await api('GET', '/rate_limit')
    assert.equal(a.json.resources.core.used, b.json.resources.core.used)
    assert.equal(a.json.resources.core.limit, 5000)
    assert.equal(a.json.resources.search.limit, 30)
    assert.ok(a.json.resources.graphql)
    assert.deepEqual(a.json.rate, a.json.resources.core)
    const r = await api('GET', '/user')
    assert.equal(r.headers.get('x-ratelimit-limit'), '5000')
    assert.equal(r.headers.get('x-ratelimit-used'), String(a.json.resources.core.used + 1))
    assert.equal(Number(r.headers.get('x-ratelimit-remaining')), 5000 - a.json.resources.core.used - 1)
    assert.equal(r.headers.get('x-ratelimit-resource'), 'core')
    assert.ok(Number(r.headers.get('x-ratelimit-reset')) > Date.now() / 1000)
  })

  test('primary limit exhausted: 403 with remaining 0; window reset on the clock', async () => {
    await ctl('POST', '/_sandbox/rate-limits', { core: 3, windowMs: 60_000 })
    for (let i = 0; i < 3; i++) assert.equal((await api('GET', '/user')).status, 200)
    const over = await api('GET', '/user')
    assert.equal(over.status, 403)
    assert.equal(over.headers.get('x-ratelimit-remaining'), '0')
    assert.equal(over.json.message, 'API rate limit exceeded for user ID 1001.')
    assert.equal((await api('GET', '/rate_limit')).json.resources.core.remaining, 0)
    await ctl('POST', '/_sandbox/clock', { advanceMs: 60_001 })
    assert.equal((await api('GET', '/user')).status, 200)
  })

  test('search limit', async () => {
    await ctl('POST', '/_sandbox/rate-limits', { search: 2, searchWindowMs: 60_000 })
    assert.equal((await api('GET', '/search/issues?q=bug')).status, 200)
    assert.equal((await api('GET', '/search/issues?q=bug')).status, 200)
    const over = await api('GET', '/search/issues?q=bug')
    assert.equal(over.status, 403)
    assert.equal(over.headers.get('x-ratelimit-resource'), 'search')
    assert.equal((await api('GET', '/user')).status, 200)
  })

  test('secondary limits: content creation per minute and concurrency, with retry-after', async () => {
    await ctl('POST', '/_sandbox/rate-limits', { secondaryCreatesPerMinute: 2 })
    assert.equal((await api('POST', `${R}/issues`, { body: { title: 'a' } })).status, 201)
    assert.equal((await api('POST', `${R}/issues`, { body: { title: 'b' } })).status, 201)
    const over = await api('POST', `${R}/issues`, { body: { title: 'c' } })
    assert.equal(over.status, 403)
    assert.match(over.json.message, /^You have exceeded a secondary rate limit/)
    assert.ok(Number(over.headers.get('retry-after')) > 0)
    assert.equal((await api('GET', `${R}/issues/1`)).status, 200)

    await ctl('POST', '/_sandbox/rate-limits', { reset: true, secondaryInFlight: 1 })
    await ctl('POST', '/_sandbox/faults', { latencyMs: 300, pathPrefix: '/user', count: 2 })
    const [first, second] = await Promise.all([
      api('GET', '/user'),
      new Promise<Res>((r) => setTimeout(() => r(api('GET', '/user')), 50)),
    ])
    assert.equal(first.status, 200)
    assert.equal(second.status, 403)
    assert.equal(second.headers.get('retry-after'), '60')
  })
})

describe('OAuth web flow', () => {
  const hidden = (html: string) =>
    Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1],
        m[2].replace(/&#(\d+);/g, (_x, c) => String.fromCharCode(Number(c))),
      ]),
    )

  async function authorize(
    fields: Record<string, string>,
    login = { login: OWNER, password: 'octo-demo-password' },
    decision = '1',
  ) {
    const qs = new URLSearchParams(fields).toString()
    const page = await fetch(`${sb.webUrl}/login/oauth/authorize?${qs}`)
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /text\/html/)
    const html = await page.text()
    assert.match(html, /<form action="\/login\/oauth\/authorize" method="post"/)
    const form = new URLSearchParams({ ...hidden(html), ...login, authorize: decision })
    return fetch(`${sb.webUrl}/login/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      redirect: 'manual',
    })
  }

  const exchange = (p: Record<string, string>, accept = 'application/json') =>
    fetch(`${sb.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept },
      body: new URLSearchParams(p).toString(),
    })

  test('login, approve, redirect with code and state, exchange, use the token', async () => {
    const redirect = 'http://127.0.0.1:9/callback'
    const res = await authorize({
      client_id: sb.demo.oauthClientId,
      redirect_uri: redirect,
      scope: 'repo read:user',
      state: 'xyz',
    })
    assert.equal(res.status, 302)
    const loc = new URL(res.headers.get('location')!)
    assert.equal(`${loc.origin}${loc.pathname}`, redirect)
    assert.equal(loc.searchParams.get('state'), 'xyz')
    const code = loc.searchParams.get('code')!
    assert.ok(code)
    const creds = {
      client_id: sb.demo.oauthClientId,
      client_secret: sb.demo.oauthClientSecret,
      code,
      redirect_uri: redirect,
    }
    const tok = await exchange(creds)
    assert.equal(tok.status, 200)
    const body = await tok.json()
    assert.match(body.access_token, /^cho_/)
    assert.equal(body.token_type, 'bearer')
    assert.equal(body.scope, 'repo,read:user')
    assert.equal((await api('GET', '/user', { token: body.access_token })).json.login, OWNER)
    const reused = await (await exchange(creds)).json()
    assert.equal(reused.error, 'bad_verification_code')

    const res2 = await authorize({
      client_id: sb.demo.oauthClientId,
      redirect_uri: redirect,
      scope: 'repo',
      state: 's2',
    })
    const code2 = new URL(res2.headers.get('location')!).searchParams.get('code')!
    const wrongSecret = await (await exchange({ ...creds, code: code2, client_secret: 'nope' })).json()
    assert.equal(wrongSecret.error, 'incorrect_client_credentials')
    const form = await exchange({ ...creds, code: code2 }, '*/*')
    assert.match(form.headers.get('content-type') ?? '', /x-www-form-urlencoded/)
    const parsed = new URLSearchParams(await form.text())
    assert.match(parsed.get('access_token') ?? '', /^cho_/)
    assert.equal(parsed.get('scope'), 'repo')
  })

  test('codes expire after 10 minutes; wrong password; deny', async () => {
    const redirect = 'http://127.0.0.1:9/cb'
    const res = await authorize({
      client_id: sb.demo.oauthClientId,
      redirect_uri: redirect,
      scope: 'repo',
      state: 'a',
    })
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!
    await ctl('POST', '/_sandbox/clock', { advanceMs: 10 * 60 * 1000 + 1 })
    const expired = await (
      await exchange({ client_id: sb.demo.oauthClientId, client_secret: sb.demo.oauthClientSecret, code })
    ).json()
    assert.equal(expired.error, 'bad_verification_code')

    const wrong = await authorize(
      { client_id: sb.demo.oauthClientId, redirect_uri: redirect, state: 'b' },
      { login: OWNER, password: 'wrong' },
    )
    assert.equal(wrong.status, 200)
    assert.match(await wrong.text(), /Incorrect username or password/)
    const denied = await authorize(
      { client_id: sb.demo.oauthClientId, redirect_uri: redirect, state: 'c' },
      undefined,
      '0',
    )
    const loc = new URL(denied.headers.get('location')!)
    assert.equal(loc.searchParams.get('error'), 'access_denied')
    assert.equal(loc.searchParams.get('state'), 'c')
    assert.equal((await fetch(`${sb.webUrl}/login/oauth/authorize?client_id=unknown`)).status, 404)
  })

  test('registered callback URL is enforced', async () => {
    const app = await ctl('POST', '/_sandbox/apps', {
      name: 'Strict',
      callbackUrl: 'http://127.0.0.1:9/oauth',
    })
    const page = await fetch(
      `${sb.webUrl}/login/oauth/authorize?client_id=${app.json.clientId}&redirect_uri=${encodeURIComponent('http://evil.example/x')}&state=s`,
      { redirect: 'manual' },
    )
    assert.equal(page.status, 302)
    assert.equal(new URL(page.headers.get('location')!).searchParams.get('error'), 'redirect_uri_mismatch')
    const ok = await authorize({
      client_id: app.json.clientId,
      redirect_uri: 'http://127.0.0.1:9/oauth/done',
      state: 's',
    })
    assert.equal(ok.status, 302)
  })
})

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

  test('account hooks: gist, mention, repository created', async () => {
    const rec = await receiver()
    const hook = await api('POST', '/user/hooks', {
      body: {
        config: { url: rec.url, content_type: 'json', secret: 'acct' },
        events: ['gist', 'mention', 'repository'],
      },
    })
    assert.equal(hook.status, 201)
    assert.equal(hook.json.type, 'User')
    await rec.wait('ping')
    await api('POST', '/gists', { body: { files: { 'a.txt': { content: 'a' } } } })
    const gist = await rec.wait('gist')
    assert.equal(gist.json.action, 'created')
    assert.equal(gist.headers['x-hub-signature-256'], sign('acct', gist.body))
    await ctl('POST', '/_sandbox/act', {
      as: 'reviewer',
      action: 'mention',
      owner: OWNER,
      repo: REPO,
      number: 1,
      login: OWNER,
    })
    const mention = await rec.wait('mention')
    assert.equal(mention.json.mentioned.login, OWNER)
    assert.equal(mention.json.subject_type, 'issue_comment')
    assert.match(mention.json.comment.body, /@octo-demo/)
    await api('POST', '/user/repos', { body: { name: 'brand-new' } })
    assert.equal((await rec.wait('repository')).json.repository.name, 'brand-new')
    assert.equal((await api('GET', '/user/hooks')).json.length, 1)
    const deliveries = await api('GET', `/user/hooks/${hook.json.id}/deliveries`)
    assert.ok(deliveries.json.length >= 3)
  })
})

describe('control API, faults, clock, robustness', () => {
  test('users, apps, reset restores the seed', async () => {
    const u = await ctl('POST', '/_sandbox/users', { login: 'temp-user', token: true })
    assert.equal(u.status, 201)
    assert.equal((await api('GET', '/user', { token: u.json.token })).json.login, 'temp-user')
    assert.equal((await ctl('POST', '/_sandbox/users', { login: 'temp-user' })).status, 422)
    await api('POST', `${R}/issues`, { body: { title: 'gone after reset' } })
    await ctl('POST', '/_sandbox/reset')
    assert.equal((await api('GET', '/users/temp-user')).status, 404)
    assert.equal((await api('GET', `${R}/issues`)).json.length, 1)
    assert.equal((await api('GET', '/user')).json.login, OWNER)
    const demo = await ctl('GET', '/_sandbox/demo')
    assert.equal(demo.json.demo.token, sb.demo.token)
    assert.equal(demo.json.oauthApp.clientId, sb.demo.oauthClientId)
    assert.equal((await ctl('POST', '/_sandbox/act', { as: OWNER, action: 'nonsense' })).status, 422)
  })

  test('faults and clock', async () => {
    const f = await ctl('POST', '/_sandbox/faults', {
      errorRate: 1,
      errorStatus: 502,
      pathPrefix: '/user',
      count: 1,
    })
    assert.equal(f.status, 201)
    const failed = await api('GET', '/user')
    assert.equal(failed.status, 502)
    assert.equal(failed.json.message, 'Injected fault')
    assert.equal((await api('GET', '/user')).status, 200)
    const frozen = await ctl('POST', '/_sandbox/clock', {
      freeze: true,
      atMs: Date.parse('2030-01-01T00:00:00Z'),
    })
    assert.equal(frozen.json.now, '2030-01-01T00:00:00.000Z')
    const issue = await api('POST', `${R}/issues`, { body: { title: 'from the future' } })
    assert.equal(issue.json.created_at, '2030-01-01T00:00:00.000Z')
    assert.equal((await ctl('GET', '/_sandbox/clock')).json.frozen, true)
  })

  test('malformed JSON, oversized bodies, wrong methods, unknown ids', async () => {
    const bad = await api('POST', `${R}/issues`, {
      raw: '{"title": ',
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(bad.status, 400)
    assert.equal(bad.json.message, 'Problems parsing JSON')
    const badText = await api('POST', `${R}/issues`, {
      raw: '{oops',
      headers: { 'content-type': 'text/plain' },
    })
    assert.equal(badText.status, 400)
    const big = await api('POST', `${R}/issues`, { body: { title: 'x', body: 'y'.repeat(2 * 1024 * 1024) } })
    assert.equal(big.status, 413)
    const wrongMethod = await api('PATCH', '/rate_limit', { body: {} })
    assert.equal(wrongMethod.status, 404)
    assert.ok(wrongMethod.headers.get('x-ratelimit-limit'))
    assert.equal((await ctl('GET', '/_sandbox/nothing-here')).status, 404)
    assert.equal((await api('DELETE', `${R}/branches`)).status, 404)
    const nf = await api('GET', `/repos/${OWNER}/nope`)
    assert.equal(nf.status, 404)
    assert.deepEqual(Object.keys(nf.json).slice(0, 2), ['message', 'documentation_url'])
    assert.equal((await api('GET', `${R}/issues/abc`)).status, 404)
    assert.equal((await api('GET', `${R}/issues?labels=bug&labels=question&state=open`)).status, 200)
    assert.equal((await api('GET', `${R}/actions/runs/42`)).status, 404)
    assert.equal((await api('GET', '/user')).status, 200)
  })
})

describe('@octokit/rest against the sandbox', () => {
  test('create an issue, open and merge a pull request, read rate-limit headers', async () => {
    const octokit = new Octokit({
      baseUrl: sb.url,
      auth: sb.demo.token,
      headers: { accept: 'application/vnd.codehost+json' },
      userAgent: 'patchbay-test',
      log: { debug() {}, info() {}, warn() {}, error() {} },
    })
    const me = await octokit.rest.users.getAuthenticated()
    assert.equal(me.data.login, OWNER)
    const issue = await octokit.rest.issues.create({
      owner: OWNER,
      repo: REPO,
      title: 'From Octokit',
      labels: ['bug'],
    })
    assert.equal(issue.status, 201)
    assert.equal(issue.data.title, 'From Octokit')
    const main = await octokit.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch: 'main' })
    await octokit.rest.git.createRef({
      owner: OWNER,
      repo: REPO,
      ref: 'refs/heads/octo',
      sha: main.data.commit.sha,
    })
    await octokit.rest.repos.createOrUpdateFileContents({
      owner: OWNER,
      repo: REPO,
      path: 'octo.txt',
      message: 'Add octo',
      content: b64('octo\n'),
      branch: 'octo',
    })
    const pr = await octokit.rest.pulls.create({
      owner: OWNER,
      repo: REPO,
      title: 'Octo PR',
      head: 'octo',
      base: 'main',
      body: `Fixes #${issue.data.number}`,
    })
    assert.equal(pr.status, 201)
    const merged = await octokit.rest.pulls.merge({
      owner: OWNER,
      repo: REPO,
      pull_number: pr.data.number,
      sha: pr.data.head.sha,
    })
    assert.equal(merged.data.merged, true)
    const closed = await octokit.rest.issues.get({
      owner: OWNER,
      repo: REPO,
      issue_number: issue.data.number,
    })
    assert.equal(closed.data.state, 'closed')
    const headers = merged.headers
    assert.equal(headers['x-ratelimit-limit'], '5000')
    assert.ok(Number(headers['x-ratelimit-remaining']) < 5000)
    assert.equal(headers['x-ratelimit-resource'], 'core')
    const limits = await octokit.rest.rateLimit.get()
    assert.equal(limits.data.resources.core.limit, 5000)
    await assert.rejects(
      octokit.rest.pulls.merge({ owner: OWNER, repo: REPO, pull_number: pr.data.number }),
      (err: any) => err.status === 405,
    )
  })
})
