// The task-board emulator: members, boards, lists, cards, comments, labels, members on cards, attachments, checklists and check items, each with the actions it records.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { api, control, demoCards, demoLists, newCard, sandboxForThisFile, sb, teammateId } from './harness.ts'

sandboxForThisFile()

test('members: me, by id and by username, with exactly the listed fields', async () => {
  const me = await api('GET', '/1/members/me')
  assert.deepEqual(Object.keys(me.json).sort(), ['fullName', 'id', 'initials', 'url', 'username'])
  assert.equal(me.json.id, sb.demo.memberId)
  assert.equal(me.json.fullName, 'Demo User')
  assert.equal(me.json.initials, 'DU')
  assert.equal((await api('GET', `/1/members/${sb.demo.memberId}`)).json.username, 'demo')
  assert.equal((await api('GET', '/1/members/teammate')).json.fullName, 'Team Mate')
  assert.equal((await api('GET', '/1/members/nobody-here')).status, 404)
  assert.deepEqual(Object.keys((await api('GET', '/1/members/me', { query: { fields: 'username' } })).json), [
    'id',
    'username',
  ])
})

test('boards: create (default lists and labels), get, nested resources, update, filters', async () => {
  const created = await api('POST', '/1/boards', { json: { name: 'Roadmap', desc: 'Q3' } })
  assert.equal(created.status, 200, created.text)
  const b = created.json
  assert.deepEqual(Object.keys(b).sort(), [
    'closed',
    'dateLastActivity',
    'desc',
    'id',
    'idOrganization',
    'labelNames',
    'name',
    'prefs',
    'shortLink',
    'shortUrl',
    'url',
  ])
  assert.match(b.id, /^[0-9a-f]{24}$/)
  assert.match(b.shortLink, /^[A-Za-z0-9]{8}$/)
  assert.equal(b.url, `${sb.webUrl}/b/${b.shortLink}/roadmap`)
  assert.equal(b.shortUrl, `${sb.webUrl}/b/${b.shortLink}`)
  assert.equal(b.prefs.permissionLevel, 'private')
  assert.equal(b.labelNames.green, '')

  const lists = (await api('GET', `/1/boards/${b.id}/lists`)).json
  assert.deepEqual(
    lists.map((l: any) => l.name),
    ['To Do', 'Doing', 'Done'],
  )
  assert.deepEqual(Object.keys(lists[0]).sort(), ['closed', 'id', 'idBoard', 'name', 'pos', 'subscribed'])
  const labels = (await api('GET', `/1/boards/${b.id}/labels`)).json
  assert.deepEqual(
    labels.map((l: any) => l.color),
    ['green', 'yellow', 'orange', 'red', 'purple', 'blue'],
  )
  const bare = await api('POST', '/1/boards', {
    json: { name: 'Bare', defaultLists: false, defaultLabels: false },
  })
  assert.equal((await api('GET', `/1/boards/${bare.json.id}/lists`)).json.length, 0)
  assert.equal((await api('POST', '/1/boards', { json: { desc: 'no name' } })).text, 'invalid value for name')

  const got = await api('GET', `/1/boards/${b.shortLink}`, {
    query: { lists: 'open', cards: 'all', labels: 'all' },
  })
  assert.equal(got.json.id, b.id)
  assert.equal(got.json.lists.length, 3)
  assert.deepEqual(got.json.cards, [])
  assert.equal(got.json.labels.length, 6)

  const actions = (await api('GET', `/1/boards/${b.id}/actions`)).json
  assert.equal(actions[0].type, 'createBoard')
  assert.equal(actions[0].display.translationKey, 'action_create_board')
  // memberCreator as the real service gives it (an avatar here for everyone; see the README).
  assert.match(actions[0].memberCreator.avatarHash, /^[0-9a-f]{32}$/)
  assert.deepEqual(actions[0].memberCreator, {
    id: sb.demo.memberId,
    activityBlocked: false,
    avatarHash: actions[0].memberCreator.avatarHash,
    fullName: 'Demo User',
    idMemberReferrer: null,
    initials: 'DU',
    nonPublic: {},
    nonPublicAvailable: true,
    username: 'demo',
  })
  // Every board is in a workspace: the creator's own unless another is named.
  assert.match(b.idOrganization, /^[0-9a-f]{24}$/)
  const elsewhere = await api('POST', '/1/boards', { json: { name: 'x', idOrganization: 'f'.repeat(24) } })
  assert.equal(elsewhere.status, 400)
  assert.equal(elsewhere.text, 'invalid value for idOrganization')

  const closed = await api('PUT', `/1/boards/${bare.json.id}`, { json: { closed: true } })
  assert.equal(closed.json.closed, true)
  const names = async (filter: string) =>
    (await api('GET', '/1/members/me/boards', { query: { filter } })).json.map((x: any) => x.name).sort()
  assert.deepEqual(await names('open'), ['Demo Board', 'Roadmap'])
  assert.deepEqual(await names('closed'), ['Bare'])
  assert.deepEqual(await names('all'), ['Bare', 'Demo Board', 'Roadmap'])

  const members = (await api('GET', `/1/boards/${sb.demo.boardId}/members`)).json
  assert.deepEqual(members.map((m: any) => m.username).sort(), ['demo', 'teammate'])
})

