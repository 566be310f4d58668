// The code-host sandbox over real HTTP: @octokit/rest against the sandbox.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Octokit } from '@octokit/rest'
import { b64, OWNER, REPO, sandboxPerFile, sb } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

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
