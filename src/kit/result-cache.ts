// A per-connection cache of lookup results, so the same lookup is not paid for twice while its
// result is fresh. Results live `ttlMs` from when they arrived; the least recently used go first
// when the cache is full. A lookup that is under way is shared too: whoever asks for the same key
// meanwhile waits for that answer instead of sending (and paying for) a second request.

export interface ResultCacheOptions {
  /** How long a result is served from the cache. 0 turns the cache (and sharing) off. */
  ttlMs: number
  maxEntries: number
  now?: () => number
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

  constructor(opts: ResultCacheOptions) {
    this.ttlMs = opts.ttlMs
    this.maxEntries = Math.max(1, opts.maxEntries)
    this.#now = opts.now ?? Date.now
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

  #store(key: string, value: unknown): void {
    this.#entries.delete(key)
    this.#entries.set(key, { value, expiresAt: this.#now() + this.ttlMs })
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value as string
      this.#entries.delete(oldest)
    }
  }
}