test('lists: create, get, rename, archive, move position; list cards', async () => {
  const created = await api('POST', '/1/lists', {
    json: { name: 'Backlog', idBoard: sb.demo.boardId, pos: 'top' },
  })
  assert.equal(created.status, 200, created.text)
  const list = created.json
  assert.equal(list.idBoard, sb.demo.boardId)
  assert.equal(typeof list.pos, 'number')
  assert.equal((await demoLists())[0].id, list.id, 'top puts it first')
  assert.equal(
    (await api('POST', '/1/lists', { json: { name: 'x', idBoard: 'nope' } })).text,
    'invalid value for idBoard',
  )
  assert.equal(
    (await api('POST', '/1/lists', { json: { idBoard: sb.demo.boardId } })).text,
    'invalid value for name',
  )
  assert.equal((await api('GET', `/1/lists/${list.id}`)).json.name, 'Backlog')

  const renamed = await api('PUT', `/1/lists/${list.id}`, { json: { name: 'Icebox' } })
  assert.equal(renamed.json.name, 'Icebox')
  const archived = await api('PUT', `/1/lists/${list.id}`, { json: { closed: true } })
  assert.equal(archived.json.closed, true)
  assert.ok(!(await demoLists()).some((l) => l.id === list.id))
  const all = (await api('GET', `/1/boards/${sb.demo.boardId}/lists`, { query: { filter: 'all' } })).json
  assert.ok(all.some((l: any) => l.id === list.id))
  const acts = (
    await api('GET', `/1/boards/${sb.demo.boardId}/actions`, { query: { filter: 'createList,updateList' } })
  ).json
  assert.deepEqual(
    acts.map((a: any) => a.type),
    ['updateList', 'updateList', 'createList'],
  )
  assert.deepEqual(acts[1].data.old, { name: 'Backlog' })
  assert.deepEqual(acts[0].data.old, { closed: false })
  assert.equal(acts[0].data.list.closed, true)

  const cards = (await api('GET', `/1/lists/${sb.demo.listIds[0]}/cards`)).json
  assert.ok(cards.every((c: any) => c.idList === sb.demo.listIds[0]))
  assert.ok(cards.some((c: any) => c.name === 'Welcome to Patchbay'))
})

// ---- cards -----------------------------------------------------------------------------------

test('cards: create with exactly the listed fields, page addresses and badges', async () => {
  const card = await newCard('Ship it', { desc: 'soon', due: '2030-01-02T03:04:05Z' })
  assert.deepEqual(Object.keys(card).sort(), [
    'badges',
    'closed',
    'dateLastActivity',
    'desc',
    'due',
    'dueComplete',
    'id',
    'idBoard',
    'idChecklists',
    'idLabels',
    'idList',
    'idMembers',
    'idShort',
    'labels',
    'name',
    'pos',
    'shortLink',
    'shortUrl',
    'start',
    'url',
  ])
  assert.equal(card.idBoard, sb.demo.boardId)
  assert.equal(card.due, '2030-01-02T03:04:05.000Z')
  assert.equal(card.start, null)
  assert.equal(typeof card.pos, 'number')
  assert.equal(card.url, `${sb.webUrl}/c/${card.shortLink}/${card.idShort}-ship-it`)
  assert.equal(card.shortUrl, `${sb.webUrl}/c/${card.shortLink}`)
  assert.equal(card.badges.description, true)
  assert.equal(card.badges.comments, 0)
  const byShortLink = await api('GET', `/1/cards/${card.shortLink}`)
  assert.equal(byShortLink.json.id, card.id)
  const idShorts = (await demoCards()).map((c) => c.idShort)
  assert.equal(new Set(idShorts).size, idShorts.length)
})

