// The code-host sandbox's answers compared with the published description (`@octokit/openapi`) key by
// key: not only what the schemas require (test/helpers/codehost-contract.ts checks that for every
// answer) but every key the description lists for the answer, and no key it does not. Where the
// real service itself leaves a documented key out, OMITTED says so and why.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type CodehostSandbox, startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import { DEMO_ORG } from '../../sandbox/codehost/seed.ts'
import { checkResponse, keyDifferences } from '../helpers/codehost-contract.ts'

/** Documented keys the real service leaves out of these answers, by operation, with why. */
const OMITTED: Record<string, Record<string, string>> = {
  'GET /repos/{owner}/{repo}': {
    '/organization': 'Only a repository an organization owns has it.',
    '/parent': 'Only a fork has it.',
    '/source': 'Only a fork has it.',
    '/template_repository': 'Only a repository made from a template has it.',
    '/temp_clone_token': 'Only private repositories, to those who may clone them.',
    '/master_branch': 'A long-retired key the description still lists.',
    '/anonymous_access_enabled': 'Only some enterprise repositories have it.',
    '/code_of_conduct': 'Only a repository with a code of conduct file has it.',
    '/security_and_analysis':
      'Only admins of repositories with security features see it; the sandbox has none.',
    '/has_pull_requests': 'A newer key upstream sends only to accounts in its preview.',
    '/pull_request_creation_policy': 'As above.',
    '/owner/email': 'An account in a list or as an owner is the simple user (no email, no starred_at).',
    '/owner/name': 'As above.',
    '/owner/starred_at': 'As above.',
    '/license/html_url': 'The sandbox’s repositories have no license (license is null).',
  },
}

