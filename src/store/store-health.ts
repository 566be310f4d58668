// Whether the store can take work now, and why not. The database may go away (PostgreSQL stopped,
// restarting or unreachable) or run out of room (the embedded SQLite's disk full, or its free
// space under PATCHBAY_MIN_FREE_DISK_MB). Either is waited out, never fatal: a failure that says
// so marks the store unavailable (logged once per outage), requests are answered with a clear
// 503/507 and Retry-After instead of a 500 (server/store-gate.ts), background work pauses, and a
// probe looks every second until the store answers again — then whoever waits (the sweeps, the
// change listener) is told, and everything resumes without a restart.
import { PatchbayError } from '../kit/errors.ts'

export type StoreProblem =
  | { kind: 'unreachable'; reason: string; since: string }
  | { kind: 'full'; reason: string; since: string }

/** How long clients are asked to wait (Retry-After) while the store is away. */
export const STORE_RETRY_AFTER_MS = 5_000
/** How often the probe looks while the store is away (and how often free space is read). */
const PROBE_MS = 1_000

/** Below this much free space (or twice the threshold) the disk is under pressure: the log is checkpointed. */
const PRESSURE_BYTES = 64 * 1024 * 1024
const PRESSURE_EVERY_MS = 5_000

/** PostgreSQL's SQLSTATE classes and codes that mean "the server is not there" rather than "this query is wrong". */
const PG_AWAY = /^(08|57P0[123]|53300|3D000)/
/** Node's socket errors: nothing answered at the address. */
const SOCKET_AWAY = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])
const MESSAGE_AWAY =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable|Client was closed|the database system is (starting up|shutting down|in recovery)|terminating connection/i
/** SQLite's primary result codes: SQLITE_IOERR (10), SQLITE_FULL (13). */
const SQLITE_IOERR = 10
const SQLITE_FULL = 13

