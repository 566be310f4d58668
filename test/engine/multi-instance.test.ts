// Three Patchbay instances on one PostgreSQL database behind a round-robin balancer (the shared
// PATCHBAY_PUBLIC_URL), as a user who outgrows one process runs them: upstream webhooks, API
// calls and sign-in callbacks land on any instance. Counted: nothing lost, nothing pushed or run
// twice, each due poll once, changes seen by every instance, streams fed from any instance.
// Required under CI=true; skipped with the reason without PostgreSQL.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { loadConfig } from '../../src/config.ts'
import { type RunningService, startService } from '../../src/service.ts'
import { type Balancer, startBalancer } from '../helpers/balancer.ts'
import { POSTGRES_URL, postgresUnavailableReason, tempDir } from '../helpers/databases.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { approve } from '../helpers/taskboard.ts'

const unavailable = await postgresUnavailableReason()
if (unavailable && process.env.CI === 'true')
  throw new Error(`${unavailable}; under CI=true PostgreSQL is required.`)
if (unavailable) console.log(`# skipping the multi-instance suite: ${unavailable}`)

const INSTANCES = 3
const schema = `pb_multi_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
let sandbox: TaskboardSandbox
let balancer: Balancer
let instances: RunningService[] = []
let boots: Array<{ workspaceId: string; generatedAdminKey: string | null }> = []
let adminKey: string
let receiver: Receiver
let connectionId: string

/** The task-board as the demo member; the token's rate limit (429) is waited out, as a client would. */
async function tb(method: string, path: string, body?: unknown): Promise<any> {
  for (;;) {
    const res = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: {
        authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    })
    if (res.status === 429) {
      await res.body?.cancel()
      await new Promise((r) => setTimeout(r, 500))
      continue
    }
    const text = await res.text()
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
}

/** Through the balancer, or straight to one instance. */
async function api(method: string, path: string, body?: unknown, base = balancer.url) {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

const newBoard = async (name: string) => {
  const board = await tb('POST', '/1/boards', { name, defaultLists: false })
  const list = await tb('POST', '/1/lists', { name: 'Inbox', idBoard: board.id })
  return { board: board.id as string, list: list.id as string }
}

async function makeAgent(delivery: unknown, boards: string[]) {
  const res = await api('POST', '/v1/agents', {
    name: `agent-${Math.random().toString(36).slice(2, 8)}`,
    scope: { boards },
    connectionIds: [connectionId],
    delivery,
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id as string
}

before(async () => {
  if (unavailable) return
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
  balancer = await startBalancer([])
  const config = {
    ...loadConfig({
      PATCHBAY_PUBLIC_URL: balancer.url,
      PATCHBAY_MIN_POLL_INTERVAL_MS: '100',
      PATCHBAY_DELIVERY_SCAN_MS: '200',
      PATCHBAY_EGRESS_ALLOW: '127.0.0.0/8,::1',
    }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: POSTGRES_URL,
    dataDir: tempDir(),
    adminKey: null,
  }
  // All three start at the same moment on an empty database.
  const started = await Promise.allSettled(
    Array.from({ length: INSTANCES }, () =>
      startService(config, {
        baseUrls: { taskboard: sandbox.url },
        oauthApps: { taskboard: { clientId: sandbox.demo.key, clientSecret: sandbox.demo.secret } },
        pgSchema: schema,
        logging: false,
      }),
    ),
  )
  instances = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const failed = started.find((s) => s.status === 'rejected')
  if (failed) throw failed.reason
  boots = instances.map((s) => ({ workspaceId: s.workspaceId, generatedAdminKey: s.generatedAdminKey }))
  adminKey = boots.find((b) => b.generatedAdminKey)?.generatedAdminKey ?? ''
  balancer.targets = instances.map((s) => s.url)
  const conn = await api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  connectionId = conn.body.id
})

after(async () => {
  if (unavailable) return
  await Promise.all(instances.map((s) => s.close()))
  await balancer?.close()
  await receiver?.close()
  await sandbox?.close()
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  if (!process.env.KEEP) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await client.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`)
  await client.end()
})

const skip = unavailable ?? false

test('three instances started together create one workspace and print its admin key once', { skip }, () => {
  assert.equal(new Set(boots.map((b) => b.workspaceId)).size, 1)
  assert.equal(boots.filter((b) => b.generatedAdminKey).length, 1)
})

