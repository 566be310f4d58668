// Every ready-made task-board step against the sandbox: what it does, and how it refuses bad
// ids and bad input — before anything is sent upstream where it could have refused first.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { connectDemoTaskboard, control, mintDemoToken } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let connectionId: string
let todo: string
let doing: string
let boardB: { id: string; url: string; list: string; label: string }

const tb = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: {
      authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

const run = (step: string, input: unknown, opts: { conn?: string; key?: string } = {}) =>
  t.api(
    'POST',
    `/v1/steps/taskboard.${step}/run`,
    { connectionId: opts.conn ?? connectionId, input },
    opts.key,
  )

/** Runs the step and expects success. */
async function ok(step: string, input: unknown, opts?: { conn?: string; key?: string }) {
  const res = await run(step, input, opts)
  assert.equal(res.status, 200, `${step}: ${JSON.stringify(res.body)}`)
  return res.body.output
}

/** Runs the step and expects a refusal with this status and code. */
async function refused(step: string, input: unknown, status: number, code: string, message?: RegExp) {
  const res = await run(step, input)
  assert.equal(res.status, status, `${step}: ${JSON.stringify(res.body)}`)
  assert.equal(res.body.error.code, code)
  if (message) assert.match(res.body.error.message, message)
  assert.ok(res.body.error.hint || res.body.error.code === 'VALIDATION_FAILED', 'errors carry a hint')
  return res.body.error
}

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({ taskboard: sandbox })
  connectionId = await connectDemoTaskboard(t, sandbox)
  ;[todo, doing] = sandbox.demo.listIds
  const b = await tb('POST', '/1/boards', { name: 'Board B', defaultLists: false })
  const list = await tb('POST', '/1/lists', { name: 'Inbox', idBoard: b.id })
  const label = await tb('POST', '/1/labels', { idBoard: b.id, name: 'B only', color: 'blue' })
  boardB = { id: b.id, url: b.url, list: list.id, label: label.id }
})
after(async () => {
  await t.close()
  await sandbox.close()
})

test("the catalog has the spec's twelve task-board steps, each input field described for an LLM", async () => {
  const { body } = await t.api('GET', '/v1/catalog')
  const steps = body.connectors.find((c: any) => c.id === 'taskboard').steps
  assert.deepEqual(
    steps.map((s: any) => s.name),
    [
      'Create Card',
      'Update Card',
      'Get Card',
      'Archive Card',
      'Get Boards',
      'Get List Cards',
      'Create List',
      'Add Comment to Card',
      'Add Comment (legacy)',
      'Add Checklist',
      'Create a Checklist Item',
      'Task-Board API Call',
    ],
  )
  for (const s of steps) {
    assert.ok(s.description.length > 40, s.id)
    for (const [field, schema] of Object.entries<any>(s.inputSchema.properties ?? {}))
      assert.ok(schema.description, `${s.id}: input.${field} is described`)
    assert.equal(typeof s.hints.readOnly, 'boolean')
  }
  const byId = Object.fromEntries(steps.map((s: any) => [s.id, s]))
  assert.equal(byId['taskboard.get_boards'].hints.readOnly, true)
  assert.equal(byId['taskboard.archive_card'].hints.idempotent, true)
  assert.match(byId['taskboard.add_comment'].description, /existing tools/)
  assert.ok(byId['taskboard.add_comment'].inputSchema.properties.card_id)
  // Boards and cards also take page addresses; the schema says so.
  assert.match(byId['taskboard.get_card'].inputSchema.properties.idCard.description, /page address/)
})

test('Create Card checks the list against idBoard and the labels against the board before creating anything', async () => {
  const card = await ok('create_card', {
    idList: todo,
    idBoard: sandbox.demo.boardId,
    name: 'Placed',
    pos: 'top',
    due: '2030-01-01',
  })
  assert.equal(card.idBoard, sandbox.demo.boardId)
  assert.equal(card.idList, todo)

  const posts = await countRequests(sandbox, '/1/cards')
  try {
    const e = await refused(
      'create_card',
      { idList: todo, idBoard: boardB.id, name: 'Wrong board' },
      400,
      'LIST_NOT_ON_BOARD',
      /input\.idList: the list .* is on board .*, not on board/,
    )
    assert.equal(e.details.listBoard, sandbox.demo.boardId)
    await refused(
      'create_card',
      { idList: todo, name: 'Foreign label', idLabels: [boardB.label] },
      400,
      'LABEL_NOT_ON_BOARD',
      /input\.idLabels/,
    )
    assert.equal(await posts.count(), 0, 'no card request was sent')
  } finally {
    await posts.stop()
  }
  const onList = await tb('GET', `/1/lists/${todo}/cards`)
  assert.ok(!onList.some((c: any) => c.name === 'Wrong board' || c.name === 'Foreign label'))
})

