// Pacing of ready-made steps: every request made with one credential waits for a slot in that
// credential's budget, shared by every step and poll that uses it.
//
// Why our own: the well-kept limiters (rate-limiter-flexible and friends) count fixed windows
// that start at our first request, while the upstream counts windows that start at *its* first
// request. Two misaligned fixed windows let twice the budget through across a boundary, which
// the upstream answers with 429s. A sliding log — never more than `points` requests in any span of
// `durationMs` — stays under the upstream's limit whatever its window alignment.
//
// The upstream counts a request when it arrives, which is some time after we let it go and
// before its answer comes back. So a request's place in the log is the moment it was answered
// (`answered()`), the latest it can have arrived: counted from when it was let go, a request
// held up on its way (a busy event loop, a slow network) would leave our window before it left
// the upstream's, and the next one would find the upstream's window full. A request not yet
// answered stays in the window.
import { type Clock, systemClock } from './clock.ts'

export interface Budget {
  points: number
  durationMs: number
}

/** Says the request let through has been answered (or has failed): its window runs from now. */
export type Answered = () => void

export interface Pacer {
  /** Resolves when one request under `key` may be sent within `budget`; call what it gives once answered. */
  wait(key: string, budget: Budget): Promise<Answered>
}

/** A request of the log: when it was answered, or, until then, when it was let go. */
interface Sent {
  at: number
  answered: boolean
}

/**
 * A credential's log. Taking a place costs the same however many requests the window holds (a
 * high budget's window holds thousands): answered requests are kept in the order of their answers,
 * so those that left the window are at the front; requests on their way are kept apart, by when
 * they were let go.
 */
interface Lane {
  /** Answered requests, oldest answer first; those before `head` have left the window. */
  answered: Sent[]
  head: number
  /** Requests let go and not answered yet, oldest first. */
  onTheirWay: Set<Sent>
  /** The last waiter in line: each waiter goes after the one before it (first come, first served). */
  tail: Promise<unknown>
  /** Waiters in line. */
  waiting: number
  /** Wakes the waiter at the head of the line when a request is answered. */
  wake: (() => void) | null
}

/**
 * How long a request stays in the log after its answer: the budget's window, and an allowance
 * for the upstream's clock and its counting granularity.
 */
export const windowOf = (budget: Budget) =>
  budget.durationMs + Math.max(20, Math.round(budget.durationMs * 0.005))
/** A request let go and never said answered (its caller failed to) leaves the log after this long. */
export const UNANSWERED_MAX_MS = 5 * 60_000

export function createPacer(clock: Clock = systemClock): Pacer {
  const lanes = new Map<string, Lane>()
  return {
    wait(key, budget) {
      let lane = lanes.get(key)
      if (!lane) {
        lane = {
          answered: [],
          head: 0,
          onTheirWay: new Set(),
          tail: Promise.resolve(),
          waiting: 0,
          wake: null,
        }
        lanes.set(key, lane)
      }
      const l = lane
      const window = windowOf(budget)
      /** Takes a place when the window has one (what to call once answered), or null to wait. */
      const take = (): Answered | null => {
        const now = clock.now()
        const log = l.answered
        while (l.head < log.length && now - log[l.head].at >= window) l.head++
        if (l.head > 64 && l.head * 2 > log.length) {
          log.splice(0, l.head)
          l.head = 0
        }
        if (log.length - l.head + l.onTheirWay.size >= budget.points) {
          // Full: a request let go UNANSWERED_MAX_MS ago and never said answered leaves the log.
          for (const s of l.onTheirWay) {
            if (now - s.at < UNANSWERED_MAX_MS) break
            l.onTheirWay.delete(s)
          }
          if (log.length - l.head + l.onTheirWay.size >= budget.points) return null
        }
        const sent: Sent = { at: now, answered: false }
        l.onTheirWay.add(sent)
        return () => {
          if (sent.answered) return
          sent.answered = true
          sent.at = clock.now()
          l.onTheirWay.delete(sent)
          l.answered.push(sent)
          l.wake?.()
        }
      }
      // Nobody in line and a place free: the request goes at once, without joining the line.
      const atOnce = l.waiting === 0 ? take() : null
      if (atOnce) return Promise.resolve(atOnce)
      l.waiting++
      const turn = l.tail.then(async (): Promise<Answered> => {
        for (;;) {
          const answered = take()
          if (answered) return answered
          // The window is full: wait for its oldest answered request to leave it, or for one
          // still on its way to be answered (which may make it the oldest). When all are on
          // their way, the sleep is only a bound: a caller that never says answered holds its
          // request in the log for UNANSWERED_MAX_MS at the most.
          const oldest = l.head < l.answered.length ? l.answered[l.head].at : Number.POSITIVE_INFINITY
          const woken = new Promise<void>((resolve) => {
            l.wake = resolve
          })
          const now = clock.now()
          await Promise.race([
            woken,
            clock.sleep(Number.isFinite(oldest) ? Math.max(1, oldest + window - now) : window),
          ])
          l.wake = null
        }
      })
      l.tail = turn.finally(() => {
        l.waiting--
      })
      return turn
    },
  }
}
