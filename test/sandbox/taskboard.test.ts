// The task-board emulator over real HTTP: auth, every resource, actions and notifications, the
// token page, OAuth 1.0a (signed by an implementation written here), webhooks, rate limits,
// faults and the control API.
import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import http from 'node:http'
import { after, before, beforeEach, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'

let sb: TaskboardSandbox
before(async () => {
  sb = await startTaskboardSandbox()
})
after(() => sb.close())
beforeEach(async () => {
  await control('POST', '/reset')
  await control('POST', '/webhooks/retry-delay-scale', { scale: 0.0001 })
})

// ---- helpers ---------------------------------------------------------------------------------

interface Res {
  status: number
  text: string
  json: any
  headers: Headers
}

async function read(res: Response): Promise<Res> {
  const text = await res.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, text, json, headers: res.headers }
}

interface CallOpts {
  key?: string | null
  token?: string | null
  query?: Record<string, string>
  json?: unknown
  form?: Record<string, string>
  headers?: Record<string, string>
  base?: string
}

async function api(method: string, path: string, opts: CallOpts = {}): Promise<Res> {
  const u = new URL((opts.base ?? sb.url) + path)
  const key = opts.key === undefined ? sb.demo.key : opts.key
  const token = opts.token === undefined ? sb.demo.token : opts.token
  if (key !== null) u.searchParams.set('key', key)
  if (token !== null) u.searchParams.set('token', token)
  for (const [k, v] of Object.entries(opts.query ?? {})) u.searchParams.set(k, v)
  const headers: Record<string, string> = { ...opts.headers }
  let body: string | undefined
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json)
    headers['content-type'] = 'application/json'
  } else if (opts.form) {
    body = new URLSearchParams(opts.form).toString()
    headers['content-type'] = 'application/x-www-form-urlencoded'
  }
  return read(await fetch(u, { method, headers, body }))
}

async function control(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${sb.url}/_sandbox${path}`, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const r = await read(res)
  if (res.status >= 400) throw new Error(`control ${method} ${path}: ${res.status} ${r.text}`)
  return r.json
}

async function controlRaw(method: string, path: string, body?: unknown): Promise<Res> {
  return read(
    await fetch(`${sb.url}/_sandbox${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    }),
  )
}

async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 20_000,
): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await probe()
    if (v) return v
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 10))
  }
}

async function demoLists() {
  return (await api('GET', `/1/boards/${sb.demo.boardId}/lists`)).json as any[]
}

async function demoCards() {
  return (await api('GET', `/1/boards/${sb.demo.boardId}/cards`)).json as any[]
}

async function cardNamed(name: string) {
  return (await demoCards()).find((c) => c.name === name)
}

async function newCard(name: string, extra: Record<string, unknown> = {}) {
  const r = await api('POST', '/1/cards', { json: { idList: sb.demo.listIds[0], name, ...extra } })
  assert.equal(r.status, 200, r.text)
  return r.json
}

async function teammateId(): Promise<string> {
  return (await api('GET', '/1/members/teammate')).json.id
}

interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** A local webhook receiver; `respond` picks each POST's status (HEAD checks get 200 unless told). */
async function receiver(
  respond: (r: Received, postIndex: number) => number | 'hang' | Promise<number | 'hang'> = () => 200,
  headStatus = 200,
) {
  const got: Received[] = []
  let posts = 0
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => {
      body += c
    })
    req.on('end', async () => {
      const r: Received = { method: req.method!, url: req.url!, headers: req.headers, body }
      got.push(r)
      const status = req.method === 'HEAD' ? headStatus : await respond(r, posts++)
      if (status === 'hang') return
      res.statusCode = status
      res.end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    posts: () => got.filter((r) => r.method === 'POST'),
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((r) => server.close(() => r()))
    },
  }
}

async function createWebhook(callbackURL: string, idModel: string, token = sb.demo.token) {
  const r = await api('POST', '/1/webhooks', { token, json: { callbackURL, idModel, description: 'test' } })
  assert.equal(r.status, 200, r.text)
  return r.json
}

async function deliveries(hookId: string) {
  return (await control('GET', `/webhooks/deliveries?hookId=${hookId}`)).deliveries as any[]
}

