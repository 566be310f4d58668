import { randomFillSync } from 'node:crypto'
import { v7 } from 'uuid'

// Record ids are UUIDv7 behind a prefix (`evt_0192f4c1-…`): time-ordered, so rows written later
// sort after earlier ones and new keys land at the end of the unique indexes instead of dirtying
// pages all over them on every commit. Ids made in the same millisecond by this process still
// sort in the order they were made (a counter, started at a random value each millisecond, as
// RFC 9562 §6.2 method 1). Ids are not secrets: what must be unguessable (keys, signing secrets,
// nonces) is drawn on its own where it is made.
//
// The randomness comes from one pooled buffer: `uuid`'s default v7 draws 16 bytes from
// `crypto.getRandomValues` per id (~1.9 µs), and its `random` option leaves the clock and
// counter to the caller, which is the little state kept here.

const pool = new Uint8Array(16 * 256)
let poolAt = pool.length
let lastMs = Number.NEGATIVE_INFINITY
let counter = 0

function random16(): Uint8Array {
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool)
    poolAt = 0
  }
  poolAt += 16
  return pool.subarray(poolAt - 16, poolAt)
}

/** A prefixed, time-ordered identifier: `con_0192f4c1-7d3e-7a4b-9c2d-5e6f7a8b9c0d`. */
export function newId(prefix: string): string {
  const random = random16()
  const now = Date.now()
  if (now > lastMs) {
    lastMs = now
    // 31 random bits leave at least 2^31 ids of headroom within one millisecond.
    counter = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9]
  } else if (++counter > 0xffffffff) {
    // Counter spent within one millisecond (or the clock went back): borrow the next one.
    lastMs++
    counter = 0
  }
  return `${prefix}_${v7({ random, msecs: lastMs, seq: counter })}`
}

/** The time as an ISO string; made once per millisecond (a busy step path asks several times in one). */
export function nowIso(): string {
  const ms = Date.now()
  if (ms !== isoMs) {
    isoMs = ms
    iso = new Date(ms).toISOString()
  }
  return iso
}
let isoMs = Number.NaN
let iso = ''

export const isoAt = (ms: number) => new Date(ms).toISOString()
