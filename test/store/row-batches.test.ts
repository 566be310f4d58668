// The event path's batch inserts (events.upsertMany, deliveries.insertRows, deliveries.addAttempts)
// store every column of every row as given, in the rows' order, whatever the batch's size; repeats
// are kept out and told apart. On SQLite a batch goes in chunks of fixed sizes
// (store/sqlite-row-batches.ts), so the sizes around a chunk's edge are tried, and every column the
// table has is checked: one added to the table but not to the batch's statement would be lost.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { openStore, type Store } from '../../src/store/database.ts'
import {
  deliveries,
  events,
  type NewAttempt,
  type NewDelivery,
  type NewEvent,
} from '../../src/store/event-log.ts'
import { Workspaces } from '../../src/store/workspaces.ts'
import { testDatabases } from '../helpers/databases.ts'

const { databases } = await testDatabases()
const stores: Store[] = []
after(async () => {
  for (const s of stores) await s.close()
})

/** Columns the store writes itself: the sequence, and whether the row is listed yet. */
const STORE_OWN = new Set(['seq', 'listed'])

async function columnsOf(s: Store, table: string): Promise<string[]> {
  const found = (await s.db.introspection.getTables()).find((t) => t.name === table)
  assert.ok(found, table)
  return found.columns.map((c) => c.name).filter((c) => !STORE_OWN.has(c))
}

let n = 0
const stamp = (i: number) => new Date(Date.UTC(2026, 10, 27, 1, 0, 0, i)).toISOString()
// Every column given a value of its own (none left null), so a column not written shows.
const event = (workspaceId: string): NewEvent => {
  n++
  return {
    id: `evt_${String(n).padStart(6, '0')}`,
    workspace_id: workspaceId,
    connector: 'taskboard',
    subscription_id: `sub_${n}`,
    connection_id: `con_${n}`,
    model: `model ${n}`,
    upstream_id: `up_${n}`,
    type: `type.${n}`,
    refs: JSON.stringify({ card: `card ${n}` }),
    data: JSON.stringify({ n }),
    occurred_at: stamp(n),
    received_at: stamp(n + 1),
    matched: n % 7,
    via: JSON.stringify([`con_via_${n}`]),
    owner: `owner ${n}`,
  }
}
const delivery = (e: NewEvent, k = 0): NewDelivery => ({
  id: `dlv_${e.id.slice(4)}_${k}`,
  workspace_id: e.workspace_id,
  agent_id: `agt_${k}`,
  event_id: e.id,
  trigger_id: `trigger_${k}`,
  target: { type: 'webhook' },
  status: 'failed',
  attempts: 3,
  next_attempt_at: stamp(n + 2),
  last_status: 502,
  last_error: `error ${e.id}`,
  tool_run_id: `run_${e.id}`,
  created_at: e.received_at,
  delivered_at: stamp(n + 3),
  claimed_until: stamp(n + 4),
})
const attempt = (d: NewDelivery, a: number): NewAttempt => ({
  delivery_id: d.id,
  attempt: a,
  at: stamp(a),
  status: 500 + a,
  error: `attempt ${a} of ${d.id}`,
  duration_ms: 10 + a,
  workspace_id: d.workspace_id,
})

/** Rows as stored, without the store's own columns, keyed by `key`. */
async function stored(
  s: Store,
  table: 'events' | 'deliveries' | 'delivery_attempts',
  key: (r: any) => string,
) {
  const rows = (await s.db.selectFrom(table).selectAll().execute()) as Array<Record<string, unknown>>
  return new Map(
    rows.map((r) => [
      key(r),
      Object.fromEntries(
        Object.entries(r)
          .filter(([c]) => !STORE_OWN.has(c))
          .map(([c, v]) => [c, v]),
      ),
    ]),
  )
}

