// Three Patchbay processes (`node src/main.ts`, as deployed) on one PostgreSQL database behind a
// round-robin balancer; one is killed with SIGKILL in the middle of a burst of upstream webhooks.
// Counted: no acknowledged event lost (deliveries the dead process refused are sent again, as an
// upstream does), every event pushed to the agent under one webhook-id (a re-send after the kill
// carries the same one), and no tool run started twice. Required under CI=true; skipped with the
// reason without PostgreSQL.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import path from 'node:path'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { type Balancer, startBalancer } from '../helpers/balancer.ts'
import { POSTGRES_URL, postgresUnavailableReason, tempDir } from '../helpers/databases.ts'
import { keyedApi, startOnFreePort } from '../helpers/main-process.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { LOOPBACK_EGRESS } from '../helpers/service.ts'
import { taskboardRest } from '../helpers/taskboard.ts'

const unavailable = await postgresUnavailableReason()
if (unavailable && process.env.CI === 'true')
  throw new Error(`${unavailable}; under CI=true PostgreSQL is required.`)
if (unavailable) console.log(`# skipping the killed-instance suite: ${unavailable}`)

const root = path.resolve(import.meta.dirname, '../..')
const adminKey = 'pb_admin_killed_instance_test'
// One vault key for the whole deployment (each process would otherwise generate its own).
const masterKey = randomBytes(32).toString('base64')
// A database of its own: the processes use its public schema, their pg-boss schema and their
// change channel, as a deployment does, without meeting other tests' deployments.
const database = `pb_killed_${process.pid}_${randomBytes(3).toString('hex')}`
const databaseUrl = (() => {
  const u = new URL(POSTGRES_URL)
  u.pathname = `/${database}`
  return u.toString()
})()
let sandbox: TaskboardSandbox
let receiver: Receiver
let balancer: Balancer
const children: Array<{ process: ChildProcess; url: string }> = []

async function admin(query: string) {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(query)
  } finally {
    await client.end()
  }
}

async function startInstance(): Promise<{ process: ChildProcess; url: string }> {
  const { child, url } = await startOnFreePort(spawnInstance)
  return { process: child, url }
}

function spawnInstance(port: number): ChildProcess {
  return spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PATCHBAY_PUBLIC_URL: balancer.url,
      PATCHBAY_DATABASE_URL: databaseUrl,
      PATCHBAY_DATA_DIR: tempDir('patchbay-killed-'),
      PATCHBAY_ADMIN_KEY: adminKey,
      PATCHBAY_MASTER_KEY: masterKey,
      PATCHBAY_TASKBOARD_URL: sandbox.url,
      // Not used here: no embedded sandboxes for them.
      PATCHBAY_CODEHOST_URL: 'http://127.0.0.1:9',
      PATCHBAY_CONTACTDATA_URL: 'http://127.0.0.1:9',
      ...LOOPBACK_EGRESS,
      PATCHBAY_DELIVERY_SCAN_MS: '200',
      // A push's lease is this × 2 + 5 s: a push the killed process had in flight is sent again after it.
      PATCHBAY_DELIVERY_TIMEOUT_MS: '2000',
      // A push that timed out on a loaded machine is tried again within the test's wait, not in 5 min.
      PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '1000,2000,4000,8000,8000,8000,8000,8000',
      LOG_LEVEL: 'silent',
    },
    // Piped: untilHealthy reads that it listens, so the answers are its own (see there).
    stdio: ['ignore', 'pipe', 'inherit'],
  })
}

const api = keyedApi(() => balancer.url, adminKey)

before(async () => {
  if (unavailable) return
  await admin(`CREATE DATABASE "${database}"`)
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
  // A slow agent: pushes are still in flight when the process is killed.
  receiver.delayMs = 300
  balancer = await startBalancer([])
  // The first creates the workspace; the others join it.
  children.push(await startInstance())
  children.push(...(await Promise.all([startInstance(), startInstance()])))
  balancer.targets = children.map((c) => c.url)
})

after(async () => {
  if (unavailable) return
  for (const c of children)
    if (c.process.exitCode === null && !c.process.signalCode) c.process.kill('SIGKILL')
  await Promise.all(
    children.map((c) =>
      c.process.exitCode !== null || c.process.signalCode
        ? null
        : new Promise((r) => c.process.once('exit', r)),
    ),
  )
  await balancer?.close()
  await receiver?.close()
  await sandbox?.close()
  await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
})

