// Redis stopped for FAULTS_OUTAGE_MS (15 s) under paced steps, on PostgreSQL with two instances:
// no answer is a 500 (steps are paced on each instance's share of the budget meanwhile), the
// outage is logged once as a structured warning (no "[ioredis] Unhandled error event" lines),
// a change made during the outage still reaches the other instance (over PostgreSQL), and the
// shared pacing comes back by itself once Redis does.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { tempDir } from '../helpers/databases.ts'
import { eventually } from '../helpers/receiver.ts'
import { Instance, report, sleep } from './harness.ts'
import { PrivatePostgres, PrivateRedis, privateServicesUnavailable } from './private-services.ts'

const OUTAGE_MS = Number(process.env.FAULTS_OUTAGE_MS ?? 15_000)
const skip = privateServicesUnavailable()
let sandbox: TaskboardSandbox
let pg: PrivatePostgres
let redis: PrivateRedis

before(async () => {
  if (skip) return
  sandbox = await startTaskboardSandbox()
  pg = await PrivatePostgres.start()
  redis = await PrivateRedis.start()
})
after(async () => {
  await redis?.close()
  await pg?.close()
  await sandbox?.close()
})

test(`Redis stopped ${OUTAGE_MS / 1000} s under paced steps: no 500, one warning, changes over PostgreSQL, recovery by itself`, {
  skip: skip ?? false,
  timeout: 180_000,
}, async () => {
  const logDir = tempDir('patchbay-faults-log-')
  const env = {
    PATCHBAY_DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    PATCHBAY_TASKBOARD_URL: sandbox.url,
    PATCHBAY_TASKBOARD_PACING: '10/1000',
  }
  const a = await Instance.start(env, logDir)
  const b = await Instance.start(env, logDir)
  // Ended in `finally` too, so a failed wait leaves no loop running after the test.
  let stop = false
  try {
    const conn = await a.api()('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
    })
    assert.equal(conn.status, 201, JSON.stringify(conn.body))
    const connectionId = conn.body.id as string
    const step = (instance: Instance, connection: string) =>
      fetch(`${instance.url}/v1/steps/taskboard.get_boards/run`, {
        method: 'POST',
        headers: { authorization: 'Bearer pb_admin_faults_test_key', 'content-type': 'application/json' },
        body: JSON.stringify({ connectionId: connection, input: {} }),
        signal: AbortSignal.timeout(30_000),
      }).catch(() => null)
    // An agent key, used once on A (so A has it cached) and revoked on B during the outage.
    const agent = await a.api()('POST', '/v1/agents', {
      name: 'redis-outage',
      scope: { boards: [sandbox.demo.boardId] },
      connectionIds: [connectionId],
      delivery: { type: 'stream' },
    })
    assert.equal(agent.status, 201, JSON.stringify(agent.body))
    const key = await a.api()('POST', `/v1/agents/${agent.body.id}/keys`, {})
    const asAgent = (instance: Instance) =>
      fetch(`${instance.url}/v1/agents/${agent.body.id}`, {
        headers: { authorization: `Bearer ${key.body.key}` },
      }).then((r) => r.status)
    assert.equal(await asAgent(a), 200)
    const answers: Record<string, number> = {}
    const during: Record<string, number> = {}
    let outage = false
    const run = async (instance: Instance) => {
      while (!stop) {
        const res = await step(instance, connectionId)
        const key = res ? String(res.status) : '0'
        answers[key] = (answers[key] ?? 0) + 1
        if (outage) during[key] = (during[key] ?? 0) + 1
        await res?.body?.cancel()
      }
    }
    const steps = [a, a, b, b].map(run)
    await sleep(2_000)
    outage = true
    await redis.stop()
    await sleep(OUTAGE_MS / 2)
    // A change during the outage: the key revoked on B is refused on A (told over PostgreSQL).
    const revoked = await b.api()('DELETE', `/v1/agents/${agent.body.id}/keys/${key.body.id}`)
    assert.equal(revoked.status, 204, JSON.stringify(revoked.body))
    const seenOnA = await eventually(
      () => asAgent(a),
      (s) => s === 401,
      10_000,
    ).then(
      () => true,
      () => false,
    )
    await sleep(OUTAGE_MS / 2)
    const backAt = Date.now()
    await redis.resume()
    outage = false
    // Recovery: /readyz says Redis is ok again on both, without a restart.
    for (const i of [a, b])
      await eventually(
        async () => (await (await fetch(`${i.url}/readyz`)).json()).checks.redis,
        (c) => c === 'ok',
        30_000,
      )
    const recoveredMs = Date.now() - backAt
    await sleep(2_000)
    stop = true
    await Promise.all(steps)

    assert.ok(a.alive && b.alive, 'both instances still run')
    assert.equal(answers['500'] ?? 0, 0, `no 500: ${JSON.stringify(answers)}`)
    assert.ok(
      Object.keys(answers).every((s) => s === '200' || s === '503' || s === '429'),
      `steps answered 200 (or a clear 503/429): ${JSON.stringify(answers)}`,
    )
    assert.ok((during['200'] ?? 0) > 0, `steps still ran during the outage: ${JSON.stringify(during)}`)
    const lines = [a, b].flatMap((i) => i.logLines())
    const downWarnings = lines.filter((l) => l.redis === 'down')
    const raw = [a, b].map((i) => fs.readFileSync(i.log, 'utf8')).join('\n')
    assert.equal((raw.match(/Unhandled error event/g) ?? []).length, 0, 'no unhandled ioredis error lines')
    assert.ok(
      downWarnings.length >= 1 && downWarnings.length <= 2,
      `one warning per instance: ${downWarnings.length}`,
    )
    assert.equal(lines.filter((l) => l.redis === 'up').length >= 1, true, 'the return is logged')
    assert.equal(seenOnA, true, 'a change made during the outage reached the other instance')
    report({
      scenario: 'redis-stopped',
      instances: 2,
      outageMs: OUTAGE_MS,
      steps: Object.values(answers).reduce((x, y) => x + y, 0),
      answers,
      answersDuringOutage: during,
      answers500: answers['500'] ?? 0,
      outageWarnings: downWarnings.length,
      unhandledIoredisLines: 0,
      changeDuringOutageSeenByOther: seenOnA,
      readyAgainMsAfterRedisBack: recoveredMs,
    })
  } finally {
    stop = true
    await a.stop('SIGKILL')
    await b.stop('SIGKILL')
  }
})
