// The embedded database's write-ahead log stays bounded under writes that never pause. A PASSIVE
// checkpoint alone never lets the log start over while commits keep coming (it grew until it
// filled a 48 MB disk in the disk-full scenario); the background checkpointer starts it over near
// its limit, and past a larger one (a reader in the way) truncates it.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { Kysely } from 'kysely'
import { BUSY_TIMEOUT_MS, nodeSqliteDialect, openSqlite } from '../../src/store/node-sqlite-dialect.ts'
import type { Database } from '../../src/store/schema.ts'
import {
  type Checkpoints,
  checkpointInBackground,
  checkpointOnStore,
} from '../../src/store/sqlite-checkpoints.ts'
import { tempDir } from '../helpers/databases.ts'

const MB = 1024 * 1024
/** What the writer may write past the last start-over of the log before it waits (commitWithoutPause). */
const AHEAD_OF_START_OVER = 4 * MB

/**
 * The write-ahead log's checkpoint sequence number and first salt (header bytes 12-19), which
 * change each time the log starts over; 0 before it has a header.
 */
function logGeneration(wal: string): bigint {
  const header = Buffer.alloc(8)
  const fd = fs.openSync(wal, 'r')
  try {
    return fs.readSync(fd, header, 0, 8, 12) === 8 ? header.readBigUInt64BE(0) : 0n
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * 60 MB of commits (each a page or more), the table kept small, the event loop turning every 50
 * commits but never pausing (setImmediate): the log is never idle and never all copied when a
 * commit begins, as under heavy traffic. In memory (/dev/shm where there is one): on a disk, a
 * checkpoint's fsync behind other processes' writes took 100-400 ms (under `npm test`, or beside
 * `dd ... conv=fsync`) while the loop adds 400 KB to the log a millisecond, and the log reached
 * either test's bound without any fault of the checkpointer's (CI failed on both, in turn).
 * `checkpoints` starts the store's checkpointer on the file (given the database). Answers what
 * was written and the log's largest size.
 *
 * With `heldBehind`, the writer gets at most AHEAD_OF_START_OVER past the log's last start-over
 * (by whichever means: the worker's checkpoints again or the store's connection), as the log's
 * header shows it: past that it slows to a commit a millisecond until the next, 15 s at most, then goes on unheld. Under `npm
 * test` the checkpointer's thread may get no CPU for a while, and a writer that went on meanwhile
 * at 400 KB a millisecond still took the log to the cut in memory (CI failed on it once more): the
 * writer's own pace is not what is tested. A log that is never started over grows to the cut all
 * the same, after the one wait.
 */
async function commitWithoutPause(
  checkpoints: (file: string, db: DatabaseSync) => Checkpoints,
  heldBehind = false,
  heldPastBytes = Number.POSITIVE_INFINITY,
) {
  const dir = fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/patchbay-wal-') : tempDir('patchbay-wal-')
  const file = path.join(dir, 'patchbay.db')
  const db: DatabaseSync = openSqlite(file)
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)')
  const running = checkpoints(file, db)
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)')
  const prune = db.prepare('DELETE FROM t WHERE id < ?')
  const body = Buffer.alloc(4096, 7)
  let written = 0
  let largest = 0
  let sinceStartOver = 0
  let generation = 0n
  let holding = heldBehind
  let holdingPast = heldPastBytes !== Number.POSITIVE_INFINITY
  try {
    for (let i = 1; written < 60 * MB; i++) {
      insert.run(body)
      if (i % 100 === 0) prune.run(i - 100)
      written += body.length
      sinceStartOver += body.length
      if (i % 50 === 0) {
        largest = Math.max(largest, fs.statSync(`${file}-wal`).size)
        await new Promise((r) => setImmediate(r))
        if (holdingPast && fs.statSync(`${file}-wal`).size > heldPastBytes) {
          // Past `heldPastBytes` the writer slows to a commit a millisecond until the log is cut
          // below it, 15 s at most (then it goes on unheld), as with heldBehind.
          const giveUp = Date.now() + 15_000
          while (fs.statSync(`${file}-wal`).size > heldPastBytes && Date.now() < giveUp) {
            await new Promise((r) => setTimeout(r, 1))
            insert.run(body)
            written += body.length
            largest = Math.max(largest, fs.statSync(`${file}-wal`).size)
          }
          holdingPast = fs.statSync(`${file}-wal`).size <= heldPastBytes
        }
        if (holding) {
          const wal = `${file}-wal`
          const seen = logGeneration(wal)
          if (seen !== generation) {
            generation = seen
            sinceStartOver = 0
          } else if (sinceStartOver > AHEAD_OF_START_OVER) {
            const giveUp = Date.now() + 15_000
            // A commit a millisecond meanwhile: the header is written anew by the first commit after
            // a start-over.
            while (logGeneration(wal) === generation && Date.now() < giveUp) {
              await new Promise((r) => setTimeout(r, 1))
              insert.run(body)
              written += body.length
            }
            // None in 15 s: the log is not started over at all, and the writer goes on unheld.
            holding = logGeneration(wal) !== generation
          }
        }
      }
    }
  } finally {
    await running.stop()
    db.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return { written, largest }
}

/** A checkpoint on the test's connection, as the store's connection takes it between its transactions. */
function checkpoint(db: DatabaseSync, mode: 'RESTART' | 'TRUNCATE') {
  db.prepare(`PRAGMA wal_checkpoint(${mode})`).get()
}

test('a log that is not started over is cut back at its limit instead of growing without end', async () => {
  // As when a reader keeps the log from starting over: the restart is never due here.
  let cuts = 0
  const { written, largest } = await commitWithoutPause(
    (file, db) =>
      checkpointInBackground(file, {
        everyMs: 20,
        startAtBytes: 0,
        restartAtBytes: Number.POSITIVE_INFINITY,
        restart: async () => {},
        truncateAtBytes: 2 * MB,
        truncate: async () => {
          cuts++
          checkpoint(db, 'TRUNCATE')
        },
      }),
    false,
    // Held past 16 MB until the cut: on a loaded machine the checkpointer's thread may get no CPU
    // while the writer adds 400 KB a millisecond, and its pace is not what is tested.
    16 * MB,
  )
  // Without the cut the log keeps every commit: 254 MB for the 60 MB written (measured in memory);
  // with it, 15-49 MB, what the log takes between two looks.
  assert.ok(cuts > 0, 'the log was cut')
  assert.ok(
    largest < written,
    `the log was cut back: its largest was ${(largest / MB).toFixed(1)} MB, against ${written / MB} MB written`,
  )
})

test('under commits that never pause, the log is started over near its limit and never cut on the store’s connection', async () => {
  // The cut (a TRUNCATE on the store's own connection) shrinks the log file there, on the event
  // loop: 430-600 ms for a 1 GiB log. Once the log holds 1 MB here, the worker catches up and the
  // store's connection starts the log over (RESTART, the file kept), so it neither grows nor needs
  // the cut.
  let cuts = 0
  let restarts = 0
  const { largest } = await commitWithoutPause(
    (file, db) =>
      checkpointInBackground(file, {
        everyMs: 20,
        startAtBytes: 0,
        restartAtBytes: 1 * MB,
        restart: async () => {
          restarts++
          checkpoint(db, 'RESTART')
        },
        truncateAtBytes: 48 * MB,
        truncate: async () => {
          cuts++
          checkpoint(db, 'TRUNCATE')
        },
      }),
    true,
  )
  // Without starting over, the log reaches the cut's 48 MB (and is cut) within the first 24 MB
  // written (each row takes two frames); started over at 1 MB, it holds what one look's time adds.
  assert.equal(
    cuts,
    0,
    `the log was cut ${cuts} times on the store's connection (started over ${restarts} times)`,
  )
  assert.ok(restarts > 0, 'the log was started over')
  assert.ok(
    largest < 48 * MB,
    `the log file stayed under 48 MB: its largest was ${(largest / MB).toFixed(1)} MB`,
  )
})

test('starting the log over on the store’s connection does not wait for another connection’s read, and happens once it ends', async () => {
  // It runs every few seconds under load: waiting for a reader (a backup's step, an operator's
  // shell) would hold the event loop for up to the busy timeout (5 s) each time.
  const file = path.join(tempDir('patchbay-wal-'), 'patchbay.db')
  const sqlite = openSqlite(file)
  const db = new Kysely<Database>({ dialect: nodeSqliteDialect(sqlite) })
  const reader = new DatabaseSync(file)
  try {
    sqlite.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)')
    const insert = sqlite.prepare('INSERT INTO t (body) VALUES (?)')
    const body = Buffer.alloc(4096, 7)
    for (let i = 0; i < 200; i++) insert.run(body)
    // A read under way on another connection, holding what the log held then.
    reader.exec('BEGIN')
    reader.prepare('SELECT count(*) AS n FROM t').get()
    for (let i = 0; i < 200; i++) insert.run(body)
    const framesNow = () => (sqlite.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as { log: number }).log

    const started = performance.now()
    await checkpointOnStore(db, 'RESTART')
    const waited = performance.now() - started
    assert.ok(waited < BUSY_TIMEOUT_MS / 2, `it did not wait for the reader: ${Math.round(waited)} ms`)
    assert.equal(
      (sqlite.prepare('PRAGMA busy_timeout').get() as { timeout: number }).timeout,
      BUSY_TIMEOUT_MS,
      'the store waits for locks as before afterwards',
    )
    insert.run(body)
    assert.ok(framesNow() > 400, 'with the reader in the way the log goes on where it was')

    reader.exec('COMMIT')
    await checkpointOnStore(db, 'RESTART')
    insert.run(body)
    assert.ok(framesNow() < 10, `once the read ended the log started over (${framesNow()} frames)`)
  } finally {
    reader.close()
    await db.destroy()
  }
})
