// A Clock that moves only when a test says so: sleepers wake when advance() passes their time.
import diagnostics from 'node:diagnostics_channel'
import type { Emulator } from '../../sandbox/common/emulator-app.ts'
import type { Clock } from '../../src/kit/clock.ts'
import type { Budget, Pacer } from '../../src/kit/pacer.ts'

export class ManualClock implements Clock {
  #now: number
  #sleepers: Array<{ at: number; wake: () => void }> = []

  constructor(startMs = Date.now()) {
    this.#now = startMs
  }

  now(): number {
    return this.#now
  }

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve()
    return new Promise((wake) => this.#sleepers.push({ at: this.#now + ms, wake }))
  }

  /** How many are asleep. */
  get sleeping(): number {
    return this.#sleepers.length
  }

  /** When the next sleeper wakes, or null when none sleeps. */
  nextWake(): number | null {
    return this.#sleepers.length ? Math.min(...this.#sleepers.map((s) => s.at)) : null
  }

  /** Moves time on by `ms` and wakes every sleeper whose time has come (in time order). */
  advance(ms: number): void {
    this.#now += ms
    const due = this.#sleepers.filter((s) => s.at <= this.#now).sort((a, b) => a.at - b.at)
    this.#sleepers = this.#sleepers.filter((s) => s.at > this.#now)
    for (const s of due) s.wake()
  }
}

/** A pacer that counts the requests it lets through. */
export function countingPacer(pacer: Pacer): Pacer & { granted: number } {
  const counting = {
    granted: 0,
    async wait(key: string, budget: Budget) {
      const answered = await pacer.wait(key, budget)
      counting.granted++
      return answered
    },
  }
  return counting
}

/**
 * Requests on their way to an upstream at `origin` (sent and not yet answered), seen through
 * undici's diagnostics channels: Patchbay's own client and fetch both report there.
 */
export function watchUpstreamRequests(origin: string): { readonly inFlight: number; stop(): void } {
  const open = new Set<object>()
  const onCreate = (m: unknown) => {
    const { request } = m as { request: { origin?: string | URL; path: string } }
    if (String(request.origin).replace(/\/$/, '') === origin && !request.path.startsWith('/_sandbox'))
      open.add(request)
  }
  const onDone = (m: unknown) => open.delete((m as { request: object }).request)
  diagnostics.subscribe('undici:request:create', onCreate)
  diagnostics.subscribe('undici:request:trailers', onDone)
  diagnostics.subscribe('undici:request:error', onDone)
  return {
    get inFlight() {
      return open.size
    },
    stop() {
      diagnostics.unsubscribe('undici:request:create', onCreate)
      diagnostics.unsubscribe('undici:request:trailers', onDone)
      diagnostics.unsubscribe('undici:request:error', onDone)
    },
  }
}

/**
 * Patchbay's manual clock and an in-process sandbox's clock, moving together from now on. Time
 * moves only when nothing is on its way to the sandbox, so the sandbox stamps each request with
 * the very time Patchbay sent it: outcomes do not depend on how fast (or loaded) the machine is.
 */
export class SharedTime {
  readonly clock: ManualClock
  readonly #sandbox: { url: string; emulator: Emulator }
  readonly #requests: ReturnType<typeof watchUpstreamRequests>
  readonly #pacer: { granted: number }

  constructor(clock: ManualClock, pacer: { granted: number }, sandbox: { url: string; emulator: Emulator }) {
    this.clock = clock
    this.#pacer = pacer
    this.#sandbox = sandbox
    this.#requests = watchUpstreamRequests(new URL(sandbox.url).origin)
    sandbox.emulator.clock.freeze(clock.now())
  }

  /** Waits until no request is on its way (one let through just now may not have left yet: two looks). */
  async #settled(): Promise<void> {
    let lastGranted = -1
    for (let looks = 0; ; looks++) {
      await new Promise((r) => setTimeout(r, 2))
      if (this.#pacer.granted === lastGranted && this.#requests.inFlight === 0) return
      lastGranted = this.#pacer.granted
      if (looks > 5_000) throw new Error(`${this.#requests.inFlight} requests never came back`)
    }
  }

  /** Moves both clocks on by `ms` once nothing is on its way. */
  async advance(ms: number): Promise<void> {
    await this.#settled()
    this.clock.advance(ms)
    this.#sandbox.emulator.clock.advance(ms)
  }

  /** Runs `work`, moving time to the pacer's next wake-up whenever it holds requests back. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    let done = false
    const running = work().finally(() => {
      done = true
    })
    while (!done) {
      await this.#settled()
      const next = this.clock.nextWake()
      if (next !== null) await this.advance(next - this.clock.now())
    }
    return running
  }

  close(): void {
    this.#requests.stop()
    this.#sandbox.emulator.clock.unfreeze()
  }
}