// An OAuth 1.0a signer written for these tests, independent of the emulator's.
const enc = (s: string) =>
  encodeURIComponent(s).replace(/[!*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

function oauthHeader(
  method: string,
  url: string,
  creds: { key: string; secret: string; token?: string; tokenSecret?: string },
  extra: Record<string, string> = {},
  formBody: Record<string, string> = {},
): string {
  const oauth: Record<string, string> = {
    oauth_consumer_key: creds.key,
    oauth_nonce: randomBytes(12).toString('hex'),
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(Math.floor(Date.now() / 1000)),
    oauth_version: '1.0',
    ...(creds.token ? { oauth_token: creds.token } : {}),
    ...extra,
  }
  const u = new URL(url)
  const pairs = [...Object.entries(oauth), ...u.searchParams.entries(), ...Object.entries(formBody)]
    .map(([k, v]) => `${enc(k)}=${enc(v)}`)
    .sort()
  const base = [method, enc(`${u.protocol}//${u.host}${u.pathname}`), enc(pairs.join('&'))].join('&')
  const signature = createHmac('sha1', `${enc(creds.secret)}&${enc(creds.tokenSecret ?? '')}`)
    .update(base)
    .digest('base64')
  return `OAuth ${Object.entries({ ...oauth, oauth_signature: signature })
    .map(([k, v]) => `${k}="${enc(v)}"`)
    .join(', ')}`
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** The hidden fields and action of the login-and-approve form, as a browser would read them. */
function readForm(html: string): { action: string; fields: Record<string, string> } {
  const action = unescapeHtml(/<form method="POST" action="([^"]+)"/.exec(html)![1]!)
  const fields: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[unescapeHtml(m[1]!)] = unescapeHtml(m[2]!)
  }
  return { action, fields }
}

async function submitForm(action: string, fields: Record<string, string>) {
  const res = await fetch(new URL(action, sb.authUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  })
  return { res, text: await res.text() }
}

// ---- demo account ----------------------------------------------------------------------------

test('demo credentials and seeded ids are the same on every start and after a reset', async () => {
  assert.match(sb.demo.key, /^[0-9a-f]{32}$/)
  assert.match(sb.demo.token, /^[0-9a-f]{64}$/)
  assert.equal(sb.demo.username, 'demo')
  assert.equal(sb.demo.fullName, 'Demo User')
  assert.equal(sb.demo.listIds.length, 3)
  const other = await startTaskboardSandbox()
  try {
    assert.deepEqual(other.demo, sb.demo)
  } finally {
    await other.close()
  }
  const lists = await demoLists()
  assert.deepEqual(
    lists.map((l) => l.name),
    ['To Do', 'Doing', 'Done'],
  )
  assert.deepEqual(
    lists.map((l) => l.id),
    sb.demo.listIds,
  )
  const cards = await demoCards()
  assert.ok(cards.length >= 2)
  assert.equal(sb.authUrl, sb.url)
  assert.equal(sb.webUrl, sb.url)
})

// ---- auth ------------------------------------------------------------------------------------

test('auth failures are plain-text 401/400/404 bodies', async () => {
  const noKey = await api('GET', '/1/members/me', { key: null })
  assert.equal(noKey.status, 401)
  assert.equal(noKey.text, 'invalid key')
  assert.match(noKey.headers.get('content-type')!, /^text\/plain/)
  assert.equal((await api('GET', '/1/members/me', { key: 'f'.repeat(32) })).text, 'invalid key')
  const badToken = await api('GET', '/1/members/me', { token: 'e'.repeat(64) })
  assert.equal(badToken.status, 401)
  assert.equal(badToken.text, 'invalid token')
  const noToken = await api('GET', '/1/members/me', { token: null })
  assert.equal(noToken.status, 401)
  assert.equal(noToken.text, 'unauthorized permission requested')
  const badId = await api('GET', '/1/cards/not-an-id')
  assert.equal(badId.status, 400)
  assert.equal(badId.text, 'invalid id')
  const missing = await api('GET', `/1/cards/${'a'.repeat(24)}`)
  assert.equal(missing.status, 404)
  assert.equal(missing.text, 'The requested resource was not found.')
  // A token works only with the key it was issued for.
  const otherApp = await control('POST', '/apps', { member: 'demo', name: 'Other' })
  assert.equal((await api('GET', '/1/members/me', { key: otherApp.key })).text, 'invalid token')
})

test('key and token are accepted in the OAuth header, a JSON body and a form body', async () => {
  const header = await api('GET', '/1/members/me', {
    key: null,
    token: null,
    headers: { authorization: `OAuth oauth_consumer_key="${sb.demo.key}", oauth_token="${sb.demo.token}"` },
  })
  assert.equal(header.status, 200)
  assert.equal(header.json.username, 'demo')
  const json = await api('POST', '/1/cards', {
    key: null,
    token: null,
    json: { key: sb.demo.key, token: sb.demo.token, idList: sb.demo.listIds[0], name: 'json creds' },
  })
  assert.equal(json.status, 200, json.text)
  const form = await api('POST', '/1/cards', {
    key: null,
    token: null,
    form: { key: sb.demo.key, token: sb.demo.token, idList: sb.demo.listIds[0], name: 'form creds' },
  })
  assert.equal(form.status, 200, form.text)
  assert.equal(form.json.name, 'form creds')
  // Parameters in the query string count too, as the real API takes them.
  const query = await api('POST', '/1/cards', { query: { idList: sb.demo.listIds[0], name: 'query params' } })
  assert.equal(query.json.name, 'query params')
})

test("a member cannot reach another member's private board; a public one is readable", async () => {
  const outsider = await control('POST', '/members', { username: 'outsider' })
  const { token } = await control('POST', '/tokens', { member: outsider.id, key: sb.demo.key })
  const r = await api('GET', `/1/boards/${sb.demo.boardId}`, { token })
  assert.equal(r.status, 401)
  assert.equal(r.text, 'unauthorized permission requested')
  const card = (await demoCards())[0]
  assert.equal((await api('GET', `/1/cards/${card.id}`, { token })).status, 401)
  assert.equal((await api('GET', `/1/lists/${sb.demo.listIds[0]}`, { token })).status, 401)
  const created = await api('POST', '/1/cards', { token, json: { idList: sb.demo.listIds[0], name: 'x' } })
  assert.equal(created.status, 401)
  assert.equal((await api('GET', '/1/members/me/boards', { token })).json.length, 0)

  const pub = await api('POST', '/1/boards', { json: { name: 'Open', prefs_permissionLevel: 'public' } })
  assert.equal(pub.json.prefs.permissionLevel, 'public')
  assert.equal((await api('GET', `/1/boards/${pub.json.id}`, { token })).status, 200)
  const lists = (await api('GET', `/1/boards/${pub.json.id}/lists`, { token })).json
  const write = await api('POST', '/1/cards', { token, json: { idList: lists[0].id, name: 'no' } })
  assert.equal(write.status, 401)
})

test('scopes: a read token cannot write; marking notifications read needs account', async () => {
  const { token } = await control('POST', '/tokens', { member: 'demo', scope: 'read' })
  assert.equal((await api('GET', '/1/members/me', { token })).status, 200)
  const w = await api('POST', '/1/cards', { token, json: { idList: sb.demo.listIds[0], name: 'x' } })
  assert.equal(w.status, 401)
  assert.equal(w.text, 'unauthorized permission requested')
  const card = (await demoCards())[0]
  assert.equal((await api('PUT', `/1/cards/${card.id}`, { token, json: { name: 'y' } })).status, 401)
  assert.equal((await api('DELETE', `/1/cards/${card.id}`, { token })).status, 401)

  await control('POST', '/act', {
    as: 'teammate',
    type: 'comment',
    id: (await cardNamed('Write the docs')).id,
    text: 'hi',
  })
  const rw = (await control('POST', '/tokens', { member: 'demo', scope: 'read,write' })).token
  const n = (await api('GET', '/1/members/me/notifications', { token: rw })).json[0]
  assert.equal(
    (await api('PUT', `/1/notifications/${n.id}`, { token: rw, json: { unread: false } })).status,
    401,
  )
  const full = (await control('POST', '/tokens', { member: 'demo', scope: 'read,write,account' })).token
  const ok = await api('PUT', `/1/notifications/${n.id}`, { token: full, json: { unread: false } })
  assert.equal(ok.status, 200)
  assert.equal(ok.json.unread, false)
})

test('tokens expire on the sandbox clock for each expiration; never does not', async () => {
  const hours: Record<string, number> = { '1hour': 1, '1day': 24, '30days': 24 * 30 }
  for (const [expiration, h] of Object.entries(hours)) {
    await control('POST', '/reset')
    const t = await control('POST', '/tokens', { member: 'demo', expiration })
    assert.ok(t.dateExpires)
    await control('POST', '/clock', { advanceMs: h * 3600_000 - 60_000 })
    assert.equal((await api('GET', '/1/members/me', { token: t.token })).status, 200, expiration)
    await control('POST', '/clock', { advanceMs: 120_000 })
    const r = await api('GET', '/1/members/me', { token: t.token })
    assert.equal(r.status, 401, expiration)
    assert.equal(r.text, 'invalid token')
  }
  const forever = await control('POST', '/tokens', { member: 'demo', expiration: 'never' })
  assert.equal(forever.dateExpires, null)
  await control('POST', '/clock', { advanceMs: 3650 * 86_400_000 })
  assert.equal((await api('GET', '/1/members/me', { token: forever.token })).status, 200)
  const info = await api('GET', `/1/tokens/${forever.token}`, { token: forever.token })
  assert.equal(info.json.dateExpires, null)
  assert.equal(info.json.permissions.find((p: any) => p.modelType === 'Board').write, true)
})

// ---- members and boards --------------------------------------------------------------------

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
  assert.deepEqual(actions[0].memberCreator, {
    id: sb.demo.memberId,
    username: 'demo',
    fullName: 'Demo User',
  })

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

// ---- notifications ---------------------------------------------------------------------------

test("notifications: another member's comment, move and add reach the demo member; filters and marking read", async () => {
  const docs = await cardNamed('Write the docs')
  assert.ok(docs.idMembers.includes(sb.demo.memberId))
  await control('POST', '/act', { as: 'teammate', type: 'comment', id: docs.id, text: 'Looks good' })
  await control('POST', '/act', { as: 'teammate', type: 'moveCard', id: docs.id, idList: sb.demo.listIds[2] })
  const welcome = await cardNamed('Set up the board')
  await control('POST', '/act', {
    as: 'teammate',
    type: 'addMemberToCard',
    id: welcome.id,
    value: sb.demo.memberId,
  })
  await control('POST', '/act', { as: 'teammate', type: 'comment', id: welcome.id, text: 'ping @demo' })

  const all = (await api('GET', '/1/members/me/notifications')).json
  assert.deepEqual(
    all.map((n: any) => n.type),
    ['mentionedOnCard', 'addedToCard', 'changeCard', 'commentCard'],
  )
  const comment = all[3]
  assert.deepEqual(Object.keys(comment).sort(), [
    'data',
    'date',
    'id',
    'idAction',
    'idMemberCreator',
    'type',
    'unread',
  ])
  assert.equal(comment.unread, true)
  assert.equal(comment.data.text, 'Looks good')
  assert.equal(comment.data.card.id, docs.id)
  assert.equal(comment.data.board.id, sb.demo.boardId)
  assert.equal(comment.data.list.name, 'Doing')
  assert.equal(comment.idMemberCreator, await teammateId())
  assert.equal(all[2].data.listAfter.name, 'Done')

  // One's own changes do not notify oneself.
  await api('POST', `/1/cards/${docs.id}/actions/comments`, { json: { text: 'self' } })
  assert.equal((await api('GET', '/1/members/me/notifications')).json.length, 4)

  const marked = await api('PUT', `/1/notifications/${comment.id}`, { json: { unread: false } })
  assert.equal(marked.json.unread, false)
  const unread = (await api('GET', '/1/members/me/notifications', { query: { read_filter: 'unread' } })).json
  assert.equal(unread.length, 3)
  const read = (await api('GET', '/1/members/me/notifications', { query: { read_filter: 'read' } })).json
  assert.deepEqual(
    read.map((n: any) => n.id),
    [comment.id],
  )
  const since = (await api('GET', '/1/members/me/notifications', { query: { since: all[2].id } })).json
  assert.deepEqual(
    since.map((n: any) => n.id),
    [all[0].id, all[1].id],
  )
  assert.equal((await api('GET', '/1/members/me/notifications', { query: { limit: '1' } })).json.length, 1)
  assert.equal(
    (await api('GET', '/1/members/me/notifications', { query: { read_filter: 'some' } })).text,
    'invalid value for read_filter',
  )
  const foreign = await api('GET', `/1/notifications/${comment.id}`, {
    token: (await control('GET', '/state')).tokens[1].token,
  })
  assert.equal(foreign.status, 401)
})

// ---- page addresses --------------------------------------------------------------------------

test('page addresses: .json returns the data with auth; without auth a private board is refused', async () => {
  const board = (await api('GET', `/1/boards/${sb.demo.boardId}`)).json
  assert.ok(board.url.startsWith(`${sb.webUrl}/b/`))
  const data = await api('GET', '', { base: `${board.url}.json` })
  assert.equal(data.status, 200, data.text)
  assert.equal(data.json.id, sb.demo.boardId)
  assert.equal(data.json.lists.length, 3)
  assert.ok(data.json.cards.length >= 2)
  assert.ok(Array.isArray(data.json.actions))
  const anon = await api('GET', '', { base: `${board.url}.json`, key: null, token: null })
  assert.equal(anon.status, 401)
  assert.equal(anon.text, 'unauthorized permission requested')
  assert.equal((await api('GET', '', { base: `${board.shortUrl}.json` })).json.id, sb.demo.boardId)
  const html = await api('GET', '', { base: board.url, key: null, token: null })
  assert.match(html.headers.get('content-type')!, /text\/html/)
  assert.match(html.text, /Demo Board/)

  const card = (await demoCards())[0]
  const cardData = await api('GET', '', { base: `${card.url}.json` })
  assert.equal(cardData.json.id, card.id)
  assert.ok(Array.isArray(cardData.json.checklists))
  assert.equal((await api('GET', '', { base: `${sb.webUrl}/c/ZZZZZZZZ/1-x.json` })).status, 404)
})

// ---- token page ------------------------------------------------------------------------------

test('token page: log in, approve, token returned in the return_url fragment; expiration honoured', async () => {
  const q = new URLSearchParams({
    key: sb.demo.key,
    name: 'Patchbay',
    expiration: '1hour',
    scope: 'read,write',
    response_type: 'token',
    return_url: 'http://localhost:9999/done',
    callback_method: 'fragment',
  })
  const page = await fetch(`${sb.authUrl}/1/authorize?${q}`)
  assert.equal(page.status, 200)
  const html = await page.text()
  assert.match(html, /Let Patchbay use your account\?/)
  const { action, fields } = readForm(html)
  assert.equal(fields.return_url, 'http://localhost:9999/done')

  const wrong = await submitForm(action, { ...fields, username: 'demo', password: 'nope', approve: 'Allow' })
  assert.equal(wrong.res.status, 401)
  assert.match(wrong.text, /Invalid username or password/)

  const ok = await submitForm(action, { ...fields, username: 'demo', password: 'demo', approve: 'Allow' })
  assert.equal(ok.res.status, 302)
  const location = new URL(ok.res.headers.get('location')!)
  assert.equal(`${location.origin}${location.pathname}`, 'http://localhost:9999/done')
  const token = /^#token=([0-9a-f]{64})$/.exec(location.hash)![1]!
  const me = await api('GET', '/1/members/me', { token })
  assert.equal(me.json.username, 'demo')
  assert.equal(
    (await api('POST', '/1/cards', { token, json: { idList: sb.demo.listIds[0], name: 'w' } })).status,
    200,
  )
  await control('POST', '/clock', { advanceMs: 3600_000 + 1000 })
  assert.equal((await api('GET', '/1/members/me', { token })).text, 'invalid token')

  const denied = await submitForm(action, { ...fields, approve: 'Deny' })
  assert.equal(denied.res.status, 302)
  assert.equal(new URL(denied.res.headers.get('location')!).hash, '#error=access_denied')
})

test('token page: without return_url the token is shown; postMessage; never expires; bad key', async () => {
  for (const expiration of ['1day', '30days', 'never']) {
    const q = new URLSearchParams({
      key: sb.demo.key,
      name: 'Agent',
      expiration,
      scope: 'read',
      response_type: 'token',
    })
    const { action, fields } = readForm(await (await fetch(`${sb.authUrl}/1/authorize?${q}`)).text())
    const shown = await submitForm(action, {
      ...fields,
      username: 'teammate',
      password: 'teammate',
      approve: 'Allow',
    })
    assert.equal(shown.res.status, 200)
    const token = /<pre id="token">([0-9a-f]{64})<\/pre>/.exec(shown.text)![1]!
    const info = (await api('GET', `/1/tokens/${token}`, { token })).json
    assert.equal(info.identifier, 'Agent')
    if (expiration === 'never') assert.equal(info.dateExpires, null)
    else {
      const ms = Date.parse(info.dateExpires) - Date.parse(info.dateCreated)
      assert.equal(ms, expiration === '1day' ? 86_400_000 : 30 * 86_400_000)
    }
    // A read-only token from the page cannot write.
    assert.equal((await api('POST', '/1/boards', { token, json: { name: 'x' } })).status, 401)
  }
  const pm = new URLSearchParams({
    key: sb.demo.key,
    expiration: 'never',
    scope: 'read,write,account',
    response_type: 'token',
    return_url: 'https://app.example',
    callback_method: 'postMessage',
  })
  const { action, fields } = readForm(await (await fetch(`${sb.authUrl}/1/authorize?${pm}`)).text())
  const posted = await submitForm(action, { ...fields, username: 'demo', password: 'demo', approve: 'Allow' })
  assert.equal(posted.res.status, 200)
  assert.match(posted.text, /window\.opener\.postMessage\("[0-9a-f]{64}", "https:\/\/app\.example"\)/)

  const badKey = await fetch(`${sb.authUrl}/1/authorize?key=${'0'.repeat(32)}&scope=read`)
  assert.equal(badKey.status, 401)
  assert.equal(await badKey.text(), 'invalid key')
  const badExp = await fetch(`${sb.authUrl}/1/authorize?key=${sb.demo.key}&expiration=forever`)
  assert.equal(await badExp.text(), 'invalid value for expiration')
})

// ---- OAuth 1.0a ------------------------------------------------------------------------------

test('OAuth 1.0a: request token, approve page, access token, then signed and unsigned API calls', async () => {
  const app = { key: sb.demo.key, secret: sb.demo.secret }
  const reqUrl = `${sb.authUrl}/1/OAuthGetRequestToken`
  const callback = 'http://localhost:7777/oauth/callback?state=abc'

  const forged = await fetch(reqUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader('POST', reqUrl, { ...app, secret: 'wrong' }, { oauth_callback: callback }),
    },
  })
  assert.equal(forged.status, 401)
  assert.equal(await forged.text(), 'invalid signature')

  const rtRes = await fetch(reqUrl, {
    method: 'POST',
    headers: { authorization: oauthHeader('POST', reqUrl, app, { oauth_callback: callback }) },
  })
  assert.equal(rtRes.status, 200)
  const rt = new URLSearchParams(await rtRes.text())
  assert.equal(rt.get('oauth_callback_confirmed'), 'true')
  const requestToken = rt.get('oauth_token')!
  const requestSecret = rt.get('oauth_token_secret')!

  const authorize = new URLSearchParams({
    oauth_token: requestToken,
    name: 'Patchbay',
    scope: 'read,write',
    expiration: '1day',
  })
  const page = await fetch(`${sb.authUrl}/1/OAuthAuthorizeToken?${authorize}`)
  assert.equal(page.status, 200)
  const { action, fields } = readForm(await page.text())
  const approved = await submitForm(action, {
    ...fields,
    username: 'demo',
    password: 'demo',
    approve: 'Allow',
  })
  assert.equal(approved.res.status, 302)
  const back = new URL(approved.res.headers.get('location')!)
  assert.equal(back.searchParams.get('state'), 'abc')
  assert.equal(back.searchParams.get('oauth_token'), requestToken)
  const verifier = back.searchParams.get('oauth_verifier')!

  const accUrl = `${sb.authUrl}/1/OAuthGetAccessToken`
  const wrongVerifier = await fetch(accUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        accUrl,
        { ...app, token: requestToken, tokenSecret: requestSecret },
        { oauth_verifier: 'nope' },
      ),
    },
  })
  assert.equal(wrongVerifier.status, 401)
  const acc = await fetch(accUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        accUrl,
        { ...app, token: requestToken, tokenSecret: requestSecret },
        { oauth_verifier: verifier },
      ),
    },
  })
  assert.equal(acc.status, 200)
  const at = new URLSearchParams(await acc.text())
  const accessToken = at.get('oauth_token')!
  const accessSecret = at.get('oauth_token_secret')!
  assert.ok(accessToken && accessSecret)

  // Usable as a plain token...
  assert.equal((await api('GET', '/1/members/me', { token: accessToken })).json.username, 'demo')
  // ...and in a signed request, with a signed form body.
  const cardsUrl = `${sb.url}/1/cards`
  const form = { idList: sb.demo.listIds[0], name: 'Signed card' }
  const signed = await fetch(cardsUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        cardsUrl,
        { ...app, token: accessToken, tokenSecret: accessSecret },
        {},
        form,
      ),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(form).toString(),
  })
  assert.equal(signed.status, 200, await signed.clone().text())
  assert.equal((await signed.json()).name, 'Signed card')
  const meUrl = `${sb.url}/1/members/me?fields=username`
  const badSig = await fetch(meUrl, {
    headers: {
      authorization: oauthHeader('GET', meUrl, { ...app, token: accessToken, tokenSecret: 'not-it' }),
    },
  })
  assert.equal(badSig.status, 401)
  assert.equal(await badSig.text(), 'invalid signature')
  const goodSig = await fetch(meUrl, {
    headers: {
      authorization: oauthHeader('GET', meUrl, { ...app, token: accessToken, tokenSecret: accessSecret }),
    },
  })
  assert.equal(goodSig.status, 200)

  // The approved expiration applies, and the request token cannot be exchanged twice.
  const replay = await fetch(accUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        accUrl,
        { ...app, token: requestToken, tokenSecret: requestSecret },
        { oauth_verifier: verifier },
      ),
    },
  })
  assert.equal(replay.status, 401)
  await control('POST', '/clock', { advanceMs: 86_400_000 + 1000 })
  assert.equal((await api('GET', '/1/members/me', { token: accessToken })).text, 'invalid token')
})

