// Pushes to one slow agent endpoint go out up to PUSH_CONNECTIONS_PER_ENDPOINT at once, more than
// the 128 the pool of upstream calls allows: a push waiting for a connection counts in the backlog
// the ingress holds back on, so too few connections made backpressure refuse deliveries the CPU
// could have taken. Driven by an agent endpoint that first fails every push (their retries are then
// made due together and handed to the senders by one sweep) and then holds its answers until told.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { PUSH_CONNECTIONS_PER_ENDPOINT } from '../../src/engine/events/deliverer.ts'
import { eventually, holdingAgent } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { createCardDelivery, newCardAgent, postSigned } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let callbackUrl: string

/** An agent endpoint that answers 500 while `failing`, nothing while `holding`, then everything it held. */
const agent = holdingAgent({ holding: false, failing: true })

before(async () => {
  agent.server.maxConnections = 10_000
  await new Promise<void>((r) => agent.server.listen({ port: 0, host: '127.0.0.1', backlog: 1024 }, r))
  sandbox = await startTaskboardSandbox()
  t = await startTestService({
    taskboard: sandbox,
    env: {
      // Held answers must not time out while the test looks at them; the retries of failed
      // pushes are made due by the test and handed on by the sweep it runs.
      PATCHBAY_DELIVERY_TIMEOUT_MS: '120000',
      PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '600000',
      PATCHBAY_DELIVERY_SCAN_MS: '600000',
    },
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
  return res.status
}

test(`pushes to one slow agent endpoint go out up to ${PUSH_CONNECTIONS_PER_ENDPOINT} at once, then the rest as answers come`, async () => {
  assert.ok(PUSH_CONNECTIONS_PER_ENDPOINT > 128)
  const cards = Array.from({ length: PUSH_CONNECTIONS_PER_ENDPOINT + 20 }, (_, i) => `card-${i}`)
  const statuses = await Promise.all(cards.map(newCard))
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
  )
  // Every first push fails; their retries are made due together and handed on by one sweep.
  await eventually(
    async () => (await t.api('GET', '/v1/deliveries?limit=500')).body.deliveries,
    (ds: any[]) => ds.length === cards.length && ds.every((d) => d.lastStatus === 500),
  )
  agent.failing = false
  agent.holding = true
  await t.service.engine.store.db
    .updateTable('deliveries')
    .set({ next_attempt_at: new Date(Date.now() - 60_000).toISOString() })
    .where('status', '=', 'pending')
    .execute()
  await t.service.engine.events.sweep()
  // The endpoint holds every answer: as many retries as the pool allows are open on it at once
  // (with 128 connections, the pool of upstream calls, this stays at 128).
  await eventually(
    async () => agent.held.length,
    (n) => n >= PUSH_CONNECTIONS_PER_ENDPOINT,
  )
  assert.equal(agent.held.length, PUSH_CONNECTIONS_PER_ENDPOINT, 'and no more than the pool allows')
  agent.release()
  await eventually(
    async () => agent.received.size,
    (n) => n === cards.length,
  )
})
