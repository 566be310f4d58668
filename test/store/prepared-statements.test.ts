// PostgreSQL: the event path's group commit and its listener check are named prepared statements,
// parsed once per connection (store/prepared-statements.ts), and the group commit stores exactly
// what it is given: each event's columns, in order, its deliveries after it, a repeat left out,
// and nothing when the listeners it was matched with are no longer those in the store.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { sql } from 'kysely'
import { loadConfig } from '../../src/config.ts'
import { openStore, type Store } from '../../src/store/database.ts'
import { events, type NewDelivery, type NewEvent } from '../../src/store/event-log.ts'
import { Triggers } from '../../src/store/triggers.ts'
import { testDatabases } from '../helpers/databases.ts'
import { pendingDelivery } from '../helpers/event-rows.ts'

const { databases } = await testDatabases()
const postgres = databases.find((d) => d.name === 'postgres')
const stores: Store[] = []
after(async () => {
  for (const s of stores) await s.close()
})

let n = 0
const event = (upstreamId?: string): NewEvent => {
  n++
  const at = new Date(Date.UTC(2026, 10, 26, 8, 0, 0, n)).toISOString()
  return {
    id: `evt_${n}`,
    workspace_id: 'ws_1',
    connector: 'taskboard',
    subscription_id: 'sub_1',
    connection_id: 'con_1',
    model: 'card',
    owner: n % 2 ? '' : 'user_7',
    upstream_id: upstreamId ?? `up_${n}`,
    type: 'card.created',
    refs: JSON.stringify({ card: `c${n}` }),
    data: JSON.stringify({ name: `Card ${n}`, quote: `it's "x"` }),
    occurred_at: at,
    received_at: at,
    matched: n % 2,
  }
}
const delivery = (e: NewEvent, agent: string): NewDelivery =>
  pendingDelivery(e, { id: `dlv_${e.id}_${agent}`, agent_id: agent, trigger_id: `trigger_${agent}` })

/** The statements prepared on the connection, by name. */
async function prepared(db: Store['db']): Promise<Map<string, string>> {
  const { rows } = await sql<{
    name: string
    statement: string
  }>`select name, statement from pg_prepared_statements`.execute(db)
  return new Map(rows.map((r) => [r.name, r.statement]))
}

