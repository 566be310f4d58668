// This process's workers, by job name: processing the inbox, sending deliveries, running tools,
// polling triggers. The durable truth lives in the tables (inbox, deliveries, triggers), and
// each item is claimed in its row before it is worked on, so a job here only says "work on this
// now": a job lost with its process is found again by the sweep (jobs/sweeps.ts), on whichever
// instance holds it. Written here rather than taken from a library because it is only an
// in-memory batching scheduler (batch size, concurrency, linger, singleton keys); the lease and
// the claim are the store's.

export interface JobOptions {
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number
  /** A job with the same key that is already waiting makes this one a no-op. */
  singletonKey?: string
}

export type JobHandler<T> = (jobs: T[]) => Promise<void>

export interface WorkOptions {
  batchSize: number
  concurrency: number
  /** Wait this long after the first job arrives, so that more can share its batch. */
  lingerMs?: number
}

export interface JobQueue {
  /** Handles jobs of `name`, up to `batchSize` at once and `concurrency` batches in flight. */
  work<T>(name: string, opts: WorkOptions, handler: JobHandler<T>): void
  send<T>(name: string, data: T, opts?: JobOptions): void
  stop(): Promise<void>
}

interface Lane<T> {
  handler: JobHandler<T>
  batchSize: number
  concurrency: number
  lingerMs: number
  waiting: T[]
  keys: Set<string>
  keyOf: Map<T, string>
  active: number
  scheduled: boolean
}

/** The single-process queue: in memory, drained on the next tick, in batches. */
export class InProcessJobQueue implements JobQueue {
  /** Each job name's lane; its jobs are the handler's (`send` and `work` agree on T per name). */
  #lanes = new Map<string, Lane<unknown>>()
  #timers = new Set<NodeJS.Timeout>()
  #idle: Array<() => void> = []
  #stopped = false
  #onError: (name: string, err: unknown) => void

  /** `onError`: told of a job that failed (its handler threw), by the job's name. */
  constructor(opts: { onError?: (name: string, err: unknown) => void } = {}) {
    this.#onError = opts.onError ?? (() => {})
  }

  work<T>(name: string, opts: WorkOptions, handler: JobHandler<T>): void {
    this.#lanes.set(name, {
      handler: handler as JobHandler<unknown>,
      ...opts,
      lingerMs: opts.lingerMs ?? 0,
      waiting: [],
      keys: new Set(),
      keyOf: new Map(),
      active: 0,
      scheduled: false,
    })
  }

  send<T>(name: string, data: T, opts: JobOptions = {}): void {
    if (this.#stopped) return
    const lane = this.#lanes.get(name)
    if (!lane) throw new Error(`No worker for job ${name}`)
    if (opts.delayMs && opts.delayMs > 0) {
      const timer = setTimeout(() => {
        this.#timers.delete(timer)
        this.send(name, data, { singletonKey: opts.singletonKey })
      }, opts.delayMs)
      timer.unref?.()
      this.#timers.add(timer)
      return
    }
    if (opts.singletonKey) {
      if (lane.keys.has(opts.singletonKey)) return
      lane.keys.add(opts.singletonKey)
      lane.keyOf.set(data, opts.singletonKey)
    }
    lane.waiting.push(data)
    this.#schedule(lane, name)
  }

  #schedule(lane: Lane<unknown>, name: string): void {
    if (lane.scheduled) return
    lane.scheduled = true
    const run = () => {
      lane.scheduled = false
      this.#drain(lane, name)
    }
    if (lane.lingerMs > 0 && lane.waiting.length < lane.batchSize) setTimeout(run, lane.lingerMs)
    else setImmediate(run)
  }

  #drain(lane: Lane<unknown>, name: string): void {
    while (lane.waiting.length > 0 && lane.active < lane.concurrency && !this.#stopped) {
      const batch = lane.waiting.splice(0, lane.batchSize)
      for (const item of batch) {
        const key = lane.keyOf.get(item)
        if (key !== undefined) {
          lane.keys.delete(key)
          lane.keyOf.delete(item)
        }
      }
      lane.active++
      lane
        .handler(batch)
        .catch((err) => this.#onError(name, err))
        .finally(() => {
          lane.active--
          if (lane.waiting.length > 0) this.#schedule(lane, name)
          else this.#checkIdle()
        })
    }
  }

  /** Resolves when no job is waiting or running (tests and graceful stops). */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.#idle.push(resolve)
      this.#checkIdle()
    })
  }

  #checkIdle(): void {
    for (const lane of this.#lanes.values()) if (lane.active > 0 || lane.waiting.length > 0) return
    const waiters = this.#idle.splice(0)
    for (const w of waiters) w()
  }

  /**
   * Takes no more jobs and waits up to `graceMs` for those running. Jobs still waiting are
   * dropped: their items stay claimable in the store (a claim already taken ends with its lease).
   */
  async stop(graceMs = 2_000): Promise<void> {
    this.#stopped = true
    for (const t of this.#timers) clearTimeout(t)
    this.#timers.clear()
    for (const lane of this.#lanes.values()) lane.waiting.length = 0
    const busy = () => [...this.#lanes.values()].some((l) => l.active > 0)
    const until = Date.now() + graceMs
    while (busy() && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
  }
}