let sb: CodehostSandbox
const headers = () => ({ authorization: `Bearer ${sb.demo.token}`, 'user-agent': 'patchbay-test' })
const get = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${sb.url}${path}`, { headers: headers(), redirect: 'manual', ...init })
  return { status: res.status, headers: res.headers, body: res.status === 204 ? null : await res.json() }
}

before(async () => {
  sb = await startCodehostSandbox()
})
after(() => sb.close())

function compare(path: string, answer: unknown) {
  const d = keyDifferences('GET', path, 200, answer)
  const omitted = OMITTED[d.operation] ?? {}
  assert.deepEqual(
    d.missing.filter((k) => !(k in omitted)),
    [],
    `${d.operation}: documented keys missing from the answer`,
  )
  assert.deepEqual(d.extra, [], `${d.operation}: keys the description does not list`)
  assert.deepEqual(
    checkResponse({
      method: 'GET',
      path,
      route: path,
      query: {},
      headers: {},
      body: null,
      bodyRead: true,
      status: 200,
      response: answer,
    }),
    [],
  )
}

test('the API root lists every address the description lists', async () => {
  const root = await get('/')
  compare('/', root.body)
  assert.equal(root.body.repository_url, `${sb.url}/repos/{owner}/{repo}`)
})

test('an organization, as its owner sees it, has every documented key', async () => {
  const org = await get(`/orgs/${DEMO_ORG}`)
  assert.equal(org.status, 200)
  compare(`/orgs/${DEMO_ORG}`, org.body)
  assert.equal(org.body.type, 'Organization')
})

test('a repository has its merge settings, and they govern merging', async () => {
  const { owner, name } = sb.demo.repo
  const repo = await get(`/repos/${owner}/${name}`)
  compare(`/repos/${owner}/${name}`, repo.body)
  for (const key of ['allow_squash_merge', 'allow_merge_commit', 'allow_rebase_merge'])
    assert.equal(repo.body[key], true, key)
  assert.equal(repo.body.allow_auto_merge, false)
  assert.equal(repo.body.delete_branch_on_merge, false)

  const patched = await get(`/repos/${owner}/${name}`, {
    method: 'PATCH',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ allow_merge_commit: false, delete_branch_on_merge: true }),
  })
  assert.equal(patched.body.allow_merge_commit, false)
  assert.equal(patched.body.delete_branch_on_merge, true)
  const none = await get(`/repos/${owner}/${name}`, {
    method: 'PATCH',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ allow_squash_merge: false, allow_rebase_merge: false }),
  })
  assert.equal(none.status, 422, 'at least one merge method stays allowed')

  // A pull request: a merge commit is refused now; a squash merges and deletes the head branch.
  const main = await get(`/repos/${owner}/${name}/git/ref/heads/main`)
  const branch = await get(`/repos/${owner}/${name}/git/refs`, {
    method: 'POST',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ ref: 'refs/heads/settings-check', sha: main.body.object.sha }),
  })
  assert.equal(branch.status, 201)
  const file = await get(`/repos/${owner}/${name}/contents/settings-check.txt`, {
    method: 'PUT',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify({
      message: 'add',
      content: Buffer.from('x').toString('base64'),
      branch: 'settings-check',
    }),
  })
  assert.equal(file.status, 201)
  const pull = await get(`/repos/${owner}/${name}/pulls`, {
    method: 'POST',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Settings', head: 'settings-check', base: 'main' }),
  })
  assert.equal(pull.status, 201)
  const merge = (method: string) =>
    get(`/repos/${owner}/${name}/pulls/${pull.body.number}/merge`, {
      method: 'PUT',
      headers: { ...headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ merge_method: method }),
    })
  const refused = await merge('merge')
  assert.equal(refused.status, 405)
  assert.equal(refused.body.message, 'Merge commits are not allowed on this repository.')
  assert.equal((await merge('squash')).status, 200)
  assert.equal(
    (await get(`/repos/${owner}/${name}/git/ref/heads/settings-check`)).status,
    404,
    'head branch deleted',
  )
})

test('references: all of them at /git/refs, those under a prefix, matching-refs as documented', async () => {
  const { owner, name } = sb.demo.repo
  const all = await get(`/repos/${owner}/${name}/git/refs`)
  assert.equal(all.status, 200)
  assert.ok(all.body.some((r: { ref: string }) => r.ref === 'refs/heads/main'))
  const names = all.body.map((r: { ref: string }) => r.ref)
  assert.deepEqual(names, [...names].sort(), 'sorted by name')
  const heads = await get(`/repos/${owner}/${name}/git/refs/heads`)
  assert.ok(heads.body.every((r: { ref: string }) => r.ref.startsWith('refs/heads/')))
  assert.equal(heads.body.length, names.filter((n: string) => n.startsWith('refs/heads/')).length)
  const matching = await get(`/repos/${owner}/${name}/git/matching-refs/heads`)
  compare(`/repos/${owner}/${name}/git/matching-refs/heads`, matching.body)
  assert.deepEqual(matching.body, heads.body)
  const some = await get(`/repos/${owner}/${name}/git/matching-refs/heads/ma`)
  assert.deepEqual(
    some.body.map((r: { ref: string }) => r.ref),
    names.filter((n: string) => n.startsWith('refs/heads/ma')),
  )
  const one = await get(`/repos/${owner}/${name}/git/refs/heads/main`)
  assert.equal(one.body.ref, 'refs/heads/main', 'a full name is that one reference')
  assert.equal((await get(`/repos/${owner}/${name}/git/refs/heads/no-such-branch`)).status, 404)
})

test('a renamed repository answers 301 from its old name, 307 for changes, and is reachable by id', async () => {
  const { owner } = sb.demo.repo
  const created = await get('/user/repos', {
    method: 'POST',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'before-rename', auto_init: true }),
  })
  assert.equal(created.status, 201)
  const id = created.body.id
  const renamed = await get(`/repos/${owner}/before-rename`, {
    method: 'PATCH',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'after-rename' }),
  })
  assert.equal(renamed.body.full_name, `${owner}/after-rename`)

  const moved = await get(`/repos/${owner}/before-rename/issues?state=all`)
  assert.equal(moved.status, 301)
  assert.equal(moved.headers.get('location'), `${sb.url}/repositories/${id}/issues?state=all`)
  assert.deepEqual(Object.keys(moved.body).sort(), ['documentation_url', 'message', 'url'])
  assert.equal(moved.body.message, 'Moved Permanently')
  const change = await get(`/repos/${owner}/before-rename/issues`, {
    method: 'POST',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'x' }),
  })
  assert.equal(change.status, 307, 'a change is redirected with its method kept')

  // Followed as a client follows it.
  const followed = await fetch(`${sb.url}/repos/${owner}/before-rename`, { headers: headers() })
  assert.equal(followed.status, 200)
  assert.equal((await followed.json()).name, 'after-rename')
  const byId = await get(`/repositories/${id}`)
  assert.equal(byId.body.full_name, `${owner}/after-rename`)
  assert.equal((await get('/repositories/999999999')).status, 404)
  assert.equal((await get(`/repos/${owner}/never-existed`)).status, 404)
})

test('the key-by-key comparison names a documented key that is missing and one the description does not list', () => {
  const d = keyDifferences('GET', '/orgs/some-org', 200, { login: 'some-org', telepathy: true })
  assert.equal(d.operation, 'GET /orgs/{org}')
  assert.ok(d.missing.includes('/id') && d.missing.includes('/repos_url'), d.missing.join(' '))
  assert.deepEqual(d.extra, ['/telepathy'])
})