test('OAuth 1.0a: read scope is enforced, and oob shows the verifier on the page', async () => {
  const app = { key: sb.demo.key, secret: sb.demo.secret }
  const reqUrl = `${sb.authUrl}/1/OAuthGetRequestToken`
  const rt = new URLSearchParams(
    await (
      await fetch(reqUrl, {
        method: 'POST',
        headers: { authorization: oauthHeader('POST', reqUrl, app, { oauth_callback: 'oob' }) },
      })
    ).text(),
  )
  const page = await fetch(
    `${sb.authUrl}/1/OAuthAuthorizeToken?oauth_token=${rt.get('oauth_token')}&scope=read`,
  )
  const { action, fields } = readForm(await page.text())
  const shown = await submitForm(action, { ...fields, username: 'demo', password: 'demo', approve: 'Allow' })
  const verifier = /<pre id="verifier">([0-9a-f]+)<\/pre>/.exec(shown.text)![1]!
  const accUrl = `${sb.authUrl}/1/OAuthGetAccessToken`
  const at = new URLSearchParams(
    await (
      await fetch(accUrl, {
        method: 'POST',
        headers: {
          authorization: oauthHeader(
            'POST',
            accUrl,
            { ...app, token: rt.get('oauth_token')!, tokenSecret: rt.get('oauth_token_secret')! },
            { oauth_verifier: verifier },
          ),
        },
      })
    ).text(),
  )
  const token = at.get('oauth_token')!
  assert.equal((await api('GET', '/1/members/me', { token })).status, 200)
  assert.equal(
    (await api('POST', '/1/boards', { token, json: { name: 'no' } })).text,
    'unauthorized permission requested',
  )
  const unknownConsumer = await fetch(reqUrl, {
    method: 'POST',
    headers: {
      authorization: oauthHeader(
        'POST',
        reqUrl,
        { key: '1'.repeat(32), secret: 'x' },
        { oauth_callback: 'oob' },
      ),
    },
  })
  assert.equal(await unknownConsumer.text(), 'invalid key')
})

