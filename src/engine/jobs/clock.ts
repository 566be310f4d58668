// The time the engine's background work reads, so tests can move it (leases, retries, polls).
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export const isoAt = (ms: number) => new Date(ms).toISOString()
