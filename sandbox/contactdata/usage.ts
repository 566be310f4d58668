// Counts every request that reaches the API (anything outside /_sandbox), per endpoint and API key,
// with credits charged and status codes. Patchbay's tests read it to assert how many upstream calls
// a step made, so it counts at the socket: requests refused by auth, rate limits, injected faults or
// routing still count, and so do requests held open by a timeout fault.
import type { IncomingMessage, Server } from 'node:http'
import type { Clock } from '../common/clock.ts'
import { keepNewest } from '../common/keep-newest.ts'

export interface UsageEntry {
  at: string
  method: string
  path: string
  apiKey: string | null
  /** null while unanswered, or when the connection closed without an answer. */
  status: number | null
  creditsCharged: number
}

export interface EndpointUsage {
  requests: number
  creditsCharged: number
  statuses: Record<string, number>
}

const RECENT_KEPT = 500

export class Usage {
  #clock: Clock
  #since: string
  #byKey = new Map<string, Map<string, EndpointUsage>>()
  #recent: UsageEntry[] = []
  #open = new WeakMap<IncomingMessage, UsageEntry>()

  constructor(clock: Clock) {
    this.#clock = clock
    this.#since = clock.iso()
  }

  attach(server: Server): void {
    server.on('request', (req: IncomingMessage, res) => {
      const path = (req.url ?? '/').split('?')[0]
      if (path.startsWith('/_sandbox')) return
      const key = req.headers['x-api-key']
      const entry: UsageEntry = {
        at: this.#clock.iso(),
        method: req.method ?? 'GET',
        path,
        apiKey: typeof key === 'string' ? key : null,
        status: null,
        creditsCharged: 0,
      }
      this.#open.set(req, entry)
      this.#recent.push(entry)
      keepNewest(this.#recent, RECENT_KEPT)
      this.#endpoint(entry).requests++
      res.on('finish', () => {
        entry.status = res.statusCode
        const statuses = this.#endpoint(entry).statuses
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
      })
    })
  }

  /** Credits are booked when charged, not when the answer is sent, so a reader never sees them late. */
  charge(req: IncomingMessage, credits: number): void {
    const entry = this.#open.get(req)
    if (!entry || credits === 0) return
    entry.creditsCharged += credits
    this.#endpoint(entry).creditsCharged += credits
  }

  report(apiKey?: string) {
    const endpoints: Record<string, EndpointUsage> = {}
    for (const [key, perEndpoint] of this.#byKey) {
      if (apiKey !== undefined && key !== apiKey) continue
      for (const [name, u] of perEndpoint) {
        endpoints[name] ??= { requests: 0, creditsCharged: 0, statuses: {} }
        const into = endpoints[name]
        into.requests += u.requests
        into.creditsCharged += u.creditsCharged
        for (const [s, n] of Object.entries(u.statuses)) into.statuses[s] = (into.statuses[s] ?? 0) + n
      }
    }
    const all = Object.values(endpoints)
    return {
      since: this.#since,
      totalRequests: all.reduce((n, u) => n + u.requests, 0),
      creditsCharged: all.reduce((n, u) => n + u.creditsCharged, 0),
      endpoints,
      recent: this.#recent.filter((e) => apiKey === undefined || e.apiKey === apiKey),
    }
  }

  reset(): void {
    this.#byKey.clear()
    this.#recent = []
    this.#since = this.#clock.iso()
  }

  #endpoint(entry: UsageEntry): EndpointUsage {
    const key = entry.apiKey ?? ''
    let perEndpoint = this.#byKey.get(key)
    if (!perEndpoint) {
      perEndpoint = new Map()
      this.#byKey.set(key, perEndpoint)
    }
    const name = `${entry.method} ${entry.path}`
    let u = perEndpoint.get(name)
    if (!u) {
      u = { requests: 0, creditsCharged: 0, statuses: {} }
      perEndpoint.set(name, u)
    }
    return u
  }
}
