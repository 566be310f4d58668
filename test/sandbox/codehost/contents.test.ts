// The code-host sandbox over real HTTP: contents.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, b64, pushBranch, R, sandboxPerFile } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

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
