// The lists that did not page page as every other list does (`limit` and `cursor` in, `next`
// out, in the order they were always listed): agents, connections, an agent's triggers, keys and
// tools, workspace keys, credit budgets, MCP grants, members, invitations, a person's sessions and
// workspaces. Every row once across the pages, a cursor no page gave refused with
// INVALID_CURSOR, an agent key paging only through its own connections, and the SDK's list (which
// the CLI and the dashboard's helpers mirror) following `next` to the end.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { PatchbayClient } from '../../src/sdk/index.ts'
import { Person } from '../helpers/person.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let credentials: Record<string, string>

before(async () => {
  t = await startTestService({ env: { PATCHBAY_SIGNUP: 'open' } })
  credentials = { key: t.taskboard.demo.key, token: t.taskboard.demo.token, secret: t.taskboard.demo.secret }
})
after(async () => {
  await t.close()
})

type Call = (method: string, path: string) => Promise<{ status: number; body: any }>

/** Every page of a list, by `limit`: the ids (or `idOf`) in the order they came, and how many pages. */
async function pageThrough(
  path: string,
  items: string,
  limit: number,
  key = t.adminKey,
  opts: { call?: Call; idOf?: (x: any) => string } = {},
) {
  const call: Call = opts.call ?? ((method, url) => t.api(method, url, undefined, key))
  const idOf = opts.idOf ?? ((x: { id: string }) => x.id)
  const ids: string[] = []
  let pages = 0
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const url: string = `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const page: { status: number; body: any } = await call('GET', url)
    assert.equal(page.status, 200, JSON.stringify(page.body))
    assert.ok(page.body[items].length <= limit)
    ids.push(...page.body[items].map(idOf))
    cursor = page.body.next
    pages++
  } while (cursor !== null)
  return { ids, pages }
}

async function refusesBadCursor(
  path: string,
  call: Call = (method, url) => t.api(method, url),
  cursors = ['nonsense', Buffer.from('only-one-part').toString('base64url')],
) {
  for (const cursor of cursors) {
    const sep = path.includes('?') ? '&' : '?'
    const bad = await call('GET', `${path}${sep}cursor=${cursor}`)
    assert.equal(bad.status, 400, JSON.stringify(bad.body))
    assert.equal(bad.body.error.code, 'INVALID_CURSOR')
    assert.match(bad.body.error.message, /cursor/)
    assert.match(bad.body.error.hint, /next/)
  }
}

test('agents page oldest first, every one once; the SDK lists them all past a page', async () => {
  const made: string[] = []
  for (let i = 0; i < 53; i++)
    made.push((await t.api('POST', '/v1/agents', { name: `a${i}`, delivery: { type: 'stream' } })).body.id)
  const { ids, pages } = await pageThrough('/v1/agents', 'agents', 10)
  assert.deepEqual(ids, made)
  assert.equal(pages, 6)
  // Without limit, a page is 50; the SDK (and so `patchbay agents list`) follows next.
  const first = await t.api('GET', '/v1/agents')
  assert.equal(first.body.agents.length, 50)
  assert.equal(typeof first.body.next, 'string')
  const sdk = new PatchbayClient({ url: t.url, key: t.adminKey })
  assert.deepEqual(
    (await sdk.agents.list()).map((a) => a.id),
    made,
  )
  await refusesBadCursor('/v1/agents')
  // A limit past the maximum is refused as any bad query is.
  assert.equal((await t.api('GET', '/v1/agents?limit=201')).status, 400)
})

test('connections page, filtered; an agent key pages through its own only', async () => {
  const made: string[] = []
  for (let i = 0; i < 5; i++) {
    const res = await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials,
      second: true,
    })
    assert.ok(res.status === 201 || res.status === 200, JSON.stringify(res.body))
    made.push(res.body.id)
  }
  const { ids, pages } = await pageThrough('/v1/connections?connector=taskboard', 'connections', 2)
  assert.deepEqual(ids, made)
  assert.equal(pages, 3)
  assert.deepEqual((await pageThrough('/v1/connections?connector=codehost', 'connections', 2)).ids, [])
  await refusesBadCursor('/v1/connections')

  const agent = (
    await t.api('POST', '/v1/agents', {
      name: 'some connections',
      connectionIds: [made[1], made[3], made[4]],
      delivery: { type: 'stream' },
    })
  ).body
  const agentKey = (await t.api('POST', `/v1/agents/${agent.id}/keys`, {})).body.key
  const own = await pageThrough('/v1/connections', 'connections', 2, agentKey)
  assert.deepEqual(own.ids, [made[1], made[3], made[4]])
  assert.equal(own.pages, 2)
  const sdk = new PatchbayClient({ url: t.url, key: agentKey })
  assert.deepEqual(
    (await sdk.connections.list()).map((c) => c.id),
    [made[1], made[3], made[4]],
  )
})

test("an agent's triggers page oldest first", async () => {
  const connectionId = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials,
    })
  ).body.id
  const agent = (
    await t.api('POST', '/v1/agents', {
      name: 'watcher',
      scope: { boards: [t.taskboard.demo.boardId] },
      connectionIds: [connectionId],
      delivery: { type: 'stream' },
    })
  ).body
  const made: string[] = []
  for (const key of ['new_card', 'card_updated', 'card_moved']) {
    const res = await t.api('POST', `/v1/agents/${agent.id}/triggers`, {
      trigger: `taskboard.${key}`,
      connectionId,
      config: { idBoard: t.taskboard.demo.boardId },
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    made.push(res.body.id)
  }
  const { ids, pages } = await pageThrough(`/v1/agents/${agent.id}/triggers`, 'triggers', 2)
  assert.deepEqual(ids, made)
  assert.equal(pages, 2)
  const sdk = new PatchbayClient({ url: t.url, key: t.adminKey })
  assert.deepEqual(
    (await sdk.triggers.list(agent.id)).map((x) => x.id),
    made,
  )
  await refusesBadCursor(`/v1/agents/${agent.id}/triggers`)
})

test("an agent's keys and tools, the workspace keys and the credit budgets page", async () => {
  const connectionId = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials,
    })
  ).body.id
  const agents: string[] = []
  for (let i = 0; i < 3; i++)
    agents.push(
      (
        await t.api('POST', '/v1/agents', {
          name: `budgeted ${i}`,
          connectionIds: [connectionId],
          delivery: { type: 'stream' },
        })
      ).body.id,
    )
  const agentId = agents[0]
  const keys: string[] = []
  for (let i = 0; i < 3; i++)
    keys.push((await t.api('POST', `/v1/agents/${agentId}/keys`, { name: `k${i}` })).body.id)
  assert.deepEqual((await pageThrough(`/v1/agents/${agentId}/keys`, 'keys', 2)).ids, keys)
  await refusesBadCursor(`/v1/agents/${agentId}/keys`)
  const sdk = new PatchbayClient({ url: t.url, key: t.adminKey })
  assert.deepEqual(
    (await sdk.agents.keys.list(agentId)).map((k) => k.id),
    keys,
  )

  const tools: string[] = []
  for (let i = 0; i < 3; i++) {
    const res = await t.api('POST', `/v1/agents/${agentId}/tools`, {
      name: `read${i}`,
      description: 'Reads a card',
      steps: [{ stepId: 'taskboard.get_card', connectionId, input: { idCard: '{{input.id}}' } }],
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    tools.push(res.body.id)
  }
  assert.deepEqual((await pageThrough(`/v1/agents/${agentId}/tools`, 'tools', 2)).ids, tools)
  await refusesBadCursor(`/v1/agents/${agentId}/tools`)
  assert.deepEqual(
    (await sdk.tools.list(agentId)).map((x) => x.id),
    tools,
  )

  const made: string[] = []
  for (let i = 0; i < 3; i++)
    made.push((await t.api('POST', '/v1/keys', { name: `ops ${i}`, role: 'member' })).body.id)
  const workspaceKeys = await pageThrough('/v1/keys', 'keys', 2)
  assert.deepEqual(workspaceKeys.ids.slice(-3), made, 'oldest first: the ones made last come last')
  assert.equal(new Set(workspaceKeys.ids).size, workspaceKeys.ids.length)
  await refusesBadCursor('/v1/keys')

  for (const id of agents)
    assert.equal((await t.api('PUT', `/v1/credits/budgets/${id}`, { limit: 5 })).status, 200)
  const budgets = await pageThrough('/v1/credits/budgets', 'budgets', 2, t.adminKey, {
    idOf: (b) => b.agentId,
  })
  assert.deepEqual(budgets.ids, [...agents].sort())
  // Budgets page by agent id alone, so any well-formed text could be one: garbage is refused.
  await refusesBadCursor('/v1/credits/budgets', undefined, ['nonsense'])
  // An agent key sees its own budget: one page of one.
  const agentKey = (await t.api('POST', `/v1/agents/${agentId}/keys`, {})).body.key
  const own = await t.api('GET', '/v1/credits/budgets', undefined, agentKey)
  assert.deepEqual(
    own.body.budgets.map((b: { agentId: string }) => b.agentId),
    [agentId],
  )
  assert.equal(own.body.next, null)

  // No grant is made here (that takes an MCP client's sign-in): the empty list pages all the same.
  const grants = await t.api('GET', '/v1/mcp-grants?limit=2')
  assert.deepEqual(grants.body, { grants: [], next: null })
  await refusesBadCursor('/v1/mcp-grants')
})

test("members, invitations, a person's sessions and workspaces page", async () => {
  const ws = t.service.workspaceId
  const members: string[] = []
  let owner: Person | null = null
  let ownerEmail = ''
  for (let i = 0; i < 3; i++) {
    const p = new Person(t.url)
    const email = `member${i}-${Math.random().toString(36).slice(2, 8)}@example.test`
    const res = await p.signUp(email, 'a long enough password 1', `Member ${i}`)
    assert.equal(res.status, 201, JSON.stringify(res.body))
    const added = await t.api('POST', `/v1/workspaces/${ws}/members`, { email, role: 'owner' })
    assert.equal(added.status, 201, JSON.stringify(added.body))
    members.push(res.body.person.id)
    owner ??= p
    ownerEmail ||= email
  }
  const listed = await pageThrough(`/v1/workspaces/${ws}/members`, 'members', 2, t.adminKey, {
    idOf: (m) => m.personId,
  })
  assert.deepEqual(listed.ids.slice(-3), members, 'in the order they joined')
  await refusesBadCursor(`/v1/workspaces/${ws}/members`)

  const invitations: string[] = []
  for (let i = 0; i < 3; i++) {
    const res = await t.api('POST', `/v1/workspaces/${ws}/invitations`, {
      email: `invited${i}@example.test`,
      role: 'member',
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    invitations.push(res.body.invitation.id)
  }
  const invited = await pageThrough(`/v1/workspaces/${ws}/invitations`, 'invitations', 2)
  assert.deepEqual(invited.ids.slice(0, 3), [...invitations].reverse(), 'newest first')
  await refusesBadCursor(`/v1/workspaces/${ws}/invitations`)

  // A person signed in three more times has four live sessions, newest first.
  const person = owner!
  const personCall: Call = (method, url) => person.api(method, url)
  for (let i = 0; i < 3; i++)
    assert.equal((await new Person(t.url).signIn(ownerEmail, 'a long enough password 1')).status, 200)
  const sessions = await pageThrough('/v1/me/sessions', 'sessions', 2, t.adminKey, { call: personCall })
  assert.equal(sessions.ids.length, 4)
  assert.equal(new Set(sessions.ids).size, 4)
  assert.equal(sessions.pages, 2)
  await refusesBadCursor('/v1/me/sessions', personCall)

  // Their workspaces: the one they were added to, then two they make.
  const own: string[] = [ws]
  for (let i = 0; i < 2; i++) {
    const res = await person.api('POST', '/v1/workspaces', { name: `Mine ${i}` })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    own.push(res.body.id)
  }
  assert.deepEqual(
    (await pageThrough('/v1/workspaces', 'workspaces', 1, t.adminKey, { call: personCall })).ids,
    own,
  )
  await refusesBadCursor('/v1/workspaces', personCall)
})
