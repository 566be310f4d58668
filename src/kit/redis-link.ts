// Redis is an accelerator, never a single point of failure. Every use of it asks here first
// whether it answers: while it does not, pacing falls back to this instance's share of each
// budget (redis-pacer.ts), shared lookup results to this instance's own cache, and changes between
// instances to PostgreSQL LISTEN/NOTIFY. ioredis reconnects by itself; each of its connections'
// errors is heard here (an unheard one is printed as "[ioredis] Unhandled error event"), and an
// outage is logged once, as a structured warning, when it starts and once when it ends.
import type { Redis } from 'ioredis'

/** How long one command may take before Redis counts as away for it (the caller falls back). */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000

interface Log {
  warn(obj: object, msg: string): void
  info(obj: object, msg: string): void
}

export class RedisLink {
  readonly redis: Redis
  #log: Log
  #downSince: number | null = null
  #clients = new Set<Redis>()

  constructor(redis: Redis, log: Log) {
    this.redis = redis
    this.#log = log
    this.watch(redis)
  }

  /** Whether Redis answers now (every watched connection ready). */
  get up(): boolean {
    if (this.#downSince !== null) return false
    for (const c of this.#clients) if (c.status !== 'ready') return false
    return true
  }

  /** Hears a connection's errors and returns (another connection of the same Redis: pub/sub). */
  watch(client: Redis): Redis {
    this.#clients.add(client)
    client.on('error', (err: Error) => this.#down(err))
    client.on('ready', () => {
      if (this.#downSince === null) return
      for (const c of this.#clients) if (c !== client && c.status !== 'ready') return
      this.#log.info(
        { redis: 'up', awayMs: Date.now() - this.#downSince },
        'Redis answers again; pacing, shared lookups and changes use it again',
      )
      this.#downSince = null
    })
    return client
  }

  /** A command that failed or timed out: Redis counts as away until a connection is ready again. */
  failed(err: unknown): void {
    this.#down(err as Error)
  }

  /** `command`, or a failure after REDIS_COMMAND_TIMEOUT_MS (the caller falls back). */
  async timed<T>(command: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        command,
        new Promise<T>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`Redis did not answer in ${REDIS_COMMAND_TIMEOUT_MS} ms`)),
            REDIS_COMMAND_TIMEOUT_MS,
          )
        }),
      ])
    } catch (err) {
      this.failed(err)
      throw err
    } finally {
      clearTimeout(timer)
    }
  }

  #down(err: Error): void {
    if (this.#downSince !== null) return
    this.#downSince = Date.now()
    this.#log.warn(
      { redis: 'down', err: err.message },
      "Redis does not answer; pacing on this instance's share of each budget, lookups from this instance's cache, changes over PostgreSQL, until it does",
    )
  }
}
