// Choices of fields that name upstream resources (GET /v1/steps/:id/options/:field): declared
// once by the connector next to the field's schema, listed with a connection against the sandbox
// upstreams, following their parents (list ← board, card ← list, repository ← owner, issue ←
// repository, branch and workflow ← repository), and kept to an agent's scope.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { act, connectWithToken, mintToken } from '../helpers/codehost.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { connectDemoTaskboard, control } from '../helpers/taskboard.ts'

let t: TestService
let conn: string
let chConn: string
const other = { board: '', list: '' }

before(async () => {
  t = await startTestService({ codehost: true })
  conn = await connectDemoTaskboard(t, t.taskboard)
  const seeded = await control(t.taskboard, 'POST', '/seed', {
    as: 'demo',
    boards: [{ name: 'Other board', lists: [{ name: 'Elsewhere' }] }],
  })
  other.board = seeded.boards[0].id
  other.list = seeded.boards[0].lists[0].id
  chConn = await connectWithToken(t, await mintToken(t.codehost!, { kind: 'classic', scopes: ['repo'] }))
})
after(() => t.close())

const options = (path: string, key?: string) => t.api('GET', path, undefined, key)

test('the catalog names the fields with choices and what they depend on', async () => {
  const createCard = (await t.api('GET', '/v1/steps/taskboard.create_card')).body
  const byField = Object.fromEntries(createCard.pickers.map((p: any) => [p.field, p]))
  assert.deepEqual(byField.idList, {
    field: 'idList',
    noun: 'list',
    parents: ['idBoard'],
    many: false,
    helper: false,
  })
  assert.deepEqual(byField.idBoard.parents, [])
  assert.equal(byField.idLabels.many, true)
  // Get List Cards has no idBoard field: the board is a helper that narrows the lists.
  const listCards = (await t.api('GET', '/v1/steps/taskboard.get_list_cards')).body
  assert.deepEqual(
    listCards.pickers.map((p: any) => [p.field, p.helper]),
    [
      ['idBoard', true],
      ['idList', false],
    ],
  )
  const trigger = (await t.api('GET', '/v1/catalog')).body.connectors
    .find((c: any) => c.id === 'taskboard')
    .triggers.find((x: any) => x.id === 'taskboard.new_card')
  assert.equal(trigger.pickers[0].field, 'idBoard')
})

test('boards, then the lists of the chosen board, then its cards, are listed from the upstream', async () => {
  const boards = await options(`/v1/steps/taskboard.create_card/options/idBoard?connectionId=${conn}`)
  assert.equal(boards.status, 200, JSON.stringify(boards.body))
  assert.deepEqual(boards.body.choices.map((c: any) => c.label).sort(), ['Demo Board', 'Other board'].sort())
  const demo = boards.body.choices.find((c: any) => c.label === 'Demo Board').value
  assert.equal(demo, t.taskboard.demo.boardId)

  const lists = await options(
    `/v1/steps/taskboard.create_card/options/idList?connectionId=${conn}&idBoard=${demo}`,
  )
  assert.equal(lists.status, 200, JSON.stringify(lists.body))
  assert.deepEqual(lists.body.parents, ['idBoard'])
  assert.deepEqual(
    lists.body.choices.map((c: any) => c.value),
    t.taskboard.demo.listIds,
  )
  const card = (
    await t.api('POST', '/v1/steps/taskboard.create_card/run', {
      connectionId: conn,
      input: { idList: t.taskboard.demo.listIds[0], name: 'Pick me' },
    })
  ).body.output
  const cards = await options(
    `/v1/steps/taskboard.get_card/options/idCard?connectionId=${conn}&idList=${t.taskboard.demo.listIds[0]}`,
  )
  assert.ok(cards.body.choices.some((c: any) => c.value === card.id && c.label === 'Pick me'))
  // The trigger twin lists the boards to watch.
  const watch = await options(`/v1/catalog/triggers/taskboard.new_card/options/idBoard?connectionId=${conn}`)
  assert.equal(watch.body.choices.length, 2)
})

test('a missing parent, an unknown field and a missing connection are clear refusals', async () => {
  const noParent = await options(`/v1/steps/taskboard.create_card/options/idList?connectionId=${conn}`)
  assert.equal(noParent.status, 400)
  assert.equal(noParent.body.error.code, 'PARENT_REQUIRED')
  assert.match(noParent.body.error.message, /idBoard/)
  const noField = await options(`/v1/steps/taskboard.create_card/options/name?connectionId=${conn}`)
  assert.equal(noField.status, 404)
  assert.equal(noField.body.error.code, 'FIELD_HAS_NO_CHOICES')
  // A workspace key names its connection, and is told which it may name (not that it has none).
  const noConnection = await options('/v1/steps/taskboard.create_card/options/idBoard')
  assert.equal(noConnection.status, 400)
  assert.equal(noConnection.body.error.code, 'CONNECTION_REQUIRED')
  assert.match(noConnection.body.error.message, new RegExp(`Say which connection .*${conn}`))
  assert.equal(noConnection.body.error.hint, 'Add ?connectionId=<id>.')
})

