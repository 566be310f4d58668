// The store on every database: migrations, keys, connections and run records behave the same
// on embedded SQLite and on PostgreSQL.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { ApiKeys } from '../../src/store/api-keys.ts'
import { Connections } from '../../src/store/connections.ts'
import { openStore, type Store } from '../../src/store/database.ts'
import { Disconnections } from '../../src/store/disconnections.ts'
import { type StepRunRow, StepRuns } from '../../src/store/step-runs.ts'
import { POSTGRES_URL, testDatabases } from '../helpers/databases.ts'
import { ManualClock } from '../helpers/manual-clock.ts'

const { databases } = await testDatabases()
const schemas: string[] = []

after(async () => {
  if (schemas.length === 0) return
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`)
  await client.end()
})

for (const database of databases) {
  describe(`store on ${database.name}`, () => {
    const open = async (): Promise<Store> => {
      const opts = database.fresh()
      if (opts.pgSchema) schemas.push(opts.pgSchema)
      return openStore(opts)
    }

    test('migrations apply on start and a second start finds them applied', async () => {
      const opts = database.fresh()
      if (opts.pgSchema) schemas.push(opts.pgSchema)
      const a = await openStore(opts)
      const keys = new ApiKeys(a.db)
      const ws = await keys.createWorkspace('w')
      await a.close()
      const b = await openStore(opts)
      assert.equal((await new ApiKeys(b.db).firstWorkspace())?.id, ws.id)
      await b.close()
    })

    test('keys are stored hashed and found by the key, never kept in clear', async () => {
      const store = await open()
      const keys = new ApiKeys(store.db)
      const ws = await keys.createWorkspace('w')
      const { key, row } = await keys.create({ workspaceId: ws.id, kind: 'workspace', name: 'admin' })
      const stored = await store.db.selectFrom('api_keys').selectAll().execute()
      assert.equal(stored.length, 1)
      assert.ok(!JSON.stringify(stored).includes(key))
      assert.equal((await keys.findByKey(key))?.id, row.id)
      assert.equal(await keys.findByKey(`${key}x`), undefined)
      await keys.revoke(row.id)
      assert.ok((await keys.findByKey(key))?.revoked_at)
      await store.close()
    })

    test('disconnections open to restoring are read for the accounts asked, of their owner, however many are asked', async () => {
      const store = await open()
      const ws = await new ApiKeys(store.db).createWorkspace('w')
      const repo = new Disconnections(store.db)
      const at = new Date().toISOString()
      const made = async (accountId: string, endUserId: string | null) => {
        const id = `con_${accountId}_${endUserId ?? 'ws'}`
        await repo.insert({
          id,
          workspace_id: ws.id,
          connector: 'taskboard',
          auth_method: 'api_key_token',
          account_id: accountId,
          account_name: accountId,
          end_user_id: endUserId,
          bindings: { agents: [], triggers: [], tools: [] },
          disconnected_at: at,
        })
        return id
      }
      const alices = await made('acc1', 'alice')
      const workspaces = await made('acc1', null)
      await made('acc2', 'bob')
      const of = (accountId: string, endUserId: string | null) => ({
        connector: 'taskboard',
        accountId,
        endUserId,
      })
      assert.deepEqual(
        (await repo.openFor(ws.id, [of('acc1', 'alice')])).map((d) => d.id),
        [alices],
      )
      assert.deepEqual(
        (await repo.openFor(ws.id, [of('acc1', null)])).map((d) => d.id),
        [workspaces],
      )
      assert.deepEqual(await repo.openFor('other-workspace', [of('acc1', null)]), [])
      assert.deepEqual(await repo.openFor(ws.id, []), [])
      // As many as a list of a workspace's connections asks for: every one found, none of another.
      const many = Array.from({ length: 1_500 }, (_, i) => of(`acc${i + 1}`, i % 2 ? null : 'alice'))
      assert.deepEqual((await repo.openFor(ws.id, many)).map((d) => d.id).sort(), [alices].sort())
      assert.equal(await repo.markRestored(alices, 'con_new'), true)
      assert.deepEqual(await repo.openFor(ws.id, [of('acc1', 'alice')]), [], 'restored: no longer open')
    })

    test('connections: insert, list by connector, status, secret replacement and delete', async () => {
      const store = await open()
      const keys = new ApiKeys(store.db)
      const ws = await keys.createWorkspace('w')
      const repo = new Connections(store.db)
      const a = await repo.insert({
        workspace_id: ws.id,
        connector: 'taskboard',
        auth_method: 'api_key_token',
        account_name: 'alice',
        account_id: '1',
        secret: 's1',
      })
      await repo.insert({
        workspace_id: ws.id,
        connector: 'taskboard',
        auth_method: 'api_key_token',
        account_name: 'bob',
        account_id: '2',
        secret: 's2',
      })
      await repo.insert({
        workspace_id: ws.id,
        connector: 'codehost',
        auth_method: 'token',
        account_name: 'carol',
        account_id: '3',
        secret: 's3',
      })
      assert.deepEqual(
        (await repo.list(ws.id, { connector: 'taskboard' })).map((r) => r.account_name).sort(),
        ['alice', 'bob'],
      )
      assert.equal((await repo.list(ws.id)).length, 3)
      assert.equal((await repo.list('other-workspace')).length, 0)
      // Those named (an id of none, or of another workspace, left out), and one account's.
      const bobs = await repo.list(ws.id, { account: { authMethod: 'api_key_token', accountId: '2' } })
      assert.deepEqual(
        bobs.map((r) => r.account_name),
        ['bob'],
      )
      assert.deepEqual(
        (await repo.list(ws.id, { ids: [bobs[0].id, a.id, 'con_none'] })).map((r) => r.account_name),
        ['alice', 'bob'],
      )
      assert.deepEqual(await repo.list(ws.id, { ids: [] }), [])
      assert.deepEqual(await repo.list('other-workspace', { ids: [a.id] }), [])
      assert.deepEqual(await repo.list(ws.id, { account: { authMethod: 'token', accountId: '2' } }), [])
      assert.equal(await repo.lapse(a.id, 'token expired', '2026-11-25T12:00:00.000Z'), true)
      assert.equal(await repo.lapse(a.id, 'token expired', '2026-11-25T12:00:01.000Z'), false, 'once')
      assert.equal((await repo.get(ws.id, a.id))?.status, 'lapsed')
      assert.equal((await repo.get(ws.id, a.id))?.lapsed_at, '2026-11-25T12:00:00.000Z')
      await repo.replaceSecret(a.id, {
        secret: 's1b',
        account_name: 'alice',
        account_id: '1',
        auth_method: 'api_key_token',
      })
      const fixed = await repo.get(ws.id, a.id)
      assert.equal(fixed?.status, 'active')
      assert.equal(fixed?.secret, 's1b')
      assert.equal(await repo.delete(ws.id, a.id), true)
      assert.equal(await repo.delete(ws.id, a.id), false)
      assert.equal(await repo.get(ws.id, a.id), undefined)
      await store.close()
    })

    const runRow = (i: number, workspace = 'ws'): StepRunRow => ({
      rate_limited: 0,
      requests: null,
      id: `run_${String(i).padStart(5, '0')}`,
      workspace_id: workspace,
      step_id: 'taskboard.get_card',
      connection_id: null,
      caller_key_id: 'k',
      status: i % 2 ? 'failed' : 'succeeded',
      error_code: i % 2 ? 'UPSTREAM_NOT_FOUND' : null,
      duration_ms: i,
      attempts: 1,
      created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString(),
    })
    // A clock that never moves: queued records are written only by a read, a full batch or a stop.
    const stillClock = () => new ManualClock()
    const lines = () => {
      const logged: Array<{ msg: string; [k: string]: unknown }> = []
      return { logged, log: { error: (obj: object, msg: string) => logged.push({ ...obj, msg }) } }
    }

    test('run records page newest first, and a read sees every run recorded before it', async () => {
      const store = await open()
      const runs = new StepRuns(store, { clock: stillClock(), ...lines() })
      for (let i = 0; i < 5; i++) runs.record(runRow(i))
      const first = await runs.list('ws', { limit: 2 })
      assert.deepEqual(
        first.items.map((r) => r.id),
        ['run_00004', 'run_00003'],
      )
      const second = await runs.list('ws', { limit: 2, cursor: first.next })
      assert.deepEqual(
        second.items.map((r) => r.id),
        ['run_00002', 'run_00001'],
      )
      const last = await runs.list('ws', { limit: 2, cursor: second.next })
      assert.deepEqual(
        last.items.map((r) => r.id),
        ['run_00000'],
      )
      assert.equal(last.next, null, 'the last page says so')
      runs.record(runRow(5))
      const counts = await runs.countByStepAndStatus()
      assert.deepEqual(
        counts.sort((x, y) => x.status.localeCompare(y.status)),
        [
          { step_id: 'taskboard.get_card', status: 'failed', n: 3 },
          { step_id: 'taskboard.get_card', status: 'succeeded', n: 3 },
        ],
      )
      await runs.close()
      await store.close()
    })

    test('a clean stop writes the queued run records: the store opened again lists them all', async () => {
      const opts = database.fresh()
      if (opts.pgSchema) schemas.push(opts.pgSchema)
      const a = await openStore(opts)
      const runs = new StepRuns(a, { clock: stillClock(), ...lines() })
      // More than one INSERT carries: full batches go at once, the rest waits for the stop.
      const total = 1234
      for (let i = 0; i < total; i++) runs.record(runRow(i))
      await runs.close()
      await a.close()
      const b = await openStore(opts)
      const stored = await b.db
        .selectFrom('step_runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      assert.equal(Number(stored.n), total)
      const newest = await new StepRuns(b, { clock: stillClock(), ...lines() }).list('ws', { limit: 1 })
      assert.equal(newest.items[0].id, runRow(total - 1).id)
      await b.close()
    })

    test('a flush the store refuses keeps its records, says so in the log, and writes them once it can', async () => {
      const store = await open()
      const { logged, log } = lines()
      const runs = new StepRuns(store, { clock: stillClock(), log })
      runs.record(runRow(0))
      await runs.flush()
      await sql`ALTER TABLE step_runs RENAME TO step_runs_away`.execute(store.db)
      for (let i = 1; i <= 3; i++) runs.record(runRow(i))
      await assert.rejects(runs.flush())
      assert.equal(logged.length, 1)
      assert.match(logged[0].msg, /could not write step run records; they are kept/)
      assert.equal(logged[0].queued, 3)
      await sql`ALTER TABLE step_runs_away RENAME TO step_runs`.execute(store.db)
      assert.deepEqual(
        (await runs.list('ws', { limit: 10 })).items.map((r) => r.id),
        ['run_00003', 'run_00002', 'run_00001', 'run_00000'],
      )
      await runs.close()
      await store.close()
    })

    // SQLite has no connection pool.
    if (database.name !== 'sqlite')
      test('PostgreSQL: an instance opens no more query connections than its pool size', async () => {
        const opts = database.fresh()
        if (opts.pgSchema) schemas.push(opts.pgSchema)
        const store = await openStore({ ...opts, poolSize: 2 })
        try {
          const name = `pool-test-${process.pid}`
          await Promise.all(
            Array.from({ length: 8 }, () =>
              sql`SELECT set_config('application_name', ${name}, false), pg_sleep(0.05)`.execute(store.db),
            ),
          )
          const open = await sql<{
            n: number
          }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${name}`.execute(
            store.db,
          )
          assert.ok(open.rows[0]!.n >= 1 && open.rows[0]!.n <= 2, `connections: ${open.rows[0]!.n}`)
        } finally {
          await store.close()
        }
      })
  })
}
