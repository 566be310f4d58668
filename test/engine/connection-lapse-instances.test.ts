// Lapses seen with three instances sharing PostgreSQL (issue 24): a connection with triggers is
// checked upstream once per interval whatever the number of instances (each check is claimed in
// its row; not one per instance), and a revoked token is shown lapsed with its trigger paused and
// ONE connection.lapsed notice to the agent. Required under CI=true; skipped without PostgreSQL.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { loadConfig } from '../../src/config.ts'
import { type RunningService, startService } from '../../src/service.ts'
import { type Balancer, startBalancer } from '../helpers/balancer.ts'
import { POSTGRES_URL, postgresUnavailableReason, tempDir } from '../helpers/databases.ts'
import { keyedApi } from '../helpers/main-process.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { mintDemoToken, taskboardRest } from '../helpers/taskboard.ts'

const unavailable = await postgresUnavailableReason()
if (unavailable && process.env.CI === 'true')
  throw new Error(`${unavailable}; under CI=true PostgreSQL is required.`)
if (unavailable) console.log(`# skipping the three-instance lapse test: ${unavailable}`)
const skip = unavailable ?? false

const CHECK_MS = 2_000
const schema = `pb_lapse_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
let sandbox: TaskboardSandbox
let balancer: Balancer
let receiver: Receiver
let instances: RunningService[] = []
let adminKey = ''
const api = keyedApi(
  () => balancer.url,
  () => adminKey,
)

before(async () => {
  if (unavailable) return
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
  balancer = await startBalancer([])
  const config = {
    ...loadConfig({
      PATCHBAY_PUBLIC_URL: balancer.url,
      PATCHBAY_EGRESS_ALLOW: '127.0.0.0/8,::1',
      PATCHBAY_CONNECTION_CHECK_MS: String(CHECK_MS),
    }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: POSTGRES_URL,
    dataDir: tempDir(),
    adminKey: null,
  }
  instances = await Promise.all(
    Array.from({ length: 3 }, () =>
      startService(config, { baseUrls: { taskboard: sandbox.url }, pgSchema: schema, logging: false }),
    ),
  )
  adminKey = instances.find((s) => s.generatedAdminKey)?.generatedAdminKey ?? ''
  balancer.targets = instances.map((s) => s.url)
})

after(async () => {
  if (unavailable) return
  await Promise.all(instances.map((s) => s.close()))
  await balancer?.close()
  await receiver?.close()
  await sandbox?.close()
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await client.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`)
  await client.end()
})

test('three instances: one check per connection and interval, and one lapse with one notice', {
  skip,
}, async () => {
  const token = await mintDemoToken(sandbox)
  const conn = await api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const id = conn.body.id as string
  const agent = await api('POST', '/v1/agents', {
    name: 'watcher',
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [id],
    delivery: { type: 'webhook', url: receiver.url },
  })
  receiver.secret = agent.body.signingSecret
  const trig = await api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: id,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))

  // The account lookups the upstream receives while five intervals pass (by the checks' own record).
  const counter = await countRequests(sandbox, '/1/members/me')
  const first = await eventually(
    async () => (await api('GET', `/v1/connections/${id}`)).body.checkedAt as string | null,
    (at) => at !== null,
  )
  await eventually(
    async () => (await api('GET', `/v1/connections/${id}`)).body.checkedAt as string,
    (at) => Date.parse(at) - Date.parse(first as string) >= 5 * CHECK_MS,
    60_000,
  )
  const lookups = await counter.count()
  await counter.stop()
  // About one per interval (six over five intervals and a bit); one per instance would be three times that.
  assert.ok(
    lookups >= 3 && lookups <= 9,
    `${lookups} account lookups over five intervals with three instances`,
  )

  // Revoked upstream: lapsed, the trigger paused, and the agent hears of it once.
  await taskboardRest(sandbox, 'DELETE', `/1/tokens/${token}`, undefined, token)
  const lapsed = await eventually(
    async () => (await api('GET', `/v1/connections/${id}`)).body,
    (c: any) => c.status === 'lapsed',
  )
  assert.ok(lapsed.lapsedAt)
  // Lapsed and paused in one commit (ConnectionService.markLapsed): a reader never sees one alone.
  const trigger = (await api('GET', `/v1/triggers/${trig.body.id}`)).body
  assert.equal(trigger.status, 'paused')
  const isNotice = (r: any) =>
    r.body.type === 'connection.lapsed' && r.body.data.event.data.connectionId === id
  await receiver.until((rs) => rs.some(isNotice))
  // Every instance has swept a few times since: still one notice, stored once.
  const seen = (await api('GET', `/v1/connections/${id}`)).body.updatedAt
  await eventually(
    async () => (await api('GET', `/v1/deliveries?agentId=${agent.body.id}`)).body.deliveries,
    (ds: any[]) => ds.length >= 1 && ds.every((d) => d.status === 'delivered'),
  )
  await new Promise((r) => setTimeout(r, 3 * CHECK_MS))
  assert.equal(receiver.received.filter(isNotice).length, 1, 'one notice, not one per instance')
  assert.equal((await api('GET', `/v1/connections/${id}`)).body.updatedAt, seen, 'lapsed once')
  const notices = (await api('GET', '/v1/events?connector=patchbay&limit=50')).body.events.filter(
    (e: any) => e.type === 'connection.lapsed',
  )
  assert.equal(notices.length, 1)
})