test('an instance killed mid-burst: no event lost, re-sends keep their webhook-id, no tool run twice', {
  skip: unavailable ?? false,
  timeout: 300_000,
}, async (t) => {
  const tb = (method: string, p: string, body?: unknown) => taskboardRest(sandbox, method, p, body)
  const conn = await api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const connectionId = conn.body.id
  // Board A's new cards are pushed to a slow agent; board B's start a tool that copies each card
  // to board C.
  const boardA = sandbox.demo.boardId
  const boardB = (await tb('POST', '/1/boards', { name: 'Tool source', defaultLists: false })).id
  const boardC = (await tb('POST', '/1/boards', { name: 'Tool mirror', defaultLists: false })).id
  const mirrorList = (await tb('POST', '/1/lists', { name: 'Copies', idBoard: boardC })).id
  const pushed = await api('POST', '/v1/agents', {
    name: 'pushed',
    scope: { boards: [boardA] },
    connectionIds: [connectionId],
    delivery: { type: 'webhook', url: receiver.url },
  })
  receiver.secret = pushed.body.signingSecret
  const pushTrigger = await api('POST', `/v1/agents/${pushed.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: boardA },
  })
  assert.equal(pushTrigger.status, 201, JSON.stringify(pushTrigger.body))
  const copier = await api('POST', '/v1/agents', {
    name: 'copier',
    scope: { boards: [boardB, boardC] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  const tool = await api('POST', `/v1/agents/${copier.body.id}/tools`, {
    name: 'copy',
    steps: [
      {
        stepId: 'taskboard.create_card',
        connectionId,
        input: { idList: mirrorList, name: 'Copy of {{event.data.card.name}}' },
      },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  const toolTrigger = await api('POST', `/v1/agents/${copier.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId,
    config: { idBoard: boardB },
    target: { type: 'tool', toolId: tool.body.id },
  })
  assert.equal(toolTrigger.status, 201, JSON.stringify(toolTrigger.body))

  // The burst: signed as the upstream signs, to the shared address (any instance takes it).
  const TOTAL = 330
  const deliveries = Array.from({ length: TOTAL }, (_, i) => {
    const toTool = i % 11 === 0
    const board = toTool ? boardB : boardA
    const hook = toTool ? toolTrigger.body.webhook.id : pushTrigger.body.webhook.id
    const actionId = randomBytes(12).toString('hex')
    const body = JSON.stringify({
      action: {
        id: actionId,
        type: 'createCard',
        date: new Date().toISOString(),
        data: {
          board: { id: board },
          list: { id: randomBytes(12).toString('hex') },
          card: { id: randomBytes(12).toString('hex'), name: `burst ${i}` },
        },
      },
      model: { id: board },
    })
    return {
      actionId,
      toTool,
      name: `burst ${i}`,
      body,
      callbackUrl: `${balancer.url}/hooks/taskboard/${hook}`,
    }
  })
  const acked = new Set<string>()
  const send = async (d: (typeof deliveries)[number]) => {
    const signature = createHmac('sha1', sandbox.demo.secret)
      .update(d.body + d.callbackUrl)
      .digest('base64')
    try {
      const res = await fetch(d.callbackUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-taskboard-webhook': signature },
        body: d.body,
      })
      await res.body?.cancel()
      if (res.status === 200) acked.add(d.actionId)
    } catch {
      // Not acknowledged: sent again below, as the upstream would.
    }
  }
  const victim = children[1]
  let next = 0
  let killed = false
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < TOTAL) {
        await send(deliveries[next++])
        if (!killed && acked.size >= 100) {
          killed = true
          victim.process.kill('SIGKILL')
          balancer.targets = children.filter((c) => c !== victim).map((c) => c.url)
        }
      }
    }),
  )
  assert.ok(killed, 'an instance was killed mid-burst')
  // What was not acknowledged (refused by the dying instance) is sent again, until it is.
  for (let round = 0; acked.size < TOTAL; round++) {
    assert.ok(round < 20, `still ${TOTAL - acked.size} deliveries unacknowledged`)
    await Promise.all(deliveries.filter((d) => !acked.has(d.actionId)).map(send))
  }

  // Every event reached the pushed agent, each under one webhook-id.
  const pushes = deliveries.filter((d) => !d.toTool)
  const upstreamIdOf = (r: { body: any }) => r.body.data.event.upstreamId as string
  await receiver.until((rs) => new Set(rs.map(upstreamIdOf)).size >= pushes.length, 120_000)
  // Every push settled, delivered (the killed process's in flight ones re-sent once their lease ended).
  await eventually(
    async () =>
      (await api('GET', `/v1/deliveries?triggerId=${pushTrigger.body.id}&status=pending&limit=1`)).body,
    (b: any) => b.deliveries.length === 0,
    120_000,
  )

  const idsByEvent = new Map<string, Set<string>>()
  for (const r of receiver.received) {
    const ids = idsByEvent.get(upstreamIdOf(r)) ?? new Set()
    ids.add(r.id)
    idsByEvent.set(upstreamIdOf(r), ids)
  }
  for (const d of pushes)
    assert.equal(idsByEvent.get(d.actionId)?.size, 1, `event ${d.actionId}: one webhook-id`)
  assert.ok(receiver.received.every((r) => r.verified))
  const resent = receiver.received.length - pushes.length

  // The tool: one delivery per event, and no card made twice. A run the killed instance had
  // started is not started again (its delivery fails with TOOL_RUN_INTERRUPTED once its lease ends).
  const toolEvents = deliveries.filter((d) => d.toTool)
  const toolDeliveries = await eventually(
    async () =>
      (await api('GET', `/v1/deliveries?triggerId=${toolTrigger.body.id}&limit=100`)).body
        .deliveries as any[],
    // Settled, but for those the killed instance held (its tool lane runs at most 4 at once).
    (ds) =>
      ds.length === toolEvents.length &&
      ds.every((d) => d.status !== 'pending' || d.attempts >= 1) &&
      ds.filter((d) => d.status === 'pending').length <= 4,
    120_000,
  )
  const cards: any[] = await tb('GET', `/1/lists/${mirrorList}/cards`)
  const names = cards.map((c) => c.name)
  assert.equal(new Set(names).size, names.length, `a tool run ran twice: ${names.sort().join(', ')}`)
  const delivered = toolDeliveries.filter((d) => d.status === 'delivered')
  assert.ok(names.length >= delivered.length)
  for (const d of toolDeliveries.filter((x) => x.status === 'failed'))
    assert.match(d.lastError, /TOOL_RUN_INTERRUPTED/)
  t.diagnostic(
    `acknowledged ${acked.size}/${TOTAL}; pushes re-sent after the kill (same webhook-id): ${resent}; ` +
      `tool runs: ${delivered.length} done, ${toolDeliveries.length - delivered.length} held by the killed instance (failed TOOL_RUN_INTERRUPTED when their lease ends)`,
  )
})
