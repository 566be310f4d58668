// PostgreSQL stopped for FAULTS_OUTAGE_MS (15 s) under a stream of signed webhooks, with one and
// with three instances: every process stays up, clients see 503 with Retry-After (never a 2xx for
// something not stored, never a 500), /readyz says why, and once the database is back every
// acknowledged delivery reaches the agent exactly once — without a restart.
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
  watchReadiness,
} from './harness.ts'
import { PrivatePostgres, privateServicesUnavailable } from './private-services.ts'

const OUTAGE_MS = Number(process.env.FAULTS_OUTAGE_MS ?? 15_000)
const skip = privateServicesUnavailable()
let sandbox: TaskboardSandbox
let pg: PrivatePostgres

before(async () => {
  if (skip) return
  sandbox = await startTaskboardSandbox()
  pg = await PrivatePostgres.start()
})
after(async () => {
  await pg?.close()
  await sandbox?.close()
})

for (const count of [1, 3])
  test(`PostgreSQL stopped ${OUTAGE_MS / 1000} s under ingress, ${count} instance(s): 503 with Retry-After, /readyz says why, nothing acknowledged lost, recovery without a restart`, {
    skip: skip ?? false,
    timeout: 180_000,
  }, async () => {
    const logDir = tempDir('patchbay-faults-log-')
    const database = `faults_${count}_${Date.now()}`
    // A database of its own for each run, on the private server.
    const { default: pgDriver } = await import('pg')
    const admin = new pgDriver.Client({ connectionString: pg.url })
    await admin.connect()
    await admin.query(`create database ${database}`)
    await admin.end()
    const url = pg.url.replace(/\/postgres$/, `/${database}`)
    const receiver = await new Receiver().start()
    const instances: Instance[] = []
    // Every instance is reached at the first one's public address (the signatures cover it).
    const first = await Instance.start(
      (self) => ({
        PATCHBAY_DATABASE_URL: url,
        PATCHBAY_TASKBOARD_URL: sandbox.url,
        PATCHBAY_PUBLIC_URL: self,
      }),
      logDir,
    )
    instances.push(first)
    for (let i = 1; i < count; i++)
      instances.push(
        await Instance.start(
          { PATCHBAY_DATABASE_URL: url, PATCHBAY_TASKBOARD_URL: sandbox.url, PATCHBAY_PUBLIC_URL: first.url },
          logDir,
        ),
      )
    // Ended in `finally` too, so a failed wait leaves no loop running after the test.
    let stop = false
    let outage = false
    try {
      const hookPath = await newCardAgent(first.api(), sandbox, receiver)
      const tally = newTally()
      const during = newTally()
      const sending = sendDeliveries({
        targets: () => instances.map((i) => i.url),
        publicUrl: first.url,
        hookPath,
        sandbox,
        senders: 8,
        until: () => stop,
        tally,
      })
      // What clients other than the upstream saw meanwhile: an API read every 200 ms.
      const apiAnswers: Record<string, number> = {}
      let apiWithoutRetryAfter = 0
      const apiReads = (async () => {
        while (!stop) {
          for (const instance of instances) {
            const res = await fetch(`${instance.url}/v1/deliveries?limit=1`, {
              headers: { authorization: `Bearer pb_admin_faults_test_key` },
            }).catch(() => null)
            const key = res ? String(res.status) : '0'
            apiAnswers[key] = (apiAnswers[key] ?? 0) + 1
            if (res?.status === 503 && !res.headers.get('retry-after')) apiWithoutRetryAfter++
            await res?.body?.cancel()
          }
          await sleep(200)
        }
      })()
      await sleep(3_000)
      const ackedBefore = tally.acked.size
      outage = true
      const readiness = instances.map((i) => watchReadiness(i.url, () => !outage))
      const statusBefore = { ...tally.byStatus }
      await pg.stop()
      await sleep(OUTAGE_MS)
      for (const [k, v] of Object.entries(tally.byStatus)) during.byStatus[k] = v - (statusBefore[k] ?? 0)
      const backAt = Date.now()
      await pg.resume()
      // Recovery: the first delivery acknowledged after the database answers again.
      const ackedAtResume = tally.acked.size
      await eventually(
        async () => tally.acked.size,
        (n) => n > ackedAtResume + 20,
        60_000,
      )
      const recoveredMs = Date.now() - backAt
      outage = false
      const ready = await Promise.all(readiness)
      await sleep(2_000)
      stop = true
      await sending
      await apiReads

      // Every process stayed up through the outage.
      assert.ok(
        instances.every((i) => i.alive),
        'every instance is still running',
      )
      // What the upstream saw: 200 or 503 with Retry-After, never a 500 or anything else.
      const statuses = Object.keys(tally.byStatus)
      assert.ok(
        statuses.every((s) => s === '200' || s === '503'),
        `only 200 and 503 answered: ${JSON.stringify(tally.byStatus)}`,
      )
      assert.ok((during.byStatus['503'] ?? 0) > 0, 'deliveries were refused with 503 during the outage')
      assert.equal(tally.withoutRetryAfter, 0, 'every 503 has Retry-After')
      assert.ok(
        Object.keys(apiAnswers).every((s) => s === '200' || s === '503'),
        `the API answered 200 or 503: ${JSON.stringify(apiAnswers)}`,
      )
      assert.equal(apiWithoutRetryAfter, 0, 'every API 503 has Retry-After')
      // /readyz said why while the database was away.
      for (const r of ready) {
        const away = r.answers.filter((a) => a.status === 503)
        assert.ok(away.length > 0, '/readyz answered 503 during the outage')
        assert.ok(
          away.some((a) => /unreachable/.test(a.checks.database ?? '')),
          `/readyz named the database: ${JSON.stringify(away[0])}`,
        )
      }
      for (const instance of instances)
        assert.equal((await fetch(`${instance.url}/readyz`)).status, 200, 'ready again without a restart')

      // Every acknowledged delivery reaches the agent, once.
      await receiver.until((rs) => {
        const seen = new Set(rs.map((r) => r.body.data.event.upstreamId))
        return [...tally.acked].every((id) => seen.has(id))
      }, 90_000)
      const by = deliveriesByAction(receiver)
      let doubled = 0
      let pushes = 0
      for (const id of tally.acked) {
        const entry = by.get(id)!
        if (entry.ids.size !== 1) doubled++
        pushes += entry.pushes
      }
      assert.equal(doubled, 0, 'one delivery per acknowledged event')
      const warnings = instances
        .flatMap((i) => i.logLines())
        .filter((l) => /does not answer/.test(l.msg ?? ''))
      report({
        scenario: 'postgresql-stopped',
        instances: count,
        outageMs: OUTAGE_MS,
        sent: tally.sent,
        acknowledged: tally.acked.size,
        acknowledgedBeforeOutage: ackedBefore,
        answers: tally.byStatus,
        answersDuringOutage: during.byStatus,
        refusedCodes: tally.codes,
        withoutRetryAfter: tally.withoutRetryAfter,
        apiAnswers,
        readyzDuringOutage: ready.map((r) => r.answers.filter((a) => a.status === 503).length),
        readyzReason: ready[0].answers.find((a) => a.status === 503)?.checks.database,
        delivered: tally.acked.size,
        duplicatePushes: pushes - tally.acked.size,
        recoveredMsAfterDatabaseBack: recoveredMs,
        processesUp: instances.filter((i) => i.alive).length,
        outageWarningsLogged: warnings.length,
      })
    } finally {
      stop = true
      outage = false
      for (const i of instances) await i.stop('SIGKILL')
      await receiver.close()
    }
  })
