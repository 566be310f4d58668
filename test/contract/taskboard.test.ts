// The task-board sandbox against a description nobody on the team wrote: the independent typed
// client trello.js (npm), unmodified, drives the sandbox for common calls and checks every answer
// with its own schemas — in its strict mode (TRELLO_STRICT_SCHEMAS, the mode its author audits the
// live API with), where a field the schema does not list is an error too. Webhook deliveries are
// checked with the same schemas. Patchbay's own requests are checked against the client's
// operations by every test that runs Patchbay (test/helpers/service.ts); here, that the check
// itself catches what it should.
//
// The client talks to a configurable base address (`host`), so it is pointed at the sandbox's
// loopback address as it is; nothing in it is patched.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { checkRequest } from '../helpers/taskboard-description.ts'
import { receiver as startReceiver, waitFor } from '../sandbox/taskboard/harness.ts'

// Read by the client's schema builders when its modules load, so set before they are imported.
process.env.TRELLO_STRICT_SCHEMAS = 'true'
const { createTrelloClient } = await import('trello.js')
const models = await import('trello.js/models')

let sb: TaskboardSandbox
let trello: ReturnType<typeof createTrelloClient>
let receiver: Awaited<ReturnType<typeof startReceiver>>

before(async () => {
  sb = await startTaskboardSandbox()
  trello = createTrelloClient({ host: `${sb.url}/1`, apiKey: sb.demo.key, apiToken: sb.demo.token })
  receiver = await startReceiver()
})
after(async () => {
  await receiver.close()
  await sb.close()
})

test('the schemas are strict here: a field they do not list is refused', () => {
  assert.equal(models.BoardSchema.safeParse({ id: 'x', somethingUndocumented: 1 }).success, false)
})

test('the unmodified client reads the account, its boards, lists, cards, labels and actions', async () => {
  const me = await trello.members.getMember({ id: 'me' })
  assert.equal(me.username, 'demo')
  const boards = await trello.members.getMemberBoards({ id: 'me' })
  const demo = boards.find((b) => b.id === sb.demo.boardId)
  assert.ok(demo, 'the demo board is listed')
  assert.match(String(demo.idOrganization), /^[0-9a-f]{24}$/)
  const board = await trello.boards.getBoard({ id: sb.demo.boardId })
  assert.equal(board.name, 'Demo Board')
  const lists = await trello.boards.getBoardLists({ id: sb.demo.boardId })
  assert.deepEqual(
    lists.map((l) => l.id),
    sb.demo.listIds,
  )
  const cards = await trello.boards.getBoardCards({ id: sb.demo.boardId })
  assert.ok(cards.length > 0)
  assert.ok((await trello.lists.getListCards({ id: sb.demo.listIds[0]! })).length > 0)
  assert.equal((await trello.lists.getList({ id: sb.demo.listIds[0]! })).name, 'To Do')
  assert.ok((await trello.boards.getBoardLabels({ id: sb.demo.boardId })).length > 0)
  assert.ok((await trello.boards.getBoardMembers({ id: sb.demo.boardId })).length >= 2)
  assert.ok((await trello.boards.getBoardActions({ boardId: sb.demo.boardId })).length > 0)
  assert.ok(Array.isArray(await trello.members.getMemberNotifications({ id: 'me' })))
  const token = await trello.tokens.getToken({ token: sb.demo.token })
  assert.equal(token.idMember, sb.demo.memberId)
})

