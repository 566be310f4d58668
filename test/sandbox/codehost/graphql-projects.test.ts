// The code-host sandbox over real HTTP: GraphQL and projects.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  api,
  ctl,
  OWNER,
  pushBranch,
  R,
  receiver,
  repoHook,
  sandboxPerFile,
  token,
} from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

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

    const done = status.options.find((o: any) => o.name === 'Done')
    const m = await gql(
      `mutation($p: ID!, $i: ID!, $f: ID!, $o: String!) { updateProjectV2ItemFieldValue(input: {projectId: $p, itemId: $i, fieldId: $f, value: {singleSelectOptionId: $o}}) { projectV2Item { id fieldValueByName(name: "Status") { ... on ProjectV2ItemFieldSingleSelectValue { name } } } } }`,
      { p: project.id, i: issueItem.id, f: status.id, o: done.id },
    )
    assert.equal(m.status, 200)
    assert.equal(m.json.errors, undefined, JSON.stringify(m.json.errors))
    assert.equal(m.json.data.updateProjectV2ItemFieldValue.projectV2Item.fieldValueByName.name, 'Done')

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