/** What a failure says about the store: away, full, or nothing (an ordinary error). */
export function storeFailureKind(err: unknown): StoreProblem['kind'] | null {
  const seen = new Set<unknown>()
  const visit = (e: unknown): StoreProblem['kind'] | null => {
    if (!e || typeof e !== 'object' || seen.has(e)) return null
    seen.add(e)
    const x = e as { code?: unknown; errcode?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
    if (typeof x.errcode === 'number') {
      const primary = x.errcode & 0xff
      if (primary === SQLITE_FULL || primary === SQLITE_IOERR) return 'full'
    }
    if (typeof x.message === 'string' && /database or disk is full|disk I\/O error/i.test(x.message))
      return 'full'
    if (typeof x.code === 'string' && (x.code === 'ENOSPC' || x.code === 'EDQUOT')) return 'full'
    if (typeof x.code === 'string' && (SOCKET_AWAY.has(x.code) || PG_AWAY.test(x.code))) return 'unreachable'
    if (typeof x.message === 'string' && MESSAGE_AWAY.test(x.message)) return 'unreachable'
    if (Array.isArray(x.errors)) for (const inner of x.errors) if (visit(inner)) return visit(inner)
    return visit(x.cause)
  }
  return visit(err)
}

const describe = (err: unknown): string => {
  const e = err as { message?: string; code?: string; errors?: { message?: string }[] }
  return e?.message || e?.errors?.[0]?.message || e?.code || String(err)
}

interface Log {
  warn(obj: object, msg: string): void
  info(obj: object, msg: string): void
}

export interface StoreHealthOptions {
  /** Answers when the store takes a query again (`select 1`); throws while it is away. */
  probe: () => Promise<void>
  /** Free bytes where the store writes (the embedded database's disk); null where nothing is to be watched. */
  freeBytes?: (() => number | null) | null
  /** Below this many free bytes new work is refused (before the disk is full); 0 watches only for a full disk. */
  minFreeBytes?: number
  /** Called when the disk was found full or low: a chance to give room back (a WAL checkpoint). */
  onPressure?: () => void
  log?: Log
  probeMs?: number
}

export class StoreHealth {
  #problem: StoreProblem | null = null
  #probe: () => Promise<void>
  #freeBytes: (() => number | null) | null
  #minFreeBytes: number
  #onPressure: () => void
  #log: Log | null
  #probeMs: number
  #timer: NodeJS.Timeout | null = null
  #probing: Promise<void> | null = null
  #recovered = new Set<() => void>()
  #closed = false
  #lastPressure = 0
  /** The free bytes last read (shown by /readyz), or null when nothing is watched. */
  lastFreeBytes: number | null = null

  constructor(opts: StoreHealthOptions) {
    this.#probe = opts.probe
    this.#freeBytes = opts.freeBytes ?? null
    this.#minFreeBytes = opts.minFreeBytes ?? 0
    this.#onPressure = opts.onPressure ?? (() => {})
    this.#log = opts.log ?? null
    this.#probeMs = opts.probeMs ?? PROBE_MS
    // The disk is watched all the time (a statfs a second), so new work stops before it is full.
    if (this.#freeBytes) {
      this.#checkSpace()
      this.#timer = setInterval(() => this.#tick(), this.#probeMs)
      this.#timer.unref()
    }
  }

  get available(): boolean {
    return this.#problem === null
  }

  get problem(): StoreProblem | null {
    return this.#problem
  }

  /** Called each time the store answers again after a problem. */
  onRecovered(listener: () => void): () => void {
    this.#recovered.add(listener)
    return () => this.#recovered.delete(listener)
  }

  /**
   * Looks at a failure. When it says the store is away or full, the store is marked so (and the
   * probe starts) and the error to answer with is returned; otherwise null (an ordinary error).
   */
  failure(err: unknown): PatchbayError | null {
    if (err instanceof PatchbayError)
      return err.code === 'DATABASE_UNAVAILABLE' || err.code === 'STORAGE_FULL' ? err : null
    const kind = storeFailureKind(err)
    if (!kind) return null
    this.#mark(kind, describe(err))
    return this.refusal()
  }

  /** The error a request is answered with while the store has a problem (ingress: 503 whatever the problem). */
  refusal(opts: { ingress?: boolean } = {}): PatchbayError {
    const p = this.#problem
    if (p?.kind === 'full')
      return new PatchbayError(
        'STORAGE_FULL',
        `The database's disk has no room for new work (${p.reason}); nothing was stored.`,
        { status: opts.ingress ? 503 : undefined, retryAfterMs: STORE_RETRY_AFTER_MS },
      )
    return new PatchbayError(
      'DATABASE_UNAVAILABLE',
      `The database does not answer${p ? ` (${p.reason})` : ''}; nothing was stored or changed.`,
      { retryAfterMs: STORE_RETRY_AFTER_MS },
    )
  }

  /** Marks the store away or full (logged once per outage) and starts probing for its return. */
  #mark(kind: StoreProblem['kind'], reason: string): void {
    if (this.#closed) return
    if (!this.#problem) {
      this.#problem = { kind, reason, since: new Date().toISOString() }
      this.#log?.warn(
        { store: kind, reason },
        kind === 'full'
          ? 'the database has no room for new work; refusing writes until there is (503/507 with Retry-After)'
          : 'the database does not answer; answering 503 with Retry-After and pausing background work until it does',
      )
      if (kind === 'full') this.#onPressure()
    } else if (kind === 'full' && this.#problem.kind !== 'full') {
      this.#problem = { kind, reason, since: this.#problem.since }
    }
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#tick(), this.#probeMs)
      this.#timer.unref()
    }
  }

  /** Reads the free space; under the threshold the store is full for new work. True when there is room. */
  #checkSpace(): boolean {
    if (!this.#freeBytes) return true
    let free: number | null
    try {
      free = this.#freeBytes()
    } catch {
      return true
    }
    this.lastFreeBytes = free
    if (free === null) return true
    // A full disk counts as full whatever the threshold (a few pages are needed for any write).
    const floor = Math.max(this.#minFreeBytes, 64 * 1024)
    // Under pressure (less than twice the floor, or 64 MiB) the log is folded back into the
    // database file and cut (at most every 5 s), so the write-ahead log does not eat the last room.
    if (free < Math.max(2 * floor, PRESSURE_BYTES) && Date.now() - this.#lastPressure > PRESSURE_EVERY_MS) {
      this.#lastPressure = Date.now()
      this.#onPressure()
    }
    if (free < floor) {
      this.#mark(
        'full',
        this.#minFreeBytes > 64 * 1024
          ? `${mib(free)} free, under PATCHBAY_MIN_FREE_DISK_MB=${Math.round(this.#minFreeBytes / (1024 * 1024))}`
          : `${mib(free)} free`,
      )
      return false
    }
    return true
  }

  #tick(): void {
    if (this.#closed || this.#probing) return
    const hasRoom = this.#checkSpace()
    if (!this.#problem) {
      if (!this.#freeBytes && this.#timer) {
        clearInterval(this.#timer)
        this.#timer = null
      }
      return
    }
    if (!hasRoom) {
      this.#onPressure()
      return
    }
    // The first probe comes a whole period after the failure was seen, never in the same instant:
    // a store that failed a query a moment ago is not called back on a lucky answer (no flapping),
    // and a timer already running for the disk watch does not end an outage milliseconds old.
    if (Date.now() - Date.parse(this.#problem.since) < this.#probeMs) return
    this.#probing = this.#probe()
      .then(
        () => {
          const was = this.#problem
          if (!was) return
          this.#problem = null
          this.#log?.info(
            { store: was.kind, awayMs: Date.now() - Date.parse(was.since) },
            'the database takes work again; resuming',
          )
          for (const l of this.#recovered) {
            try {
              l()
            } catch {
              // A listener's failure is its own.
            }
          }
        },
        (err) => {
          // Still away; a failure of another kind (the disk) replaces the reason.
          const kind = storeFailureKind(err)
          if (kind === 'full' && this.#problem?.kind !== 'full') this.#mark('full', describe(err))
        },
      )
      .finally(() => {
        this.#probing = null
      })
  }

  close(): void {
    this.#closed = true
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = null
  }
}

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
