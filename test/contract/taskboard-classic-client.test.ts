// The task-board sandbox against a second client nobody on the team wrote: `trello` (npm), the
// long-lived callback/promise client written against the classic documentation. Unlike trello.js it
// changes things through the per-field routes (`PUT /1/cards/{id}/name?value=`), spells paths in
// other cases (`/1/checklists/{id}/checkitems`) and in the singular (`/1/member/me`), reads a card
// through its board and adds members with `POST /1/cards/{id}/members`. It is used unmodified; only
// its public `uri` property (the API's address) is pointed at the sandbox.
//
// Not exercised: its organization, custom-field and sticker calls (the sandbox does not emulate
// those parts of the service), and `copyBoard`.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { receiver as startReceiver, waitFor } from '../sandbox/taskboard/harness.ts'

interface ClassicClient {
  uri: string
  [call: string]: unknown
}
// The client is CommonJS with no types of its own: every call answers a promise of parsed JSON.
type Call = (...args: unknown[]) => Promise<any>

const Trello = createRequire(import.meta.url)('trello') as new (key: string, token: string) => ClassicClient

let sb: TaskboardSandbox
let client: ClassicClient
let receiver: Awaited<ReturnType<typeof startReceiver>>
const call = (name: string, ...args: unknown[]) => (client[name] as Call).apply(client, args)

before(async () => {
  sb = await startTaskboardSandbox()
  client = new Trello(sb.demo.key, sb.demo.token)
  client.uri = sb.url
  receiver = await startReceiver()
})
after(async () => {
  await receiver.close()
  await sb.close()
})

test('the classic client reads the account, boards, lists, cards, members, labels and actions', async () => {
  const me = await call('getMember', 'me')
  assert.equal(me.username, 'demo')
  const boards = await call('getBoards', 'me')
  assert.ok(boards.some((b: { id: string }) => b.id === sb.demo.boardId))
  const lists = await call('getListsOnBoard', sb.demo.boardId)
  assert.deepEqual(
    lists.map((l: { id: string }) => l.id),
    sb.demo.listIds,
  )
  const open = await call('getListsOnBoardByFilter', sb.demo.boardId, 'open')
  assert.equal(open.length, sb.demo.listIds.length)
  const cards = await call('getCardsOnBoard', sb.demo.boardId)
  assert.ok(cards.length > 0)
  const withParams = await call('getCardsOnBoardWithExtraParams', sb.demo.boardId, { filter: 'all' }, 'name')
  assert.deepEqual(Object.keys(withParams[0]).sort(), ['id', 'name'])
  const first = cards[0]
  assert.equal(
    (await call('getCard', sb.demo.boardId, first.id)).id,
    first.id,
    'a card read through its board',
  )
  assert.equal((await call('getCard', null, first.id)).id, first.id)
  assert.equal((await call('getCardById', first.id)).name, first.name)
  assert.ok((await call('getCardsForList', sb.demo.listIds[0], 'commentCard')).length > 0)
  assert.ok((await call('getCardsOnList', sb.demo.listIds[0])).length > 0)
  assert.ok(Array.isArray(await call('getCardsOnListWithExtraParams', sb.demo.listIds[0], { filter: 'all' })))
  assert.ok((await call('getBoardMembers', sb.demo.boardId)).length >= 2)
  assert.ok((await call('getLabelsForBoard', sb.demo.boardId)).length > 0)
  assert.ok((await call('getActionsOnBoard', sb.demo.boardId)).length > 0)
})

