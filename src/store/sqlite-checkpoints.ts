// WAL checkpoints that never stall a commit. By default SQLite checkpoints inside the COMMIT that
// pushes the write-ahead log past 1,000 pages, so that one commit (and, on node:sqlite's
// synchronous API, the whole event loop) waits while pages are copied into the database file.
// The store turns that off (wal_autocheckpoint = 0) and checkpoints here instead: PASSIVE (it
// copies what no reader still needs and never waits for, or blocks, a writer), on a connection
// of its own in a worker thread, about once a second while the log grows. The worker starts only
// once the log is large enough to be worth it, so small stores (tests) never start one.
//
// The log starts over (its next frames written from the file's beginning) only when a transaction
// begins while every frame has been copied: under commits that never pause, a checkpoint once a
// second never ends in such a moment, and the log grew until it was cut (below), a cut that held
// the event loop for 430-600 ms in the event benchmark (shrinking a 1 GiB file costs about 0.3 ms
// a MB freed on this machine's disk). So, once the log holds RESTART_AT_BYTES, the worker
// checkpoints again every millisecond, each time only what was written meanwhile (the log may
// start over by itself then), and the store's own connection, between its transactions, copies
// the last millisecond's frames and starts the log over (RESTART): no file to shrink, a pause of
// a few milliseconds, and a log file that stays near journal_size_limit under any load.
import fs from 'node:fs'
import { Worker } from 'node:worker_threads'
import { type Kysely, sql } from 'kysely'
import { BUSY_TIMEOUT_MS } from './node-sqlite-dialect.ts'
import type { Database } from './schema.ts'

/** What the log holds before it is started over (the store's journal_size_limit: its file keeps that much). */
export const RESTART_AT_BYTES = 64 * 1024 * 1024
/** The worker's checkpoints again, a millisecond apart, before the store's connection starts the log over. */
const CATCH_UP_CHECKPOINTS = 10

const WORKER = `
const { DatabaseSync } = require('node:sqlite')
const { parentPort, workerData } = require('node:worker_threads')
const db = new DatabaseSync(workerData.file)
db.exec('PRAGMA busy_timeout = 1000')
const pageSize = db.prepare('PRAGMA page_size').get().page_size
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
const pause = new Int32Array(new SharedArrayBuffer(4))
parentPort.on('message', () => {
  let error = null
  let logBytes = 0
  try {
    let r = passive.get()
    if (r.log * (pageSize + 24) >= workerData.restartAtBytes)
      for (let i = 0, before = r.log; i < workerData.catchUp; i++, before = r.log) {
        Atomics.wait(pause, 0, 0, 1)
        r = passive.get()
        // Fewer frames than a moment ago: a commit began on a log all copied, and started it over.
        if (r.log < before) break
      }
    logBytes = Math.max(0, r.log) * (pageSize + 24)
  } catch (e) { error = String(e && e.message || e) }
  parentPort.postMessage({ error, logBytes })
})
`

export interface Checkpoints {
  stop(): Promise<void>
}

/**
 * A PASSIVE checkpoint copies the frames written before it began, but the log starts over from its
 * beginning only once every frame was copied and no reader needs it: the worker's checkpoints
 * again (above) bring that moment about under commits that never pause, but a reader holding an
 * old snapshot (a long read) keeps it away, and then the log grows without end (before those, it
 * ate a whole disk in the disk-full test). When, after a PASSIVE checkpoint, the log holds more
 * than this and more than at the look before (it has not started over meanwhile), it is cut by
 * `truncate`: on the store's own connection, between its transactions, nothing to wait for, only
 * the frames written since to copy (the worker's TRUNCATE, as before, held writers back while it
 * waited for them: 70-80 ms pauses in the event benchmark). What counts is what the log holds,
 * not its file's size: a log that started over keeps its file (up to journal_size_limit) and needs
 * no cut.
 */
export const TRUNCATE_AT_BYTES = 1024 * 1024 * 1024

