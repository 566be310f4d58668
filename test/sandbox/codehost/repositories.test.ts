// The code-host sandbox over real HTTP: repositories.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  api,
  ctl,
  OWNER,
  R,
  REPO,
  receiver,
  repoHook,
  sandboxPerFile,
} from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

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
