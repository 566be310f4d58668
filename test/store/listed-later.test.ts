// A workspace's newest events and deliveries enter its index in batches on SQLite (migration 0018,
// store/sqlite-listing.ts): every list, page, stream read and deletion finds them the same before
// and after they are listed, once each, in order, and only the workspace's own. On PostgreSQL they
// are stored listed and the same reads hold. Delivery attempts are listed the same way (migration
// 0020): the statistics read a workspace's by its index, not every workspace's of the hour.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { CompiledQuery, sql } from 'kysely'
import { openStore, type Store } from '../../src/store/database.ts'
import {
  deliveries,
  events,
  type NewDelivery,
  type NewEvent,
  ofWorkspace,
} from '../../src/store/event-log.ts'
import { WORKSPACES_A_STATEMENT } from '../../src/store/sqlite-listing.ts'
import { Workspaces } from '../../src/store/workspaces.ts'
import { testDatabases } from '../helpers/databases.ts'
import { pendingDelivery } from '../helpers/event-rows.ts'

const { databases } = await testDatabases()
const stores: Store[] = []
after(async () => {
  for (const s of stores) await s.close()
})

let n = 0
const event = (workspaceId: string): NewEvent => {
  n++
  const at = new Date(Date.UTC(2026, 10, 26, 8, 0, 0, n)).toISOString()
  return {
    id: `evt_${String(n).padStart(6, '0')}`,
    workspace_id: workspaceId,
    connector: 'taskboard',
    subscription_id: 'sub_1',
    connection_id: 'con_1',
    model: 'card',
    upstream_id: `up_${n}`,
    type: 'card.created',
    refs: '{}',
    data: '{}',
    occurred_at: at,
    received_at: at,
    matched: 1,
    owner: '',
  }
}
const delivery = (e: NewEvent): NewDelivery =>
  pendingDelivery(e, { id: `dlv_${e.id.slice(4)}`, agent_id: 'agt_1', trigger_id: 'trigger_1' })

/** Stores `count` events of each workspace, interleaved, each with its delivery. */
async function store(db: Store['db'], workspaceIds: string[], count: number) {
  const rows = Array.from({ length: count }, () => workspaceIds.map(event)).flat()
  await db.transaction().execute(async (tx) => {
    await events.upsertMany(tx, rows)
    await deliveries.insertRows(tx, rows.map(delivery))
  })
  return rows
}

