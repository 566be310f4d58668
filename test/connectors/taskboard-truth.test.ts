// The smaller things issue 24 found, each as a user meets it: the Task-Board API Call reads a page
// address, reconnecting takes fresh credentials without naming the method again, refusals end
// in one full stop, and the task-board's reported rate limits are shown.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../helpers/service.ts'
import { mintDemoToken, taskboardRest } from '../helpers/taskboard.ts'

let t: TestService
let conn: string

before(async () => {
  t = await startTestService()
  const made = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
  })
  conn = made.body.id
})
after(() => t.close())

const apiCall = (endpoint: string) =>
  t.api('POST', '/v1/steps/taskboard.api_call/run', {
    connectionId: conn,
    input: { method: 'GET', endpoint },
  })

test('the Task-Board API Call reads a board’s or card’s page address', async () => {
  const board = await taskboardRest(
    t.taskboard,
    'GET',
    `/1/boards/${t.taskboard.demo.boardId}?fields=shortLink,url`,
  )
  const json = await apiCall(`/b/${board.shortLink}.json`)
  assert.equal(json.status, 200, JSON.stringify(json.body))
  assert.equal(json.body.output.status, 200)
  assert.equal(json.body.output.body.id, t.taskboard.demo.boardId)
  assert.ok(Array.isArray(json.body.output.body.lists), 'the page’s data: the board with its lists')
  const page = await apiCall(new URL(board.url).pathname)
  assert.equal(page.body.output.body.id, t.taskboard.demo.boardId)
  const card = (
    await t.api('POST', '/v1/steps/taskboard.create_card/run', {
      connectionId: conn,
      input: { idList: t.taskboard.demo.listIds[0], name: 'Read by its page' },
    })
  ).body.output
  const cardPage = await apiCall(`${new URL(card.url).pathname}.json`)
  assert.equal(cardPage.body.output.status, 200, JSON.stringify(cardPage.body))
  assert.equal(cardPage.body.output.body.id, card.id)
})

test('reconnecting takes fresh credentials without authMethod (the connection’s own method)', async () => {
  const token = await mintDemoToken(t.taskboard)
  const res = await t.api('POST', `/v1/connections/${conn}/reconnect`, {
    credentials: { key: t.taskboard.demo.key, token },
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.id, conn)
  assert.equal(res.body.authMethod, 'api_key_token')
})

test('a refusal built from the upstream’s message ends in one full stop', async () => {
  const res = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: t.taskboard.demo.key, token: 'f'.repeat(64) },
  })
  assert.equal(res.status, 400)
  assert.equal(res.body.error.code, 'INVALID_CREDENTIALS')
  assert.doesNotMatch(res.body.error.message, /\.\./, res.body.error.message)
  assert.match(res.body.error.message, /Nothing was stored\.$/)
})

test('the task-board’s rate limit, as its answers report it, is shown for the connection', async () => {
  await t.api('POST', '/v1/steps/taskboard.get_boards/run', { connectionId: conn, input: {} })
  const status = await t.api('GET', `/v1/connections/${conn}/rate-limit-status`)
  assert.equal(status.status, 200, JSON.stringify(status.body))
  assert.equal(status.body.supported, true)
  assert.equal(status.body.tracked.token.limit, 100)
  assert.ok(status.body.tracked.token.remaining < 100)
})
