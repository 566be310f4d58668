// Three Patchbay instances on one PostgreSQL database behind a round-robin balancer (the shared
// PATCHBAY_PUBLIC_URL), as a user who outgrows one process runs them: upstream webhooks, API
// calls and sign-in callbacks land on any instance. Counted: nothing lost, nothing pushed or run
// twice, each due poll once, changes seen by every instance, streams fed from any instance.
// Required under CI=true; skipped with the reason without PostgreSQL.
import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { Redis } from 'ioredis'
import pg from 'pg'
import { request } from 'undici'
import { type ContactdataSandbox, startContactdataSandbox } from '../../sandbox/contactdata/index.ts'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { loadConfig } from '../../src/config.ts'
import { type RunningService, startService } from '../../src/service.ts'
import { type Balancer, startBalancer } from '../helpers/balancer.ts'
import { POSTGRES_URL, postgresUnavailableReason, tempDir } from '../helpers/databases.ts'
import { keyedApi } from '../helpers/main-process.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { REDIS_URL, redisUnavailableReason } from '../helpers/redis.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { TEST_REDIS_PREFIX } from '../helpers/service.ts'
import { approve, control } from '../helpers/taskboard.ts'

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

/** Through the balancer, or straight to one instance (a base as the last argument). */
const api = keyedApi(
  () => balancer.url,
  () => adminKey,
)

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

/**
 * A new board with two agents, each with a New Card trigger on it: `kept` stays, `doomed` (the
 * trigger of `dropped`) is the one a test removes; `count` is what each agent received.
 */
async function twoListeners(name: string) {
  const { board, list } = await newBoard(name)
  const kept = await makeAgent({ type: 'webhook', url: receiver.url }, [board])
  const dropped = await makeAgent({ type: 'webhook', url: receiver.url }, [board])
  const on = async (agentId: string) => {
    const res = await api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId,
      config: { idBoard: board },
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    return res.body.id as string
  }
  await on(kept)
  const doomed = await on(dropped)
  const count = (agentId: string) => receiver.received.filter((r) => r.body.data.agentId === agentId).length
  return { board, list, kept, dropped, doomed, count }
}

test('a trigger deleted through one instance gets no delivery afterwards on any, even for events sent at once', {
  skip,
}, async () => {
  const { board, list, kept, dropped, doomed, count } = await twoListeners('Deleted at once')
  // Every instance has both triggers cached: six cards reach both agents.
  await Promise.all(
    [1, 2, 3, 4, 5, 6].map((i) => tb('POST', '/1/cards', { idList: list, name: `warm ${i}` })),
  )
  await eventually(
    async () => [count(kept), count(dropped)],
    ([a, b]) => a === 6 && b === 6,
    20_000,
  )
  // Deleted through one instance; at once, thirty deliveries of new cards posted straight to the
  // other two (signed for the public address, as the task-board signs them).
  const hookId = (await api('GET', `/v1/triggers/${doomed}`)).body.webhook.id as string
  const path = `/hooks/taskboard/${hookId}`
  // Made and signed beforehand, so they leave the moment the DELETE has answered.
  const posts = Array.from({ length: 30 }, (_, i) => {
    const body = JSON.stringify({
      action: {
        id: randomBytes(12).toString('hex'),
        type: 'createCard',
        date: new Date().toISOString(),
        data: {
          board: { id: board },
          list: { id: list },
          card: { id: randomBytes(12).toString('hex'), name: `after ${i}` },
        },
      },
      model: { id: board },
    })
    const signature = createHmac('sha1', sandbox.demo.secret)
      .update(body + balancer.url + path)
      .digest('base64')
    return { url: instances[1 + (i % 2)].url + path, body, signature }
  })
  assert.equal((await api('DELETE', `/v1/triggers/${doomed}`, undefined, instances[0].url)).status, 200)
  const answers = await Promise.all(
    posts.map((p) =>
      request(p.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-taskboard-webhook': p.signature },
        body: p.body,
      }).then(async (r) => {
        await r.body.dump()
        return r.statusCode
      }),
    ),
  )
  assert.deepEqual(new Set(answers), new Set([200]))
  await eventually(
    async () => count(kept),
    (n) => n === 36,
    20_000,
  )
  const stored = await api('GET', `/v1/deliveries?agentId=${dropped}&limit=100`)
  assert.equal(stored.status, 200, JSON.stringify(stored.body))
  assert.equal(stored.body.deliveries.length, 6, 'only the six made before the trigger was deleted')
  assert.equal(count(dropped), 6)
})

