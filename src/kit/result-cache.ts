// A per-connection cache of lookup results, so the same lookup is not paid for twice while its
// result is fresh. Results live `ttlMs` from when they arrived; the least recently used go first
// when the cache is full. A lookup that is under way is shared too: whoever asks for the same key
// meanwhile waits for that answer instead of sending (and paying for) a second request.
//
// With a shared layer (`shared`, Redis when configured: kit/redis-results.ts), results are also
// kept there under the cache's namespace for the same time, so a lookup paid for on one instance
// is free on every other; what this process holds is then its near copy.

/** Where results are shared between instances. Values come back exactly as they were put. */
export interface SharedResults {
  /** The entries found, with when each expires (ms since the epoch). */
  get(keys: string[]): Promise<Map<string, { value: unknown; expiresAt: number }>>
  put(entries: Array<{ key: string; value: unknown; expiresAt: number }>): Promise<void>
}

export interface ResultCacheOptions {
  /** How long a result is served from the cache. 0 turns the cache (and sharing) off. */
  ttlMs: number
  maxEntries: number
  now?: () => number
  /** Results shared with the other instances, under `namespace` (e.g. the connection's id). */
  shared?: { results: SharedResults; namespace: string; onError?: (err: unknown) => void }
}

export type CacheLookup<T> =
  | { state: 'hit'; value: T }
  | { state: 'pending'; promise: Promise<T> }
  | { state: 'miss' }

/** The caller that claimed a key fetches it and settles the claim; the others wait on it. */
export type CacheClaim<T> =
  | { owner: true; settle(value: T, keep: boolean): void; fail(err: unknown): void }
  | { owner: false; lookup: Exclude<CacheLookup<T>, { state: 'miss' }> }

interface Entry {
  value: unknown
  expiresAt: number
}

export class ResultCache {
  readonly ttlMs: number
  readonly maxEntries: number
  #now: () => number
  #entries = new Map<string, Entry>()
  #pending = new Map<string, Promise<unknown>>()
  #shared: ResultCacheOptions['shared']

  constructor(opts: ResultCacheOptions) {
    this.ttlMs = opts.ttlMs
    this.maxEntries = Math.max(1, opts.maxEntries)
    this.#now = opts.now ?? Date.now
    this.#shared = opts.shared
  }

  /**
   * Looks the keys up in the shared layer (other instances' results) and keeps what it finds
   * here, so a following lookup() is a hit. Without a shared layer, or when it does not answer,
   * nothing is found (the lookup is then sent as usual).
   */
  async fetchShared(keys: string[]): Promise<number> {
    const shared = this.#shared
    if (!shared || !this.enabled || keys.length === 0) return 0
    let found: Map<string, { value: unknown; expiresAt: number }>
    try {
      found = await shared.results.get(keys.map((k) => `${shared.namespace}:${k}`))
    } catch (err) {
      shared.onError?.(err)
      return 0
    }
    let n = 0
    for (const key of keys) {
      const e = found.get(`${shared.namespace}:${key}`)
      if (!e || e.expiresAt <= this.#now() || this.#pending.has(key)) continue
      this.#keep(key, e.value, e.expiresAt)
      n++
    }
    return n
  }

  get enabled(): boolean {
    return this.ttlMs > 0
  }

  get size(): number {
    return this.#entries.size
  }

  lookup<T>(key: string): CacheLookup<T> {
    if (!this.enabled) return { state: 'miss' }
    const e = this.#entries.get(key)
    if (e) {
      if (e.expiresAt > this.#now()) {
        // Most recently used goes to the back of the eviction order.
        this.#entries.delete(key)
        this.#entries.set(key, e)
        return { state: 'hit', value: e.value as T }
      }
      this.#entries.delete(key)
    }
    const p = this.#pending.get(key)
    return p ? { state: 'pending', promise: p as Promise<T> } : { state: 'miss' }
  }

  /**
   * Claims a key to fetch it, or hands back the result (or the fetch under way) of whoever has.
   * With the cache off every caller owns its claim and nothing is kept.
   */
  claim<T>(key: string): CacheClaim<T> {
    const found = this.lookup<T>(key)
    if (found.state !== 'miss') return { owner: false, lookup: found }
    if (!this.enabled) return { owner: true, settle: () => {}, fail: () => {} }
    let resolve!: (v: T) => void
    let reject!: (e: unknown) => void
    const promise = new Promise<T>((res, rej) => {
      resolve = res
      reject = rej
    })
    // Waiters handle the rejection; an unobserved one must not crash the process.
    promise.catch(() => {})
    this.#pending.set(key, promise)
    return {
      owner: true,
      settle: (value, keep) => {
        if (this.#pending.get(key) === promise) this.#pending.delete(key)
        if (keep) this.#store(key, value)
        resolve(value)
      },
      fail: (err) => {
        if (this.#pending.get(key) === promise) this.#pending.delete(key)
        reject(err)
      },
    }
  }

  /** Keeps a result under a key nobody is fetching (another key the same result answers). */
  put(key: string, value: unknown): void {
    if (this.enabled && !this.#pending.has(key)) this.#store(key, value)
  }

  /** Forgets one result (it is stale: the thing it describes changed). */
  delete(key: string): void {
    this.#entries.delete(key)
  }

  clear(): void {
    this.#entries.clear()
  }

  /** Keeps a fresh result here and in the shared layer. */
  #store(key: string, value: unknown): void {
    const expiresAt = this.#now() + this.ttlMs
    this.#keep(key, value, expiresAt)
    const shared = this.#shared
    if (shared)
      shared.results
        .put([{ key: `${shared.namespace}:${key}`, value, expiresAt }])
        .catch((err) => shared.onError?.(err))
  }

  #keep(key: string, value: unknown, expiresAt: number): void {
    this.#entries.delete(key)
    this.#entries.set(key, { value, expiresAt })
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value as string
      this.#entries.delete(oldest)
    }
  }
}
