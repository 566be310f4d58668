// Fixed-window request counting per key, on the sandbox clock. Each emulator shapes the
// answer (headers, status, body) the way its real service does.
import type { Clock } from './clock.ts'

export interface WindowState {
  allowed: boolean
  limit: number
  remaining: number
  used: number
  /** When the current window ends, in clock milliseconds. */
  resetAt: number
}

export class RateWindow {
  limit: number
  windowMs: number
  #clock: Clock
  #windows = new Map<string, { start: number; count: number }>()

  constructor(clock: Clock, limit: number, windowMs: number) {
    this.#clock = clock
    this.limit = limit
    this.windowMs = windowMs
  }

  configure(limit?: number, windowMs?: number): void {
    if (limit !== undefined) this.limit = limit
    if (windowMs !== undefined) this.windowMs = windowMs
    this.#windows.clear()
  }

  /** Counts one request against `key`; a refused request does not count. */
  hit(key: string, cost = 1): WindowState {
    const w = this.#current(key)
    const allowed = w.count + cost <= this.limit
    if (allowed) w.count += cost
    return this.#state(w, allowed)
  }

  peek(key: string): WindowState {
    const w = this.#current(key)
    return this.#state(w, w.count < this.limit)
  }

  reset(): void {
    this.#windows.clear()
  }

  #current(key: string) {
    const now = this.#clock.now()
    let w = this.#windows.get(key)
    if (!w || now >= w.start + this.windowMs) {
      w = { start: now, count: 0 }
      this.#windows.set(key, w)
    }
    return w
  }

  #state(w: { start: number; count: number }, allowed: boolean): WindowState {
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - w.count),
      used: w.count,
      resetAt: w.start + this.windowMs,
    }
  }
}
