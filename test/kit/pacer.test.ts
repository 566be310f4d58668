// The in-memory pacer on a clock moved by hand: never more than `points` requests in any span of
// the budget's window (plus its margin), each counted from its answer, first come first served,
// lanes independent.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPacer, UNANSWERED_MAX_MS } from '../../src/kit/pacer.ts'
import { ManualClock } from '../helpers/manual-clock.ts'

const budget = { points: 3, durationMs: 1000 }
/** Lets every promise continuation run (no time passes on the manual clock). */
const flush = () => new Promise((r) => setImmediate(r))

/** Starts `n` waits on one key, each answered as soon as it is let through; returns the order in which they were let through. */
function line(pacer: ReturnType<typeof createPacer>, key: string, n: number) {
  const through: number[] = []
  for (let i = 0; i < n; i++)
    void pacer.wait(key, budget).then((answered) => {
      answered()
      through.push(i)
    })
  return through
}

test('the first `points` requests go at once; the next wait for the oldest to leave the window', async () => {
  const clock = new ManualClock(0)
  const through = line(createPacer(clock), 'token-a', 7)
  await flush()
  assert.deepEqual(through, [0, 1, 2])
  // Just short of the window plus its margin (20 ms for a 1 s window): still held back.
  clock.advance(1019)
  await flush()
  assert.deepEqual(through, [0, 1, 2])
  clock.advance(1)
  await flush()
  assert.deepEqual(through, [0, 1, 2, 3, 4, 5])
  clock.advance(1020)
  await flush()
  assert.deepEqual(through, [0, 1, 2, 3, 4, 5, 6])
})

test('sends are spread as a sliding log: any span of the window holds at most `points`', async () => {
  const clock = new ManualClock(0)
  const pacer = createPacer(clock)
  const sentAt: number[] = []
  const all = Array.from({ length: 10 }, (_, i) =>
    (async () => {
      // Arrivals spread over time: one every 250 ms.
      await clock.sleep(i * 250)
      ;(await pacer.wait('token-a', budget))()
      sentAt.push(clock.now())
    })(),
  )
  for (let rounds = 0; sentAt.length < 10; rounds++) {
    assert.ok(rounds < 1000, 'the pacer stopped letting requests through')
    await flush()
    const next = clock.nextWake()
    if (next !== null) clock.advance(next - clock.now())
  }
  await Promise.all(all)
  for (let i = budget.points; i < sentAt.length; i++)
    assert.ok(
      sentAt[i] - sentAt[i - budget.points] >= budget.durationMs,
      `send ${i} came too soon: ${sentAt}`,
    )
})

test('each key has its own budget', async () => {
  const clock = new ManualClock(0)
  const pacer = createPacer(clock)
  const a = line(pacer, 'token-a', 4)
  const b = line(pacer, 'token-b', 3)
  await flush()
  assert.equal(a.length, 3)
  assert.equal(b.length, 3)
})

test('after a quiet spell the whole budget is there again', async () => {
  const clock = new ManualClock(0)
  const pacer = createPacer(clock)
  for (const answered of await Promise.all([1, 2, 3].map(() => pacer.wait('token-a', budget)))) answered()
  clock.advance(5_000)
  const through = line(pacer, 'token-a', 3)
  await flush()
  assert.equal(through.length, 3)
})

test('a request counts from its answer: one held up on its way keeps its place until answered', async () => {
  const clock = new ManualClock(0)
  const pacer = createPacer(clock)
  const first = await Promise.all([1, 2, 3].map(() => pacer.wait('token-a', budget)))
  const through = line(pacer, 'token-a', 2)
  // Two are answered at once; the third is on its way for 500 ms (a stalled event loop, a slow
  // network: the upstream may count it only when it arrives).
  first[0]!()
  first[1]!()
  clock.advance(500)
  first[2]!()
  await flush()
  assert.deepEqual(through, [])
  // A window after the first two answers (plus the 20 ms margin) their places are free…
  clock.advance(520)
  await flush()
  assert.deepEqual(through, [0, 1])
  // …and the slow one's is free a window after its own answer, not after it was let go.
  const late = line(pacer, 'token-a', 1)
  clock.advance(480)
  await flush()
  assert.deepEqual(late, [])
  clock.advance(20)
  await flush()
  assert.deepEqual(late, [0])
})

test('while every place is taken by requests on their way, the next goes as soon as one is answered and its window passes', async () => {
  const clock = new ManualClock(0)
  const pacer = createPacer(clock)
  const onTheirWay = await Promise.all([1, 2, 3].map(() => pacer.wait('token-a', budget)))
  const through = line(pacer, 'token-a', 1)
  clock.advance(5_000)
  await flush()
  assert.deepEqual(through, [], 'unanswered requests stay in the window however long they take')
  onTheirWay[1]!()
  await flush()
  assert.deepEqual(through, [])
  clock.advance(1_020)
  await flush()
  assert.deepEqual(through, [0])
})

test('a request that comes while others wait goes after them, even when the slots have just freed', async () => {
  const clock = new ManualClock(0)
  const pacer = createPacer(clock)
  const through = line(pacer, 'token-a', 4)
  await flush()
  assert.deepEqual(through, [0, 1, 2])
  // The window has passed: slots are free, and request 3 is still in line when a newcomer asks.
  clock.advance(1020)
  void pacer.wait('token-a', budget).then(() => through.push(4))
  await flush()
  assert.deepEqual(through, [0, 1, 2, 3, 4])
})

test('a large budget counts every request of its window: answered at different times, they leave it in that order', async () => {
  const clock = new ManualClock(0)
  const pacer = createPacer(clock)
  const large = { points: 1000, durationMs: 10_000 }
  // 1,000 requests, answered 1 ms apart; a window is 10,050 ms (its margin is 0.5 %).
  for (let i = 0; i < 1000; i++) {
    ;(await pacer.wait('token-a', large))()
    clock.advance(1)
  }
  const through: number[] = []
  for (let i = 0; i < 3; i++) void pacer.wait('token-a', large).then(() => through.push(i))
  await flush()
  assert.deepEqual(through, [])
  // The first answer (at 0) leaves the window at 10,050 ms; the second (at 1) a millisecond later.
  clock.advance(10_050 - clock.now())
  await flush()
  assert.deepEqual(through, [0])
  clock.advance(1)
  await flush()
  assert.deepEqual(through, [0, 1])
})

test('a request never said answered leaves the log after UNANSWERED_MAX_MS', async () => {
  const clock = new ManualClock(0)
  const pacer = createPacer(clock)
  await Promise.all([1, 2, 3].map(() => pacer.wait('token-a', budget)))
  const through = line(pacer, 'token-a', 3)
  // The line looks again a window (1,020 ms) after each look while every place is on its way.
  clock.advance(UNANSWERED_MAX_MS - 1)
  await flush()
  assert.deepEqual(through, [])
  clock.advance(1020)
  await flush()
  assert.deepEqual(through, [0, 1, 2])
})
