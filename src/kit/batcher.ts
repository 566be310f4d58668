// Coalescing of lookups into the upstream's bulk calls. Lookups of one spec on one connection that
// arrive within a short window share one bulk request, sent as soon as it is full (the upstream's
// maximum) or when the window closes; each caller receives its own results, in order. A lone
// lookup goes to the single endpoint when the spec has one. When a bulk call costs credits, the
// charge the upstream reports is split among the callers by what each of their results cost.
import type { Metering } from './define.ts'
import { PatchbayError } from './errors.ts'
import type { Http, UpstreamResponse } from './http.ts'

/** One kind of lookup (a person, a company), as data: how to send one or many, and what each costs. */
export interface BatchSpec<Q, R> {
  /** Lookups with the same key on one connection may share a bulk call. */
  key: string
  /** The most queries the upstream takes in one bulk request. */
  maxSize: number
  /** The single endpoint, used when a query is alone. */
  sendOne?: (http: Http, query: Q) => Promise<UpstreamResponse<R>>
  /** The bulk endpoint: one result per query, in the same order. */
  sendMany: (http: Http, queries: Q[]) => Promise<UpstreamResponse<R[]>>
  /** Equal keys are the same lookup (normalize case, URL forms and the like). */
  cacheKey: (query: Q) => string
  /**
   * Other lookups a result answers as well (a person found by name is also the one found by each
   * of their email addresses): its cache keys under those. Only unambiguous identifiers belong here.
   */
  resultKeys?: (result: R) => string[]
  /** Whether a result may be served again from the cache (not a per-record error). Default: yes. */
  cacheable?: (result: R) => boolean
  /** The most credits one query can cost; held against the caller's budget before sending. */
  worstCaseCredits?: (query: Q) => number
  /** What a result cost, to split a shared bulk call's charge among its callers. */
  creditsOf?: (result: R) => number
}

/** One step run taking part in bulk calls. */
export interface BatchCaller {
  /** The client a bulk call is sent with: the connection's credentials, paced, not metered. */
  http: () => Http
  /** Books this caller's share of a bulk call's charge. */
  charge: (credits: number, remaining: number | undefined) => void
}

interface Waiting {
  query: unknown
  caller: BatchCaller
  resolve: (r: unknown) => void
  reject: (e: unknown) => void
}

interface Queue {
  /** The spec its items were added with (queries and results of that spec's types). */
  spec: BatchSpec<unknown, unknown>
  items: Waiting[]
  timer: ReturnType<typeof setTimeout> | null
}

export class Batcher {
  /** Upstream requests sent. */
  readonly stats = { requests: 0 }
  #windowMs: number
  #metering: Metering | undefined
  #queues = new Map<string, Queue>()

  constructor(opts: { windowMs: number; metering?: Metering }) {
    this.#windowMs = opts.windowMs
    this.#metering = opts.metering
  }

  /**
   * Queues the queries; full bulk requests leave at once, the rest when the window closes (at
   * once with a window of 0, which turns coalescing of separate callers off).
   */
  add<Q, R>(spec: BatchSpec<Q, R>, queries: Q[], caller: BatchCaller): Promise<R[]> {
    if (queries.length === 0) return Promise.resolve([])
    let q = this.#queues.get(spec.key)
    if (!q) {
      q = { spec: spec as BatchSpec<unknown, unknown>, items: [], timer: null }
      this.#queues.set(spec.key, q)
    }
    const queue = q
    const results = queries.map(
      (query) =>
        new Promise<R>((resolve, reject) =>
          queue.items.push({ query, caller, resolve: resolve as (r: unknown) => void, reject }),
        ),
    )
    const max = Math.max(1, spec.maxSize)
    while (queue.items.length >= max) void this.#send(queue.spec, queue.items.splice(0, max))
    if (queue.items.length === 0) {
      if (queue.timer) clearTimeout(queue.timer)
      queue.timer = null
    } else if (this.#windowMs <= 0) {
      this.#flush(queue)
    } else if (!queue.timer) {
      queue.timer = setTimeout(() => this.#flush(queue), this.#windowMs)
    }
    return Promise.all(results)
  }

  #flush(queue: Queue): void {
    if (queue.timer) clearTimeout(queue.timer)
    queue.timer = null
    const max = Math.max(1, queue.spec.maxSize)
    while (queue.items.length > 0) void this.#send(queue.spec, queue.items.splice(0, max))
  }

  async #send(spec: BatchSpec<unknown, unknown>, items: Waiting[]): Promise<void> {
    this.stats.requests++
    try {
      const http = items[0].caller.http()
      let results: unknown[]
      let headers: Record<string, string>
      if (items.length === 1 && spec.sendOne) {
        const res = await spec.sendOne(http, items[0].query)
        results = [res.data]
        headers = res.headers
      } else {
        const res = await spec.sendMany(
          http,
          items.map((i) => i.query),
        )
        if (!Array.isArray(res.data) || res.data.length !== items.length)
          throw new PatchbayError(
            'UPSTREAM_UNEXPECTED_RESPONSE',
            `The upstream answered a bulk request of ${items.length} with ${Array.isArray(res.data) ? res.data.length : 'no'} results.`,
            { hint: 'This is an upstream defect; try again, or look the records up one at a time.' },
          )
        results = res.data
        headers = res.headers
      }
      this.#book(spec, items, results, headers)
      items.forEach((item, i) => {
        item.resolve(results[i])
      })
    } catch (err) {
      for (const item of items) item.reject(err)
    }
  }

  #book(
    spec: BatchSpec<unknown, unknown>,
    items: Waiting[],
    results: unknown[],
    headers: Record<string, string>,
  ) {
    const m = this.#metering?.read(headers)
    if (!m || m.charged <= 0) return
    const shares = apportion(
      m.charged,
      results.map((r) => Math.max(0, spec.creditsOf?.(r) ?? 1)),
    )
    const byCaller = new Map<BatchCaller, number>()
    items.forEach((item, i) => {
      byCaller.set(item.caller, (byCaller.get(item.caller) ?? 0) + shares[i])
    })
    for (const [caller, credits] of byCaller) if (credits > 0) caller.charge(credits, m.remaining)
  }
}

/**
 * Splits a whole number `total` in proportion to `weights` (largest remainder), so the shares add
 * up to exactly what the upstream charged. When the weights match the charge, the shares are the weights.
 */
export function apportion(total: number, weights: number[]): number[] {
  if (weights.length === 0) return []
  const sum = weights.reduce((a, b) => a + b, 0)
  const w = sum > 0 ? weights : weights.map(() => 1)
  const wSum = sum > 0 ? sum : weights.length
  const exact = w.map((x) => (total * x) / wSum)
  const shares = exact.map(Math.floor)
  let left = total - shares.reduce((a, b) => a + b, 0)
  const order = exact
    .map((x, i) => [x - Math.floor(x), i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
  for (const [, i] of order) {
    if (left <= 0) break
    shares[i]++
    left--
  }
  return shares
}
