// Agents, connections and an agent's triggers page as every other list does (`limit` and `cursor`
// in, `next` out; oldest first, as they were always listed): every row once across the pages, a
// cursor no page gave refused with INVALID_CURSOR, an agent key paging only through its own
// connections, and the SDK's list (which the CLI and the dashboard's helpers mirror) following
// `next` to the end.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { PatchbayClient } from '../../src/sdk/index.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let credentials: Record<string, string>

before(async () => {
  t = await startTestService()
  credentials = { key: t.taskboard.demo.key, token: t.taskboard.demo.token, secret: t.taskboard.demo.secret }
})
after(async () => {
  await t.close()
})

/** Every page of a list, by `limit`: the ids in the order they came, and how many pages. */
async function pageThrough(path: string, items: string, limit: number, key = t.adminKey) {
  const ids: string[] = []
  let pages = 0
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const url: string = `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const page: { status: number; body: any } = await t.api('GET', url, undefined, key)
    assert.equal(page.status, 200, JSON.stringify(page.body))
    assert.ok(page.body[items].length <= limit)
    ids.push(...page.body[items].map((x: { id: string }) => x.id))
    cursor = page.body.next
    pages++
  } while (cursor !== null)
  return { ids, pages }
}

async function refusesBadCursor(path: string) {
  for (const cursor of ['nonsense', Buffer.from('only-one-part').toString('base64url')]) {
    const sep = path.includes('?') ? '&' : '?'
    const bad = await t.api('GET', `${path}${sep}cursor=${cursor}`)
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
