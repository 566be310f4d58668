// Migration 0020 (delivery attempts carry their workspace) on a database that has attempts: each
// gets its delivery's workspace and is listed, so the statistics' read by workspace finds it;
// nothing is lost.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { ofWorkspace } from '../../src/store/event-log.ts'
import { nowIso } from '../../src/store/ids.ts'
import { testDatabases } from '../helpers/databases.ts'
import { bareDatabase, migrate } from '../helpers/migrations.ts'

const { databases } = await testDatabases()
const closers: (() => Promise<void>)[] = []
after(async () => {
  for (const c of closers.reverse()) await c()
})

for (const database of databases)
  test(`attempts made before migration 0020 get their delivery's workspace (${database.name})`, async () => {
    const { db, schema, close } = await bareDatabase(database)
    closers.push(close)
    await migrate(db, schema, '0020_attempts_by_workspace')

    const at = nowIso()
    const delivery = (id: string, ws: string) => ({
      id,
      workspace_id: ws,
      agent_id: 'agt_1',
      event_id: `evt_${id}`,
      trigger_id: 'trigger_1',
      target: '{"type":"webhook","url":"http://x"}',
      status: 'delivered',
      attempts: 2,
      next_attempt_at: null,
      last_status: 200,
      last_error: null,
      tool_run_id: null,
      created_at: at,
      delivered_at: at,
      claimed_until: null,
    })
    await db
      .insertInto('deliveries')
      .values([delivery('dlv_a', 'ws_a'), delivery('dlv_b', 'ws_b')])
      .execute()
    const attempt = (deliveryId: string, n: number) => ({
      delivery_id: deliveryId,
      attempt: n,
      at,
      status: n === 1 ? 500 : 200,
      error: n === 1 ? 'the agent endpoint answered 500' : null,
      duration_ms: 12,
    })
    await db
      .insertInto('delivery_attempts')
      .values([attempt('dlv_a', 1), attempt('dlv_a', 2), attempt('dlv_b', 1)])
      .execute()

    await migrate(db, schema)

    const rows = await db
      .selectFrom('delivery_attempts')
      .select(['delivery_id', 'attempt', 'workspace_id', 'listed', 'error'])
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute()
    assert.deepEqual(
      rows.map((r) => [r.delivery_id, r.attempt, r.workspace_id, Number(r.listed)]),
      [
        ['dlv_a', 1, 'ws_a', 1],
        ['dlv_a', 2, 'ws_a', 1],
        ['dlv_b', 1, 'ws_b', 1],
      ],
    )
    assert.equal(rows[0].error, 'the agent endpoint answered 500')
    const mine = await db
      .selectFrom(ofWorkspace(db, 'delivery_attempts', 'ws_a', ['delivery_id', 'attempt']))
      .select(['delivery_id', 'attempt'])
      .orderBy('attempt')
      .execute()
    assert.deepEqual(
      mine.map((r) => r.attempt),
      [1, 2],
    )
  })