test('every event reaches the agent once: no event lost, no push sent twice', { skip }, async () => {
  const { board, list } = await newBoard('Pushes')
  const agentId = await makeAgent({ type: 'webhook', url: receiver.url }, [board])
  const trig = await api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: board },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  const names = Array.from({ length: 30 }, (_, i) => `push ${i}`)
  await Promise.all(names.map((name) => tb('POST', '/1/cards', { idList: list, name })))
  const mine = () => receiver.received.filter((r) => r.body.data.agentId === agentId)
  await eventually(
    async () => mine().length,
    (n) => n >= names.length,
    30_000,
  )
  // Every delivery settled, each on its first attempt.
  const settled = await eventually(
    async () => (await api('GET', `/v1/deliveries?agentId=${agentId}&limit=100`)).body.deliveries,
    (ds: any[]) => ds.length === names.length && ds.every((d) => d.status === 'delivered'),
  )
  assert.deepEqual(
    settled.map((d: any) => d.attempts),
    names.map(() => 1),
  )
  const got = mine()
  assert.equal(got.length, names.length, 'no push sent twice')
  assert.equal(new Set(got.map((r) => r.id)).size, names.length)
  assert.deepEqual(got.map((r) => r.body.data.event.data.card.name).sort(), [...names].sort())
})

test('a tool started by events runs once per event across the instances', { skip }, async () => {
  const source = await newBoard('Tool source')
  const mirror = await newBoard('Tool mirror')
  const agentId = await makeAgent({ type: 'stream' }, [source.board, mirror.board])
  const tool = await api('POST', `/v1/agents/${agentId}/tools`, {
    name: 'mirror',
    steps: [
      {
        stepId: 'taskboard.create_card',
        connectionId,
        input: { idList: mirror.list, name: 'Mirror of {{event.data.card.name}}' },
      },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  const trig = await api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: source.board },
    target: { type: 'tool', toolId: tool.body.id },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  const names = Array.from({ length: 12 }, (_, i) => `tool ${i}`)
  await Promise.all(names.map((name) => tb('POST', '/1/cards', { idList: source.list, name })))
  await eventually(
    async () => (await api('GET', `/v1/deliveries?triggerId=${trig.body.id}&limit=100`)).body.deliveries,
    (ds: any[]) => ds.length === names.length && ds.every((d) => d.status === 'delivered'),
    30_000,
  )
  const cards: any[] = await tb('GET', `/1/lists/${mirror.list}/cards`)
  assert.deepEqual(cards.map((c) => c.name).sort(), names.map((n) => `Mirror of ${n}`).sort())
})

test('a trigger created or deleted on one instance takes effect on the others within a second', {
  skip,
}, async () => {
  const { board, list } = await newBoard('Changes')
  const first = await makeAgent({ type: 'webhook', url: receiver.url }, [board])
  const second = await makeAgent({ type: 'webhook', url: receiver.url }, [board])
  const on = (agentId: string) =>
    api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId,
      config: { idBoard: board },
    })
  const count = (agentId: string) => receiver.received.filter((r) => r.body.data.agentId === agentId).length
  // Every instance learns who listens on the board's webhook.
  assert.equal((await on(first)).status, 201)
  await Promise.all(
    [1, 2, 3, 4, 5, 6].map((i) => tb('POST', '/1/cards', { idList: list, name: `warm ${i}` })),
  )
  await eventually(
    async () => count(first),
    (n) => n === 6,
    20_000,
  )
  // A second trigger on the same webhook, created through one instance.
  const added = await on(second)
  assert.equal(added.status, 201)
  await new Promise((r) => setTimeout(r, 1000))
  await Promise.all(
    [1, 2, 3, 4, 5, 6].map((i) => tb('POST', '/1/cards', { idList: list, name: `both ${i}` })),
  )
  await eventually(
    async () => [count(first), count(second)],
    ([a, b]) => a === 12 && b === 6,
    20_000,
  )
  // Deleted through one instance: no instance delivers to it any more.
  assert.equal((await api('DELETE', `/v1/triggers/${added.body.id}`)).status, 200)
  await new Promise((r) => setTimeout(r, 1000))
  await Promise.all([1, 2, 3, 4, 5, 6].map((i) => tb('POST', '/1/cards', { idList: list, name: `one ${i}` })))
  await eventually(
    async () => count(first),
    (n) => n === 18,
    20_000,
  )
  assert.equal(count(second), 6)
})

