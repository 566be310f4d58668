// Two Patchbay instances sharing Redis share a token's pacing budget: together they never send
// more than the budget allows, so the upstream never answers 429. The Redis pacer keeps Redis's
// own time (so instances agree), which a test cannot drive by hand: the upstream's window here is
// a fifth of the budget's, so a request may take up to 0.8 s to arrive (a loaded machine) without
// a false 429, while two instances pacing alone (ten requests at once) would still meet one.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Redis } from 'ioredis'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { createRedisPacer } from '../../src/kit/redis-pacer.ts'
import { REDIS_URL, redisUnavailableReason } from '../helpers/redis.ts'
import { startTestService, TEST_REDIS_PREFIX, type TestService } from '../helpers/service.ts'
import { control } from '../helpers/taskboard.ts'

const reason = await redisUnavailableReason()
if (reason) console.log(`# skipping the shared-pacing suite: ${reason}`)

let sandbox: TaskboardSandbox
const instances: TestService[] = []

before(async () => {
  if (reason) return
  sandbox = await startTaskboardSandbox()
  await control(sandbox, 'POST', '/rate-limits', { tokenLimit: 5, keyLimit: 1000, windowMs: 200 })
  for (let i = 0; i < 2; i++)
    instances.push(
      await startTestService({ taskboard: sandbox, env: { REDIS_URL, PATCHBAY_TASKBOARD_PACING: '5/1000' } }),
    )
})
after(async () => {
  for (const t of instances) await t.close()
  await sandbox?.close()
})

test('two instances on one token stay inside its budget together', { skip: reason ?? false }, async () => {
  const auth = {
    authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
  }
  const cards = await (
    await fetch(`${sandbox.url}/1/lists/${sandbox.demo.listIds[0]}/cards`, { headers: auth })
  ).json()
  await new Promise((r) => setTimeout(r, 1100))
  const conns = await Promise.all(
    instances.map(async (t) => {
      const res = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: sandbox.demo.key, token: sandbox.demo.token },
      })
      assert.equal(res.status, 201, JSON.stringify(res.body))
      return res.body.id as string
    }),
  )
  const runs = await Promise.all(
    Array.from({ length: 14 }, (_, i) =>
      instances[i % 2].api('POST', '/v1/steps/taskboard.get_card/run', {
        connectionId: conns[i % 2],
        input: { idCard: cards[0].id },
      }),
    ),
  )
  for (const r of runs) assert.equal(r.status, 200, JSON.stringify(r.body))
  // Had either instance paced alone, the other's requests would have met the upstream's 429.
  assert.deepEqual(
    runs.map((r) => r.body.meta.attempts),
    Array(14).fill(1),
  )
  // The sliding log lives in Redis under this deployment's prefix, never more than the budget in it.
  const redis = new Redis(REDIS_URL)
  try {
    const [key] = await redis.keys(`${TEST_REDIS_PREFIX}pace:*`)
    assert.ok(key, 'the pacing log is in Redis under the deployment prefix')
    assert.ok((await redis.zcard(key)) <= 5)
  } finally {
    redis.disconnect()
  }
})

test('a request on its way keeps its place in the shared log until it is answered', {
  skip: reason ?? false,
}, async () => {
  const redis = new Redis(REDIS_URL, { keyPrefix: TEST_REDIS_PREFIX })
  try {
    const pacer = createRedisPacer(redis)
    const budget = { points: 2, durationMs: 100 }
    const onTheirWay = await Promise.all([pacer.wait('slow', budget), pacer.wait('slow', budget)])
    let through = false
    const third = pacer.wait('slow', budget).then((answered) => {
      through = true
      return answered
    })
    // Three windows pass with both still on their way (counted from when they were let go, both
    // would have left the window long ago and the third would have gone).
    await new Promise((r) => setTimeout(r, 400))
    assert.equal(through, false)
    onTheirWay[0]!()
    ;(await third)()
    assert.equal(through, true)
    onTheirWay[1]!()
  } finally {
    redis.disconnect()
  }
})
