// Time as the engine sees it. Parts that wait (the pacer, rate budgets, and the queue, deliverer
// and poller) take a Clock instead of calling Date.now and setTimeout, so that tests can drive
// time by hand instead of depending on how fast the machine is.

export interface Clock {
  /** Milliseconds since the epoch, as Date.now. */
  now(): number
  /** Resolves after `ms` milliseconds of this clock's time. */
  sleep(ms: number): Promise<void>
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((r) => setTimeout(r, Math.max(0, Math.ceil(ms)))),
}