test('a delivery is stored only for a trigger still there: one the instances still have cached gets none', {
  skip,
}, async () => {
  // The news of a deletion takes a few milliseconds to reach the other instances' caches; the
  // insert itself reads the trigger, so what arrives meanwhile makes no delivery for it. Here the
  // news never comes: the row goes without a word to the instances, all of which keep it cached.
  const { list, kept, dropped, doomed, count } = await twoListeners('Gone unheard')
  await Promise.all([1, 2, 3].map((i) => tb('POST', '/1/cards', { idList: list, name: `warm ${i}` })))
  await eventually(
    async () => [count(kept), count(dropped)],
    ([a, b]) => a === 3 && b === 3,
    20_000,
  )
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(`DELETE FROM "${schema}".triggers WHERE id = $1`, [doomed])
  } finally {
    await client.end()
  }
  await Promise.all(
    [1, 2, 3, 4, 5, 6].map((i) => tb('POST', '/1/cards', { idList: list, name: `after ${i}` })),
  )
  await eventually(
    async () => count(kept),
    (n) => n === 9,
    20_000,
  )
  assert.equal(count(dropped), 3, 'no delivery for the trigger that is gone')
})

/** Deliveries of new cards on `list`, made and signed beforehand for the public address (as the task-board signs them), each posted straight to one of the instances other than the first. */
function cardsPostedElsewhere(board: string, list: string, hookId: string, n: number) {
  const path = `/hooks/taskboard/${hookId}`
  const posts = Array.from({ length: n }, (_, i) => {
    const body = JSON.stringify({
      action: {
        id: randomBytes(12).toString('hex'),
        type: 'createCard',
        date: new Date().toISOString(),
        data: {
          board: { id: board },
          list: { id: list },
          card: { id: randomBytes(12).toString('hex'), name: `at once ${i}` },
        },
      },
      model: { id: board },
    })
    const signature = createHmac('sha1', sandbox.demo.secret)
      .update(body + balancer.url + path)
      .digest('base64')
    return { url: instances[1 + (i % 2)].url + path, body, signature }
  })
  return () =>
    Promise.all(
      posts.map((p) =>
        request(p.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-taskboard-webhook': p.signature },
          body: p.body,
        }).then(async (r) => {
          await r.body.dump()
          return r.statusCode
        }),
      ),
    )
}

test('a trigger created through one instance hears events sent at once to the others', { skip }, async () => {
  const { board, list, kept, count } = await twoListeners('Created at once')
  const late = await makeAgent({ type: 'webhook', url: receiver.url }, [board])
  // Every instance has the board's two listeners cached: six cards reach both.
  await Promise.all(
    [1, 2, 3, 4, 5, 6].map((i) => tb('POST', '/1/cards', { idList: list, name: `warm ${i}` })),
  )
  await eventually(
    async () => count(kept),
    (n) => n === 6,
    20_000,
  )
  const hookId = (await api('GET', `/v1/agents/${kept}/triggers`)).body.triggers[0].webhook.id as string
  const send = cardsPostedElsewhere(board, list, hookId, 30)
  // A third trigger on the same webhook, created through the first instance; the thirty
  // deliveries leave for the other two the moment it has answered.
  const created = await api(
    'POST',
    `/v1/agents/${late}/triggers`,
    { trigger: 'taskboard.new_card', connectionId, config: { idBoard: board } },
    instances[0].url,
  )
  assert.equal(created.status, 201, JSON.stringify(created.body))
  assert.equal(created.body.webhook.id, hookId, 'the board webhook is shared')
  assert.deepEqual(new Set(await send()), new Set([200]))
  await eventually(
    async () => [count(kept), count(late)],
    ([a, b]) => a === 36 && b === 30,
    20_000,
  )
  const stored = await api('GET', `/v1/deliveries?agentId=${late}&limit=100`)
  assert.equal(stored.status, 200, JSON.stringify(stored.body))
  assert.equal(stored.body.deliveries.length, 30, 'one delivery for each card sent after it was created')
})