// ---- webhooks --------------------------------------------------------------------------------

test('webhooks: HEAD check, duplicate refused, list, get, update, delete', async () => {
  const down = await receiver(() => 200, 404)
  try {
    const r = await api('POST', '/1/webhooks', { json: { callbackURL: down.url, idModel: sb.demo.boardId } })
    assert.equal(r.status, 400)
    assert.equal(r.text, 'URL (callbackURL) did not return 200 status code')
    assert.equal(down.got[0]!.method, 'HEAD')
  } finally {
    await down.close()
  }
  const unreachable = await api('POST', '/1/webhooks', {
    json: { callbackURL: 'http://127.0.0.1:1/x', idModel: sb.demo.boardId },
  })
  assert.equal(unreachable.status, 400)

  const rx = await receiver()
  try {
    const hook = await createWebhook(rx.url, sb.demo.boardId)
    assert.deepEqual(Object.keys(hook).sort(), [
      'active',
      'callbackURL',
      'consecutiveFailures',
      'description',
      'firstConsecutiveFailDate',
      'id',
      'idModel',
    ])
    assert.equal(hook.active, true)
    assert.equal(hook.consecutiveFailures, 0)
    assert.equal(hook.firstConsecutiveFailDate, null)
    const dup = await api('POST', `/1/tokens/${sb.demo.token}/webhooks`, {
      token: null,
      json: { callbackURL: rx.url, idModel: sb.demo.boardId },
    })
    assert.equal(dup.status, 400)
    assert.equal(dup.text, 'A webhook with that callback, model, and token already exists')
    assert.equal(
      (await api('POST', '/1/webhooks', { json: { callbackURL: rx.url, idModel: 'f'.repeat(24) } })).text,
      'invalid value for idModel',
    )
    assert.equal(
      (await api('POST', '/1/webhooks', { json: { callbackURL: 'ftp://x', idModel: sb.demo.boardId } })).text,
      'invalid value for callbackURL',
    )

    const viaToken = await api('POST', `/1/tokens/${sb.demo.token}/webhooks`, {
      json: { callbackURL: `${rx.url}?list`, idModel: sb.demo.listIds[0], description: 'list hook' },
    })
    assert.equal(viaToken.status, 200, viaToken.text)
    const listed = (await api('GET', `/1/tokens/${sb.demo.token}/webhooks`)).json
    assert.deepEqual(listed.map((h: any) => h.id).sort(), [hook.id, viaToken.json.id].sort())

    assert.equal((await api('GET', `/1/webhooks/${hook.id}`)).json.callbackURL, rx.url)
    const updated = await api('PUT', `/1/webhooks/${hook.id}`, {
      json: { description: 'renamed', active: false },
    })
    assert.equal(updated.json.description, 'renamed')
    assert.equal(updated.json.active, false)
    const mate = (await control('GET', '/state')).tokens[1].token
    assert.equal((await api('GET', `/1/webhooks/${hook.id}`, { token: mate })).status, 401)
    assert.deepEqual((await api('DELETE', `/1/webhooks/${hook.id}`)).json, { _value: null })
    assert.equal((await api('GET', `/1/webhooks/${hook.id}`)).status, 404)
  } finally {
    await rx.close()
  }
})