test('Create Card refuses bad input naming the field, with nothing sent', async () => {
  const posts = await countRequests(sandbox, '/1/')
  try {
    await refused(
      'create_card',
      { name: 'x' },
      400,
      'VALIDATION_FAILED',
      /input\.idList: Invalid input|input\.idList/,
    )
    await refused(
      'create_card',
      { idList: 'abc', name: 'x' },
      400,
      'VALIDATION_FAILED',
      /input\.idList: must be a list identifier/,
    )
    await refused(
      'create_card',
      { idList: todo, name: 'x', pos: 'middle' },
      400,
      'VALIDATION_FAILED',
      /input\.pos/,
    )
    await refused('create_card', { idList: todo, name: 'x', pos: -3 }, 400, 'VALIDATION_FAILED', /input\.pos/)
    await refused(
      'create_card',
      { idList: todo, name: 'x', due: 'next tuesday' },
      400,
      'VALIDATION_FAILED',
      /input\.due: must be a date/,
    )
    await refused('create_card', { idList: todo, name: '' }, 400, 'VALIDATION_FAILED', /input\.name/)
    await refused(
      'create_card',
      { idList: todo, name: 'x', idBoard: 'https' },
      400,
      'VALIDATION_FAILED',
      /input\.idBoard/,
    )
    assert.equal(await posts.count(), 0)
  } finally {
    await posts.stop()
  }
  // A well-formed list id the upstream does not know is the upstream's refusal, with its status.
  const e = await refused(
    'create_card',
    { idList: 'a'.repeat(24), name: 'x' },
    400,
    'UPSTREAM_REJECTED',
    /idList/,
  )
  assert.equal(e.upstream.status, 400)
})

test('Update Card changes only what is given; moves stay on the board unless idBoard says otherwise', async () => {
  const card = await ok('create_card', { idList: todo, name: 'To change', due: '2030-01-01T00:00:00Z' })
  const renamed = await ok('update_card', {
    idCard: card.id,
    name: 'Changed',
    desc: 'Now with a description',
  })
  assert.equal(renamed.name, 'Changed')
  assert.equal(renamed.desc, 'Now with a description')
  assert.equal(renamed.due, card.due, 'untouched fields stay')
  const moved = await ok('update_card', { idCard: card.id, idList: doing, pos: 'top', due: null })
  assert.equal(moved.idList, doing)
  assert.equal(moved.due, null)

  const updates = async () => (await tb('GET', `/1/cards/${card.id}/actions?filter=updateCard`)).length
  const before = await updates()
  await refused(
    'update_card',
    { idCard: card.id, idList: boardB.list },
    400,
    'LIST_NOT_ON_BOARD',
    /give idBoard as well/,
  )
  await refused('update_card', { idCard: card.id }, 400, 'VALIDATION_FAILED', /at least one field/)
  await refused(
    'update_card',
    { idCard: card.id, idBoard: boardB.id },
    400,
    'VALIDATION_FAILED',
    /input\.idList/,
  )
  await refused('update_card', { idCard: card.id, idLabels: [boardB.label] }, 400, 'LABEL_NOT_ON_BOARD')
  await refused(
    'update_card',
    { idCard: card.id, due: '31/12/2030 noon' },
    400,
    'VALIDATION_FAILED',
    /input\.due/,
  )
  await refused('update_card', { idCard: card.id, pos: 0 }, 400, 'VALIDATION_FAILED', /input\.pos/)
  // The refusals changed nothing upstream.
  assert.equal(await updates(), before)
  assert.equal((await tb('GET', `/1/cards/${card.id}`)).idList, doing)
  // Naming the other board moves the card there.
  const across = await ok('update_card', { idCard: card.id, idList: boardB.list, idBoard: boardB.id })
  assert.equal(across.idBoard, boardB.id)
  assert.equal(across.idList, boardB.list)
  await refused('update_card', { idCard: 'b'.repeat(24), name: 'x' }, 404, 'UPSTREAM_NOT_FOUND')
})

