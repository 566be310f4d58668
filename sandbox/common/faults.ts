// Fault injection for the control API: latency, an error rate, timeouts and dropped webhook
// deliveries, each for a time or a count of requests.
import type { Clock } from './clock.ts'

export interface FaultSpec {
  /** Added delay before the request is handled. */
  latencyMs?: number
  /** Share of requests (0..1) answered with `errorStatus` instead of being handled. */
  errorRate?: number
  errorStatus?: number
  /** Requests are accepted and never answered (the client must time out). */
  timeout?: boolean
  /** Outgoing webhook deliveries are dropped (recorded as dropped, never sent). */
  dropWebhooks?: boolean
  /** Only requests whose path starts with this prefix. */
  pathPrefix?: string
  /** The fault ends after this many milliseconds of sandbox clock time... */
  forMs?: number
  /** ...or after it has applied to this many requests or deliveries. */
  count?: number
}

interface ActiveFault extends FaultSpec {
  id: number
  until: number | null
  remaining: number | null
}

export class Faults {
  #faults: ActiveFault[] = []
  #nextId = 1
  #clock: Clock

  constructor(clock: Clock) {
    this.#clock = clock
  }

  add(spec: FaultSpec): ActiveFault {
    const fault: ActiveFault = {
      ...spec,
      id: this.#nextId++,
      until: spec.forMs !== undefined ? this.#clock.now() + spec.forMs : null,
      remaining: spec.count ?? null,
    }
    this.#faults.push(fault)
    return fault
  }

  clear(): void {
    this.#faults = []
  }

  list(): ActiveFault[] {
    this.#expire()
    return [...this.#faults]
  }

  /** The request fault to apply to one incoming request, consuming one use of it. */
  forRequest(path: string): { latencyMs: number; errorStatus: number | null; timeout: boolean } {
    this.#expire()
    let latencyMs = 0
    let errorStatus: number | null = null
    let timeout = false
    for (const f of this.#faults) {
      if (f.dropWebhooks && f.latencyMs === undefined && f.errorRate === undefined && !f.timeout) continue
      if (f.pathPrefix && !path.startsWith(f.pathPrefix)) continue
      let applied = false
      if (f.latencyMs) {
        latencyMs += f.latencyMs
        applied = true
      }
      if (f.timeout) {
        timeout = true
        applied = true
      }
      if (f.errorRate !== undefined && errorStatus === null && Math.random() < f.errorRate) {
        errorStatus = f.errorStatus ?? 500
        applied = true
      }
      if (applied) this.#consume(f)
    }
    return { latencyMs, errorStatus, timeout }
  }

  /** Whether an outgoing webhook delivery is to be dropped, consuming one use of the fault. */
  dropWebhook(): boolean {
    this.#expire()
    const f = this.#faults.find((x) => x.dropWebhooks)
    if (!f) return false
    this.#consume(f)
    return true
  }

  #consume(f: ActiveFault): void {
    if (f.remaining === null) return
    f.remaining -= 1
    if (f.remaining <= 0) this.#faults = this.#faults.filter((x) => x !== f)
  }

  #expire(): void {
    const now = this.#clock.now()
    this.#faults = this.#faults.filter((f) => f.until === null || f.until > now)
  }
}