test('webhook deliveries are signed, carry action and model, and go out in action order', async () => {
  const rx = await receiver(async () => {
    // A slow receiver: order must hold even when each delivery takes a while.
    await new Promise((r) => setTimeout(r, 15))
    return 200
  })
  try {
    const hook = await createWebhook(rx.url, sb.demo.boardId)
    const card = await newCard('Hooked')
    for (let i = 1; i <= 4; i++)
      await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: `c${i}` } })
    await api('PUT', `/1/cards/${card.id}`, { json: { idList: sb.demo.listIds[1] } })
    const posts = await waitFor(() => (rx.posts().length >= 6 ? rx.posts() : undefined))
    const bodies = posts.map((p) => JSON.parse(p.body))
    assert.deepEqual(
      bodies.map((b) => b.action.type),
      ['createCard', 'commentCard', 'commentCard', 'commentCard', 'commentCard', 'updateCard'],
    )
    assert.deepEqual(
      bodies.slice(1, 5).map((b) => b.action.data.text),
      ['c1', 'c2', 'c3', 'c4'],
    )
    for (const p of posts) {
      const expected = createHmac('sha1', sb.demo.secret)
        .update(p.body + rx.url)
        .digest('base64')
      assert.equal(p.headers['x-taskboard-webhook'], expected)
      assert.match(String(p.headers['content-type']), /application\/json/)
    }
    const move = bodies[5]
    assert.equal(move.model.id, sb.demo.boardId)
    assert.equal(move.model.name, 'Demo Board')
    assert.equal(move.action.data.listAfter.id, sb.demo.listIds[1])
    assert.equal(move.action.memberCreator.username, 'demo')
    assert.equal(move.action.display.translationKey, 'action_move_card_from_list_to_list')
    const recorded = await waitFor(async () => {
      const list = await deliveries(hook.id)
      return list.every((d) => d.outcome !== 'pending') ? list : undefined
    })
    assert.equal(recorded.length, 6)
    assert.ok(recorded.every((d) => d.outcome === 'delivered'))
  } finally {
    await rx.close()
  }
})

