// Backpressure: while deliveries wait for a slow agent, from half PATCHBAY_DELIVERY_BACKLOG_LIMIT
// on the ingress answers a growing share of the task-board's deliveries (it sends a refused one
// again) 503 with Retry-After instead of accepting, and every one at the limit; the backlog shows
// in the REST API and /metrics; once the agent catches up, deliveries are accepted again. Driven
// by an agent endpoint that holds its answers until told.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { eventually, holdingAgent } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { createCardDelivery, newCardAgent, postSigned } from '../helpers/taskboard.ts'

const LIMIT = 8
const METRICS_TOKEN = 'metrics-token-backpressure'

let sandbox: TaskboardSandbox
let t: TestService
let callbackUrl: string

/** An agent endpoint that answers nothing while `holding`, then everything it held. */
const agent = holdingAgent({ holding: true })

before(async () => {
  await new Promise<void>((r) => agent.server.listen(0, '127.0.0.1', r))
  sandbox = await startTaskboardSandbox()
  t = await startTestService({
    taskboard: sandbox,
    env: { PATCHBAY_DELIVERY_BACKLOG_LIMIT: String(LIMIT), PATCHBAY_METRICS_TOKEN: METRICS_TOKEN },
  })
  ;({ callbackUrl } = await newCardAgent(t, sandbox, {
    name: 'slow agent',
    delivery: { type: 'webhook', url: `http://127.0.0.1:${(agent.server.address() as any).port}/agent` },
  }))
})

after(async () => {
  agent.release()
  await t?.close()
  agent.server.closeAllConnections()
  agent.server.close()
  await sandbox?.close()
})

/** A New Card delivery signed as the task-board signs it. */
async function newCard(cardId: string) {
  const res = await postSigned(sandbox, callbackUrl, JSON.stringify(createCardDelivery(sandbox, cardId)))
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }
}

test('from half the backlog limit a growing share of deliveries is answered 503 with Retry-After, every one at the limit; once the agent catches up they are accepted again', async () => {
  // Sent one after another while the agent holds its answers, until the backlog is at the limit.
  const backlogNow = async () => (await t.api('GET', '/v1/delivery-backlog')).body.backlog as number
  const accepted: string[] = []
  const answers: Array<{ backlog: number; status: number }> = []
  for (let n = 0; (await backlogNow()) < LIMIT; n++) {
    assert.ok(n < 100, 'the backlog reaches the limit')
    const backlog = await backlogNow()
    const res = await newCard(`card-${n}`)
    answers.push({ backlog, status: res.status })
    if (res.status === 200) accepted.push(`card-${n}`)
    else {
      assert.equal(res.status, 503)
      assert.equal(res.body.error.code, 'DELIVERY_BACKLOG_FULL')
      assert.ok(Number(res.retryAfter) >= 1, `Retry-After: ${res.retryAfter}`)
    }
  }
  assert.ok(
    answers.filter((a) => a.backlog < LIMIT / 2).every((a) => a.status === 200),
    'under half the limit every delivery is accepted',
  )
  const early = answers.filter((a) => a.backlog >= LIMIT / 2)
  assert.ok(
    early.some((a) => a.status === 503) && early.some((a) => a.status === 200),
    `between half the limit and the limit some are refused, some accepted: ${JSON.stringify(answers)}`,
  )

  const backlog = await t.api('GET', '/v1/delivery-backlog')
  assert.equal(backlog.status, 200)
  assert.equal(backlog.body.backlog, LIMIT)
  assert.equal(backlog.body.limit, LIMIT)
  assert.equal(backlog.body.holdingBack, true)

  const metrics = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  assert.match(await metrics.text(), new RegExp(`^patchbay_delivery_backlog ${LIMIT}$`, 'm'))

  // At the limit every one is refused before anything is stored, with when to send it again.
  for (let i = 0; i < 3; i++) {
    const refused = await newCard('card-refused')
    assert.equal(refused.status, 503)
    assert.equal(refused.body.error.code, 'DELIVERY_BACKLOG_FULL')
    assert.ok(Number(refused.retryAfter) >= 1, `Retry-After: ${refused.retryAfter}`)
  }
  const stored = await t.api('GET', '/v1/events?limit=100')
  assert.equal(stored.body.events.length, accepted.length, 'no refused delivery is stored')

  // The agent catches up: the backlog empties and deliveries are accepted again.
  agent.release()
  await eventually(
    () => t.api('GET', '/v1/delivery-backlog'),
    (r) => r.body.backlog === 0,
  )
  assert.equal((await newCard('card-refused')).status, 200, 'the upstream sending it again is accepted')
  await eventually(
    async () => agent.received,
    (r) => r.has('card-refused'),
  )
  assert.deepEqual([...agent.received].sort(), [...accepted, 'card-refused'].sort())
  assert.equal((await t.api('GET', '/v1/delivery-backlog')).body.holdingBack, false)
})