export function checkpointInBackground(
  file: string,
  opts: {
    everyMs?: number
    startAtBytes?: number
    /** The log's size past which it is truncated (read at each look when a function). */
    truncateAtBytes?: number | (() => number)
    /** Cuts the log on the store's connection (PRAGMA wal_checkpoint(TRUNCATE) between transactions). */
    truncate: () => Promise<void>
    /** The log's size at which it is started over (RESTART_AT_BYTES). */
    restartAtBytes?: number
    /** Starts the log over on the store's connection (PRAGMA wal_checkpoint(RESTART) between transactions). */
    restart: () => Promise<void>
    onError?: (message: string) => void
  },
): Checkpoints {
  const wal = `${file}-wal`
  const startAt = opts.startAtBytes ?? 4 * 1024 * 1024
  const restartAt = opts.restartAtBytes ?? RESTART_AT_BYTES
  const limit = opts.truncateAtBytes ?? TRUNCATE_AT_BYTES
  const truncateAt = () => {
    try {
      return typeof limit === 'function' ? limit() : limit
    } catch {
      return TRUNCATE_AT_BYTES
    }
  }
  let worker: Worker | null = null
  let running = false
  let lastChange = 0
  /** What the log held after the last PASSIVE checkpoint. */
  let held = 0
  const done = () => {
    running = false
  }
  const timer = setInterval(() => {
    if (running) return
    let stat: fs.Stats
    try {
      stat = fs.statSync(wal)
    } catch {
      return
    }
    // Nothing written since the last checkpoint, or too little to bother yet.
    if (stat.mtimeMs === lastChange || (!worker && stat.size < startAt)) return
    lastChange = stat.mtimeMs
    if (!worker) {
      worker = new Worker(WORKER, {
        eval: true,
        workerData: {
          file,
          restartAtBytes: restartAt,
          catchUp: CATCH_UP_CHECKPOINTS,
        },
      })
      worker.unref()
      type Reply = { error: string | null; logBytes: number }
      worker.on('message', ({ error, logBytes }: Reply) => {
        if (error) opts.onError?.(error)
        // Cut only a log past its limit that has grown since the last look (one that started over
        // meanwhile is small again), once per look: a TRUNCATE that found readers waits for the next.
        const growing = logBytes > held
        held = logBytes
        if (!error && growing && logBytes >= truncateAt()) opts.truncate().finally(done)
        else if (!error && logBytes >= restartAt) opts.restart().finally(done)
        else done()
      })
      worker.on('error', (err) => {
        running = false
        opts.onError?.(err.message)
      })
    }
    running = true
    worker.postMessage('look')
  }, opts.everyMs ?? 1000)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      if (worker) await worker.terminate()
      worker = null
    },
  }
}

/**
 * A checkpoint on the store's own connection, taken in turn with its transactions (Kysely's one
 * connection, held for it): on a connection in the middle of a transaction SQLite refuses a
 * checkpoint, and under steady traffic that is most of the time.
 * - TRUNCATE folds the log into the database file and cuts it to nothing: room given back.
 * - RESTART folds it and starts it over, its file kept. It runs every few seconds under load, so it
 *   does not wait: with another connection reading (a backup's step, an operator's shell) it would
 *   hold the event loop for up to the busy timeout; it copies what it can and leaves the log as it
 *   is, for the next look.
 */
export async function checkpointOnStore(db: Kysely<Database>, mode: 'TRUNCATE' | 'RESTART'): Promise<void> {
  await db.connection().execute(async (conn) => {
    if (mode === 'TRUNCATE') {
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(conn)
      return
    }
    await sql`PRAGMA busy_timeout = 0`.execute(conn)
    try {
      await sql`PRAGMA wal_checkpoint(RESTART)`.execute(conn)
    } finally {
      await sql`PRAGMA busy_timeout = ${sql.lit(BUSY_TIMEOUT_MS)}`.execute(conn)
    }
  })
}