test('a stream on one instance receives every event ingested on any, in seq order', { skip }, async () => {
  const { board, list } = await newBoard('Stream')
  const agentId = await makeAgent({ type: 'stream' }, [board])
  const trig = await api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: board },
  })
  assert.equal(trig.status, 201)
  const names = Array.from({ length: 20 }, (_, i) => `streamed ${i}`)
  const ctrl = new AbortController()
  const res = await fetch(`${instances[0].url}/v1/agents/${agentId}/stream`, {
    headers: { authorization: `Bearer ${adminKey}` },
    signal: ctrl.signal,
  })
  const got: Array<{ seq: number; name: string }> = []
  const reading = (async () => {
    const decoder = new TextDecoder()
    let buffer = ''
    for await (const chunk of res.body as any) {
      buffer += decoder.decode(chunk, { stream: true })
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, i)
        buffer = buffer.slice(i + 2)
        const id = /^id: (.*)$/m.exec(frame)?.[1]
        const data = /^data: (.*)$/m.exec(frame)?.[1]
        if (id && data) got.push({ seq: Number(id), name: JSON.parse(data).data.event.data.card.name })
      }
      if (got.length >= names.length) return
    }
  })()
  await Promise.all(names.map((name) => tb('POST', '/1/cards', { idList: list, name })))
  const timer = setTimeout(() => ctrl.abort(), 30_000)
  await reading.catch(() => {})
  clearTimeout(timer)
  ctrl.abort()
  const stored = (await api('GET', `/v1/deliveries?agentId=${agentId}&limit=100`)).body.deliveries
  assert.equal(
    got.length,
    names.length,
    `the stream got ${got.length} of ${names.length}; stored ${stored.length}: ${stored.map((d: any) => d.seq).join(',')}; streamed ${got.map((g) => g.seq).join(',')}; refused: ${balancer.refused.join('; ')}`,
  )
  assert.deepEqual(got.map((g) => g.name).sort(), [...names].sort())
  const seqs = got.map((g) => g.seq)
  assert.deepEqual(
    seqs,
    [...seqs].sort((a, b) => a - b),
    'in seq order',
  )
})

test('a due poll runs once across the instances', { skip }, async () => {
  const { board } = await newBoard('Polled')
  const agentId = await makeAgent({ type: 'stream' }, [board])
  const counter = await countRequests(sandbox, `/1/boards/${board}/cards`)
  try {
    const trig = await api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.card_due_date_reminder',
      connectionId,
      config: { idBoard: board },
      pollIntervalMs: 3_600_000,
    })
    assert.equal(trig.status, 201, JSON.stringify(trig.body))
    await eventually(
      async () => (await api('GET', `/v1/triggers/${trig.body.id}`)).body,
      (t: any) => t.lastPollAt != null || t.poll?.lastPollAt != null,
      20_000,
    )
    // Several sweeps later (on whichever instances), the first poll is still the only one.
    await new Promise((r) => setTimeout(r, 1500))
    assert.equal(await counter.count(), 1)
  } finally {
    await counter.stop()
  }
})

test('a sign-in started on one instance completes on another, once', { skip }, async () => {
  const start = await api(
    'POST',
    '/v1/connections/oauth/start',
    { connector: 'taskboard', mode: 'redirect', returnTo: '/dashboard' },
    instances[0].url,
  )
  assert.equal(start.status, 200, JSON.stringify(start.body))
  const approved = await approve(start.body.authorizeUrl, { username: 'demo', password: 'demo' })
  assert.equal(approved.status, 302)
  // The upstream sends the browser to the shared address; here it reaches the second instance.
  const callback = new URL(approved.headers.get('location')!)
  const onSecond = new URL(callback.pathname + callback.search, instances[1].url)
  const back = await fetch(onSecond, { redirect: 'manual' })
  assert.equal(back.status, 302)
  const landed = new URL(back.headers.get('location')!, instances[1].url)
  assert.ok(landed.searchParams.get('connectionId'), landed.toString())
  // The same callback on the third instance: already used.
  const replay = await fetch(new URL(callback.pathname + callback.search, instances[2].url), {
    redirect: 'manual',
  })
  assert.equal(
    new URL(replay.headers.get('location')!, instances[2].url).searchParams.get('error'),
    'OAUTH_STATE_USED',
  )
})
