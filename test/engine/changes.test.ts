// Changes between instances over PostgreSQL LISTEN/NOTIFY: what one instance publishes in a burst
// (a batch of stored events names many cards) reaches the others whole, in a few NOTIFYs rather
// than one per publish. Required under CI=true; skipped with the reason without PostgreSQL.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { Changes, type ChangeTopic } from '../../src/engine/changes/changes.ts'
import { PostgresChangeTransport } from '../../src/engine/changes/transports.ts'
import { POSTGRES_URL, postgresUnavailableReason } from '../helpers/databases.ts'
import { eventually } from '../helpers/receiver.ts'

const unavailable = await postgresUnavailableReason()
if (unavailable && process.env.CI === 'true')
  throw new Error(`${unavailable}; under CI=true PostgreSQL is required.`)
const skip = unavailable ?? false

function instance(pool: pg.Pool, channel: string): Changes {
  return new Changes({ transport: new PostgresChangeTransport({ url: POSTGRES_URL, pool, channel }) })
}

test('a burst of changes reaches another instance whole, in a few messages instead of one per publish', {
  skip,
}, async (t) => {
  const channel = `pb_changes_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 })
  const a = instance(pool, channel)
  const b = instance(pool, channel)
  // What travels on the channel, as any listener sees it.
  const watcher = new pg.Client({ connectionString: POSTGRES_URL })
  const messages: string[] = []
  watcher.on('notification', (n) => messages.push(n.payload ?? ''))
  t.after(async () => {
    await a.close()
    await b.close()
    await watcher.end()
    await pool.end()
  })
  await watcher.connect()
  await watcher.query(`LISTEN "${channel}"`)
  await a.start()
  await b.start()
  const heard = new Map<ChangeTopic, Set<string>>()
  for (const topic of ['placements', 'triggers'] as const)
    b.subscribe(topic, (ids) => {
      const set = heard.get(topic) ?? new Set()
      for (const id of ids) set.add(id)
      heard.set(topic, set)
    })
  const heardHere: string[] = []
  a.subscribe('placements', (ids) => heardHere.push(...ids))

  // 500 stored events, each naming its card, published one by one as a batch is stored; and a
  // trigger changed meanwhile.
  const cards = Array.from({ length: 500 }, (_, i) => `taskboard:card:${i.toString(16).padStart(24, '0')}`)
  for (const card of cards) a.publish('placements', [card])
  a.publish('triggers', ['trg_1'])
  // The publishing instance's own listeners hear each at once.
  assert.equal(heardHere.length, 500)

  await eventually(
    async () => (heard.get('placements')?.size ?? 0) + (heard.get('triggers')?.size ?? 0),
    (n) => n === 501,
  )
  assert.deepEqual([...heard.get('placements')!].sort(), [...cards].sort())
  assert.deepEqual([...heard.get('triggers')!], ['trg_1'])

  // Published after the burst went out: sent too, on its own.
  a.publish('placements', ['taskboard:list:later'])
  await eventually(
    async () =>
      messages.some((m) => m.includes('taskboard:list:later')) &&
      heard.get('placements')?.has('taskboard:list:later') === true,
    (v) => v,
  )
  // NOTIFYs arrive in commit order, so everything before the last one is here: 100 ids a message,
  // 5 for the cards, 1 for the trigger and 1 for the later list — not 502.
  assert.equal(messages.length, 7)
  for (const m of messages) assert.ok(Buffer.byteLength(m) < 8000, 'each NOTIFY payload under the limit')
})