test("an agent key lists only its scope's choices, with its only connection by default", async () => {
  const agent = (
    await t.api('POST', '/v1/agents', {
      name: 'Picker',
      scope: { boards: [t.taskboard.demo.boardId] },
      connectionIds: [conn],
      delivery: { type: 'stream' },
    })
  ).body
  const key = (await t.api('POST', `/v1/agents/${agent.id}/keys`, {})).body.key
  const boards = await options('/v1/steps/taskboard.create_card/options/idBoard', key)
  assert.equal(boards.status, 200, JSON.stringify(boards.body))
  assert.deepEqual(
    boards.body.choices.map((c: any) => c.value),
    [t.taskboard.demo.boardId],
  )
  const outside = await options(`/v1/steps/taskboard.create_card/options/idList?idBoard=${other.board}`, key)
  assert.equal(outside.status, 403)
  assert.equal(outside.body.error.code, 'SCOPE_DENIED')
})

test('code-host: owners, then repositories of the owner, then open issues of the repository', async () => {
  await act(t.codehost!, 'open_issue', { title: 'Pick this issue' })
  const owners = await options(`/v1/steps/codehost.create_issue_comment/options/owner?connectionId=${chConn}`)
  assert.equal(owners.status, 200, JSON.stringify(owners.body))
  assert.ok(owners.body.choices.some((c: any) => c.value === 'octo-demo'))
  const repos = await options(
    `/v1/steps/codehost.create_issue_comment/options/repo?connectionId=${chConn}&owner=octo-demo`,
  )
  assert.ok(repos.body.choices.some((c: any) => c.value === 'hello-world'))
  const issues = await options(
    `/v1/steps/codehost.create_issue_comment/options/issueNumber?connectionId=${chConn}&owner=octo-demo&repo=hello-world`,
  )
  assert.equal(issues.status, 200, JSON.stringify(issues.body))
  assert.ok(issues.body.choices.some((c: any) => /Pick this issue/.test(c.label) && /^\d+$/.test(c.value)))
})

test('code-host: the branches of the repository (default first) and its workflows by file name', async () => {
  const made = await t.api('POST', '/v1/steps/codehost.create_branch/run', {
    connectionId: chConn,
    input: { owner: 'octo-demo', repo: 'hello-world', branch: 'feature/picked' },
  })
  assert.equal(made.status, 200, JSON.stringify(made.body))
  // Create Pull Request's head and base, and the New Commit trigger's branch filter, list branches.
  const catalog = (await t.api('GET', '/v1/steps/codehost.create_pull_request')).body
  const byField = Object.fromEntries(catalog.pickers.map((p: any) => [p.field, p]))
  assert.deepEqual(byField.head, {
    field: 'head',
    noun: 'branch',
    parents: ['owner', 'repo'],
    many: false,
    helper: false,
  })
  assert.equal(byField.base.noun, 'branch')
  const q = `connectionId=${chConn}&owner=octo-demo&repo=hello-world`
  const branches = await options(`/v1/steps/codehost.create_pull_request/options/base?${q}`)
  assert.equal(branches.status, 200, JSON.stringify(branches.body))
  assert.deepEqual(branches.body.parents, ['owner', 'repo'])
  assert.equal(branches.body.choices[0].value, 'main')
  assert.match(branches.body.choices[0].detail, /default branch/)
  assert.ok(branches.body.choices.some((c: any) => c.value === 'feature/picked'))
  const filter = await options(`/v1/catalog/triggers/codehost.new_commit/options/branch?${q}`)
  assert.equal(filter.status, 200, JSON.stringify(filter.body))
  assert.ok(filter.body.choices.some((c: any) => c.value === 'feature/picked'))

  const workflows = await options(`/v1/steps/codehost.create_workflow_dispatch/options/workflow?${q}`)
  assert.equal(workflows.status, 200, JSON.stringify(workflows.body))
  assert.equal(workflows.body.noun, 'workflow')
  const ci = workflows.body.choices.find((c: any) => c.value === 'ci.yml')
  assert.ok(ci, JSON.stringify(workflows.body.choices))
  // The chosen value is what the step takes: dispatching it names no unknown workflow.
  const runs = await t.api('POST', '/v1/steps/codehost.list_workflow_runs/run', {
    connectionId: chConn,
    input: { owner: 'octo-demo', repo: 'hello-world', workflow: ci.value },
  })
  assert.equal(runs.status, 200, JSON.stringify(runs.body))
  // Without the repository, the branches cannot be listed.
  const noRepo = await options(
    `/v1/steps/codehost.create_pull_request/options/base?connectionId=${chConn}&owner=octo-demo`,
  )
  assert.equal(noRepo.status, 400)
  assert.equal(noRepo.body.error.code, 'PARENT_REQUIRED')
  assert.match(noRepo.body.error.message, /repo/)
})
