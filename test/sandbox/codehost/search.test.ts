// The code-host sandbox over real HTTP: search.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, OWNER, R, REPO, sandboxPerFile, token } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

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