for (const database of databases)
  describe(`the event path's batch inserts (${database.name})`, () => {
    test('every column of every row is stored as given, in order, for batches around each chunk size', async () => {
      const s = await openStore(database.fresh())
      stores.push(s)
      await s.listing?.stop()
      const ws = await new Workspaces(s.db, s.kind).insert('batches')
      const sizes = [1, 2, 3, 31, 63, 64, 65, 127, 128, 130]
      const all: { events: NewEvent[]; deliveries: NewDelivery[]; attempts: NewAttempt[] } = {
        events: [],
        deliveries: [],
        attempts: [],
      }
      for (const size of sizes) {
        const batch = Array.from({ length: size }, () => event(ws.id))
        const dels = batch.map((e) => delivery(e))
        const made = await s.db.transaction().execute(async (tx) => {
          const kept = await events.upsertMany(tx, batch)
          return { kept, inserted: await deliveries.insertRows(tx, dels) }
        })
        // Each new event is answered with its seq, each delivery too, in the rows' order.
        const seqs = batch.map(
          (e) => made.kept.get(JSON.stringify([e.workspace_id, e.connector, e.owner, e.upstream_id]))?.seq,
        )
        assert.ok(
          seqs.every((q) => typeof q === 'number'),
          `a seq for each of ${size} events`,
        )
        assert.deepEqual(
          seqs,
          [...(seqs as number[])].sort((a, b) => a - b),
          `${size} events' seqs in order`,
        )
        assert.deepEqual(
          made.inserted.map((d) => d.id),
          dels.map((d) => d.id),
          `${size} deliveries, in order`,
        )
        const dSeqs = made.inserted.map((d) => d.seq)
        assert.deepEqual(
          dSeqs,
          [...dSeqs].sort((a, b) => a - b),
        )
        const tries = dels.flatMap((d) => [attempt(d, 1), attempt(d, 2)])
        await deliveries.addAttempts(s.db, tries)
        all.events.push(...batch)
        all.deliveries.push(...dels)
        all.attempts.push(...tries)
      }

      const written = [
        ['events', all.events, (r: NewEvent) => r.id],
        [
          'deliveries',
          all.deliveries.map((d) => ({ ...d, target: JSON.stringify(d.target) })),
          (r: NewDelivery) => r.id,
        ],
        ['delivery_attempts', all.attempts, (r: NewAttempt) => `${r.delivery_id}#${r.attempt}`],
      ] as const
      for (const [table, rows, key] of written) {
        const columns = await columnsOf(s, table)
        const byKey = await stored(s, table, key as (r: any) => string)
        assert.equal(byKey.size, rows.length, `${table}: every row stored once`)
        for (const row of rows as Array<Record<string, unknown>>) {
          const got = byKey.get((key as (r: any) => string)(row))
          assert.ok(got, `${table}: ${(key as (r: any) => string)(row)} stored`)
          for (const c of columns)
            assert.equal(
              String(got[c]),
              String(row[c]),
              `${table}.${c} of ${(key as (r: any) => string)(row)}`,
            )
        }
      }
    })

    test('a batch mixing repeats with new rows stores the new ones, answers the stored row for each repeat, and skips repeated deliveries and attempts', async () => {
      const s = await openStore(database.fresh())
      stores.push(s)
      await s.listing?.stop()
      const ws = await new Workspaces(s.db, s.kind).insert('repeats')
      const first = Array.from({ length: 70 }, () => event(ws.id))
      await s.db.transaction().execute(async (tx) => {
        await events.upsertMany(tx, first)
        await deliveries.insertRows(
          tx,
          first.map((e) => delivery(e)),
        )
      })
      // The same upstream events again under new ids, every third, between new ones.
      const again = first.filter((_, i) => i % 3 === 0).map((e) => ({ ...e, id: `${e.id}_again` }))
      const fresh = Array.from({ length: 40 }, () => event(ws.id))
      const mixed = fresh.flatMap((e, i) => (again[i] ? [again[i], e] : [e]))
      const { kept, inserted } = await s.db.transaction().execute(async (tx) => {
        const kept = await events.upsertMany(tx, mixed)
        // Deliveries for the stored rows of the repeats (same event and trigger): skipped.
        const dels = mixed.map((e) => {
          const row = kept.get(JSON.stringify([e.workspace_id, e.connector, e.owner, e.upstream_id]))!
          return delivery({ ...e, id: row.id })
        })
        return { kept, inserted: await deliveries.insertRows(tx, dels) }
      })
      for (const e of again) {
        const row = kept.get(JSON.stringify([e.workspace_id, e.connector, e.owner, e.upstream_id]))
        assert.equal(row?.id, e.id.replace('_again', ''), 'a repeat answers the row stored before')
        assert.equal((row as { repeat?: boolean }).repeat, true)
      }
      assert.deepEqual(
        inserted.map((d) => d.event_id),
        fresh.map((e) => e.id),
        'only the new events get deliveries, in order',
      )
      assert.equal(
        Number(
          (
            await s.db
              .selectFrom('events')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ),
        110,
      )
      // An attempt logged twice is stored once.
      const d = delivery(fresh[0])
      await deliveries.addAttempts(s.db, [attempt(d, 1)])
      await deliveries.addAttempts(s.db, [attempt(d, 1), attempt(d, 2)])
      const logged = await deliveries.attempts(s.db, d.id)
      assert.deepEqual(
        logged.map((a) => [a.attempt, a.error]),
        [
          [1, `attempt 1 of ${d.id}`],
          [2, `attempt 2 of ${d.id}`],
        ],
      )
    })
  })
