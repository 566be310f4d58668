// The SDK (`patchbay/sdk`; test/package tests the installed package) against a real Patchbay and
// the sandbox task-board: typed step runs, API errors, retrying RATE_LIMITED with increasing delays,
// verifying a signed delivery, and following the agent's event stream with resume.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, test } from 'node:test'
import {
  DeliveryVerificationError,
  PatchbayApiError,
  PatchbayClient,
  type RunOptions,
  rateLimitDelayMs,
  type StepInput,
  type StepOutput,
  type StreamedDelivery,
  verifyDelivery,
} from '../../src/sdk/index.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control } from '../helpers/taskboard.ts'

let t: TestService
let admin: PatchbayClient
let conn: string

before(async () => {
  // Patchbay itself does not retry upstream 429s here, so the SDK's retry is what is tested.
  t = await startTestService({ env: { PATCHBAY_UPSTREAM_RETRIES: '0' } })
  admin = new PatchbayClient({ url: t.url, key: t.adminKey })
  conn = (
    await admin.connections.create({
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: {
        key: t.taskboard.demo.key,
        token: t.taskboard.demo.token,
        secret: t.taskboard.demo.secret,
      },
    })
  ).id
})
after(() => t.close())

test('runs steps with typed input and output', async () => {
  const input: StepInput<'taskboard.create_card'> = {
    idList: t.taskboard.demo.listIds[0],
    name: 'From the SDK',
    pos: 'top',
  }
  const created = await admin.runStep('taskboard.create_card', input, { connectionId: conn })
  const card: StepOutput<'taskboard.create_card'> = created.output
  assert.equal(card.name, 'From the SDK')
  assert.ok(created.meta.runId.startsWith('run_'))
  const read = await admin.runStep('taskboard.get_card', { idCard: card.id }, { connectionId: conn })
  assert.equal(read.output.idList, t.taskboard.demo.listIds[0])

  const steps = await admin.searchSteps('task-board')
  assert.ok(steps.some((s) => s.id === 'taskboard.create_card'))
})

test("lists a field's choices following its parent: the lists of a board", async () => {
  const boards = await admin.stepOptions('taskboard.create_card', 'idBoard', { connectionId: conn })
  const demo = boards.choices.find((c) => c.label === 'Demo Board')
  assert.equal(demo?.value, t.taskboard.demo.boardId)
  const lists = await admin.stepOptions('taskboard.create_card', 'idList', {
    connectionId: conn,
    parents: { idBoard: t.taskboard.demo.boardId },
  })
  assert.deepEqual(lists.parents, ['idBoard'])
  assert.deepEqual(
    lists.choices.map((c) => c.value),
    t.taskboard.demo.listIds,
  )
})

test('API errors carry code, message and hint', async () => {
  const err = await admin
    .runStep('taskboard.create_card', { idList: t.taskboard.demo.listIds[0] } as any, { connectionId: conn })
    .catch((e) => e)
  assert.ok(err instanceof PatchbayApiError)
  assert.equal(err.status, 400)
  assert.equal(err.code, 'VALIDATION_FAILED')
  assert.match(err.message, /input\.name/)
  assert.ok(err.hint)
  const stranger = new PatchbayClient({ url: t.url, key: 'pb_agent_nobody' })
  await assert.rejects(stranger.connections.list(), (e: any) => e.status === 401 && e.code === 'UNAUTHORIZED')
})

test('RATE_LIMITED is retried with increasing delays until the upstream accepts again', async () => {
  const call = (retry?: RunOptions['retry']) =>
    admin.runStep(
      'taskboard.api_call',
      { method: 'GET', endpoint: `/1/boards/${t.taskboard.demo.boardId}` },
      { connectionId: conn, retry },
    )
  // A frozen sandbox clock keeps the rate-limit window from ending on its own.
  await control(t.taskboard, 'POST', '/clock', { freeze: true })
  await control(t.taskboard, 'POST', '/rate-limits', { tokenLimit: 2, windowMs: 10_000 })
  try {
    await call()
    await call()
    const refused = await call().catch((e) => e)
    assert.ok(refused instanceof PatchbayApiError, String(refused))
    assert.equal(refused.code, 'RATE_LIMITED')
    assert.equal(refused.status, 429)

    const seen: Array<{ attempt: number; delayMs: number; code: string }> = []
    const result = await call({
      baseDelayMs: 20,
      onRetry: ({ attempt, delayMs, error }) => seen.push({ attempt, delayMs, code: error.code }),
      sleep: async (ms) => {
        // The window passes while the SDK waits before its third attempt.
        if (seen.length === 2) await control(t.taskboard, 'POST', '/clock', { advanceMs: 10_000 })
        await new Promise((r) => setTimeout(r, ms))
      },
    })
    assert.equal(result.output.status, 200)
    assert.deepEqual(
      seen.map((s) => [s.attempt, s.code]),
      [
        [1, 'RATE_LIMITED'],
        [2, 'RATE_LIMITED'],
      ],
    )
    assert.ok(seen[1].delayMs > seen[0].delayMs, JSON.stringify(seen))
  } finally {
    await control(t.taskboard, 'POST', '/rate-limits', { tokenLimit: 100, keyLimit: 300, windowMs: 10_000 })
    await control(t.taskboard, 'POST', '/clock', { unfreeze: true })
  }
})

