// SIGTERM under a stream of signed webhooks, and a start again while they keep coming: the stop
// is clean (exit 0 within its limit), nothing acknowledged is lost or delivered twice, and while
// the new process starts no delivery is judged against an address it does not know yet — it is
// answered 503 SERVICE_STARTING with Retry-After, never 401 SIGNATURE_INVALID.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { tempDir } from '../helpers/databases.ts'
import { untilHealthy } from '../helpers/main-process.ts'
import { Receiver } from '../helpers/receiver.ts'
import {
  deliveriesByAction,
  Instance,
  newCardAgent,
  newTally,
  report,
  sendDeliveries,
  sleep,
} from './harness.ts'

let sandbox: TaskboardSandbox

before(async () => {
  sandbox = await startTaskboardSandbox()
})
after(async () => {
  await sandbox?.close()
})

test('SIGTERM under load, started again under traffic: exit 0, nothing acknowledged lost or doubled, 0 deliveries answered 401', {
  timeout: 180_000,
}, async () => {
  const logDir = tempDir('patchbay-faults-log-')
  const dataDir = tempDir('patchbay-faults-data-')
  const receiver = await new Receiver().start()
  const instance = await Instance.start(
    (self) => ({
      PATCHBAY_DATA_DIR: dataDir,
      PATCHBAY_TASKBOARD_URL: sandbox.url,
      PATCHBAY_PUBLIC_URL: self,
    }),
    logDir,
  )
  // Ended in `finally` too, so a failed wait leaves no loop running after the test.
  let stop = false
  try {
    const hookPath = await newCardAgent(instance.api(), sandbox, receiver)
    const tally = newTally()
    const sending = sendDeliveries({
      targets: () => [instance.url],
      publicUrl: instance.url,
      hookPath,
      sandbox,
      senders: 8,
      until: () => stop,
      tally,
    })
    await sleep(3_000)
    const ackedBeforeStop = tally.acked.size
    const stopStarted = Date.now()
    const exitCode = await instance.stop('SIGTERM')
    const stopMs = Date.now() - stopStarted
    // Started again at once, while the deliveries keep coming: the start is under traffic.
    const before = { ...tally.byStatus }
    await instance.restart({ wait: false })
    await untilHealthy(instance.url, instance.child!)
    const duringStart: Record<string, number> = {}
    for (const [k, v] of Object.entries(tally.byStatus)) duringStart[k] = v - (before[k] ?? 0)
    await sleep(3_000)
    stop = true
    await sending

    assert.equal(exitCode, 0, 'the stop was clean')
    assert.ok(stopMs < 15_000, `stopped in ${stopMs} ms`)
    assert.equal(tally.byStatus['401'] ?? 0, 0, `no delivery answered 401: ${JSON.stringify(tally.byStatus)}`)
    assert.equal(tally.byStatus['500'] ?? 0, 0, 'no 500')
    assert.equal(tally.withoutRetryAfter, 0, 'every 503 has Retry-After')
    assert.ok(
      Object.keys(tally.byStatus).every((s) => ['0', '200', '503'].includes(s)),
      `only 200, 503 or a refused connection: ${JSON.stringify(tally.byStatus)}`,
    )
    await receiver.until((rs) => {
      const seen = new Set(rs.map((r) => r.body.data.event.upstreamId))
      return [...tally.acked].every((id) => seen.has(id))
    }, 90_000)
    const by = deliveriesByAction(receiver)
    let doubled = 0
    let pushes = 0
    for (const id of tally.acked) {
      if (by.get(id)!.ids.size !== 1) doubled++
      pushes += by.get(id)!.pushes
    }
    assert.equal(doubled, 0, 'one delivery per acknowledged event')
    report({
      scenario: 'sigterm-and-restart-under-traffic',
      instances: 1,
      store: 'sqlite',
      sent: tally.sent,
      acknowledged: tally.acked.size,
      acknowledgedBeforeStop: ackedBeforeStop,
      answers: tally.byStatus,
      answersWhileStarting: duringStart,
      refusedCodes: tally.codes,
      answers401: tally.byStatus['401'] ?? 0,
      exitCode,
      stopMs,
      delivered: tally.acked.size,
      duplicatePushes: pushes - tally.acked.size,
    })
  } finally {
    stop = true
    await instance.stop('SIGKILL')
    await receiver.close()
  }
})