test('pos takes top, bottom or a positive number and is stored as a number', async () => {
  const bottom = await newCard('bottom', { pos: 'bottom' })
  const top = await newCard('top', { pos: 'top' })
  const numbered = await newCard('numbered', { pos: '12345.5' })
  const list = (await api('GET', `/1/lists/${sb.demo.listIds[0]}/cards`)).json
  assert.equal(list[0].id, top.id)
  assert.equal(list.at(-1).id, bottom.id)
  assert.equal(numbered.pos, 12345.5)
  for (const bad of ['middle', '-1', '0', 'abc', '']) {
    const r = await api('POST', '/1/cards', { json: { idList: sb.demo.listIds[0], name: 'x', pos: bad } })
    assert.equal(r.status, 400, bad)
    assert.equal(r.text, 'invalid value for pos')
  }
  const put = await api('PUT', `/1/cards/${top.id}`, { json: { pos: 'sideways' } })
  assert.equal(put.text, 'invalid value for pos')
  const moved = await api('PUT', `/1/cards/${top.id}`, { json: { pos: 'bottom' } })
  assert.ok(moved.json.pos > bottom.pos)
})

test('due must be a date or null; idList must exist and be reachable', async () => {
  const bad = await api('POST', '/1/cards', { json: { idList: sb.demo.listIds[0], due: 'next tuesday' } })
  assert.equal(bad.status, 400)
  assert.equal(bad.text, 'invalid value for due')
  const card = await newCard('dated', { due: '2031-05-06' })
  assert.equal(card.due, '2031-05-06T00:00:00.000Z')
  const cleared = await api('PUT', `/1/cards/${card.id}`, { json: { due: null } })
  assert.equal(cleared.json.due, null)
  assert.equal(
    (await api('PUT', `/1/cards/${card.id}`, { json: { due: 'soon' } })).text,
    'invalid value for due',
  )

  assert.equal(
    (await api('POST', '/1/cards', { json: { name: 'no list' } })).text,
    'invalid value for idList',
  )
  assert.equal(
    (await api('POST', '/1/cards', { json: { idList: 'x', name: 'n' } })).text,
    'invalid value for idList',
  )
  const ghost = await api('POST', '/1/cards', { json: { idList: 'b'.repeat(24), name: 'n' } })
  assert.equal(ghost.status, 400)
  assert.equal(ghost.text, 'invalid value for idList')
  const seeded = await control('POST', '/seed', {
    as: 'teammate',
    boards: [{ name: 'Private', lists: [{ name: 'L' }] }],
  })
  const unreachable = await api('POST', '/1/cards', {
    json: { idList: seeded.boards[0].lists[0].id, name: 'n' },
  })
  assert.equal(unreachable.status, 401)
})