async function unlisted(s: Store): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select (select count(*) from events where listed = 0) + (select count(*) from deliveries where listed = 0) as n`.execute(
    s.db,
  )
  return Number(rows[0].n)
}

/** SQLite's plan of a compiled query, a line per step. */
async function planOf(s: Store, c: CompiledQuery): Promise<string[]> {
  const { rows } = await s.db.executeQuery<{ detail: string }>(
    CompiledQuery.raw(`explain query plan ${c.sql}`, [...c.parameters]),
  )
  return rows.map((r) => r.detail)
}

/** Every page of `read`, `limit` at a time, in order. */
async function allPages<T>(read: (cursor: string | null) => Promise<{ items: T[]; next: string | null }>) {
  const out: T[] = []
  let cursor: string | null = null
  do {
    const page = await read(cursor)
    out.push(...page.items)
    cursor = page.next
  } while (cursor)
  return out
}

for (const database of databases)
  describe(`a workspace's newest rows, listed later (${database.name})`, () => {
    test('lists, pages, a stream read and the newest seq find rows listed and unlisted alike, once each and only the workspace’s', async () => {
      const s = await openStore(database.fresh())
      stores.push(s)
      // The test lists when it wants to, not each second.
      await s.listing?.stop()
      const mine = await new Workspaces(s.db, s.kind).insert('mine')
      const theirs = await new Workspaces(s.db, s.kind).insert('theirs')
      const older = await store(s.db, [mine.id, theirs.id], 7)
      await s.listing?.listNow()
      const newer = await store(s.db, [mine.id, theirs.id], 6)
      // On SQLite the newer ones wait for the next listing; PostgreSQL stores them listed.
      assert.equal(await unlisted(s), s.kind === 'sqlite' ? 24 : 0)

      const myEvents = [...older, ...newer].filter((e) => e.workspace_id === mine.id)
      const newestFirst = myEvents.map((e) => e.id).reverse()
      const paged = await allPages((cursor) => events.page(s.db, mine.id, { limit: 4, cursor }))
      assert.deepEqual(
        paged.map((e) => e.id),
        newestFirst,
      )
      assert.deepEqual(
        (await events.list(s.db, mine.id, { limit: 5 })).map((e) => e.id),
        newestFirst.slice(0, 5),
      )
      const pagedDeliveries = await allPages((cursor) => deliveries.page(s.db, mine.id, { limit: 3, cursor }))
      assert.deepEqual(
        pagedDeliveries.map((d) => d.event_id),
        newestFirst,
      )
      assert.ok(!('listed' in paged[0]) && !('listed' in pagedDeliveries[0]), 'the flag stays in the store')

      // A stream reads on after the last delivery it sent: from the middle of the listed ones on.
      const seqs = pagedDeliveries.map((d) => d.seq).reverse()
      const after = await deliveries.list(s.db, mine.id, { afterSeq: seqs[4], ascending: true, limit: 100 })
      assert.deepEqual(
        after.map((d) => d.seq),
        seqs.slice(5),
      )
      assert.equal(await deliveries.newestSeq(s.db, mine.id), seqs.at(-1))

      // Listed now, the same reads give the same answers.
      await s.listing?.listNow()
      assert.equal(await unlisted(s), 0)
      assert.deepEqual(
        (await allPages((cursor) => events.page(s.db, mine.id, { limit: 4, cursor }))).map((e) => e.id),
        newestFirst,
      )
      assert.deepEqual(
        (await deliveries.list(s.db, mine.id, { afterSeq: seqs[4], ascending: true, limit: 100 })).map(
          (d) => d.seq,
        ),
        seqs.slice(5),
      )
    })

    test('deleting a workspace removes its listed and unlisted rows and leaves the other’s', async () => {
      const s = await openStore(database.fresh())
      stores.push(s)
      await s.listing?.stop()
      const workspaces = new Workspaces(s.db, s.kind)
      const gone = await workspaces.insert('gone')
      const kept = await workspaces.insert('kept')
      await store(s.db, [gone.id, kept.id], 3)
      await s.listing?.listNow()
      await store(s.db, [gone.id, kept.id], 2)
      const removed = await workspaces.deleteEverything(gone.id)
      assert.equal(removed.events, 5)
      assert.equal(removed.deliveries, 5)
      assert.equal((await events.list(s.db, gone.id, { limit: 100 })).length, 0)
      assert.equal((await events.list(s.db, kept.id, { limit: 100 })).length, 5)
      assert.equal((await deliveries.list(s.db, kept.id, { limit: 100 })).length, 5)
    })

    test('paging events the deprecated way (before = the last seq shown) finds an event stored later but received earlier, once', async () => {
      const s = await openStore(database.fresh())
      stores.push(s)
      const ws = 'ws_before'
      const rows = await store(s.db, [ws], 6)
      // Kept raw and processed later: stored after the others, received before the newest two.
      const late = { ...event(ws), received_at: rows[3].received_at.replace(/Z$/, '5Z') }
      await events.upsertMany(s.db, [late])
      const seen: string[] = []
      let before: number | undefined
      for (;;) {
        const page = await events.page(s.db, ws, { limit: 2, beforeSeq: before })
        seen.push(...page.items.map((e) => e.id))
        if (page.items.length < 2) break
        before = page.items.at(-1)!.seq
      }
      assert.deepEqual(
        seen,
        [...rows, late]
          .sort((a, b) => (a.received_at < b.received_at ? 1 : a.received_at > b.received_at ? -1 : 0))
          .map((e) => e.id),
      )
    })

    // On SQLite, where rows wait unlisted (PostgreSQL reads the listed part alone).
    if (database.name === 'sqlite')
      test('a workspace’s newest page is read by its index and the unlisted rows’ index, not by a scan of every row', async () => {
        const s = await openStore(database.fresh())
        stores.push(s)
        for (const [table, index] of [
          ['deliveries', 'deliveries_by_workspace'],
          ['events', 'events_by_received'],
        ] as const) {
          const c = s.db
            .selectFrom(ofWorkspace(s.db, table as 'events', 'ws_1'))
            .selectAll()
            .orderBy(table === 'events' ? 'received_at' : 'seq', 'desc')
            .orderBy('seq', 'desc')
            .limit(50)
            .compile()
          const plan = await planOf(s, c)
          assert.ok(
            plan.some((d) => d.includes(index)) && plan.some((d) => d.includes(`${table}_unlisted`)),
            plan.join('\n'),
          )
          assert.ok(!plan.some((d) => d.startsWith(`SCAN ${table}`) && !d.includes('INDEX')), plan.join('\n'))
          assert.ok(!plan.some((d) => d.includes('TEMP B-TREE')), `no sort of every row: ${plan.join('\n')}`)
        }
        // The statistics' read of an hour's attempts: the workspace's, not every workspace's of the hour.
        const c = s.db
          .selectFrom(ofWorkspace(s.db, 'delivery_attempts', 'ws_1', ['delivery_id', 'attempt', 'at']))
          .select(['delivery_id', 'attempt'])
          .where('at', '>=', '2026-11-26T08')
          .where('at', '<', '2026-11-26T09')
          .compile()
        const plan = await planOf(s, c)
        assert.ok(
          plan.some((d) => d.includes('delivery_attempts_by_workspace')) &&
            plan.some((d) => d.includes('delivery_attempts_unlisted')),
          plan.join('\n'),
        )
        assert.ok(!plan.some((d) => d.includes('delivery_attempts_by_time')), plan.join('\n'))
        // Each unlisted row's workspace is tested in its index entry (migration 0021): the unlisted
        // part holds every workspace's rows of the last few seconds, read through for each workspace.
        for (const table of ['events', 'deliveries', 'delivery_attempts']) {
          const { rows } = await sql<{ name: string | null; key: number }>`
            SELECT name, key FROM pragma_index_xinfo(${`${table}_unlisted`})`.execute(s.db)
          assert.equal(rows.filter((r) => r.key === 1).at(-1)?.name, 'workspace_id', table)
        }
      })

    if (database.name === 'sqlite')
      test('a listing pass lets the store’s other work through between its tables: a read asked for during a pass is answered before the pass ends', async () => {
        const s = await openStore(database.fresh())
        stores.push(s)
        await s.listing?.stop()
        const ws = 'ws_during'
        await store(s.db, [ws], 200)
        const done: string[] = []
        const pass = s.listing!.listNow().then(() => done.push('pass'))
        // Asked for while the pass has the store: before, it waited for all three tables.
        const read = deliveries.list(s.db, ws, { limit: 10 }).then((rows) => done.push(`read ${rows.length}`))
        await Promise.all([pass, read])
        assert.deepEqual(done, ['read 10', 'pass'])
        assert.equal(await unlisted(s), 0, 'and the pass listed every row')
      })

    if (database.name === 'sqlite')
      test('a pass lists a few thousand rows of many workspaces in parts, each workspace’s rows in one of them, and reads come between the parts', async () => {
        const s = await openStore(database.fresh())
        stores.push(s)
        await s.listing?.stop()
        const workspaces = Array.from({ length: 2 * WORKSPACES_A_STATEMENT + 50 }, (_, i) => `ws_part_${i}`)
        await store(s.db, workspaces, 2)
        // What reads between the pass's statements see of the events table: per workspace, how
        // many of its events are listed.
        const seen: Array<Map<string, number>> = []
        let passing = true
        const pass = s.listing!.listNow().then(() => {
          passing = false
        })
        while (passing) {
          const { rows } = await sql<{ workspace_id: string; listed: number }>`
            select workspace_id, sum(listed) as listed from events where workspace_id like 'ws_part_%'
            group by workspace_id`.execute(s.db)
          seen.push(new Map(rows.map((r) => [r.workspace_id, Number(r.listed)])))
          // The store answers at once (node:sqlite is synchronous): a turn of the event loop lets the
          // pass's pause end.
          await new Promise((r) => setImmediate(r))
        }
        await pass
        const partly = seen.filter((m) => {
          const listed = [...m.values()].filter((v) => v > 0).length
          return listed > 0 && listed < workspaces.length
        })
        // In one statement a read would see none of the table's workspaces listed, or all of them.
        assert.ok(
          partly.length > 0,
          `a read saw some workspaces listed and others not (${seen.length} reads)`,
        )
        for (const m of seen)
          for (const [ws, listed] of m)
            assert.ok(
              listed === 0 || listed === 2,
              `${ws}: its two events listed together (${listed} listed)`,
            )
        assert.equal(await unlisted(s), 0, 'and the pass listed every row')
      })
  })
