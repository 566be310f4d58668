// The credit ledger, budgets and per-connection rate limits behave the same on SQLite and PostgreSQL.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import pg from 'pg'
import { ApiKeys } from '../../src/store/api-keys.ts'
import { ConnectionRateLimits } from '../../src/store/connection-rate-limits.ts'
import { Connections } from '../../src/store/connections.ts'
import { CreditBudgets, CreditLedger } from '../../src/store/credits.ts'
import { openStore, type Store } from '../../src/store/database.ts'
import { POSTGRES_URL, testDatabases } from '../helpers/databases.ts'

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
  describe(`credits store on ${database.name}`, () => {
    const open = async (): Promise<{ store: Store; workspaceId: string }> => {
      const opts = database.fresh()
      if (opts.pgSchema) schemas.push(opts.pgSchema)
      const store = await openStore(opts)
      const ws = await new ApiKeys(store.db).createWorkspace('w')
      return { store, workspaceId: ws.id }
    }
    const entry = (
      workspaceId: string,
      o: { conn: string; agent: string | null; credits: number; remaining?: number },
    ) => ({
      workspace_id: workspaceId,
      connection_id: o.conn,
      connector: 'contactdata',
      agent_id: o.agent,
      caller_key_id: 'key_1',
      step_id: 'contactdata.find_contact',
      run_id: `run_${Math.random().toString(36).slice(2)}`,
      credits: o.credits,
      remaining: o.remaining ?? null,
    })

    test('the ledger sums per connection and per agent, pages newest first, and filters by time', async () => {
      const { store, workspaceId } = await open()
      const ledger = new CreditLedger(store.db)
      await ledger.insert(entry(workspaceId, { conn: 'con_a', agent: 'agt_1', credits: 2, remaining: 98 }))
      await ledger.insert(entry(workspaceId, { conn: 'con_a', agent: null, credits: 1, remaining: 97 }))
      await ledger.insert(entry(workspaceId, { conn: 'con_b', agent: 'agt_1', credits: 5, remaining: 10 }))
      await ledger.insert(entry('ws_other', { conn: 'con_a', agent: 'agt_1', credits: 100 }))

      const all = await ledger.summary(workspaceId, {})
      assert.equal(all.credits, 8)
      assert.equal(all.charges, 3)
      assert.deepEqual(all.byConnection, [
        { connectionId: 'con_a', credits: 3, charges: 2, lastRemaining: 97 },
        { connectionId: 'con_b', credits: 5, charges: 1, lastRemaining: 10 },
      ])
      const byAgent = Object.fromEntries(all.byAgent.map((a) => [a.agentId ?? 'admin', a.credits]))
      assert.deepEqual(byAgent, { admin: 1, agt_1: 7 })
      assert.equal((await ledger.summary(workspaceId, { agentId: null })).credits, 1)
      assert.equal((await ledger.summary(workspaceId, { connectionId: 'con_b' })).credits, 5)

      const p1 = await ledger.list(workspaceId, {}, { limit: 2 })
      assert.equal(p1.entries.length, 2)
      assert.ok(p1.next)
      const p2 = await ledger.list(workspaceId, {}, { limit: 2, cursor: p1.next! })
      assert.equal(p2.entries.length, 1)
      assert.equal(p2.next, null)
      const seen = [...p1.entries, ...p2.entries]
      assert.equal(new Set(seen.map((e) => e.id)).size, 3)
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i - 1].created_at >= seen[i].created_at)

      assert.equal(await ledger.spentByAgent(workspaceId, 'agt_1'), 7)
      const future = new Date(Date.now() + 60_000).toISOString()
      assert.equal(await ledger.spentByAgent(workspaceId, 'agt_1', future), 0)
      assert.equal((await ledger.summary(workspaceId, { until: future })).credits, 8)
      await store.close()
    })

    test('budgets are set, replaced, listed and removed per agent', async () => {
      const { store, workspaceId } = await open()
      const budgets = new CreditBudgets(store.db)
      assert.equal(await budgets.get(workspaceId, 'agt_1'), undefined)
      const set = await budgets.put(workspaceId, 'agt_1', { limit: 10, period: 'total' })
      assert.equal(set.credit_limit, 10)
      const replaced = await budgets.put(workspaceId, 'agt_1', { limit: 25, period: 'month' })
      assert.equal(replaced.credit_limit, 25)
      assert.equal(replaced.period, 'month')
      assert.equal(replaced.created_at, set.created_at)
      await budgets.put(workspaceId, 'agt_2', { limit: 0, period: 'day' })
      assert.deepEqual(
        (await budgets.list(workspaceId)).map((b) => [b.agent_id, b.credit_limit]),
        [
          ['agt_1', 25],
          ['agt_2', 0],
        ],
      )
      assert.equal(await budgets.delete(workspaceId, 'agt_1'), true)
      assert.equal(await budgets.delete(workspaceId, 'agt_1'), false)
      await store.close()
    })

    test("a connection's rate limit is upserted, and goes with the connection", async () => {
      const { store, workspaceId } = await open()
      const limits = new ConnectionRateLimits(store.db)
      const conn = await new Connections(store.db).insert({
        workspace_id: workspaceId,
        connector: 'contactdata',
        auth_method: 'api_key',
        account_name: 'Acme',
        account_id: 'Acme',
        secret: 'sealed',
      })
      await limits.put(workspaceId, conn.id, { requests: 300, perMs: 60_000 })
      await limits.put(workspaceId, conn.id, { requests: 1000, perMs: 60_000 })
      const got = await limits.get(conn.id)
      assert.equal(got?.requests, 1000)
      await new Connections(store.db).delete(workspaceId, conn.id)
      assert.equal(await limits.get(conn.id), undefined)
      assert.equal(await limits.delete(conn.id), false)
      await store.close()
    })
  })
}
