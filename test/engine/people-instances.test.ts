// Two Patchbay instances on one PostgreSQL database: a member removed (or whose role changed) on one
// instance is refused by the other as soon as the news reaches it (the engine's changes over
// LISTEN/NOTIFY), even though that instance had their session and key in its caches; and failed
// sign-ins counted on one instance limit the other. Required under CI=true; skipped with the
// reason without PostgreSQL.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'
import { type RunningService, startService } from '../../src/service.ts'
import { POSTGRES_URL, postgresUnavailableReason, type TestDatabase, tempDir } from '../helpers/databases.ts'
import { Person } from '../helpers/person.ts'
import { LOOPBACK_EGRESS, startTestService, TEST_REDIS_PREFIX, type TestService } from '../helpers/service.ts'

const unavailable = await postgresUnavailableReason()
if (unavailable && process.env.CI === 'true')
  throw new Error(`${unavailable}; under CI=true PostgreSQL is required.`)
if (unavailable) console.log(`# skipping the people-on-two-instances suite: ${unavailable}`)

const PASSWORD = 'correct horse battery'
const schema = `pb_people_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
let a: TestService
let b: RunningService

/** Resolves when the instance hears of `ids` on a topic (its own caches are emptied first). */
function heard(service: RunningService, topic: 'sessions' | 'keys', ids: string[]): Promise<void> {
  return new Promise((resolve) => {
    const stop = service.engine.changes.subscribe(topic, (got) => {
      if (got.length === 0 || ids.every((id) => got.includes(id))) {
        stop()
        resolve()
      }
    })
  })
}

describe('people on two instances', { skip: unavailable ?? false }, () => {
  before(async () => {
    const env = { PATCHBAY_SIGNUP: 'open' }
    const dataDir = tempDir()
    const db: TestDatabase = {
      name: 'postgres',
      fresh: () => ({ databaseUrl: POSTGRES_URL, dataDir, pgSchema: schema }),
    }
    a = await startTestService({ env, db })
    b = await startService(
      {
        ...loadConfig({ PATCHBAY_REDIS_PREFIX: TEST_REDIS_PREFIX, ...LOOPBACK_EGRESS, ...env }),
        port: 0,
        host: '127.0.0.1',
        databaseUrl: POSTGRES_URL,
        // The same master key file as the first instance.
        dataDir,
        adminKey: a.adminKey,
      },
      { baseUrls: { taskboard: a.taskboard.url }, pgSchema: schema, logging: false },
    )
  })
  after(async () => {
    // The second instance first: the first one's close drops the schema.
    await b?.close()
    await a?.close()
  })

  test('a removed member’s session and personal key, cached on the other instance, are refused there at once', async () => {
    const ws = a.service.workspaceId
    const p = new Person(a.url)
    const email = `two-${Math.random().toString(36).slice(2, 6)}@example.test`
    assert.equal((await p.signUp(email, PASSWORD, 'Two')).status, 201)
    const personId = (await p.api('GET', '/v1/me')).body.person.id as string
    assert.equal((await a.api('POST', `/v1/workspaces/${ws}/members`, { email, role: 'member' })).status, 201)
    // A personal key, as POST /v1/keys makes one for a signed-in person.
    const { key } = await a.service.engine.apiKeys.create({
      workspaceId: ws,
      kind: 'workspace',
      role: 'member',
      name: 'laptop',
      createdBy: personId,
    })
    const onB = { base: b.url }
    // The other instance knows (and caches) both.
    assert.equal((await p.api('GET', '/v1/me', undefined, onB)).status, 200)
    assert.equal((await p.api('GET', '/v1/agents', undefined, onB)).status, 200)
    const withKey = () => fetch(`${b.url}/v1/agents`, { headers: { authorization: `Bearer ${key}` } })
    assert.equal((await withKey()).status, 200)
    const sessionId = (await p.api('GET', '/v1/me', undefined, onB)).body.session.id as string
    const keyRow = await a.service.engine.apiKeys.findByKey(key)

    const news = Promise.all([heard(b, 'sessions', [sessionId]), heard(b, 'keys', [keyRow!.id])])
    assert.equal((await a.api('DELETE', `/v1/workspaces/${ws}/members/${personId}`)).status, 204)
    await news
    const me = await p.api('GET', '/v1/me', undefined, onB)
    assert.equal(me.status, 401)
    assert.match(me.body.error.message, /ended/)
    const refused = await withKey()
    assert.equal(refused.status, 401)
    assert.match((await refused.json()).error.message, /revoked/)
  })

  test('failed sign-ins counted on one instance limit the other', async () => {
    const email = `limit-${Math.random().toString(36).slice(2, 6)}@example.test`
    assert.equal((await new Person(a.url).signUp(email, PASSWORD, 'Limit')).status, 201)
    for (let i = 0; i < 5; i++) {
      const base = i % 2 === 0 ? a.url : b.url
      assert.equal((await new Person(base).signIn(email, `wrong ${i}`)).status, 401)
    }
    const res = await new Person(b.url).signIn(email, PASSWORD)
    assert.equal(res.status, 429)
    assert.ok(Number(res.headers.get('retry-after')) > 0)
  })
})