test('the classic client makes and changes things through the per-field routes', async () => {
  const board = await call('addBoard', 'Classic client', 'made by the trello package', null)
  const list = await call('addListToBoard', board.id, 'Inbox')
  assert.equal((await call('renameList', list.id, 'Renamed inbox')).name, 'Renamed inbox')

  const card = await call('addCard', 'First', 'described', list.id)
  assert.equal((await call('updateCardName', card.id, 'Renamed')).name, 'Renamed')
  assert.equal((await call('updateCardDescription', card.id, 'Changed')).desc, 'Changed')
  assert.equal((await call('updateCard', card.id, 'closed', true)).closed, true)
  assert.equal((await call('updateCard', card.id, 'closed', false)).closed, false)
  const due = await call('addDueDateToCard', card.id, '2030-01-02T03:04:05.000Z')
  assert.equal(due.due, '2030-01-02T03:04:05.000Z')
  const pos = await call('updateCardPos', card.id, 'top')
  assert.equal(typeof pos.pos, 'number')

  const other = await call('addListToBoard', board.id, 'Done')
  assert.equal((await call('updateCardList', card.id, other.id)).idList, other.id)

  const extra = await call('addCardWithExtraParams', 'Second', { desc: 'extra', pos: 'bottom' }, list.id)
  assert.equal(extra.desc, 'extra')

  const label = await call('addLabelOnBoard', board.id, 'Urgent', 'red')
  assert.equal((await call('updateLabelName', label.id, 'Later')).name, 'Later')
  assert.equal((await call('updateLabelColor', label.id, 'blue')).color, 'blue')
  assert.deepEqual(await call('addLabelToCard', card.id, label.id), [label.id])
  await call('deleteLabelFromCard', card.id, label.id)
  assert.deepEqual((await call('getCardById', card.id)).idLabels, [])

  const members = await call('addMemberToCard', card.id, sb.demo.memberId)
  assert.deepEqual(
    members.map((m: { id: string }) => m.id),
    [sb.demo.memberId],
  )
  const mine = await call('getMemberCards', 'me')
  assert.ok(
    mine.some((c: { id: string }) => c.id === card.id),
    'the card is among my cards',
  )
  await call('delMemberFromCard', card.id, sb.demo.memberId)
  assert.deepEqual((await call('getCardById', card.id)).idMembers, [])

  const comment = await call('addCommentToCard', card.id, 'A comment')
  assert.equal(comment.type, 'commentCard')
  const link = await call('addAttachmentToCard', card.id, 'https://example.com/spec')
  assert.equal((await call('getAttachmentsOnCard', card.id))[0].id, link.id)

  const checklist = await call('addChecklistToCard', card.id, 'Steps')
  const item = await call('addItemToChecklist', checklist.id, 'First step', 'bottom')
  assert.equal(item.name, 'First step')
  assert.equal((await call('updateChecklist', checklist.id, 'name', 'Renamed steps')).name, 'Renamed steps')
  const onCard = await call('getChecklistsOnCard', card.id)
  assert.equal(onCard[0].checkItems[0].name, 'First step')
  const actions = await call('getActionsOnCard', card.id)
  assert.ok(actions.some((a: { type: string }) => a.type === 'commentCard'))

  assert.equal(
    (await call('updateBoardPref', board.id, 'permissionLevel', 'public')).prefs.permissionLevel,
    'public',
  )
  await call('addMemberToBoard', board.id, sb.demo.memberId, 'admin')
  await call('deleteCard', extra.id)
  await assert.rejects(call('getCardById', extra.id), /requested resource was not found/)
})

test('webhooks through the classic client', async () => {
  const hook = await call('addWebhook', 'classic', receiver.url, sb.demo.boardId)
  assert.equal(hook.idModel, sb.demo.boardId)
  await call('addCard', 'Delivered', null, sb.demo.listIds[0])
  const delivery = await waitFor(() => receiver.posts()[0])
  assert.equal(JSON.parse(delivery.body).action.type, 'createCard')
  await call('deleteWebhook', hook.id)
})

test('every call the client made was answered as the service answers it', () => {
  const made = sb.emulator.requests.filter((r) => r.userAgent !== 'node')
  const refused = made.filter((r) => r.status >= 400 && !r.url.startsWith(`/1/cards/`))
  assert.deepEqual(refused, [], 'no call was refused')
  // The one refusal the tests ask for: reading the card they deleted.
  assert.deepEqual(
    made.filter((r) => r.status >= 400).map((r) => `${r.method} ${r.status}`),
    ['GET 404'],
  )
  assert.ok(made.length >= 45, `${made.length} calls`)
})

test('a field the service has no route for is not found; a field route without a value is refused', async () => {
  const auth = `key=${sb.demo.key}&token=${sb.demo.token}`
  const card = (await call('getCardsOnBoard', sb.demo.boardId))[0]
  const unknown = await fetch(`${sb.url}/1/cards/${card.id}/colour?value=red&${auth}`, { method: 'PUT' })
  assert.equal(unknown.status, 404)
  const missing = await fetch(`${sb.url}/1/cards/${card.id}/name?${auth}`, { method: 'PUT' })
  assert.equal(missing.status, 400)
  assert.equal(await missing.text(), 'invalid value for value')
  const upper = await fetch(`${sb.url}/1/CARDS/${card.id}/NAME?value=Shouted&${auth}`, { method: 'PUT' })
  assert.equal((await upper.json()).name, 'Shouted', 'paths match in any case; the id keeps its own')
  const foreign = await fetch(`${sb.url}/1/boards/${sb.demo.boardId}/cards/${'0'.repeat(24)}?${auth}`)
  assert.equal(foreign.status, 404, 'a card id that is not on the board')
})
