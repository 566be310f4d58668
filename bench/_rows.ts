// The store benchmarks' store, and the rows they write with the store's own functions.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Kysely } from 'kysely'
import type { NewEvent } from '../src/store/event-log.ts'
import { newId } from '../src/store/ids.ts'
import { migrate } from '../src/store/migrations.ts'
import { nodeSqliteDialect, openSqlite } from '../src/store/node-sqlite-dialect.ts'
import type { Database } from '../src/store/schema.ts'
import { listInBackground } from '../src/store/sqlite-listing.ts'
import { objectId } from './_stats.ts'

/**
 * A migrated SQLite store of its own, in a new directory under the system's temporary one
 * (`patchbay-<name>-…`), removed by `close`. Its listing passes run when the benchmark asks
 * (`listing.listNow()`), one at a time, not by the timer.
 */
export async function scratchStore(name: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `patchbay-${name}-`))
  const file = path.join(dir, 'patchbay.db')
  const sqlite = openSqlite(file)
  const db = new Kysely<Database>({ dialect: nodeSqliteDialect(sqlite) })
  await migrate(db)
  const listing = listInBackground(db, { everyMs: 3_600_000 })
  return {
    db,
    sqlite,
    file,
    listing,
    close: async () => {
      await listing.stop()
      await db.destroy()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** `n` workspace ids, in order (`ws_000000`, `ws_000001`, …). */
export const workspaceIdsOf = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `ws_${String(i).padStart(6, '0')}`)

/** A new card on a workspace's board, as its webhook's event is stored (received `at`). */
export function cardCreated(workspaceId: string, at: string): NewEvent {
  return {
    id: newId('evt'),
    workspace_id: workspaceId,
    connector: 'taskboard',
    subscription_id: `sub_${workspaceId}`,
    connection_id: `con_${workspaceId}`,
    model: 'card',
    upstream_id: objectId(),
    type: 'card.created',
    refs: '{"boardId":"b1","listId":"l1","cardId":"c1"}',
    data: JSON.stringify({ card: { id: 'c1', name: 'A card made by the benchmark', idList: 'l1' } }),
    occurred_at: at,
    received_at: at,
    matched: 1,
    owner: '',
  }
}
