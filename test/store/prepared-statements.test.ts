// PostgreSQL: the event path's group commit and its listener check are named prepared statements,
// parsed once per connection (store/prepared-statements.ts), and the group commit stores exactly
// what it is given: each event's columns, in order, its deliveries after it, a repeat left out,
// and nothing when the listeners it was matched with are no longer those in the store (their
// version, migration 0022, moved).
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

/** A stored webhook, its listeners at version 0. */
const addWebhook = (db: Store['db'], id: string) =>
  db
    .insertInto('subscriptions')
    .values({
      id,
      workspace_id: 'ws_1',
      connector: 'taskboard',
      connection_id: 'con_1',
      model: `board_${id}`,
      upstream_hook_id: null,
      secret: 'x',
      status: 'active',
      last_error: null,
      created_at: '2026-11-26T08:00:00.000Z',
      updated_at: '2026-11-26T08:00:00.000Z',
    })
    .execute()

const addTriggerTo = (db: Store['db'], id: string, subscriptionId: string) =>
  db
    .insertInto('triggers')
    .values({
      id,
      workspace_id: 'ws_1',
      agent_id: 'agt_1',
      trigger_key: 'taskboard.new_card',
      connection_id: 'con_1',
      config: '{}',
      target: '{"type":"stream"}',
      subscription_id: subscriptionId,
      created_at: '2026-11-26T08:00:00.000Z',
      updated_at: '2026-11-26T08:00:00.000Z',
    })
    .execute()

/** A store of its own on the test server, closed after the tests. */
async function freshStore(): Promise<Store> {
  assert.ok(postgres)
  const store = await openStore(postgres.fresh())
  stores.push(store)
  return store
}

describe('PostgreSQL: the event path as prepared statements', { skip: !postgres }, () => {
  test('group commits of any size share one prepared statement and store each event and delivery as given, in order', async () => {
    const store = await freshStore()
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

      await new Triggers(db).listenerVersions(['sub_1'])
      await new Triggers(db).listenerVersions(['sub_1', 'sub_2'])
      // Statements that do not ask to be prepared (lists of values, Kysely's own) are not.
      const statements = await prepared(db)
      assert.deepEqual([...statements.keys()].sort(), [
        'patchbay_events_with_deliveries',
        'patchbay_listener_versions',
      ])
      assert.match(statements.get('patchbay_events_with_deliveries') ?? '', /INSERT INTO events/)
    })
  })

  test('a group commit holding listeners stores nothing, and names the webhook, once they are not those in the store', async () => {
    const store = await freshStore()
    const triggers = new Triggers(store.db)
    await addWebhook(store.db, 'sub_1')
    const addTrigger = (id: string) => addTriggerTo(store.db, id, 'sub_1')
    const storedEvents = async () =>
      (await store.db.selectFrom('events').select('id').orderBy('seq').execute()).map((r) => r.id)

    // No listener, held as read (version 0): stored.
    const a = event()
    const first = await events.insertWithDeliveries(store.db, [a], [], { versions: new Map([['sub_1', 0]]) })
    assert.deepEqual(first?.stale, [])
    assert.deepEqual(await storedEvents(), [a.id])

    // A trigger made since (on another instance, its news not here yet): nothing is stored.
    await addTrigger('trg_b')
    const b = event()
    const stale = await events.insertWithDeliveries(store.db, [b], [delivery(b, 'a')], {
      versions: new Map([['sub_1', 0]]),
    })
    assert.deepEqual(stale?.stale, ['sub_1'])
    assert.deepEqual(stale?.deliveries, [])
    assert.deepEqual(await storedEvents(), [a.id])
    assert.equal((await store.db.selectFrom('deliveries').select('id').execute()).length, 0)

    // Held as they are in the store now: stored, with its delivery.
    const now = await triggers.listenerVersions(['sub_1'])
    assert.equal(now.get('sub_1'), (await triggers.forSubscription('sub_1')).version)
    const held = await events.insertWithDeliveries(store.db, [b], [delivery(b, 'a')], {
      versions: new Map([['sub_1', now.get('sub_1')]]),
    })
    assert.deepEqual(held?.stale, [])
    assert.deepEqual(
      held?.deliveries.map((d) => d.id),
      [`dlv_${b.id}_a`],
    )
    assert.deepEqual(await storedEvents(), [a.id, b.id])

    // Its trigger deleted since (on another instance): a delivery for it is not stored, though the
    // statement no longer reads each delivery's trigger when the listeners are held.
    await triggers.delete('trg_b')
    const c = event()
    const gone = await events.insertWithDeliveries(
      store.db,
      [c],
      [{ ...delivery(c, 'a'), trigger_id: 'trg_b' }],
      { versions: new Map([['sub_1', now.get('sub_1')]]) },
    )
    assert.deepEqual(gone?.stale, ['sub_1'])
    assert.deepEqual(await storedEvents(), [a.id, b.id])
  })

  test("a webhook's listeners version moves with every change of its triggers, in the change's own transaction, and no other webhook's", async () => {
    const store = await freshStore()
    const triggers = new Triggers(store.db)
    await addWebhook(store.db, 'sub_1')
    await addWebhook(store.db, 'sub_2')
    const versions = async () => {
      const now = await triggers.listenerVersions(['sub_1', 'sub_2', 'sub_gone'])
      return [now.get('sub_1'), now.get('sub_2'), now.get('sub_gone')]
    }
    assert.deepEqual(await versions(), [0, 0, undefined])

    await addTriggerTo(store.db, 'trg_a', 'sub_1')
    assert.deepEqual(await versions(), [1, 0, undefined], 'added')
    // Read with the listeners, in one statement: the version of exactly those rows.
    const read = await triggers.forSubscription('sub_1')
    assert.deepEqual(
      { version: read.version, ids: read.rows.map((r) => r.id) },
      { version: 1, ids: ['trg_a'] },
    )
    assert.deepEqual(await triggers.forSubscription('sub_gone'), { version: undefined, rows: [] })

    await triggers.pauseForConnection('con_1', 'lapsed', '2026-11-26T09:00:00.000Z')
    assert.deepEqual(await versions(), [2, 0, undefined], 'paused')
    await triggers.resumeForConnection('con_1')
    assert.deepEqual(await versions(), [3, 0, undefined], 'resumed')
    await store.db
      .updateTable('triggers')
      .set({ subscription_id: 'sub_2' })
      .where('id', '=', 'trg_a')
      .execute()
    assert.deepEqual(await versions(), [4, 1, undefined], 'moved to another webhook: both')
    await store.db.updateTable('triggers').set({ config: '{"listId":"l1"}' }).execute()
    assert.deepEqual(
      await versions(),
      [4, 1, undefined],
      'a change of what is not a listener does not move it',
    )
    // A change rolled back leaves the version as it was.
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await addTriggerTo(trx, 'trg_b', 'sub_1')
        throw new Error('rolled back')
      }),
    )
    assert.deepEqual(await versions(), [4, 1, undefined], 'rolled back')
    await triggers.delete('trg_a')
    assert.deepEqual(await versions(), [4, 2, undefined], 'deleted')
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
        versions: new Map([['sub_1', undefined]]),
      })
      assert.deepEqual(stored?.eventIds, new Set([e.id]))
      assert.deepEqual(
        stored?.deliveries.map((d) => d.id),
        [`dlv_${e.id}_a`],
      )
      await new Triggers(db).listenerVersions(['sub_1'])
      assert.deepEqual([...(await prepared(db)).keys()], [])
    })
  })
})
