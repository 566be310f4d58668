// Who looks for due work, and when. Due work lives in the store (deliveries to retry or whose
// holder stopped, polls whose time came, inbox rows left pending); each item is claimed in its
// row, so even two sweeps at once would not do anything twice. The sweep itself is held by one
// instance at a time: on PostgreSQL it is a pg-boss job (a `stately` queue: one waiting and one
// running, `expireInSeconds` as its lease, taken over by another instance when its holder dies,
// each run sending the next with `startAfter`); on SQLite (one process) it is a timer.
import type { PgBoss } from 'pg-boss'

/** Whether the store takes work (store/store-health.ts): while it does not, sweeps pause. */
interface Health {
  readonly available: boolean
  onRecovered(listener: () => void): () => void
}

export interface Sweeps {
  /** Runs `sweep` about every `everyMs`, never two at once; held by one instance at a time. */
  start(sweep: () => Promise<void>): Promise<void>
  /** Stops sweeping and waits for a sweep under way. */
  stop(): Promise<void>
}

/** One process: a timer, no overlap. */
export class TimerSweeps implements Sweeps {
  #everyMs: number
  #timer: NodeJS.Timeout | null = null
  #running: Promise<void> | null = null
  #stopped = false
  #onError: (err: unknown) => void
  #health: Health | null

  constructor(opts: { everyMs: number; onError: (err: unknown) => void; health?: Health }) {
    this.#everyMs = opts.everyMs
    this.#onError = opts.onError
    this.#health = opts.health ?? null
  }

  async start(sweep: () => Promise<void>): Promise<void> {
    const tick = () => {
      if (this.#stopped) return
      // While the store is away or full the sweep waits (its claims would fail, or add work).
      const paused = this.#health && !this.#health.available
      this.#running = (paused ? Promise.resolve() : sweep()).catch(this.#onError).finally(() => {
        this.#running = null
        if (!this.#stopped) {
          this.#timer = setTimeout(tick, this.#everyMs)
          this.#timer.unref?.()
        }
      })
    }
    tick()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer) clearTimeout(this.#timer)
    await this.#running
  }
}

const QUEUE = 'patchbay-sweep'
/**
 * The sweep's lease: held by an instance that died mid-sweep (SIGKILL, a lost machine), the sweep
 * is run again by another after this, as found by pg-boss's supervision (every SUPERVISE_S). Short,
 * since until then no instance sweeps at all (no retries, no polls, no work the dead one had
 * taken but not claimed): with 60 s and pg-boss's default supervision of 60 s, a kill that landed
 * in a sweep stopped them all for 60–120 s. A sweep that outlives it is harmless — each item is
 * claimed in its row, so two sweeps at once do nothing twice.
 */
const SWEEP_LEASE_S = 10
/** How often pg-boss looks for expired jobs (the sweep's lease): one query. */
const SUPERVISE_S = 5

/** Several instances on PostgreSQL: the sweep is a pg-boss job only one instance holds. */
export class PgBossSweeps implements Sweeps {
  #boss: PgBoss
  #everyMs: number
  #onError: (err: unknown) => void
  #health: Health | null
  #stopRecovered: (() => void) | null = null

  /** pg-boss is loaded here, for PostgreSQL only: an embedded start does not pay for it. */
  static async open(opts: {
    connectionString: string
    /** pg-boss's own schema (beside Patchbay's tables). */
    schema: string
    everyMs: number
    onError: (err: unknown) => void
    health?: Health
  }): Promise<PgBossSweeps> {
    const { PgBoss } = await import('pg-boss')
    const boss = new PgBoss({
      connectionString: opts.connectionString,
      schema: opts.schema,
      max: 3,
      // Patchbay schedules nothing by cron; the sweep sends its own next run.
      schedule: false,
      superviseIntervalSeconds: SUPERVISE_S,
    })
    return new PgBossSweeps(boss, opts)
  }

  private constructor(
    boss: PgBoss,
    opts: { everyMs: number; onError: (err: unknown) => void; health?: Health },
  ) {
    this.#everyMs = opts.everyMs
    this.#onError = opts.onError
    this.#health = opts.health ?? null
    this.#boss = boss
    this.#boss.on('error', (err) => this.#onError(err))
  }

  async start(sweep: () => Promise<void>): Promise<void> {
    await this.#boss.start()
    const existing = await this.#boss.getQueue(QUEUE)
    // Made by an older release with a longer lease: shortened.
    if (existing && existing.expireInSeconds !== SWEEP_LEASE_S)
      await this.#boss.updateQueue(QUEUE, { expireInSeconds: SWEEP_LEASE_S })
    if (!existing)
      await this.#boss
        .createQueue(QUEUE, {
          policy: 'stately',
          // The lease: a sweep whose instance died is run again by another after this long.
          expireInSeconds: SWEEP_LEASE_S,
          retryLimit: 1_000_000,
          retryDelay: 1,
          deleteAfterSeconds: 60,
          retentionSeconds: 3600,
        })
        // Another instance created it at the same moment.
        .catch(async (err) => {
          if (!(await this.#boss.getQueue(QUEUE))) throw err
        })
    // Sent even while stopping: the next run is then another instance's.
    const next = async () => {
      await this.#boss.send(
        QUEUE,
        {},
        { singletonKey: 'sweep', startAfter: Math.max(1, Math.round(this.#everyMs / 1000)) },
      )
    }
    await this.#boss.work(QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async () => {
      try {
        if (!this.#health || this.#health.available) await sweep()
      } finally {
        await next().catch(this.#onError)
      }
    })
    // The first instance to start (or the first after all stopped) starts the chain; a waiting
    // run makes this one a no-op.
    await this.#boss.send(QUEUE, {}, { singletonKey: 'sweep' })
    // A sweep that ended while the database was away could not send the next one: once it is back,
    // the chain is started again (a no-op where another instance's next run waits).
    this.#stopRecovered =
      this.#health?.onRecovered(() => {
        this.#boss.send(QUEUE, {}, { singletonKey: 'sweep' }).catch(this.#onError)
      }) ?? null
  }

  async stop(): Promise<void> {
    this.#stopRecovered?.()
    // A sweep under way finishes (its claimed items are settled or left to their leases).
    await this.#boss.stop({ graceful: true, timeout: 5_000, close: true })
  }
}