test('update: rename, move between lists, archive, each as its own updateCard action', async () => {
  const card = await newCard('Mover')
  await api('PUT', `/1/cards/${card.id}`, { json: { name: 'Moved card' } })
  const moved = await api('PUT', `/1/cards/${card.id}`, { json: { idList: sb.demo.listIds[1] } })
  assert.equal(moved.json.idList, sb.demo.listIds[1])
  const archived = await api('PUT', `/1/cards/${card.id}`, { form: { closed: 'true' } })
  assert.equal(archived.json.closed, true)
  assert.ok(!(await demoCards()).some((c) => c.id === card.id), 'archived cards leave the visible listing')
  const closedCards = (
    await api('GET', `/1/boards/${sb.demo.boardId}/cards`, { query: { filter: 'closed' } })
  ).json
  assert.ok(closedCards.some((c: any) => c.id === card.id))

  const acts = (await api('GET', `/1/cards/${card.id}/actions`, { query: { filter: 'all' } })).json
  assert.deepEqual(
    acts.map((a: any) => a.type),
    ['updateCard', 'updateCard', 'updateCard', 'createCard'],
  )
  const [archive, move, rename, create] = acts
  assert.deepEqual(rename.data.old, { name: 'Mover' })
  assert.equal(rename.data.card.name, 'Moved card')
  assert.equal(rename.display.translationKey, 'action_renamed_card')
  assert.deepEqual(move.data.old, { idList: sb.demo.listIds[0] })
  assert.equal(move.data.card.idList, sb.demo.listIds[1])
  assert.deepEqual(move.data.listBefore, { id: sb.demo.listIds[0], name: 'To Do' })
  assert.deepEqual(move.data.listAfter, { id: sb.demo.listIds[1], name: 'Doing' })
  assert.equal(move.display.translationKey, 'action_move_card_from_list_to_list')
  assert.equal(archive.data.card.closed, true)
  assert.deepEqual(archive.data.old, { closed: false })
  assert.equal(archive.display.translationKey, 'action_archived_card')
  assert.equal(create.display.translationKey, 'action_create_card')
  assert.equal(create.data.list.id, sb.demo.listIds[0])
  // The default card action filter is comments and moves.
  const defaults = (await api('GET', `/1/cards/${card.id}/actions`)).json
  assert.deepEqual(
    defaults.map((a: any) => a.display.translationKey),
    ['action_move_card_from_list_to_list'],
  )
})

test('delete a card: deleteCard action, then 404', async () => {
  const card = await newCard('Doomed')
  const del = await api('DELETE', `/1/cards/${card.id}`)
  assert.equal(del.status, 200)
  assert.deepEqual(del.json, { limits: {} })
  assert.equal((await api('GET', `/1/cards/${card.id}`)).status, 404)
  const acts = (await api('GET', `/1/boards/${sb.demo.boardId}/actions`, { query: { filter: 'deleteCard' } }))
    .json
  assert.equal(acts[0].data.card.id, card.id)
  assert.equal(acts[0].display.translationKey, 'action_delete_card')
})

test('comments: add, list with filter=commentCard, counted in badges', async () => {
  const card = await newCard('Chatty')
  const c = await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: 'First!' } })
  assert.equal(c.status, 200, c.text)
  assert.equal(c.json.type, 'commentCard')
  assert.equal(c.json.data.text, 'First!')
  assert.equal(c.json.data.card.id, card.id)
  assert.equal(c.json.data.board.id, sb.demo.boardId)
  assert.equal(c.json.data.list.id, sb.demo.listIds[0])
  assert.equal(c.json.display.translationKey, 'action_comment_on_card')
  await api('POST', `/1/cards/${card.id}/actions/comments`, { query: { text: 'Second' } })
  const list = (await api('GET', `/1/cards/${card.id}/actions`, { query: { filter: 'commentCard' } })).json
  assert.deepEqual(
    list.map((a: any) => a.data.text),
    ['Second', 'First!'],
  )
  assert.equal((await api('GET', `/1/cards/${card.id}`)).json.badges.comments, 2)
  assert.equal(
    (await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: '' } })).text,
    'invalid value for text',
  )
})