describe('PostgreSQL: the event path as prepared statements', { skip: !postgres }, () => {
  test('group commits of any size share one prepared statement and store each event and delivery as given, in order', async () => {
    assert.ok(postgres)
    const store = await openStore(postgres.fresh())
    stores.push(store)
    // All on one connection, so the test sees the statements prepared on it.
    await store.db.connection().execute(async (db) => {
      const first = [event()]
      const one = await events.insertWithDeliveries(db, first, [delivery(first[0], 'a')])
      const second = [event(), event(), { ...event(first[0].upstream_id), owner: first[0].owner }]
      const repeat = second[2]
      const two = await events.insertWithDeliveries(
        db,
        second,
        second.flatMap((e) => [delivery(e, 'a'), delivery(e, 'b')]),
      )
      assert.ok(one && two)
      // The repeat of the first batch's event is not stored again, nor its deliveries.
      assert.deepEqual([...two.eventIds], [second[0].id, second[1].id])
      assert.deepEqual(
        two.deliveries.map((d) => d.id),
        [second[0], second[1]].flatMap((e) => [`dlv_${e.id}_a`, `dlv_${e.id}_b`]),
      )
      const seqs = [...one.deliveries, ...two.deliveries].map((d) => d.seq)
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
        'deliveries take their seq in the order given',
      )

      const stored = await db.selectFrom('events').selectAll().orderBy('seq').execute()
      const given = [first[0], second[0], second[1]]
      assert.deepEqual(
        stored.map(({ seq: _seq, listed: _listed, via: _via, ...row }) => row),
        given,
      )
      assert.ok(!stored.some((r) => r.id === repeat.id))

      await new Triggers(db).listenerDigests(['sub_1'], ['taskboard.new_card'])
      await new Triggers(db).listenerDigests(['sub_1', 'sub_2'], ['taskboard.new_card'])
      // Statements that do not ask to be prepared (lists of values, Kysely's own) are not.
      const statements = await prepared(db)
      assert.deepEqual([...statements.keys()].sort(), [
        'patchbay_events_with_deliveries',
        'patchbay_listener_digests',
      ])
      assert.match(statements.get('patchbay_events_with_deliveries') ?? '', /INSERT INTO events/)
    })
  })

  test('a group commit holding listeners stores nothing, and names the webhook, once they are not those in the store', async () => {
    assert.ok(postgres)
    const store = await openStore(postgres.fresh())
    stores.push(store)
    const triggers = new Triggers(store.db)
    const keys = ['taskboard.new_card']
    const addTrigger = (id: string) =>
      store.db
        .insertInto('triggers')
        .values({
          id,
          workspace_id: 'ws_1',
          agent_id: 'agt_1',
          trigger_key: 'taskboard.new_card',
          connection_id: 'con_1',
          config: '{}',
          target: '{"type":"stream"}',
          subscription_id: 'sub_1',
          created_at: '2026-11-26T08:00:00.000Z',
          updated_at: '2026-11-26T08:00:00.000Z',
        })
        .execute()
    const storedEvents = async () =>
      (await store.db.selectFrom('events').select('id').orderBy('seq').execute()).map((r) => r.id)

    // No listener, held as none: stored.
    const a = event()
    const first = await events.insertWithDeliveries(store.db, [a], [], {
      digests: new Map([['sub_1', undefined]]),
      keys,
    })
    assert.deepEqual(first?.stale, [])
    assert.deepEqual(await storedEvents(), [a.id])

    // A trigger made since (on another instance, its news not here yet): nothing is stored.
    await addTrigger('trg_b')
    const b = event()
    const stale = await events.insertWithDeliveries(store.db, [b], [delivery(b, 'a')], {
      digests: new Map([['sub_1', undefined]]),
      keys,
    })
    assert.deepEqual(stale?.stale, ['sub_1'])
    assert.deepEqual(stale?.deliveries, [])
    assert.deepEqual(await storedEvents(), [a.id])
    assert.equal((await store.db.selectFrom('deliveries').select('id').execute()).length, 0)

    // Held as they are in the store now: stored, with its delivery.
    const now = await triggers.listenerDigests(['sub_1'], keys)
    const held = await events.insertWithDeliveries(store.db, [b], [delivery(b, 'a')], {
      digests: new Map([['sub_1', now.get('sub_1')]]),
      keys,
    })
    assert.deepEqual(held?.stale, [])
    assert.deepEqual(
      held?.deliveries.map((d) => d.id),
      [`dlv_${b.id}_a`],
    )
    assert.deepEqual(await storedEvents(), [a.id, b.id])
  })

  test('with PATCHBAY_DATABASE_PREPARED_STATEMENTS=off (a pooler in transaction mode) nothing is prepared, and groups are stored all the same', async () => {
    assert.ok(postgres)
    const config = loadConfig({ PATCHBAY_DATABASE_PREPARED_STATEMENTS: 'off' })
    assert.equal(config.databasePreparedStatements, false)
    const store = await openStore({
      ...postgres.fresh(),
      preparedStatements: config.databasePreparedStatements,
    })
    stores.push(store)
    await store.db.connection().execute(async (db) => {
      const e = event()
      const stored = await events.insertWithDeliveries(db, [e], [delivery(e, 'a')], {
        digests: new Map([['sub_1', undefined]]),
        keys: ['taskboard.new_card'],
      })
      assert.deepEqual(stored?.eventIds, new Set([e.id]))
      assert.deepEqual(
        stored?.deliveries.map((d) => d.id),
        [`dlv_${e.id}_a`],
      )
      await new Triggers(db).listenerDigests(['sub_1'], ['taskboard.new_card'])
      assert.deepEqual([...(await prepared(db)).keys()], [])
    })
  })
})