test('webhook models: card, list and member webhooks hear only their own actions', async () => {
  const rxCard = await receiver()
  const rxList = await receiver()
  const rxMember = await receiver()
  try {
    const card = await newCard('Watched')
    const other = await newCard('Unwatched')
    await createWebhook(rxCard.url, card.id)
    await createWebhook(rxList.url, sb.demo.listIds[2])
    await createWebhook(rxMember.url, sb.demo.memberId)
    await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: 'on watched' } })
    await api('POST', `/1/cards/${other.id}/actions/comments`, { json: { text: 'on unwatched' } })
    await api('PUT', `/1/cards/${other.id}`, { json: { idList: sb.demo.listIds[2] } })
    const board = await api('POST', '/1/boards', { json: { name: 'Fresh' } })

    const cardPosts = await waitFor(() => (rxCard.posts().length >= 1 ? rxCard.posts() : undefined))
    const listPosts = await waitFor(() => (rxList.posts().length >= 1 ? rxList.posts() : undefined))
    const memberPosts = await waitFor(() => (rxMember.posts().length >= 4 ? rxMember.posts() : undefined))
    await new Promise((r) => setTimeout(r, 50))
    assert.deepEqual(
      rxCard.posts().map((p) => JSON.parse(p.body).action.data.text),
      ['on watched'],
    )
    assert.equal(JSON.parse(cardPosts[0]!.body).model.id, card.id)
    assert.deepEqual(
      rxList.posts().map((p) => JSON.parse(p.body).action.type),
      ['updateCard'],
    )
    assert.equal(JSON.parse(listPosts[0]!.body).model.id, sb.demo.listIds[2])
    const memberTypes = rxMember.posts().map((p) => JSON.parse(p.body).action.type)
    assert.deepEqual(memberTypes, ['commentCard', 'commentCard', 'updateCard', 'createBoard'])
    const createBoard = JSON.parse(memberPosts[3]!.body)
    assert.equal(createBoard.action.data.board.id, board.json.id)
    assert.equal(createBoard.model.username, 'demo')
  } finally {
    await Promise.all([rxCard.close(), rxList.close(), rxMember.close()])
  }
})

test('changes made through the control API as another member reach webhooks the same way', async () => {
  const rx = await receiver()
  try {
    await createWebhook(rx.url, sb.demo.boardId)
    const docs = await cardNamed('Write the docs')
    const acted = await control('POST', '/act', { as: 'teammate', type: 'archiveCard', id: docs.id })
    assert.equal(acted.result.closed, true)
    assert.equal(acted.actions[0].type, 'updateCard')
    const label = await control('POST', '/act', {
      as: 'teammate',
      type: 'createLabel',
      idBoard: sb.demo.boardId,
      name: 'Blocked',
      color: 'black',
    })
    assert.equal(label.result.name, 'Blocked')
    const posts = await waitFor(() => (rx.posts().length >= 2 ? rx.posts() : undefined))
    const [archive, create] = posts.map((p) => JSON.parse(p.body).action)
    assert.equal(archive.memberCreator.username, 'teammate')
    assert.equal(archive.data.card.closed, true)
    assert.deepEqual(archive.data.old, { closed: false })
    assert.equal(create.type, 'createLabel')
    const refused = await controlRaw('POST', '/act', {
      as: 'teammate',
      type: 'moveCard',
      id: docs.id,
      idList: 'zz',
    })
    assert.equal(refused.status, 400)
    assert.equal(refused.json.error, 'invalid value for idList')
  } finally {
    await rx.close()
  }
})

test('failed deliveries are retried 3 times; success resets failures, 410 Gone deletes the webhook', async () => {
  // Fails twice, then succeeds.
  const flaky = await receiver((_r, i) => (i < 2 ? 500 : 200))
  const broken = await receiver(() => 503)
  const gone = await receiver(() => 410)
  try {
    const h1 = await createWebhook(flaky.url, sb.demo.boardId)
    const h2 = await createWebhook(broken.url, sb.demo.boardId)
    const h3 = await createWebhook(gone.url, sb.demo.boardId)
    await newCard('Retry me')
    const d1 = await waitFor(async () => (await deliveries(h1.id)).find((d) => d.outcome !== 'pending'))
    assert.equal(d1.outcome, 'delivered')
    assert.deepEqual(
      d1.attempts.map((a: any) => a.status),
      [500, 500, 200],
    )
    const d2 = await waitFor(async () => (await deliveries(h2.id)).find((d) => d.outcome !== 'pending'))
    assert.equal(d2.outcome, 'failed')
    assert.equal(d2.attempts.length, 4)
    const failing = (await api('GET', `/1/webhooks/${h2.id}`)).json
    assert.equal(failing.consecutiveFailures, 1)
    assert.ok(failing.firstConsecutiveFailDate)
    assert.equal((await api('GET', `/1/webhooks/${h1.id}`)).json.consecutiveFailures, 0)
    const d3 = await waitFor(async () => (await deliveries(h3.id)).find((d) => d.outcome !== 'pending'))
    assert.equal(d3.outcome, 'gone')
    assert.equal(d3.attempts.length, 1)
    assert.equal((await api('GET', `/1/webhooks/${h3.id}`)).status, 404)
  } finally {
    await Promise.all([flaky.close(), broken.close(), gone.close()])
  }
})

