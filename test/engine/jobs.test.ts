// The engine's background work (src/engine/jobs/, events/deliverer.ts, events/sources/poller.ts) with
// time driven by hand (a ManualClock): a delivery attempt is claimed before it is sent, a claim
// whose holder stopped is taken over when its lease ends and re-sent under the same webhook-id,
// the stopped holder's late outcome is fenced off by the attempt number, retries wait for their
// time and end dead after the schedule; each due poll is claimed once and comes round again after
// its interval, or after its lease when its instance stopped. And the in-process queue's and the
// timer sweep's own promises: singleton keys, batches, concurrency, no overlap, clean stops.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Poller } from '../../src/engine/events/sources/poller.ts'
import { InProcessJobQueue } from '../../src/engine/jobs/job-queue.ts'
import { TimerSweeps } from '../../src/engine/jobs/sweeps.ts'
import { deliveries } from '../../src/store/event-log.ts'
import { isoAt } from '../../src/store/ids.ts'
import { Triggers } from '../../src/store/triggers.ts'
import { ManualClock } from '../helpers/manual-clock.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { countRequests } from '../helpers/request-counter.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { taskboardRest } from '../helpers/taskboard.ts'

describe('claimed deliveries and polls, on a clock moved by hand', () => {
  let t: TestService
  let receiver: Receiver
  // Rows the API writes carry the machine's time; the engine's clock starts an hour ahead of it,
  // so that they are already due on the engine's clock, and moves only when a test says so.
  const clock = new ManualClock(Date.now() + 3_600_000)
  let connectionId: string
  let agentId: string
  const db = () => t.service.engine.store.db
  const sweep = () => t.service.engine.events.sweep()

  before(async () => {
    t = await startTestService({
      clock,
      env: {
        PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '5000,60000',
        PATCHBAY_DELIVERY_TIMEOUT_MS: '1000',
        // The background sweep runs once at start; the tests sweep themselves.
        PATCHBAY_DELIVERY_SCAN_MS: '3600000',
        PATCHBAY_MIN_POLL_INTERVAL_MS: '1000',
      },
    })
    receiver = await new Receiver().start()
    const conn = await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: {
        key: t.taskboard.demo.key,
        token: t.taskboard.demo.token,
        secret: t.taskboard.demo.secret,
      },
    })
    assert.equal(conn.status, 201, JSON.stringify(conn.body))
    connectionId = conn.body.id
    const agent = await t.api('POST', '/v1/agents', {
      name: 'clocked',
      scope: { boards: [t.taskboard.demo.boardId] },
      connectionIds: [connectionId],
      delivery: { type: 'webhook', url: receiver.url },
    })
    agentId = agent.body.id
    const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId,
      config: { idBoard: t.taskboard.demo.boardId },
    })
    assert.equal(trig.status, 201, JSON.stringify(trig.body))
  })
  after(async () => {
    await t.close()
    await receiver.close()
  })

  const seen = new Set<string>()
  /** A new card upstream; resolves with its delivery once its first attempt is settled. */
  async function newDelivery(name: string): Promise<any> {
    await taskboardRest(t.taskboard, 'POST', '/1/cards', { idList: t.taskboard.demo.listIds[0], name })
    const d = await eventually(
      async () =>
        ((await t.api('GET', `/v1/deliveries?agentId=${agentId}&limit=100`)).body.deliveries as any[]).find(
          (x) => !seen.has(x.id),
        ),
      (x) => x !== undefined && x.attempts >= 1 && (x.status !== 'pending' || x.lastError !== null),
    )
    seen.add(d.id)
    return d
  }
  const get = async (id: string) => {
    const { attempts: log, ...rest } = (await t.api('GET', `/v1/deliveries/${id}`)).body
    const row = (
      (await t.api('GET', `/v1/deliveries?agentId=${agentId}&limit=100`)).body.deliveries as any[]
    ).find((x) => x.id === id)
    return { ...rest, attempts: row.attempts as number, log: log as any[] }
  }
  const pushesOf = (id: string) => receiver.received.filter((r) => r.id === id)

  test('a failed push waits for its retry time, then goes again; after the schedule it is dead', async () => {
    receiver.failNext = 1
    const d = await newDelivery('retry once')
    assert.deepEqual([d.status, d.attempts, d.lastStatus], ['pending', 1, 500])
    assert.equal(Date.parse(d.nextAttemptAt), clock.now() + 5000, 'the first wait of the schedule')
    // Not yet due: a sweep sends nothing.
    await sweep()
    await t.service.engine.events.jobs.idle()
    assert.equal(pushesOf(d.id).length, 0)
    // A sweep leaves rows younger than half a second to the instance that stored them.
    clock.advance(5500)
    await sweep()
    await t.service.engine.events.jobs.idle()
    const after = await get(d.id)
    assert.deepEqual([after.status, after.attempts], ['delivered', 2])
    assert.equal(pushesOf(d.id).length, 1)

    receiver.failNext = 3
    const dead = await newDelivery('retry to the end')
    clock.advance(5500)
    await sweep()
    await t.service.engine.events.jobs.idle()
    const second = await get(dead.id)
    assert.deepEqual([second.status, second.attempts], ['pending', 2])
    assert.equal(Date.parse(second.nextAttemptAt), clock.now() + 60_000, 'the second wait of the schedule')
    clock.advance(60_500)
    await sweep()
    await t.service.engine.events.jobs.idle()
    const last = await get(dead.id)
    assert.deepEqual([last.status, last.attempts, last.nextAttemptAt], ['dead', 3, null])
    assert.deepEqual(
      last.log.map((a: any) => [a.attempt, a.status]),
      [
        [1, 500],
        [2, 500],
        [3, 500],
      ],
    )
  })

  test('a claim whose holder stopped is taken over when its lease ends, under the same webhook-id; the late holder writes nothing', async () => {
    receiver.failNext = 1
    const d = await newDelivery('taken over')
    clock.advance(5500)
    // Another instance claims the retry (attempt 2) and stops before the agent answers.
    const lease = 9000
    const [claim] = await deliveries.claim(db(), [d.id], {
      now: isoAt(clock.now()),
      leaseUntil: isoAt(clock.now() + lease),
    })
    assert.deepEqual(claim, { id: d.id, attempts: 2 })
    // Nobody else claims it while the lease runs.
    assert.deepEqual(
      await deliveries.claim(db(), [d.id], {
        now: isoAt(clock.now()),
        leaseUntil: isoAt(clock.now() + lease),
      }),
      [],
    )
    await sweep()
    await t.service.engine.events.jobs.idle()
    assert.equal(pushesOf(d.id).length, 0)
    // The lease ends: this instance takes it over and sends it, with the same webhook-id.
    clock.advance(lease + 500)
    await sweep()
    await t.service.engine.events.jobs.idle()
    const taken = await get(d.id)
    assert.deepEqual([taken.status, taken.attempts], ['delivered', 3])
    assert.equal(pushesOf(d.id).length, 1)
    assert.equal(pushesOf(d.id)[0].id, d.id)
    assert.match(taken.log.find((a: any) => a.attempt === 2).error, /interrupted/)
    // The stopped holder comes back and writes its outcome for attempt 2: fenced off.
    assert.deepEqual(
      await deliveries.settle(db(), [d.id], 2, { status: 'dead', last_error: 'late', next_attempt_at: null }),
      [],
    )
    const still = await get(d.id)
    assert.deepEqual([still.status, still.lastError], ['delivered', null])
  })

  test('a delivery handed to the workers twice at once (stored, and found by a sweep) is pushed once', async () => {
    receiver.failNext = 1
    const d = await newDelivery('handed on twice')
    clock.advance(5500)
    const { jobs, deliverer } = t.service.engine.events
    // Handed on as the instance that stored it does, and found by a sweep before it was sent.
    await deliverer.dispatchNew([d.id])
    jobs.send('deliver', d.id)
    await jobs.idle()
    const after = await get(d.id)
    assert.deepEqual([after.status, after.attempts], ['delivered', 2])
    assert.equal(pushesOf(d.id).length, 1)
  })

  test('concurrent claims of one due delivery: exactly one wins', async () => {
    receiver.failNext = 1
    const d = await newDelivery('claimed once')
    clock.advance(5500)
    const at = { now: isoAt(clock.now()), leaseUntil: isoAt(clock.now() + 9000) }
    const claims = await Promise.all(Array.from({ length: 5 }, () => deliveries.claim(db(), [d.id], at)))
    assert.equal(claims.flat().length, 1)
  })

  test('a push claimed by this instance and handed on late renews its claim before it is sent; one taken over meanwhile is not sent by it', async () => {
    const { deliverer } = t.service.engine.events
    // A push's lease is the time limit × 2 + 5 s (7 s here); it is sent under the claim it was
    // stored with while that still covers a request (time limit + 5 s), renewed first after that.
    const lease = 7000
    const heldBy = async (name: string) => {
      receiver.failNext = 1
      const d = await newDelivery(name)
      clock.advance(5500)
      const [claim] = await deliveries.claim(db(), [d.id], {
        now: isoAt(clock.now()),
        leaseUntil: isoAt(clock.now() + lease),
      })
      assert.deepEqual(claim, { id: d.id, attempts: 2 })
      const [row] = await deliverer.joined([d.id])
      return { d, row }
    }

    // Handed on 2 s after its claim: 5 s of lease left, less than a request may take.
    const late = await heldBy('handed on late')
    clock.advance(2000)
    await deliverer.dispatch([late.row])
    await t.service.engine.events.jobs.idle()
    const sent = await get(late.d.id)
    assert.deepEqual([sent.status, sent.attempts], ['delivered', 2])
    assert.equal(pushesOf(late.d.id).length, 1)

    // Handed on after its lease ended and another instance took it over (attempt 3): not sent here.
    const lost = await heldBy('taken over before it was sent')
    clock.advance(lease + 500)
    const [other] = await deliveries.claim(db(), [lost.d.id], {
      now: isoAt(clock.now()),
      leaseUntil: isoAt(clock.now() + lease),
    })
    assert.deepEqual(other, { id: lost.d.id, attempts: 3 })
    await deliverer.dispatch([lost.row])
    await t.service.engine.events.jobs.idle()
    assert.equal(pushesOf(lost.d.id).length, 0)
    const still = await db()
      .selectFrom('deliveries')
      .selectAll()
      .where('id', '=', lost.d.id)
      .executeTakeFirstOrThrow()
    assert.deepEqual(
      [still.status, Number(still.attempts), still.claimed_until],
      ['pending', 3, isoAt(clock.now() + lease)],
    )
  })

  test('a due poll is claimed once by concurrent sweeps, comes round after its interval, and after its lease when its instance stopped', async () => {
    const counter = await countRequests(t.taskboard, `/1/boards/${t.taskboard.demo.boardId}/cards`)
    try {
      const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
        trigger: 'taskboard.card_due_date_reminder',
        connectionId,
        config: { idBoard: t.taskboard.demo.boardId },
        pollIntervalMs: 60_000,
      })
      assert.equal(trig.status, 201, JSON.stringify(trig.body))
      const poller = t.service.engine.events.poller
      const claimed = await Promise.all([poller.sweep(), poller.sweep(), poller.sweep()])
      assert.equal(
        claimed.reduce((a, b) => a + b, 0),
        1,
      )
      await t.service.engine.events.jobs.idle()
      assert.equal(await counter.count(), 1)
      const polled = (await t.api('GET', `/v1/triggers/${trig.body.id}`)).body.poll
      assert.equal(Date.parse(polled.nextPollAt), clock.now() + 60_000)
      // Not due before its interval…
      clock.advance(59_000)
      assert.equal(await poller.sweep(), 0)
      // …then due.
      clock.advance(1_000)
      // An instance claims it and stops before polling (its queue takes no more work).
      const stopped = new InProcessJobQueue()
      const dying = new Poller({
        triggers: new Triggers(db()),
        registry: t.service.engine.registry,
        connections: t.service.engine.connections,
        agents: t.service.engine.agents,
        recorder: t.service.engine.events.recorder,
        jobs: stopped,
        clock,
        log: t.service.engine.log,
      })
      await stopped.stop()
      assert.equal(await dying.sweep(), 1)
      assert.equal(await poller.sweep(), 0, 'held by the stopped instance')
      // Its lease (2 minutes) ends: the poll is due again here.
      clock.advance(120_000)
      assert.equal(await poller.sweep(), 1)
      await t.service.engine.events.jobs.idle()
      assert.equal(await counter.count(), 2)
    } finally {
      await counter.stop()
    }
  })

  // Stops this service's engine: the last test of this group.
  test('a push is claimed as it is stored; stopping gives back those not started, due at once for the other instances', async () => {
    const { jobs } = t.service.engine.events
    // Nothing is sent any more (as an instance that is stopping), but webhooks are still stored.
    await jobs.stop()
    const before = receiver.received.length
    await taskboardRest(t.taskboard, 'POST', '/1/cards', {
      idList: t.taskboard.demo.listIds[0],
      name: 'stored while stopping',
    })
    const d = await eventually(
      async () =>
        ((await t.api('GET', `/v1/deliveries?agentId=${agentId}&limit=100`)).body.deliveries as any[]).find(
          (x) => !seen.has(x.id),
        ),
      (x) => x !== undefined,
    )
    // Claimed in its insert: attempt 1, held until its lease ends.
    const held = await db()
      .selectFrom('deliveries')
      .selectAll()
      .where('id', '=', d.id)
      .executeTakeFirstOrThrow()
    assert.deepEqual([held.status, Number(held.attempts)], ['pending', 1])
    assert.ok(held.claimed_until !== null && Date.parse(held.claimed_until) > clock.now())
    assert.equal((await deliveries.due(db(), isoAt(clock.now()), 100)).filter((r) => r.id === d.id).length, 0)

    await t.service.engine.events.stop()
    const given = await db()
      .selectFrom('deliveries')
      .selectAll()
      .where('id', '=', d.id)
      .executeTakeFirstOrThrow()
    assert.deepEqual([given.status, Number(given.attempts), given.claimed_until], ['pending', 0, null])
    assert.ok(
      (await deliveries.due(db(), isoAt(clock.now()), 100)).some((r) => r.id === d.id),
      'due at once for any instance',
    )
    assert.equal(receiver.received.length, before, 'never sent by the stopping instance')
  })
})

