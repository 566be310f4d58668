// Pacing against the sandbox with a short window: ready-made steps and trigger polls on one token
// share one budget and together stay under the upstream's limit (no retries are allowed here, so
// a single 429 would fail a step or a poll); the API Call step is not paced and surfaces the
// upstream's 429 as RATE_LIMITED. Time is driven by hand (Patchbay's clock and the sandbox's move
// together), so the outcome does not depend on the machine's speed or load.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { createPacer } from '../../src/kit/pacer.ts'
import { countingPacer, ManualClock, SharedTime } from '../helpers/manual-clock.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { connectDemoTaskboard, control } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let connectionId: string
let card: string
const clock = new ManualClock()
const pacer = countingPacer(createPacer(clock))
let time: SharedTime

before(async () => {
  sandbox = await startTaskboardSandbox()
  time = new SharedTime(clock, pacer, sandbox)
  await control(sandbox, 'POST', '/rate-limits', { tokenLimit: 10, keyLimit: 100_000, windowMs: 1000 })
  t = await startTestService({
    taskboard: sandbox,
    clock,
    pacer,
    env: {
      PATCHBAY_TASKBOARD_PACING: '10/1000',
      PATCHBAY_UPSTREAM_RETRIES: '0',
      PATCHBAY_MIN_POLL_INTERVAL_MS: '100',
      // Polls run only when a test asks (POST /poll): a sweep, on real time, would otherwise poll
      // a new trigger at a moment of the machine's choosing — under load, inside the next test.
      PATCHBAY_DELIVERY_SCAN_MS: '3600000',
    },
  })
  connectionId = await connectDemoTaskboard(t, sandbox)
  const made = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId,
    input: { idList: sandbox.demo.listIds[0], name: 'Paced' },
  })
  card = made.body.output.id
})
after(async () => {
  time.close()
  await t.close()
  await sandbox.close()
})

test('ready-made steps and trigger polls on one token share its budget: no 429 reaches them', async () => {
  const agent = await t.api('POST', '/v1/agents', {
    name: 'poller',
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  const triggers: string[] = []
  for (let i = 0; i < 3; i++) {
    const trig = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
      trigger: 'taskboard.card_due_date_reminder',
      connectionId,
      config: { idBoard: sandbox.demo.boardId },
      pollIntervalMs: 3_600_000,
    })
    assert.equal(trig.status, 201, JSON.stringify(trig.body))
    triggers.push(trig.body.id)
  }
  // 35 steps and 3 polls at once: three and a half times the per-second budget.
  // A fresh window: the requests made so far (the connection's check is not paced) are behind us.
  await time.advance(1_100)
  const results = await time.run(async () => {
    const steps = Array.from({ length: 35 }, () =>
      t.api('POST', '/v1/steps/taskboard.get_card/run', { connectionId, input: { idCard: card } }),
    )
    const polls = triggers.map((id) => t.api('POST', `/v1/triggers/${id}/poll`))
    await Promise.all(polls)
    return Promise.all(steps)
  })
  // Pacing held most of them back: they went out over at least four windows of the budget.
  assert.ok(pacer.granted >= 38)
  for (const r of results) {
    assert.equal(r.status, 200, JSON.stringify(r.body))
    assert.equal(r.body.meta.attempts, 1)
  }
  for (const id of triggers) {
    const view = (await t.api('GET', `/v1/triggers/${id}`)).body
    assert.ok(view.poll.lastPollAt)
    assert.equal(view.poll.lastError, null)
  }
})

test('the API Call step is not paced: over the budget it comes back RATE_LIMITED', async () => {
  const granted = pacer.granted
  // A fresh window of 10 requests, the same for all 30 (time stands still meanwhile).
  await time.advance(1_100)
  const calls = await Promise.all(
    Array.from({ length: 30 }, () =>
      t.api('POST', '/v1/steps/taskboard.api_call/run', {
        connectionId,
        input: { method: 'GET', endpoint: `/1/cards/${card}` },
      }),
    ),
  )
  assert.equal(pacer.granted, granted, 'nothing went through the pacer')
  const limited = calls.filter((r) => r.status === 429)
  assert.equal(limited.length, 20, 'the calls over the upstream limit of 10')
  assert.equal(calls.filter((r) => r.status === 200).length, 10)
  for (const r of limited) {
    assert.equal(r.body.error.code, 'RATE_LIMITED')
    assert.match(r.body.error.hint, /retry/i)
    assert.equal(r.body.error.upstream.status, 429)
  }
})
