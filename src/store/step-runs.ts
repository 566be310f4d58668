// Run records: what ran, for whom, how it ended. Inputs and outputs are not kept, so no secret
// given in an input (a Task-Board API Call's key and token) can ever land here.
//
// A run's record is written off the hot path: `record` only queues it, and the queue is written
// per flush — after FLUSH_MS, or at once when FLUSH_ROWS are waiting. Reads of this instance flush
// first, so a run that has finished is always listed; `close` (a clean stop) writes everything
// left. A flush the store refuses keeps its rows queued, logs, and is tried again.
//
// No statement text is made for each row or each batch size (building a multi-row VALUES list
// cost more per run than the database's own work). On PostgreSQL a flush is one INSERT over the
// rows as one JSON array parameter (json_populate_recordset): one text whatever the batch size. On
// SQLite it is the event path's multi-row INSERTs of fixed sizes, prepared once
// (sqlite-row-batches.ts), in one transaction: SQLite unpacks a JSON array (json_each) at about
// twice their cost a row (measured with 200 rows a flush: 7.4 against 3.3 µs of CPU a run record).
import { type Kysely, sql } from 'kysely'
import type { Clock } from '../kit/clock.ts'
import type { UpstreamRequestRecord } from '../kit/http.ts'
import { byCreated, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
import type { Database, StepRunsTable } from './schema.ts'
import { RowBatchInsert } from './sqlite-row-batches.ts'

/** The store's engine (database.ts' Store['kind'], named here so this file's types need no database driver's). */
type StoreKind = 'sqlite' | 'postgres'

export type StepRunRow = StepRunsTable

/** A run record's timing and its upstream requests, read (the requests column is JSON text, read here only). */
export interface StepRunTimings {
  id: string
  step_id: string
  status: string
  error_code: string | null
  duration_ms: number
  created_at: string
  requests: UpstreamRequestRecord[]
}

/** A workspace's run records by id, with their upstream requests (a run's timeline). */
export async function stepRunTimings(
  db: Kysely<Database>,
  workspaceId: string,
  ids: string[],
): Promise<StepRunTimings[]> {
  if (ids.length === 0) return []
  const rows = await db
    .selectFrom('step_runs')
    .select(['id', 'step_id', 'status', 'error_code', 'duration_ms', 'created_at', 'requests'])
    .where('id', 'in', ids)
    .where('workspace_id', '=', workspaceId)
    .execute()
  return rows.map((r) => ({ ...r, requests: r.requests ? JSON.parse(r.requests) : [] }))
}

/** Every column of a run record: the type check fails when one is missing or unknown. */
const COLUMN_FLAGS = {
  id: true,
  workspace_id: true,
  step_id: true,
  connection_id: true,
  caller_key_id: true,
  status: true,
  error_code: true,
  duration_ms: true,
  attempts: true,
  created_at: true,
  rate_limited: true,
  requests: true,
} as const satisfies Record<keyof StepRunRow, true>
const COLUMNS = Object.keys(COLUMN_FLAGS) as (keyof StepRunRow)[]

/** PostgreSQL's INSERT of a batch: the rows as one JSON array of objects. */
function insertBatch(batch: StepRunRow[]) {
  const columns = sql.join(COLUMNS.map((c) => sql.ref(c)))
  return sql`insert into step_runs (${columns}) select ${columns} from json_populate_recordset(null::step_runs, ${JSON.stringify(batch)}::json)`
}

/** SQLite's INSERTs of a batch (run in one transaction: a flush goes in whole or not at all). */
const SQLITE_INSERT = new RowBatchInsert<StepRunRow>({ table: 'step_runs', columns: COLUMN_FLAGS })

const BY_CREATED = byCreated<StepRunRow>()

/** How long a recorded run may wait before its flush (other instances see it this much later at most). */
const FLUSH_MS = 50
/** Rows that start a flush at once; also the most one INSERT carries (12 columns a row). */
const FLUSH_ROWS = 500
/** Waits between tries of a flush the store refused: doubling from FLUSH_MS up to this. */
const RETRY_MAX_MS = 5_000
/** Rows kept while the store refuses them; past this the oldest are dropped, and the log says how many. */
const MAX_QUEUED = 100_000

interface Log {
  error(obj: object, msg: string): void
}

export class StepRuns {
  #db: Kysely<Database>
  #kind: StoreKind
  #clock: Clock
  #log: Log
  #queued: StepRunRow[] = []
  /** Rows ever recorded, and of those the ones written or dropped: a flush waits for its share. */
  #recorded = 0
  #settled = 0
  /** The write under way: one at a time, in the order runs were recorded. */
  #writing: Promise<void> | null = null
  #timerSet = false
  #failures = 0
  #closed = false

  constructor(store: { db: Kysely<Database>; kind: StoreKind }, deps: { clock: Clock; log: Log }) {
    this.#db = store.db
    this.#kind = store.kind
    this.#clock = deps.clock
    this.#log = deps.log
  }

  /** Queues a finished run's record; it is in the store within FLUSH_MS (or at the next read). */
  record(row: StepRunRow): void {
    this.#queued.push(row)
    this.#recorded++
    if (this.#queued.length > MAX_QUEUED) {
      const dropped = this.#queued.splice(0, this.#queued.length - MAX_QUEUED)
      this.#settled += dropped.length
      this.#log.error(
        { dropped: dropped.length, oldest: dropped[0].created_at },
        'step run records dropped: the store has refused them for too long',
      )
    }
    this.#next()
  }

  /**
   * Writes every run recorded before the call (not those recorded meanwhile, so a read under load
   * is not kept waiting); rejects, keeping them queued, when the store refuses them.
   */
  async flush(): Promise<void> {
    const target = this.#recorded
    while (this.#settled < target) {
      if (this.#writing) await this.#writing.catch(() => {})
      else await this.#write()
    }
  }

  /** A clean stop: writes what is queued; records the store still refuses are logged as lost. */
  async close(): Promise<void> {
    this.#closed = true
    try {
      await this.flush()
    } catch (err) {
      this.#log.error(
        { err, lost: this.#queued.length },
        'step run records could not be written before the stop',
      )
    }
  }

  /**
   * Newest first, a page at a time (keyset on created_at, id). `before` (a createdAt: the runs made
   * earlier) is the deprecated way to page, kept for one release.
   */
  async list(
    workspaceId: string,
    page: PageRequest & { before?: string; callerKeyId?: string },
  ): Promise<Page<StepRunRow>> {
    await this.#flushBeforeRead()
    let q = this.#db.selectFrom('step_runs').selectAll().where('workspace_id', '=', workspaceId)
    if (page.callerKeyId) q = q.where('caller_key_id', '=', page.callerKeyId)
    if (page.before) q = q.where('created_at', '<', page.before)
    return pageOf(await keyset(q, BY_CREATED, page).execute(), BY_CREATED, page)
  }

  /** How many runs are recorded, by step and outcome (the /metrics gauge). */
  async countByStepAndStatus(): Promise<Array<{ step_id: string; status: string; n: number }>> {
    await this.#flushBeforeRead()
    const rows = await this.#db
      .selectFrom('step_runs')
      .select(['step_id', 'status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['step_id', 'status'])
      .execute()
    return rows.map((r) => ({ ...r, n: Number(r.n) }))
  }

  /** A read goes on with what is stored when the flush fails (that was logged; the rows stay queued). */
  async #flushBeforeRead(): Promise<void> {
    await this.flush().catch(() => {})
  }

  /** What comes next: a write now (a full batch waiting), a timer, or nothing. */
  #next(): void {
    if (this.#writing || this.#queued.length === 0) return
    // After the stop (a step that outlived it): written at once, tried once; a failure is logged.
    const now = this.#queued.length >= FLUSH_ROWS || this.#closed
    if (now && this.#failures === 0)
      void this.#write().catch(() => {}) // logged by #write
    else this.#setTimer()
  }

  /** One INSERT of the oldest queued rows; on failure they go back to the head of the queue. */
  #write(): Promise<void> {
    const batch = this.#queued.splice(0, FLUSH_ROWS)
    if (batch.length === 0) return Promise.resolve()
    const inserting =
      this.#kind === 'sqlite'
        ? this.#db.transaction().execute((trx) => SQLITE_INSERT.run(trx, batch))
        : insertBatch(batch).execute(this.#db)
    const writing = inserting
      .then(
        () => {
          this.#failures = 0
          this.#settled += batch.length
        },
        (err) => {
          this.#queued.unshift(...batch)
          this.#failures++
          this.#log.error(
            { err, queued: this.#queued.length, failures: this.#failures },
            'could not write step run records; they are kept and tried again',
          )
          throw err
        },
      )
      .finally(() => {
        this.#writing = null
        this.#next()
      })
    this.#writing = writing
    return writing
  }

  #setTimer(): void {
    if (this.#timerSet || this.#closed) return
    this.#timerSet = true
    const wait = this.#failures === 0 ? FLUSH_MS : Math.min(RETRY_MAX_MS, FLUSH_MS * 2 ** this.#failures)
    void this.#clock.sleep(wait).then(() => {
      this.#timerSet = false
      if (!this.#closed && !this.#writing && this.#queued.length > 0) void this.#write().catch(() => {})
    })
  }
}