test('the unmodified client makes and changes things: board, list, card, label, comment, attachment, checklist', async () => {
  // The client creates boards with POST /1/boards/ (a trailing slash), as the real service allows.
  const board = await trello.boards.createBoard({ name: 'Made by trello.js', defaultLists: false })
  assert.match(String(board.idOrganization), /^[0-9a-f]{24}$/)
  const list = await trello.lists.createList({ idBoard: board.id, name: 'Inbox' })
  const label = await trello.labels.createLabel({ idBoard: board.id, name: 'Urgent', color: 'red' })
  assert.equal((await trello.labels.getLabel({ id: label.id })).name, 'Urgent')
  const card = await trello.cards.createCard({ idList: list.id, name: 'From the client', pos: 'top' })
  const updated = await trello.cards.updateCard({ id: card.id, desc: 'Described', dueComplete: false })
  assert.equal(updated.desc, 'Described')
  await trello.cards.addCardLabel({ id: card.id, value: label.id })
  await trello.cards.createCardComment({ id: card.id, text: 'A comment' })
  const link = await trello.cards.createCardAttachment({ id: card.id, url: 'https://example.com/spec' })
  assert.equal(typeof link.mimeType, 'string', 'a link attachment has a string mimeType')
  assert.equal((await trello.cards.getCardAttachments({ id: card.id })).length, 1)
  const checklist = await trello.checklists.createChecklist({ idCard: card.id, name: 'Steps' })
  const item = await trello.checklists.createChecklistItem({ id: checklist.id, name: 'First' })
  const done = await trello.cards.updateCardCheckItem({
    id: card.id,
    idCheckItem: item.id,
    state: 'complete',
  })
  assert.equal(done.state, 'complete')
  assert.equal((await trello.checklists.getChecklist({ id: checklist.id })).checkItems?.length, 1)
  // getCard documents `checklists=all` but its schema has no `checklists` key for the answer (the
  // description lags the service there), so the checklists are read on their own.
  const full = await trello.cards.getCard({ id: card.id, attachments: 'true' })
  assert.equal((await trello.cards.getCardChecklists({ id: card.id }))[0]?.name, 'Steps')
  assert.deepEqual(full.idLabels, [label.id])
  assert.deepEqual(full.badges?.attachmentsByType, {}, 'no vendor name in the badges')
  const actions = await trello.cards.getCardActions({ id: card.id, filter: 'all' })
  assert.ok(actions.some((a) => a.type === 'createCheckItem'))
})

test('webhooks through the client, and a delivery checked with its schemas', async () => {
  const hook = await trello.webhooks.createWebhook({
    idModel: sb.demo.boardId,
    callbackURL: receiver.url,
    description: 'contract',
  })
  assert.equal((await trello.webhooks.getWebhook({ id: hook.id })).idModel, sb.demo.boardId)
  assert.ok((await trello.tokens.getTokenWebhooks({ token: sb.demo.token })).some((h) => h.id === hook.id))
  await trello.cards.createCard({ idList: sb.demo.listIds[0]!, name: 'Delivered' })
  const delivery = await waitFor(() => receiver.posts()[0])
  const body = JSON.parse(delivery.body)
  const action = models.ActionSchema.parse(body.action)
  assert.equal(action.type, 'createCard')
  assert.equal(action.memberCreator?.initials, 'DU')
  assert.match(String(action.memberCreator?.avatarHash), /^[0-9a-f]{32}$/)
  assert.equal(models.BoardSchema.parse(body.model).id, sb.demo.boardId)
  assert.equal(models.WebhookSchema.parse(body.webhook).id, hook.id)
  await trello.webhooks.deleteWebhook({ id: hook.id })
})

test('the request check knows the description: unknown operations, parameters and types are named', async () => {
  assert.deepEqual(
    await checkRequest({ method: 'GET', url: '/1/cards/abc?fields=id', body: null, contentType: null }),
    [],
  )
  assert.deepEqual(
    await checkRequest({
      method: 'POST',
      url: '/1/boards/',
      body: '{"name":"x"}',
      contentType: 'application/json',
    }),
    [],
    'a trailing slash is the same operation',
  )
  assert.match(
    (
      await checkRequest({ method: 'GET', url: '/1/cards/abc/telepathy/now', body: null, contentType: null })
    )[0]!,
    /no such operation/,
  )
  assert.match(
    (
      await checkRequest({ method: 'GET', url: '/1/boards/abc?colour=red', body: null, contentType: null })
    )[0]!,
    /takes no parameter "colour"/,
  )
  assert.match(
    (
      await checkRequest({
        method: 'POST',
        url: '/1/cards',
        body: '{"name":"x"}',
        contentType: 'application/json',
      })
    )[0]!,
    /"idList" is required/,
  )
  assert.match(
    (
      await checkRequest({
        method: 'POST',
        url: '/1/cards',
        body: '{"idList":"a","dueComplete":"yes"}',
        contentType: 'application/json',
      })
    )[0]!,
    /"dueComplete"/,
  )
})
