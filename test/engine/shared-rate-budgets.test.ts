// The code-host's request budget (x-ratelimit-*) is spent once between the instances that share a
// credential: with Redis, each ready-made request takes one request of the budget in a shared
// ledger before it is sent, so three instances together send no more than the window allows and
// the upstream refuses none of them; what is over the budget is RATE_LIMITED by Patchbay with
// nothing sent. Without sharing, each instance counted only what its own answers told it, and
// three instances drew the upstream's 429s where one drew none.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type CodehostSandbox, startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import { ch, connectWithToken, mintToken } from '../helpers/codehost.ts'
import { REDIS_URL, redisUnavailableReason } from '../helpers/redis.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

const R = { owner: 'octo-demo', repo: 'hello-world' }
let sb: CodehostSandbox
let group: TestService[] = []
let unavailable: string | null = null

before(async () => {
  unavailable = await redisUnavailableReason()
  if (unavailable) return
  sb = await startCodehostSandbox()
  // Three instances on one Redis (one deployment prefix, as instances of one deployment have).
  group = await Promise.all([0, 1, 2].map(() => startTestService({ codehost: sb, env: { REDIS_URL } })))
})
after(async () => {
  await Promise.all(group.map((t) => t.close()))
  await sb?.close()
})

test('three instances sharing a token spend one code-host budget: the upstream refuses none of their requests', async (t) => {
  if (unavailable) return t.skip(unavailable)
  const token = await mintToken(sb, { kind: 'classic', scopes: ['repo'] })
  const conns = await Promise.all(group.map((s) => connectWithToken(s, token)))
  // A window of 6 requests that resets long after the test.
  await ch(sb, 'POST', '/rate-limits', { core: 6, windowMs: 3_600_000 })
  const counter = await countRequests(sb, '/repos/octo-demo/hello-world')
  const run = (i: number) =>
    group[i].api('POST', '/v1/steps/codehost.get_repository/run', { connectionId: conns[i], input: R })
  try {
    // Each instance has read the budget from an answer of its own (3 of the 6 spent)…
    for (const i of [0, 1, 2]) assert.equal((await run(i)).status, 200)
    // …then twelve requests at once, four through each instance.
    const answers = await Promise.all([0, 1, 2].flatMap((i) => [run(i), run(i), run(i), run(i)]))
    const ok = answers.filter((a) => a.status === 200)
    const held = answers.filter((a) => a.body?.error?.code === 'RATE_LIMITED')
    assert.equal(ok.length + held.length, 12, JSON.stringify(answers.find((a) => a.status !== 200)))
    assert.equal(ok.length, 3, 'the rest of the window is used, not refused early')
    for (const a of held) assert.match(a.body.error.message, /Nothing was sent/)
    assert.equal(
      await counter.count(),
      6,
      'exactly the window reached the code-host: none was refused upstream',
    )
  } finally {
    await counter.stop()
    await ch(sb, 'POST', '/rate-limits', { reset: true })
  }
})