test('Get Card and Archive Card take a card page address, read through the API; Archive Card is idempotent', async () => {
  const card = await ok('create_card', { idList: todo, name: 'Archive me' })
  const raw = await tb('GET', `/1/cards/${card.id}`)
  // The address is read with the API (GET /1/cards/{shortLink}, two fields), not the web page.
  const pages = await countRequests(sandbox, '/c/')
  const apiReads = await countRequests(sandbox, `/1/cards/${raw.shortLink}?fields=id%2CidBoard`)
  const byPage = await ok('get_card', { idCard: raw.url })
  assert.equal(byPage.id, card.id)
  assert.equal(await pages.count(), 0)
  assert.equal(await apiReads.count(), 1)
  await pages.stop()
  const archived = await ok('archive_card', { idCard: raw.shortUrl })
  assert.equal(archived.closed, true)
  const again = await ok('archive_card', { idCard: card.id })
  assert.equal(again.closed, true)
  const back = await ok('update_card', { idCard: card.id, closed: false })
  assert.equal(back.closed, false)

  await refused(
    'get_card',
    { idCard: 'not-an-id' },
    400,
    'VALIDATION_FAILED',
    /input\.idCard: must be a card identifier/,
  )
  await refused('get_card', { idCard: 'a'.repeat(24) }, 404, 'UPSTREAM_NOT_FOUND')
  await refused(
    'get_card',
    { idCard: 'https://elsewhere.example/c/AbCd1234/1-x' },
    400,
    'PAGE_ADDRESS_INVALID',
    /input\.idCard: .* is not a Task-Board page address/,
  )
  const boardPage = (await tb('GET', `/1/boards/${sandbox.demo.boardId}`)).url
  await refused(
    'get_card',
    { idCard: boardPage },
    400,
    'PAGE_ADDRESS_INVALID',
    /not the page address of a card/,
  )
  await refused(
    'get_card',
    { idCard: `${sandbox.webUrl}/c/ZZZZZZZZ/1-missing` },
    404,
    'PAGE_ADDRESS_UNRESOLVED',
  )
})

test('Get List Cards pages through a list top first; filter closed lists archived cards', async () => {
  const list = await ok('create_list', { idBoard: sandbox.demo.boardId, name: 'Paged' })
  for (const name of ['one', 'two', 'three', 'four', 'five'])
    await ok('create_card', { idList: list.id, name })
  const first = await ok('get_list_cards', { idList: list.id, limit: 2 })
  assert.deepEqual(
    first.cards.map((c: any) => c.name),
    ['one', 'two'],
  )
  assert.ok(first.next)
  const second = await ok('get_list_cards', { idList: list.id, limit: 2, after: first.next })
  assert.deepEqual(
    second.cards.map((c: any) => c.name),
    ['three', 'four'],
  )
  const last = await ok('get_list_cards', { idList: list.id, limit: 2, after: second.next })
  assert.deepEqual(
    last.cards.map((c: any) => c.name),
    ['five'],
  )
  assert.equal(last.next, null)
  await ok('archive_card', { idCard: first.cards[0].id })
  const closed = await ok('get_list_cards', { idList: list.id, filter: 'closed' })
  assert.deepEqual(
    closed.cards.map((c: any) => c.name),
    ['one'],
  )
  await refused('get_list_cards', { idList: list.id, limit: 0 }, 400, 'VALIDATION_FAILED', /input\.limit/)
  await refused(
    'get_list_cards',
    { idList: list.id, after: 'page-2' },
    400,
    'VALIDATION_FAILED',
    /input\.after/,
  )
})

test('Create List takes a board page address and makes a list Create Card can use', async () => {
  const list = await ok('create_list', { idBoard: boardB.url, name: 'From the page address', pos: 'top' })
  assert.equal(list.idBoard, boardB.id)
  const card = await ok('create_card', { idList: list.id, name: 'On the new list' })
  assert.equal(card.idBoard, boardB.id)
  await refused(
    'create_list',
    { idBoard: sandbox.demo.boardId, name: '' },
    400,
    'VALIDATION_FAILED',
    /input\.name/,
  )
})