test('a trigger the instances never heard of is matched all the same: listeners are held against the store', {
  skip,
}, async () => {
  // The news of a new trigger takes a few milliseconds to reach the other instances; each group
  // of deliveries is matched against the triggers in the store, so what arrives meanwhile is
  // heard. Here the news never comes: the row is written without a word to the instances.
  const { board, list, kept, dropped, doomed, count } = await twoListeners('Made unheard')
  await Promise.all([1, 2, 3].map((i) => tb('POST', '/1/cards', { idList: list, name: `warm ${i}` })))
  await eventually(
    async () => [count(kept), count(dropped)],
    ([a, b]) => a === 3 && b === 3,
    20_000,
  )
  const late = await makeAgent({ type: 'webhook', url: receiver.url }, [board])
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(
      `INSERT INTO "${schema}".triggers (id, workspace_id, agent_id, trigger_key, connection_id, config, target,
         subscription_id, created_at, updated_at)
       SELECT $1, workspace_id, $2, trigger_key, connection_id, config, target, subscription_id, created_at, updated_at
       FROM "${schema}".triggers WHERE id = $3`,
      [`trg_unheard${randomBytes(6).toString('hex')}`, late, doomed],
    )
  } finally {
    await client.end()
  }
  await Promise.all(
    [1, 2, 3, 4, 5, 6].map((i) => tb('POST', '/1/cards', { idList: list, name: `after ${i}` })),
  )
  await eventually(
    async () => [count(kept), count(late)],
    ([a, b]) => a === 9 && b === 6,
    20_000,
  )
})

