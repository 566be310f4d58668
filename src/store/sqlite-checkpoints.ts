// WAL checkpoints that never stall a commit. By default SQLite checkpoints inside the COMMIT that
// pushes the write-ahead log past 1,000 pages, so that one commit (and, on node:sqlite's
// synchronous API, the whole event loop) waits while pages are copied into the database file.
// The store turns that off (wal_autocheckpoint = 0) and checkpoints here instead: PASSIVE (it
// copies what no reader still needs and never waits for, or blocks, a writer), on a connection
// of its own in a worker thread, about once a second while the log grows. The worker starts only
// once the log is large enough to be worth it, so small stores (tests) never start one.
import fs from 'node:fs'
import { Worker } from 'node:worker_threads'

const WORKER = `
const { DatabaseSync } = require('node:sqlite')
const { parentPort, workerData } = require('node:worker_threads')
const db = new DatabaseSync(workerData.file)
db.exec('PRAGMA busy_timeout = 1000')
parentPort.on('message', (mode) => {
  let error = null
  try { db.exec('PRAGMA wal_checkpoint(' + mode + ')') } catch (e) { error = String(e && e.message || e) }
  parentPort.postMessage(error)
})
`

export interface Checkpoints {
  stop(): Promise<void>
}

/**
 * A PASSIVE checkpoint copies the frames written before it began, but the log starts over from its
 * beginning only once every frame was copied and no reader needs it: under writes that never
 * pause, that moment never comes and the log grows without end (it ate a whole disk in the
 * disk-full test). Past this size the worker checkpoints with TRUNCATE instead: it waits (at most
 * its busy timeout) for the writer in progress, holds new writers back while it copies what is
 * left, and cuts the log to nothing.
 */
export const TRUNCATE_AT_BYTES = 64 * 1024 * 1024

export function checkpointInBackground(
  file: string,
  opts: {
    everyMs?: number
    startAtBytes?: number
    /** The log's size past which it is truncated (read at each look when a function). */
    truncateAtBytes?: number | (() => number)
    onError?: (message: string) => void
  } = {},
): Checkpoints {
  const wal = `${file}-wal`
  const startAt = opts.startAtBytes ?? 4 * 1024 * 1024
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
      worker = new Worker(WORKER, { eval: true, workerData: { file } })
      worker.unref()
      worker.on('message', (error: string | null) => {
        running = false
        if (error) opts.onError?.(error)
      })
      worker.on('error', (err) => {
        running = false
        opts.onError?.(err.message)
      })
    }
    running = true
    worker.postMessage(stat.size >= truncateAt() ? 'TRUNCATE' : 'PASSIVE')
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
