// The upstream answers 500 for a while, then accepts requests and never answers, then comes back:
// steps answer 502 UPSTREAM_ERROR and then 504 UPSTREAM_TIMEOUT (never a 500), a manual poll
// answers the same codes and the trigger shows the failure and the next attempt, webhook
// deliveries are still acknowledged and delivered meanwhile (they need no upstream), and
// everything answers 200 again as soon as the upstream does — without a restart.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { tempDir } from '../helpers/databases.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import {
  deliveriesByAction,
  Instance,
  newCardAgent,
  newTally,
  report,
  sendDeliveries,
  sleep,
} from './harness.ts'

const PHASE_MS = Number(process.env.FAULTS_PHASE_MS ?? 6_000)
let sandbox: TaskboardSandbox

before(async () => {
  sandbox = await startTaskboardSandbox()
})
after(async () => {
  await sandbox?.close()
})

const fault = (spec: Record<string, unknown> | null) =>
  fetch(`${sandbox.url}/_sandbox/faults`, {
    method: spec ? 'POST' : 'DELETE',
    headers: spec ? { 'content-type': 'application/json' } : {},
    body: spec ? JSON.stringify(spec) : undefined,
  })

test('an upstream that fails, then hangs, then returns: 502 then 504, never a 500; polls say so; webhooks keep flowing; recovery by itself', {
  timeout: 180_000,
}, async () => {
  const logDir = tempDir('patchbay-faults-log-')
  const receiver = await new Receiver().start()
  const instance = await Instance.start(
    (self) => ({
      PATCHBAY_DATA_DIR: tempDir('patchbay-faults-data-'),
      PATCHBAY_TASKBOARD_URL: sandbox.url,
      PATCHBAY_PUBLIC_URL: self,
      PATCHBAY_UPSTREAM_TIMEOUT_MS: '1500',
      PATCHBAY_UPSTREAM_RETRIES: '1',
    }),
    logDir,
  )
  // Ended in `finally` too, so a failed wait leaves no loop running after the test.
  let stop = false
  try {
    const api = instance.api()
    const hookPath = await newCardAgent(api, sandbox, receiver)
    const connectionId = (await api('GET', '/v1/connections')).body.connections[0].id
    const agentId = (await api('GET', '/v1/agents')).body.agents[0].id
    const polled = await api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.new_notification',
      connectionId,
      config: {},
      pollIntervalMs: 3_600_000,
    })
    assert.equal(polled.status, 201, JSON.stringify(polled.body))
    const pollId = polled.body.id
    await eventually(
      async () => (await api('GET', `/v1/triggers/${pollId}`)).body.poll.lastPollAt,
      (v) => Boolean(v),
    )

    let phase: 'failing' | 'hanging' | 'back' | 'before' = 'before'
    const steps: Record<string, Record<string, number>> = { before: {}, failing: {}, hanging: {}, back: {} }
    const codes: Record<string, Record<string, number>> = { before: {}, failing: {}, hanging: {}, back: {} }
    const stepLoop = async () => {
      while (!stop) {
        const at = phase
        const res = await fetch(`${instance.url}/v1/steps/taskboard.get_boards/run`, {
          method: 'POST',
          headers: { authorization: 'Bearer pb_admin_faults_test_key', 'content-type': 'application/json' },
          body: JSON.stringify({ connectionId, input: {} }),
          signal: AbortSignal.timeout(30_000),
        }).catch(() => null)
        const status = res ? String(res.status) : '0'
        steps[at][status] = (steps[at][status] ?? 0) + 1
        const body = res ? ((await res.json().catch(() => ({}))) as { error?: { code?: string } }) : {}
        if (body.error?.code) codes[at][body.error.code] = (codes[at][body.error.code] ?? 0) + 1
        await sleep(100)
      }
    }
    const tally = newTally()
    const sending = sendDeliveries({
      targets: () => [instance.url],
      publicUrl: instance.url,
      hookPath,
      sandbox,
      senders: 2,
      until: () => stop,
      tally,
    })
    const loops = [stepLoop(), stepLoop()]
    await sleep(1_000)
    const polls: Record<string, { status: number; code?: string }> = {}
    phase = 'failing'
    await fault({ pathPrefix: '/1/members/me', errorRate: 1, errorStatus: 500 })
    await sleep(PHASE_MS / 2)
    const failedPoll = await api('POST', `/v1/triggers/${pollId}/poll`)
    polls.failing = { status: failedPoll.status, code: failedPoll.body.error?.code }
    const stateAfterFailure = (await api('GET', `/v1/triggers/${pollId}`)).body.poll
    await sleep(PHASE_MS / 2)
    await fault(null)
    phase = 'hanging'
    await fault({ pathPrefix: '/1/members/me', timeout: true })
    await sleep(PHASE_MS / 2)
    const hungPoll = await api('POST', `/v1/triggers/${pollId}/poll`)
    polls.hanging = { status: hungPoll.status, code: hungPoll.body.error?.code }
    await sleep(PHASE_MS / 2)
    await fault(null)
    phase = 'back'
    const backAt = Date.now()
    await eventually(
      async () => steps.back['200'] ?? 0,
      (n) => n >= 3,
      30_000,
    )
    const recoveredMs = Date.now() - backAt
    const backPoll = await api('POST', `/v1/triggers/${pollId}/poll`)
    polls.back = { status: backPoll.status }
    stop = true
    await Promise.all(loops)
    await sending

    assert.ok(instance.alive, 'the process is still running')
    const all = Object.values(steps).flatMap((s) => Object.keys(s))
    assert.ok(!all.includes('500'), `no 500: ${JSON.stringify(steps)}`)
    assert.ok(
      (steps.failing['502'] ?? 0) > 0,
      `502 while the upstream failed: ${JSON.stringify(steps.failing)}`,
    )
    assert.ok((codes.failing.UPSTREAM_ERROR ?? 0) > 0, JSON.stringify(codes.failing))
    assert.ok((steps.hanging['504'] ?? 0) > 0, `504 while it hung: ${JSON.stringify(steps.hanging)}`)
    assert.ok((codes.hanging.UPSTREAM_TIMEOUT ?? 0) > 0, JSON.stringify(codes.hanging))
    assert.deepEqual(polls.failing, { status: 502, code: 'UPSTREAM_ERROR' })
    assert.deepEqual(polls.hanging, { status: 504, code: 'UPSTREAM_TIMEOUT' })
    assert.equal(polls.back.status, 200)
    assert.match(stateAfterFailure.lastError, /^UPSTREAM_ERROR: /)
    assert.ok(stateAfterFailure.nextPollAt, 'the next attempt is shown')
    // Webhook deliveries need no upstream: acknowledged and delivered throughout, once each.
    assert.ok(
      Object.keys(tally.byStatus).every((s) => s === '200'),
      `deliveries all acknowledged: ${JSON.stringify(tally.byStatus)}`,
    )
    await receiver.until((rs) => {
      const seen = new Set(rs.map((r) => r.body.data.event.upstreamId))
      return [...tally.acked].every((id) => seen.has(id))
    }, 60_000)
    const by = deliveriesByAction(receiver)
    assert.ok(
      [...tally.acked].every((id) => by.get(id)!.ids.size === 1),
      'one delivery per event',
    )
    report({
      scenario: 'upstream-fails-then-hangs',
      phaseMs: PHASE_MS,
      steps,
      stepCodes: codes,
      manualPolls: polls,
      triggerStateAfterFailure: {
        lastError: stateAfterFailure.lastError?.slice(0, 80),
        nextPollAt: stateAfterFailure.nextPollAt,
      },
      webhooksAcknowledged: tally.acked.size,
      webhooksDelivered: tally.acked.size,
      answers500: 0,
      recoveredMsAfterUpstreamBack: recoveredMs,
    })
  } finally {
    stop = true
    await instance.stop('SIGKILL')
    await receiver.close()
  }
})
