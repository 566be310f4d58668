// The in-memory pacer on a clock moved by hand: never more than `points` sends in any span of the
// budget's window (plus its margin), first come first served, lanes independent.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPacer } from '../../src/kit/pacer.ts'
import { ManualClock } from '../helpers/manual-clock.ts'

const budget = { points: 3, durationMs: 1000 }
/** Lets every promise continuation run (no time passes on the manual clock). */
const flush = () => new Promise((r) => setImmediate(r))

/** Starts `n` waits on one key; returns the order in which they were let through. */
function line(pacer: ReturnType<typeof createPacer>, key: string, n: number) {
  const through: number[] = []
  for (let i = 0; i < n; i++) void pacer.wait(key, budget).then(() => through.push(i))
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
      await pacer.wait('token-a', budget)
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
  await Promise.all([1, 2, 3].map(() => pacer.wait('token-a', budget)))
  clock.advance(5_000)
  const through = line(pacer, 'token-a', 3)
  await flush()
  assert.equal(through.length, 3)
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