test("a card moved off an agent's board is out of its scope on every instance, whichever stored the move", {
  skip,
}, async () => {
  const from = await newBoard('Placed')
  const to = await newBoard('Elsewhere')
  const agentId = await makeAgent({ type: 'stream' }, [from.board])
  const key = (await api('POST', `/v1/agents/${agentId}/keys`, { name: 'placed' })).body.key
  const moved = await api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.card_moved',
    connectionId,
    config: { idBoard: from.board },
  })
  assert.equal(moved.status, 201, JSON.stringify(moved.body))
  const card = await tb('POST', '/1/cards', { idList: from.list, name: 'wanderer' })
  const getCard = async (base: string) => {
    const res = await fetch(`${base}/v1/steps/taskboard.get_card/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ connectionId, input: { idCard: card.id } }),
    })
    const body = await res.json()
    return res.status === 200 ? 'allowed' : body.error.code
  }
  // Every instance has placed the card on the agent's board (and keeps that for a while).
  for (const s of instances) assert.equal(await getCard(s.url), 'allowed')
  await tb('PUT', `/1/cards/${card.id}`, { idList: to.list })
  // One instance stores the move (the upstream's webhook reaches whichever the balancer picks)…
  await eventually(
    async () => (await api('GET', `/v1/deliveries?triggerId=${moved.body.id}`)).body.deliveries.length,
    (n) => n === 1,
    20_000,
  )
  await new Promise((r) => setTimeout(r, 1000))
  // …and every instance looks the card up again: it is on a board outside the scope now.
  assert.deepEqual(
    await Promise.all(instances.map((s) => getCard(s.url))),
    instances.map(() => 'SCOPE_DENIED'),
  )
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

// The same deployment with Redis: changes travel over Redis pub/sub, and what Redis adds is
// shared by every instance — credit holds are checked atomically in the store, and a lookup one
// instance paid for is a cache hit on the others.
describe('three instances with Redis', () => {
  const redisSchema = `${schema}_redis`
  let redisUnavailable: string | null = null
  let cd: ContactdataSandbox
  let group: RunningService[] = []
  let front: Balancer
  let key: string
  let apiKey: string
  let contactConnection: string
  const call = async (method: string, path: string, body?: unknown, bearer = key, base = front.url) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const upstreamRequests = async () =>
    (await control(cd, 'GET', `/usage?apiKey=${encodeURIComponent(apiKey)}`)).totalRequests as number

  before(async () => {
    if (unavailable) return
    redisUnavailable = await redisUnavailableReason()
    if (redisUnavailable) return
    cd = await startContactdataSandbox()
    // Every person here has a phone: each lookup costs exactly its worst case, 2 credits.
    await control(cd, 'POST', '/seed', {
      companies: [{ name: 'Holdfast', domain: 'holdfast.test', employeeCount: 40, industry: 'Retail' }],
      people: Array.from({ length: 60 }, (_, n) => ({
        firstName: 'Hold',
        lastName: `Fast${n}`,
        email: `h${n}@holdfast.test`,
        company: 'holdfast.test',
        jobTitle: 'Buyer',
        seniority: 'manager',
        phone: `+1415556${String(1000 + n).slice(-4)}`,
      })),
    })
    front = await startBalancer([])
    key = `pb_admin_test_${Math.random().toString(36).slice(2)}`
    const config = {
      ...loadConfig({
        PATCHBAY_PUBLIC_URL: front.url,
        PATCHBAY_EGRESS_ALLOW: '127.0.0.0/8,::1',
        REDIS_URL,
        PATCHBAY_REDIS_PREFIX: `${TEST_REDIS_PREFIX}redis-group:`,
        // One lookup, one request: no coalescing window to reason about.
        PATCHBAY_CONTACTDATA_COALESCE_MS: '0',
        PATCHBAY_CONTACTDATA_PACING: '1000/1000',
      }),
      port: 0,
      host: '127.0.0.1',
      databaseUrl: POSTGRES_URL,
      dataDir: tempDir(),
      adminKey: key,
    }
    group = await Promise.all(
      Array.from({ length: INSTANCES }, () =>
        startService(config, {
          baseUrls: { taskboard: sandbox.url, contactdata: cd.url },
          pgSchema: redisSchema,
          logging: false,
        }),
      ),
    )
    front.targets = group.map((s) => s.url)
    const acct = await control(cd, 'POST', '/accounts', {
      name: 'Holdfast Co',
      plan: 'enterprise',
      credits: 5000,
    })
    apiKey = acct.apiKey
    const conn = await call('POST', '/v1/connections', {
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey },
    })
    assert.equal(conn.status, 201, JSON.stringify(conn.body))
    contactConnection = conn.body.id
  })

  after(async () => {
    if (unavailable || redisUnavailable) return
    await Promise.all(group.map((s) => s.close()))
    await front?.close()
    await cd?.close()
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${redisSchema}" CASCADE`)
    await client.query(`DROP SCHEMA IF EXISTS "${redisSchema}_jobs" CASCADE`)
    await client.end()
  })

  const skipped = () => unavailable ?? redisUnavailable ?? false

  test('a credit budget of 20 is never overspent by lookups spread over three instances', async (t) => {
    if (skipped()) return t.skip(String(skipped()))
    const agent = await call('POST', '/v1/agents', {
      name: 'budgeted',
      connectionIds: [contactConnection],
      delivery: { type: 'stream' },
    })
    assert.equal(agent.status, 201, JSON.stringify(agent.body))
    const agentKey = await call('POST', `/v1/agents/${agent.body.id}/keys`, { name: 'budgeted' })
    assert.equal(agentKey.status, 201, JSON.stringify(agentKey.body))
    assert.equal((await call('PUT', `/v1/credits/budgets/${agent.body.id}`, { limit: 20 })).status, 200)
    // 30 lookups at once, ten through each instance, each worth its worst case (2 credits).
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        call(
          'POST',
          '/v1/steps/contactdata.find_contact/run',
          { connectionId: contactConnection, input: { email: `h${n}@holdfast.test` } },
          agentKey.body.key,
        ),
      ),
    )
    const ok = answers.filter((a) => a.status === 200)
    const refused = answers.filter((a) => a.body?.error?.code === 'CREDIT_BUDGET_EXCEEDED')
    assert.equal(
      ok.length + refused.length,
      30,
      JSON.stringify(answers.find((a) => a.status !== 200 && a.status !== 403)),
    )
    const ledger = await call('GET', `/v1/credits?agentId=${agent.body.id}`)
    assert.ok(ledger.body.summary.credits <= 20, `spent ${ledger.body.summary.credits} of a budget of 20`)
    assert.equal(ledger.body.summary.credits, ok.length * 2)
    assert.equal(ok.length, 10, 'the budget is used up, not refused early')
  })

  test('their changes travel on a Redis channel named with the deployment prefix', async (t) => {
    if (skipped()) return t.skip(String(skipped()))
    const prefix = `${TEST_REDIS_PREFIX}redis-group:`
    const redis = new Redis(REDIS_URL)
    try {
      // Another deployment on the same Redis (another prefix) hears nothing of this one.
      assert.deepEqual(await redis.pubsub('CHANNELS', `${prefix}*`), [`${prefix}changes:${redisSchema}`])
    } finally {
      redis.disconnect()
    }
  })

  test('a lookup paid for on one instance is a cache hit on another', async (t) => {
    if (skipped()) return t.skip(String(skipped()))
    const find = (base: string) =>
      call(
        'POST',
        '/v1/steps/contactdata.find_contact/run',
        { connectionId: contactConnection, input: { email: 'h50@holdfast.test' } },
        key,
        base,
      )
    const first = await find(group[0].url)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.output.cached, false)
    const sent = await upstreamRequests()
    for (const other of [group[1].url, group[2].url]) {
      const again = await find(other)
      assert.equal(again.status, 200)
      assert.equal(again.body.output.cached, true)
      assert.deepEqual(again.body.output.contact, first.body.output.contact)
    }
    assert.equal(await upstreamRequests(), sent, 'no instance asked the upstream again')
  })
})