test('labels: create with colours, get, add to and remove from a card', async () => {
  const label = await api('POST', '/1/labels', {
    json: { name: 'Bug', color: 'red', idBoard: sb.demo.boardId },
  })
  assert.equal(label.status, 200, label.text)
  assert.deepEqual(Object.keys(label.json).sort(), ['color', 'id', 'idBoard', 'name', 'uses'])
  assert.equal(label.json.uses, 0)
  const nocolor = await api('POST', '/1/labels', {
    json: { name: 'Plain', color: 'null', idBoard: sb.demo.boardId },
  })
  assert.equal(nocolor.json.color, null)
  for (const color of ['sky', 'lime', 'pink', 'black']) {
    assert.equal(
      (await api('POST', '/1/labels', { json: { name: color, color, idBoard: sb.demo.boardId } })).status,
      200,
    )
  }
  const bad = await api('POST', '/1/labels', {
    json: { name: 'x', color: 'magenta', idBoard: sb.demo.boardId },
  })
  assert.equal(bad.text, 'invalid value for color')
  assert.equal((await api('GET', `/1/labels/${label.json.id}`)).json.name, 'Bug')

  const card = await newCard('Labelled')
  const added = await api('POST', `/1/cards/${card.id}/idLabels`, { json: { value: label.json.id } })
  assert.deepEqual(added.json, [label.json.id])
  const again = await api('POST', `/1/cards/${card.id}/idLabels`, { json: { value: label.json.id } })
  assert.equal(again.status, 400)
  const got = (await api('GET', `/1/cards/${card.id}`)).json
  assert.equal(got.labels[0].name, 'Bug')
  assert.equal((await api('GET', `/1/labels/${label.json.id}`)).json.uses, 1)
  const removed = await api('DELETE', `/1/cards/${card.id}/idLabels/${label.json.id}`)
  assert.equal(removed.status, 200)
  assert.deepEqual((await api('GET', `/1/cards/${card.id}`)).json.idLabels, [])

  const types = (
    await api('GET', `/1/boards/${sb.demo.boardId}/actions`, { query: { limit: '3' } })
  ).json.map((a: any) => a.type)
  assert.deepEqual(types, ['removeLabelFromCard', 'addLabelToCard', 'createCard'])
  const createLabel = (
    await api('GET', `/1/boards/${sb.demo.boardId}/actions`, { query: { filter: 'createLabel' } })
  ).json
  assert.equal(createLabel.at(-1).data.label.name, 'Bug')
  assert.equal(createLabel.at(-1).data.label.color, 'red')
  const viaBoard = await api('POST', `/1/boards/${sb.demo.boardId}/labels`, {
    json: { name: 'Feature', color: 'green' },
  })
  assert.equal(viaBoard.json.idBoard, sb.demo.boardId)
})

test('members on cards: add, refused when not on the board, notification for the added member', async () => {
  const card = await newCard('Pair on this')
  const mate = await teammateId()
  const r = await api('POST', `/1/cards/${card.id}/idMembers`, { json: { value: mate } })
  assert.equal(r.status, 200, r.text)
  assert.deepEqual(
    r.json.map((m: any) => m.username),
    ['teammate'],
  )
  assert.equal((await api('POST', `/1/cards/${card.id}/idMembers`, { json: { value: mate } })).status, 400)
  const outsider = await control('POST', '/members', { username: 'stranger' })
  assert.equal(
    (await api('POST', `/1/cards/${card.id}/idMembers`, { json: { value: outsider.id } })).text,
    'invalid value for value',
  )
  const act = (await api('GET', `/1/cards/${card.id}/actions`, { query: { filter: 'addMemberToCard' } }))
    .json[0]
  assert.equal(act.data.idMember, mate)
  assert.equal(act.display.translationKey, 'action_added_member_to_card')
  const notes = (
    await api('GET', '/1/members/me/notifications', {
      token: (await control('GET', '/state')).tokens[1].token,
    })
  ).json
  assert.equal(notes[0].type, 'addedToCard')
  assert.equal(notes[0].data.card.id, card.id)
  assert.equal(notes[0].idAction, act.id)
})

test('attachments: link attachments with name and mimeType, listed, 100 per card then 422', async () => {
  await control('POST', '/rate-limits', { tokenLimit: 1000, keyLimit: 1000 })
  const card = await newCard('Files')
  const a = await api('POST', `/1/cards/${card.id}/attachments`, {
    json: { url: 'https://example.com/docs/spec.pdf', name: 'Spec', mimeType: 'application/pdf' },
  })
  assert.equal(a.status, 200, a.text)
  assert.deepEqual(Object.keys(a.json).sort(), [
    'bytes',
    'date',
    'fileName',
    'id',
    'idMember',
    'isUpload',
    'mimeType',
    'name',
    'url',
  ])
  assert.equal(a.json.fileName, 'spec.pdf')
  assert.equal(a.json.isUpload, false)
  assert.equal(a.json.idMember, sb.demo.memberId)
  assert.equal(
    (await api('POST', `/1/cards/${card.id}/attachments`, { json: { url: 'nope' } })).text,
    'invalid value for url',
  )
  for (let i = 1; i < 100; i++) {
    const r = await api('POST', `/1/cards/${card.id}/attachments`, {
      json: { url: `https://example.com/${i}` },
    })
    assert.equal(r.status, 200)
  }
  const over = await api('POST', `/1/cards/${card.id}/attachments`, {
    json: { url: 'https://example.com/101' },
  })
  assert.equal(over.status, 422)
  assert.equal(over.json.error, 'ATTACHMENTS_PER_CARD_LIMIT_EXCEEDED')
  const listed = (await api('GET', `/1/cards/${card.id}/attachments`)).json
  assert.equal(listed.length, 100)
  assert.equal(listed[0].name, 'Spec')
  assert.equal((await api('GET', `/1/cards/${card.id}`)).json.badges.attachments, 100)
  const act = (
    await api('GET', `/1/cards/${card.id}/actions`, { query: { filter: 'addAttachmentToCard', limit: '1' } })
  ).json
  assert.equal(act[0].data.attachment.url, 'https://example.com/99')
})

