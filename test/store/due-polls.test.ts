// The poll sweep's question — which polled triggers are due — among many webhook triggers, which
// have no next poll either (migration 0019: the due-polls index holds polled triggers only).
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { sql } from 'kysely'
import { openStore, type Store } from '../../src/store/database.ts'
import { Triggers } from '../../src/store/triggers.ts'
import { testDatabases } from '../helpers/databases.ts'

const { databases } = await testDatabases()
const stores: Store[] = []
after(async () => {
  for (const s of stores) await s.close()
})

for (const database of databases)
  test(`due polls are the polled triggers due or never scheduled, soonest first, among 2,000 webhook triggers (${database.name})`, async () => {
    const s = await openStore(database.fresh())
    stores.push(s)
    const row = (id: string, poll: { every: number; next: string | null; paused?: string } | null) =>
      sql`(${id}, 'ws_1', 'agt_1', 'k', 'con_1', '{}', '{}', ${poll?.every ?? null}, ${poll?.next ?? null}, ${poll?.paused ?? null}, '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z')`
    const rows = [
      ...Array.from({ length: 2000 }, (_, i) => row(`trg_hook_${i}`, null)),
      row('trg_due', { every: 60_000, next: '2026-11-26T08:00:00.000Z' }),
      row('trg_due_sooner', { every: 60_000, next: '2026-11-26T07:00:00.000Z' }),
      row('trg_later', { every: 60_000, next: '2026-11-26T10:00:00.000Z' }),
      row('trg_paused', {
        every: 60_000,
        next: '2026-11-26T07:30:00.000Z',
        paused: '2026-11-26T07:00:00.000Z',
      }),
      row('trg_new', { every: 60_000, next: null }),
    ]
    await sql`insert into triggers (id, workspace_id, agent_id, trigger_key, connection_id, config, target,
      poll_interval_ms, next_poll_at, paused_at, created_at, updated_at) values ${sql.join(rows)}`.execute(
      s.db,
    )
    const due = await new Triggers(s.db).duePolls('2026-11-26T09:00:00.000Z', 50)
    const ids = due.map((d) => d.id)
    // Never scheduled sorts first on SQLite (nulls first) and last on PostgreSQL; the rest by time.
    assert.deepEqual(
      ids.filter((id) => id !== 'trg_new'),
      ['trg_due_sooner', 'trg_due'],
    )
    assert.ok(ids.includes('trg_new'), ids.join(', '))
    assert.equal(ids.length, 3)
  })