test('closing the sandbox ends pending retries at once', async () => {
  const other = await startTaskboardSandbox()
  const rx = await receiver(() => 500)
  try {
    const hook = await api('POST', '/1/webhooks', {
      base: other.url,
      key: other.demo.key,
      token: other.demo.token,
      json: { callbackURL: rx.url, idModel: other.demo.boardId },
    })
    await api('POST', '/1/cards', {
      base: other.url,
      key: other.demo.key,
      token: other.demo.token,
      json: { idList: other.demo.listIds[0], name: 'never delivered' },
    })
    await waitFor(() => rx.posts().length >= 1)
    // The first retry is 30 s away (the delay scale is 1 on this instance).
    const record = other.emulator.webhooks.deliveries.find((d) => d.hookId === hook.json.id)!
    const t0 = Date.now()
    await other.close()
    // Well before the retry was due: closing ended it rather than waiting for it.
    await waitFor(() => record.outcome !== 'pending', 20_000)
    assert.equal(record.outcome, 'failed')
    assert.equal(record.attempts.length, 1)
    assert.ok(Date.now() - t0 < 20_000)
  } finally {
    await rx.close()
  }
})

test('a callback that does not answer in time counts as a failed attempt', async () => {
  // Long enough for the answering retry to make it on a loaded machine; the first never answers.
  await control('POST', '/webhooks/timeout', { ms: 1000 })
  const slow = await receiver((_r, i) => (i === 0 ? 'hang' : 200))
  try {
    const hook = await createWebhook(slow.url, sb.demo.boardId)
    await newCard('Slow')
    const d = await waitFor(async () => (await deliveries(hook.id)).find((x) => x.outcome !== 'pending'))
    assert.equal(d.outcome, 'delivered')
    assert.equal(d.attempts[0].error, 'timeout')
    assert.equal(d.attempts[1].status, 200)
  } finally {
    await slow.close()
  }
})

test('revoking or expiring a token deletes its webhooks', async () => {
  const rx = await receiver()
  try {
    const t1 = (await control('POST', '/tokens', { member: 'demo', expiration: 'never' })).token
    const t2 = (await control('POST', '/tokens', { member: 'demo', expiration: '1hour' })).token
    const h1 = await createWebhook(rx.url, sb.demo.boardId, t1)
    const h2 = await createWebhook(`${rx.url}?two`, sb.demo.boardId, t2)
    assert.equal((await api('GET', `/1/tokens/${t1}/webhooks`, { token: t1 })).json.length, 1)

    const revoked = await api('DELETE', `/1/tokens/${t1}`, { token: t1 })
    assert.equal(revoked.status, 200)
    assert.equal((await api('GET', '/1/members/me', { token: t1 })).text, 'invalid token')
    let state = await control('GET', '/state')
    assert.ok(!state.webhooks.some((w: any) => w.id === h1.id))
    assert.ok(state.webhooks.some((w: any) => w.id === h2.id))

    await control('POST', '/clock', { advanceMs: 3600_000 + 1 })
    await newCard('After expiry')
    state = await control('GET', '/state')
    assert.ok(!state.webhooks.some((w: any) => w.id === h2.id))
    await new Promise((r) => setTimeout(r, 50))
    assert.equal(rx.posts().length, 0)
  } finally {
    await rx.close()
  }
})

// ---- rate limits -----------------------------------------------------------------------------

test('rate limits per token and per key, with headers on every answer and a JSON 429', async () => {
  const ok = await api('GET', '/1/members/me')
  assert.equal(ok.headers.get('x-rate-limit-api-token-interval-ms'), '10000')
  assert.equal(ok.headers.get('x-rate-limit-api-token-max'), '100')
  assert.equal(ok.headers.get('x-rate-limit-api-token-remaining'), '99')
  assert.equal(ok.headers.get('x-rate-limit-api-key-max'), '300')
  assert.equal(ok.headers.get('x-rate-limit-api-key-remaining'), '299')
  assert.equal(ok.headers.get('x-rate-limit-api-key-interval-ms'), '10000')
  assert.ok((await api('GET', '/1/members/me', { key: null })).headers.get('x-rate-limit-api-token-max'))

  await control('POST', '/rate-limits', { tokenLimit: 3, keyLimit: 5, windowMs: 1000 })
  // The window's time stands still until advanced below, however slow the machine.
  await control('POST', '/clock', { freeze: true })
  const remaining = []
  for (let i = 0; i < 3; i++)
    remaining.push((await api('GET', '/1/members/me')).headers.get('x-rate-limit-api-token-remaining'))
  assert.deepEqual(remaining, ['2', '1', '0'])
  const over = await api('GET', '/1/members/me')
  assert.equal(over.status, 429)
  assert.deepEqual(over.json, { error: 'API_TOKEN_LIMIT_EXCEEDED', message: 'Rate limit exceeded' })
  assert.equal(over.headers.get('retry-after'), null)
  assert.equal(over.headers.get('x-rate-limit-api-token-remaining'), '0')
  assert.equal(over.headers.get('x-rate-limit-api-token-interval-ms'), '1000')

  const mate = (await control('GET', '/state')).tokens[1].token
  assert.equal((await api('GET', '/1/members/me', { token: mate })).status, 200)
  assert.equal((await api('GET', '/1/members/me', { token: mate })).status, 200)
  const keyOver = await api('GET', '/1/members/me', { token: mate })
  assert.equal(keyOver.status, 429)
  assert.equal(keyOver.json.error, 'API_KEY_LIMIT_EXCEEDED')
  assert.equal(keyOver.headers.get('x-rate-limit-api-key-remaining'), '0')

  await control('POST', '/clock', { advanceMs: 1000 })
  assert.equal((await api('GET', '/1/members/me')).status, 200)
})

// ---- faults, clock, robustness ---------------------------------------------------------------