describe('the in-process queue', () => {
  const gate = () => {
    let open!: () => void
    const opened = new Promise<void>((r) => {
      open = r
    })
    return { open, opened }
  }

  test('jobs come in batches of at most batchSize, at most concurrency batches at once', async () => {
    const q = new InProcessJobQueue()
    const batches: number[][] = []
    let running = 0
    let most = 0
    const g = gate()
    q.work<number>('n', { batchSize: 3, concurrency: 2 }, async (jobs) => {
      batches.push(jobs)
      running++
      most = Math.max(most, running)
      await g.opened
      running--
    })
    for (let i = 0; i < 10; i++) q.send('n', i)
    await new Promise((r) => setImmediate(r))
    assert.equal(running, 2, 'two batches run, the rest wait')
    g.open()
    await q.idle()
    assert.equal(most, 2)
    assert.ok(batches.every((b) => b.length <= 3))
    assert.deepEqual(
      batches.flat().sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    )
  })

  test('a job whose singleton key is already waiting is dropped; once taken, the key is free again', async () => {
    const q = new InProcessJobQueue()
    const got: string[] = []
    q.work<string>('s', { batchSize: 10, concurrency: 1 }, async (jobs) => {
      got.push(...jobs)
    })
    q.send('s', 'first', { singletonKey: 'k' })
    q.send('s', 'second', { singletonKey: 'k' })
    q.send('s', 'other', { singletonKey: 'j' })
    await q.idle()
    assert.deepEqual(got.sort(), ['first', 'other'])
    q.send('s', 'third', { singletonKey: 'k' })
    await q.idle()
    assert.ok(got.includes('third'))
  })

  test('stop drops waiting jobs, lets running ones finish, and takes no more', async () => {
    const q = new InProcessJobQueue()
    const done: number[] = []
    const g = gate()
    q.work<number>('w', { batchSize: 1, concurrency: 1 }, async ([n]) => {
      await g.opened
      done.push(n)
    })
    q.send('w', 1)
    q.send('w', 2)
    await new Promise((r) => setImmediate(r))
    const stopping = q.stop(60_000)
    q.send('w', 3)
    g.open()
    await stopping
    assert.deepEqual(done, [1], 'the running job finished; the waiting and the late one were dropped')
  })
})

describe('the timer sweep (one process)', () => {
  test('never runs two sweeps at once, and stop waits for the one under way', async () => {
    let running = 0
    let overlapped = false
    let runs = 0
    let release!: () => void
    const held = new Promise<void>((r) => {
      release = r
    })
    const sweeps = new TimerSweeps({ everyMs: 1, onError: (err) => assert.fail(String(err)) })
    await sweeps.start(async () => {
      if (running > 0) overlapped = true
      running++
      runs++
      if (runs === 3) await held
      running--
    })
    await eventually(
      async () => runs,
      (n) => n >= 3,
    )
    const stopped = sweeps.stop()
    let stoppedYet = false
    void stopped.then(() => {
      stoppedYet = true
    })
    await new Promise((r) => setImmediate(r))
    assert.equal(stoppedYet, false, 'stop waits for the sweep under way')
    release()
    await stopped
    assert.equal(overlapped, false)
    assert.equal(runs, 3, 'no sweep after stop')
  })
})
