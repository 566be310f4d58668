// Migration 0015 (an event's identity includes its owner) on a database that has events: each
// event gets the end user of the connection it came through ('' for the workspace's own), nothing
// is lost, seqs handed out before are never handed out again, and afterwards the same upstream id
// may be stored once per owner — and only once per owner.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { newId, nowIso } from '../../src/store/ids.ts'
import { testDatabases } from '../helpers/databases.ts'
import { bareDatabase, migrate } from '../helpers/migrations.ts'

const { databases } = await testDatabases()
const closers: (() => Promise<void>)[] = []
after(async () => {
  for (const c of closers.reverse()) await c()
})

const OWNER_MIGRATION = '0015_event_owner'

for (const database of databases)
  test(`events made before the owner migration keep their rows and get their connection's end user (${database.name})`, async () => {
    const { db, schema, close } = await bareDatabase(database)
    closers.push(close)
    await migrate(db, schema, OWNER_MIGRATION)

    const at = nowIso()
    const ws = newId('ws')
    await db.insertInto('workspaces').values({ id: ws, name: 'W', created_at: at }).execute()
    const connection = (endUser: string | null) => ({
      id: newId('con'),
      workspace_id: ws,
      connector: 'taskboard',
      auth_method: 'api_key_token',
      account_name: 'demo',
      account_id: 'acc1',
      status: 'active',
      status_reason: null,
      secret: 'sealed',
      created_at: at,
      updated_at: at,
      end_user_id: endUser,
    })
    const alices = connection('alice')
    const workspaces = connection(null)
    await db.insertInto('connections').values([alices, workspaces]).execute()
    const event = (connectionId: string, upstreamId: string, owner?: string) => ({
      id: newId('evt'),
      workspace_id: ws,
      connector: 'taskboard',
      subscription_id: 'hook_1',
      connection_id: connectionId,
      model: 'board',
      upstream_id: upstreamId,
      type: 'card.created',
      refs: '{}',
      data: '{}',
      occurred_at: at,
      received_at: at,
      matched: 1,
      ...(owner === undefined ? {} : { owner }),
    })
    const old = [event(alices.id, 'a1'), event(workspaces.id, 'w1'), event(alices.id, 'gone')]
    await db.insertInto('events').values(old).execute()
    const seqs = await db.selectFrom('events').select(['id', 'seq']).orderBy('seq').execute()
    // The newest is deleted: its seq is not handed out again.
    await db.deleteFrom('events').where('upstream_id', '=', 'gone').execute()

    await migrate(db, schema)

    const rows = await db
      .selectFrom('events')
      .select(['id', 'seq', 'owner', 'upstream_id', 'connection_id'])
      .orderBy('seq')
      .execute()
    assert.deepEqual(
      rows.map((r) => [r.id, Number(r.seq), r.owner]),
      [
        [old[0].id, Number(seqs[0].seq), 'alice'],
        [old[1].id, Number(seqs[1].seq), ''],
      ],
    )
    // The same upstream id for another owner is another event; for the same owner it is refused.
    await db
      .insertInto('events')
      .values(event(workspaces.id, 'a1', ''))
      .execute()
    await db
      .insertInto('events')
      .values(event(alices.id, 'a1', 'bob'))
      .execute()
    await assert.rejects(
      db
        .insertInto('events')
        .values(event(alices.id, 'a1', 'alice'))
        .execute(),
    )
    const newest = await db
      .selectFrom('events')
      .select('seq')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow()
    assert.ok(Number(newest.seq) > Number(seqs[2].seq), 'a deleted event seq is not handed out again')
    // The indexes the events were read by are still there.
    if (database.name === 'sqlite') {
      const names = (
        await db
          .selectFrom('sqlite_master' as any)
          .select('name')
          .where('tbl_name', '=', 'events')
          .where('type', '=', 'index')
          .execute()
      ).map((r: any) => r.name)
      for (const n of ['events_by_received', 'events_owner_upstream'])
        assert.ok(names.includes(n), `${n} in ${names}`)
    }
  })
