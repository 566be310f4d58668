// The code-host sandbox over real HTTP: issues.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { api, OWNER, R, sandboxPerFile } from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

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
