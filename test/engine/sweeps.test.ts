// The sweep for due work (retries, polls, inbox drains, connection checks) on several instances is
// one pg-boss job held by one instance at a time. An instance that dies while it holds it (SIGKILL
// mid-sweep) must not stop every instance's sweeping for long: its lease runs out and another
// takes the sweep over within seconds (it was 60 s of lease, found by a supervision every 60 s:
// 60–120 s without retries or polls anywhere — the killed-instance test's tool deliveries waited
// ~90 s for it under load). Required under CI=true; skipped with the reason without PostgreSQL.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import pg from 'pg'
import { PgBossSweeps } from '../../src/engine/jobs/sweeps.ts'
import { POSTGRES_URL, postgresUnavailableReason } from '../helpers/databases.ts'
import { eventually } from '../helpers/receiver.ts'

const unavailable = await postgresUnavailableReason()
if (unavailable && process.env.CI === 'true')
  throw new Error(`${unavailable}; under CI=true PostgreSQL is required.`)

const schema = `pb_sweeps_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
const opened: PgBossSweeps[] = []
let release: () => void = () => {}

after(async () => {
  if (unavailable) return
  release()
  await Promise.all(opened.map((s) => s.stop()))
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await client.end()
})

test('a sweep held by an instance that stopped mid-sweep is taken over by another within seconds', {
  skip: unavailable ?? false,
}, async (t) => {
  const open = async () => {
    const s = await PgBossSweeps.open({
      connectionString: POSTGRES_URL,
      schema,
      everyMs: 200,
      onError: () => {},
    })
    opened.push(s)
    return s
  }
  // Two instances sweep in turn; then the first one's next sweep never ends (as if it was killed
  // in it: the job stays active, and no next run is sent).
  const swept = { a: 0, b: 0 }
  let stalled: number | null = null
  const a = await open()
  const b = await open()
  await a.start(async () => {
    swept.a++
    if (swept.a >= 3) {
      stalled = Date.now()
      await new Promise<void>((r) => {
        release = r
      })
    }
  })
  await b.start(async () => {
    swept.b++
  })
  await eventually(
    async () => stalled,
    (at) => at !== null,
    60_000,
  )
  const before = swept.b
  // Another sweep or two may have been queued already; then the chain stops with the stalled one,
  // until its lease ends and the other instance runs it again.
  await eventually(
    async () => swept.b,
    (n) => n >= before + 3,
    40_000,
  )
  const waited = (Date.now() - stalled!) / 1000
  t.diagnostic(`the other instance swept again ${waited.toFixed(1)} s after the holder stalled`)
  assert.ok(waited < 40)
})