test('faults: latency, injected errors, timeouts and dropped deliveries', async () => {
  await control('POST', '/faults', { latencyMs: 150, count: 1, pathPrefix: '/1/' })
  const t0 = performance.now()
  assert.equal((await api('GET', '/1/members/me')).status, 200)
  assert.ok(performance.now() - t0 >= 140)

  await control('POST', '/faults', { errorRate: 1, errorStatus: 503, count: 1 })
  const failed = await api('GET', '/1/members/me')
  assert.equal(failed.status, 503)
  assert.equal(failed.text, 'Injected fault')
  assert.equal((await api('GET', '/1/members/me')).status, 200)

  await control('POST', '/faults', { timeout: true, count: 1 })
  await assert.rejects(
    fetch(`${sb.url}/1/members/me?key=${sb.demo.key}&token=${sb.demo.token}`, {
      signal: AbortSignal.timeout(200),
    }),
  )
  assert.equal((await api('GET', '/1/members/me')).status, 200)

  const rx = await receiver()
  try {
    const hook = await createWebhook(rx.url, sb.demo.boardId)
    await control('POST', '/faults', { dropWebhooks: true, count: 1 })
    await newCard('Dropped')
    await newCard('Delivered')
    const ds = await waitFor(async () => {
      const list = await deliveries(hook.id)
      return list.length === 2 && list.every((d) => d.outcome !== 'pending') ? list : undefined
    })
    assert.deepEqual(
      ds.map((d) => d.outcome),
      ['dropped', 'delivered'],
    )
    assert.equal(rx.posts().length, 1)
    assert.equal(JSON.parse(rx.posts()[0]!.body).action.data.card.name, 'Delivered')
  } finally {
    await rx.close()
  }
})

test('clock: frozen time stamps new data; advancing moves it', async () => {
  const at = Date.parse('2030-06-01T12:00:00.000Z')
  await control('POST', '/clock', { freeze: true, atMs: at })
  const card = await newCard('Frozen')
  assert.equal(card.dateLastActivity, '2030-06-01T12:00:00.000Z')
  assert.equal(parseInt(card.id.slice(0, 8), 16), at / 1000)
  await control('POST', '/clock', { advanceMs: 60_000 })
  const c = await api('POST', `/1/cards/${card.id}/actions/comments`, { json: { text: 'later' } })
  assert.equal(c.json.date, '2030-06-01T12:01:00.000Z')
  assert.equal((await control('GET', '/clock')).frozen, true)
})

test('control API: members, apps, tokens, seed, act, state', async () => {
  const m = await control('POST', '/members', {
    username: 'alice',
    fullName: 'Alice Example',
    password: 'pw',
  })
  assert.match(m.id, /^[0-9a-f]{24}$/)
  assert.equal(m.password, 'pw')
  assert.equal((await controlRaw('POST', '/members', { username: 'alice' })).status, 409)
  const app = await control('POST', '/apps', { memberId: m.id, name: 'Alice app' })
  assert.match(app.key, /^[0-9a-f]{32}$/)
  assert.match(app.secret, /^[0-9a-f]{64}$/)
  const t = await control('POST', '/tokens', {
    memberId: m.id,
    key: app.key,
    scope: 'read,write',
    expiration: '1day',
  })
  assert.match(t.token, /^[0-9a-f]{64}$/)
  assert.equal(
    (await api('GET', '/1/members/me', { key: app.key, token: t.token })).json.fullName,
    'Alice Example',
  )

  const seeded = await control('POST', '/seed', {
    as: 'alice',
    boards: [
      {
        name: 'Sprint',
        members: ['demo'],
        labels: [{ name: 'P1', color: 'red' }],
        lists: [
          {
            name: 'Backlog',
            cards: [
              { name: 'A', labels: ['P1'], members: ['demo'], due: '2030-01-01T00:00:00Z' },
              { name: 'B' },
            ],
          },
          { name: 'Done', cards: [{ name: 'C', closed: true }] },
        ],
      },
    ],
  })
  const board = seeded.boards[0]
  assert.equal(board.lists.length, 2)
  const cards = (await api('GET', `/1/boards/${board.id}/cards`, { query: { filter: 'all' } })).json
  assert.deepEqual(cards.map((c: any) => c.name).sort(), ['A', 'B', 'C'])
  const a = cards.find((c: any) => c.name === 'A')
  assert.equal(a.labels[0].name, 'P1')
  assert.deepEqual(a.idMembers, [sb.demo.memberId])
  assert.equal(cards.find((c: any) => c.name === 'C').closed, true)
  // alice added demo to card A, so demo was notified.
  const notes = (await api('GET', '/1/members/me/notifications')).json
  assert.ok(notes.some((n: any) => n.type === 'addedToCard' && n.data.card.id === a.id))

  const moved = await control('POST', '/act', {
    as: 'alice',
    type: 'moveCard',
    id: a.id,
    idList: board.lists[1].id,
  })
  assert.equal(moved.result.idList, board.lists[1].id)
  assert.equal(moved.actions[0].data.listAfter.name, 'Done')
  const bad = await controlRaw('POST', '/act', { as: 'alice', type: 'fly' })
  assert.equal(bad.status, 400)
  const nobody = await controlRaw('POST', '/act', { as: 'ghost', type: 'comment' })
  assert.equal(nobody.status, 400)

  const limits = await control('POST', '/rate-limits', { tokenLimit: 7 })
  assert.equal(limits.tokenLimit, 7)
  const state = await control('GET', '/state')
  assert.ok(state.members.some((x: any) => x.username === 'alice'))
  assert.ok(state.boards.some((x: any) => x.name === 'Sprint'))
  assert.equal(state.rateLimits.tokenLimit, 7)
  assert.ok(state.actions > 0)
})

test('robustness: malformed JSON, unknown routes, wrong methods and oversized bodies', async () => {
  const malformed = await fetch(`${sb.url}/1/cards?key=${sb.demo.key}&token=${sb.demo.token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"idList": ',
  })
  assert.equal(malformed.status, 400)
  assert.match(malformed.headers.get('content-type')!, /text\/plain/)
  assert.equal((await api('GET', '/1/nothing/here')).status, 404)
  assert.equal((await api('PATCH', `/1/cards/${(await demoCards())[0].id}`, { json: {} })).status, 404)
  const huge = await fetch(`${sb.url}/1/cards?key=${sb.demo.key}&token=${sb.demo.token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ idList: sb.demo.listIds[0], name: 'x'.repeat(2 * 1024 * 1024) }),
  })
  assert.equal(huge.status, 413)
  const textBody = await fetch(
    `${sb.url}/1/cards?key=${sb.demo.key}&token=${sb.demo.token}&idList=${sb.demo.listIds[0]}`,
    {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    },
  )
  assert.equal(textBody.status, 200)
  const arrayBody = await api('POST', '/1/cards', { json: [1, 2, 3] })
  assert.equal(arrayBody.text, 'invalid value for idList')
  assert.equal((await api('GET', '/1/members/me')).status, 200, 'still alive')
})