test('checklists and check items: create, list, update state, name and position', async () => {
  const card = await newCard('Checklisted')
  const cl = await api('POST', '/1/checklists', { json: { idCard: card.id, name: 'Steps' } })
  assert.equal(cl.status, 200, cl.text)
  assert.deepEqual(Object.keys(cl.json).sort(), ['checkItems', 'id', 'idBoard', 'idCard', 'name', 'pos'])
  const i1 = await api('POST', `/1/checklists/${cl.json.id}/checkItems`, { json: { name: 'one' } })
  const i2 = await api('POST', `/1/checklists/${cl.json.id}/checkItems`, {
    json: { name: 'two', checked: true },
  })
  assert.deepEqual(Object.keys(i1.json).sort(), [
    'due',
    'id',
    'idChecklist',
    'idMember',
    'name',
    'pos',
    'state',
  ])
  assert.equal(i1.json.state, 'incomplete')
  assert.equal(i2.json.state, 'complete')
  // Each item added is a createCheckItem action on the card.
  const created = (await api('GET', `/1/cards/${card.id}/actions`, { query: { filter: 'createCheckItem' } }))
    .json
  assert.deepEqual(
    created.map((a: any) => [
      a.data.checkItem.name,
      a.data.checkItem.state,
      a.data.checklist.id,
      a.data.card.id,
    ]),
    [
      ['two', 'complete', cl.json.id, card.id],
      ['one', 'incomplete', cl.json.id, card.id],
    ],
  )
  assert.equal(created[0].display.translationKey, 'action_add_checkitem_to_checklist')
  assert.equal(
    (await api('POST', `/1/checklists/${cl.json.id}/checkItems`, { json: {} })).text,
    'invalid value for name',
  )
  const items = (await api('GET', `/1/checklists/${cl.json.id}/checkItems`)).json
  assert.deepEqual(
    items.map((i: any) => i.name),
    ['one', 'two'],
  )
  assert.equal((await api('GET', `/1/checklists/${cl.json.id}`)).json.checkItems.length, 2)
  assert.equal((await api('GET', `/1/cards/${card.id}/checklists`)).json[0].id, cl.json.id)

  const done = await api('PUT', `/1/cards/${card.id}/checkItem/${i1.json.id}`, {
    json: { state: 'complete', name: 'uno', pos: 'bottom' },
  })
  assert.equal(done.status, 200, done.text)
  assert.equal(done.json.state, 'complete')
  assert.equal(done.json.name, 'uno')
  assert.ok(done.json.pos > i2.json.pos)
  assert.equal(
    (await api('PUT', `/1/cards/${card.id}/checkItem/${i1.json.id}`, { json: { state: 'maybe' } })).text,
    'invalid value for state',
  )
  assert.equal(
    (await api('PUT', `/1/cards/${card.id}/checkItem/${'c'.repeat(24)}`, { json: { state: 'complete' } }))
      .status,
    404,
  )
  const badges = (await api('GET', `/1/cards/${card.id}`)).json.badges
  assert.equal(badges.checkItems, 2)
  assert.equal(badges.checkItemsChecked, 2)

  const acts = (await api('GET', `/1/cards/${card.id}/actions`, { query: { filter: 'all' } })).json
  const state = acts.find((a: any) => a.type === 'updateCheckItemStateOnCard')
  assert.equal(state.data.checkItem.state, 'complete')
  assert.equal(state.data.checklist.id, cl.json.id)
  assert.equal(state.display.translationKey, 'action_completed_checkitem')
  assert.ok(acts.some((a: any) => a.type === 'addChecklistToCard' && a.data.checklist.name === 'Steps'))
})