test('Get Boards lists every board the account reaches, a page at a time; an agent sees only its scope', async () => {
  const all = await ok('get_boards', {})
  const ids = all.boards.map((b: any) => b.id)
  assert.ok(ids.includes(sandbox.demo.boardId) && ids.includes(boardB.id))
  assert.ok(all.boards.every((b: any) => typeof b.url === 'string' && b.closed === false))
  const first = await ok('get_boards', { limit: 1 })
  assert.equal(first.boards.length, 1)
  const rest = await ok('get_boards', { limit: 1000, after: first.next })
  assert.equal(rest.boards.length, all.boards.length - 1)

  const agent = await t.api('POST', '/v1/agents', {
    name: 'board reader',
    scope: { boards: [boardB.id] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  const key = (await t.api('POST', `/v1/agents/${agent.body.id}/keys`, {})).body.key
  const scoped = await ok('get_boards', {}, { key })
  assert.deepEqual(
    scoped.boards.map((b: any) => b.id),
    [boardB.id],
  )
  assert.equal(scoped.next, null, 'no cursor names a board outside the scope')
  // The same agent is refused a step on a board outside its scope.
  const denied = await run('create_list', { idBoard: sandbox.demo.boardId, name: 'x' }, { key })
  assert.equal(denied.body.error.code, 'SCOPE_DENIED')
})

test('Add Comment to Card posts a comment; Add Comment (legacy) keeps the older card_id/comment shape', async () => {
  const card = await ok('create_card', { idList: todo, name: 'Discuss' })
  const c = await ok('add_comment_to_card', { idCard: card.id, text: 'First!' })
  assert.equal(c.text, 'First!')
  assert.equal(c.idCard, card.id)
  assert.equal(c.author, 'demo')
  const legacy = await ok('add_comment', { card_id: card.id, comment: 'Second, the old way' })
  assert.equal(legacy.text, 'Second, the old way')
  const comments = await tb('GET', `/1/cards/${card.id}/actions?filter=commentCard`)
  assert.deepEqual(comments.map((a: any) => a.data.text).sort(), ['First!', 'Second, the old way'])
  await refused(
    'add_comment',
    { idCard: card.id, text: 'new shape' },
    400,
    'VALIDATION_FAILED',
    /input\.idCard: is not an argument here \(the arguments are: card_id, comment\)/,
  )
  await refused('add_comment_to_card', { idCard: card.id, text: '' }, 400, 'VALIDATION_FAILED', /input\.text/)
  await refused('add_comment_to_card', { idCard: 'c'.repeat(24), text: 'x' }, 404, 'UPSTREAM_NOT_FOUND')
})

test('Add Checklist and Create a Checklist Item', async () => {
  const card = await ok('create_card', { idList: todo, name: 'Release' })
  const checklist = await ok('add_checklist', { idCard: card.id, name: 'Steps' })
  assert.equal(checklist.idCard, card.id)
  assert.deepEqual(checklist.checkItems, [])
  const item = await ok('create_checklist_item', { idChecklist: checklist.id, name: 'Tag it', checked: true })
  assert.equal(item.state, 'complete')
  const second = await ok('create_checklist_item', {
    idChecklist: checklist.id,
    name: 'Announce',
    pos: 'top',
  })
  assert.equal(second.state, 'incomplete')
  assert.ok(second.pos < item.pos)
  const upstream = await tb('GET', `/1/checklists/${checklist.id}`)
  assert.deepEqual(
    upstream.checkItems.map((i: any) => i.name),
    ['Announce', 'Tag it'],
  )
  await refused(
    'create_checklist_item',
    { idChecklist: 'nope', name: 'x' },
    400,
    'VALIDATION_FAILED',
    /input\.idChecklist/,
  )
  await refused(
    'create_checklist_item',
    { idChecklist: 'd'.repeat(24), name: 'x' },
    404,
    'UPSTREAM_NOT_FOUND',
  )
  await refused('add_checklist', { idCard: card.id }, 400, 'VALIDATION_FAILED', /input\.name/)
})

test('a token without write access is UPSTREAM_FORBIDDEN and the connection stays active', async () => {
  const readOnly = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: await mintDemoToken(sandbox, 'read') },
    })
  ).body.id
  const res = await run('create_card', { idList: todo, name: 'Not allowed' }, { conn: readOnly })
  assert.equal(res.status, 403)
  assert.equal(res.body.error.code, 'UPSTREAM_FORBIDDEN')
  assert.match(res.body.error.message, /unauthorized permission requested/)
  assert.equal((await t.api('GET', `/v1/connections/${readOnly}`)).body.status, 'active')
  // Reading still works.
  assert.equal((await run('get_boards', {}, { conn: readOnly })).status, 200)
})

test('an expired token lapses the connection: CONNECTION_LAPSED, then refused before anything is sent', async () => {
  const token = await control(sandbox, 'POST', '/tokens', {
    member: 'demo',
    key: sandbox.demo.key,
    scope: 'read,write',
    expiration: '1hour',
  })
  const conn = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: token.token },
    })
  ).body.id
  assert.equal((await run('get_boards', {}, { conn })).status, 200)
  await control(sandbox, 'POST', '/clock', { advanceMs: 2 * 3600_000 })
  const res = await run('get_boards', {}, { conn })
  assert.equal(res.status, 409)
  assert.equal(res.body.error.code, 'CONNECTION_LAPSED')
  assert.ok(!JSON.stringify(res.body).includes(token.token))
  const view = (await t.api('GET', `/v1/connections/${conn}`)).body
  assert.equal(view.status, 'lapsed')
  const again = await run('get_boards', {}, { conn })
  assert.equal(again.body.error.code, 'CONNECTION_LAPSED')
  assert.match(again.body.error.hint, /reconnect/i)
})