test('retry delays grow and never undercut retryAfterMs', () => {
  const delays = [0, 1, 2, 3].map((n) => rateLimitDelayMs(n, undefined, { baseDelayMs: 100, jitter: 0.2 }))
  for (let i = 1; i < delays.length; i++) assert.ok(delays[i] > delays[i - 1], JSON.stringify(delays))
  assert.ok(rateLimitDelayMs(0, 5_000, { baseDelayMs: 100 }) >= 5_000)
  assert.ok(rateLimitDelayMs(10, undefined, { baseDelayMs: 100, maxDelayMs: 1_000, jitter: 0 }) === 1_000)
})

test('verifies a signed delivery, and refuses a tampered or foreign one', async () => {
  const got: Array<{ body: string; headers: http.IncomingHttpHeaders }> = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      got.push({ body, headers: req.headers })
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  try {
    const agent = await admin.agents.create({
      name: 'Pushed',
      scope: { boards: [t.taskboard.demo.boardId] },
      connectionIds: [conn],
      delivery: { type: 'webhook', url: `http://127.0.0.1:${port}/hook` },
    })
    await admin.triggers.create(agent.id, {
      trigger: 'taskboard.new_card',
      connectionId: conn,
      config: { idBoard: t.taskboard.demo.boardId },
    })
    await admin.runStep(
      'taskboard.create_card',
      { idList: t.taskboard.demo.listIds[0], name: 'Signed' },
      { connectionId: conn },
    )
    await until(() => got.length > 0)
    const { body, headers } = got[0]
    const payload = verifyDelivery<{ card: { name: string } }>(agent.signingSecret, body, headers)
    assert.equal(payload.type, 'taskboard.new_card')
    assert.equal(payload.data.event.data.card.name, 'Signed')
    assert.equal(payload.id, headers['webhook-id'])
    assert.throws(
      () => verifyDelivery(agent.signingSecret, body.replace('Signed', 'Forged'), headers),
      DeliveryVerificationError,
    )
    const other = await admin.agents.create({
      name: 'Other',
      scope: { boards: [] },
      connectionIds: [],
      delivery: { type: 'stream' },
    })
    assert.throws(() => verifyDelivery(other.signingSecret, body, headers), DeliveryVerificationError)
    await admin.agents.remove(agent.id)
    await admin.agents.remove(other.id)
  } finally {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  }
})

test("follows the agent's event stream and resumes after the last event it saw", async () => {
  const agent = await admin.agents.create({
    name: 'Streamed',
    scope: { boards: [t.taskboard.demo.boardId] },
    connectionIds: [conn],
    delivery: { type: 'stream' },
  })
  const key = (await admin.agents.keys.create(agent.id, 'stream')).key
  const client = new PatchbayClient({ url: t.url, key })
  await admin.triggers.create(agent.id, {
    trigger: 'taskboard.new_card',
    connectionId: conn,
    config: { idBoard: t.taskboard.demo.boardId },
  })
  const card = (name: string) =>
    admin.runStep(
      'taskboard.create_card',
      { idList: t.taskboard.demo.listIds[0], name },
      { connectionId: conn },
    )

  const take = async (n: number, lastEventId?: number) => {
    const ctrl = new AbortController()
    const out: StreamedDelivery[] = []
    for await (const d of client.events(agent.id, { lastEventId, signal: ctrl.signal })) {
      out.push(d)
      if (out.length === n) ctrl.abort()
    }
    return out
  }
  // Another agent's stream is refused, not retried. (Asked first: after an aborted stream the
  // server's close waits out the client's keep-alive, which would only slow the suite.)
  await assert.rejects(
    (async () => {
      for await (const _ of client.events('agt_other')) break
    })(),
    (e: any) => e instanceof PatchbayApiError && e.status === 403,
  )
  const live = take(2)
  await card('one')
  await card('two')
  const first = await live
  assert.deepEqual(
    first.map((d) => (d.delivery.data.event.data as any).card.name),
    ['one', 'two'],
  )
  assert.ok(first[1].seq > first[0].seq)
  await card('three')
  const resumed = await take(2, first[0].seq)
  assert.deepEqual(
    resumed.map((d) => (d.delivery.data.event.data as any).card.name),
    ['two', 'three'],
  )
})

async function until(ok: () => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 25))
  }
}

// Compile-time checks (npm run typecheck): step ids, inputs and outputs are typed from the registry.
export function typeChecks(c: PatchbayClient) {
  // @ts-expect-error an unknown step id
  void c.runStep('taskboard.nope', {})
  // @ts-expect-error idList must be a string
  void c.runStep('taskboard.create_card', { idList: 1, name: 'x' })
  // @ts-expect-error name is required
  const missing: StepInput<'taskboard.create_card'> = { idList: 'x' }
  const output = null as unknown as StepOutput<'taskboard.get_card'>
  // @ts-expect-error a card has no such field
  void output.notAField
  return missing
}
