// Pacing of ready-made steps: every request made with one credential waits for a slot in that
// credential's budget, shared by every step and poll that uses it.
//
// Why our own: the well-kept limiters (rate-limiter-flexible and friends) count fixed windows
// that start at our first request, while the upstream counts windows that start at *its* first
// request. Two misaligned fixed windows let twice the budget through across a boundary, which
// the upstream answers with 429s. A sliding log — never more than `points` sends in any span of
// `durationMs` — stays under the upstream's limit whatever its window alignment.
import { type Clock, systemClock } from './clock.ts'

export interface Budget {
  points: number
  durationMs: number
}

export interface Pacer {
  /** Resolves when one request under `key` may be sent within `budget`. */
  wait(key: string, budget: Budget): Promise<void>
}

interface Lane {
  /** Send times of the last `points` requests, oldest first. */
  sent: number[]
  /** The last waiter in line: each waiter goes after the one before it (first come, first served). */
  tail: Promise<void>
  waiting: number
}

/** Allowance for network jitter: a request may reach the upstream a little later than sent. */
const marginMs = (budget: Budget) => Math.max(20, Math.round(budget.durationMs * 0.005))

export function createPacer(clock: Clock = systemClock): Pacer {
  const lanes = new Map<string, Lane>()
  return {
    wait(key, budget) {
      let lane = lanes.get(key)
      if (!lane) {
        lane = { sent: [], tail: Promise.resolve(), waiting: 0 }
        lanes.set(key, lane)
      }
      const l = lane
      /** Takes a slot when the budget has one: true, or false to wait. */
      const take = () => {
        const now = clock.now()
        while (l.sent.length > 0 && now - l.sent[0] >= budget.durationMs + marginMs(budget)) l.sent.shift()
        if (l.sent.length >= budget.points) return false
        l.sent.push(now)
        return true
      }
      // Nobody in line and a slot free: the request goes at once, without joining the line.
      if (l.waiting === 0 && take()) return Promise.resolve()
      l.waiting++
      const turn = l.tail.then(async () => {
        for (;;) {
          if (take()) return
          const now = clock.now()
          await clock.sleep(Math.max(1, l.sent[0] + budget.durationMs + marginMs(budget) - now))
        }
      })
      l.tail = turn.finally(() => {
        l.waiting--
        if (l.waiting === 0 && l.sent.length === 0) lanes.delete(key)
      })
      return turn
    },
  }
}
