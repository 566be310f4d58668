// Agents, tools and tool runs on every database: JSON columns round-trip, updates, paging newest
// first, and deleting an agent takes its tools and runs with it.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import pg from 'pg'
import { Agents } from '../../src/store/agents.ts'
import { ApiKeys } from '../../src/store/api-keys.ts'
import { openStore, type Store } from '../../src/store/database.ts'
import { ToolRuns } from '../../src/store/tool-runs.ts'
import { Tools } from '../../src/store/tools.ts'
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
  describe(`agents and tools store on ${database.name}`, () => {
    const open = async (): Promise<{ store: Store; workspaceId: string }> => {
      const opts = database.fresh()
      if (opts.pgSchema) schemas.push(opts.pgSchema)
      const store = await openStore(opts)
      const ws = await new ApiKeys(store.db).createWorkspace('w')
      return { store, workspaceId: ws.id }
    }
    const agentValues = (workspaceId: string, name: string) => ({
      workspace_id: workspaceId,
      name,
      scope: { boards: ['a'.repeat(24)], repositories: ['o/r'] },
      connection_ids: ['con_1'],
      delivery: { type: 'stream' } as const,
      signing_secret: 'sealed',
    })

    test('agents: insert, get, list in creation order, update and delete', async () => {
      const { store, workspaceId } = await open()
      const repo = new Agents(store.db)
      const a = await repo.insert(agentValues(workspaceId, 'triage'))
      const b = await repo.insert(agentValues(workspaceId, 'release'))
      assert.match(a.id, /^agt_/)
      assert.deepEqual({ ...(await repo.get(workspaceId, a.id)) }, a)
      assert.equal(await repo.get('ws_other', a.id), undefined)
      assert.deepEqual((await repo.list(workspaceId)).map((r) => r.name).sort(), ['release', 'triage'])
      assert.equal(
        await repo.update(workspaceId, a.id, {
          name: 'triage 2',
          delivery: { type: 'webhook', url: 'https://agent.example/hook' },
        }),
        true,
      )
      const changed = await repo.get(workspaceId, a.id)
      assert.equal(changed?.name, 'triage 2')
      assert.deepEqual(changed?.delivery, { type: 'webhook', url: 'https://agent.example/hook' })
      assert.deepEqual(changed?.scope, a.scope)
      assert.equal(await repo.update(workspaceId, 'agt_missing', { name: 'x' }), false)
      assert.equal(await repo.delete(workspaceId, b.id), true)
      assert.equal(await repo.delete(workspaceId, b.id), false)
      await store.close()
    })

    test('tools: insert, list per agent, update, delete; deleting the agent removes its tools and runs', async () => {
      const { store, workspaceId } = await open()
      const agents = new Agents(store.db)
      const tools = new Tools(store.db)
      const runs = new ToolRuns(store.db)
      const agent = await agents.insert(agentValues(workspaceId, 'a'))
      const other = await agents.insert(agentValues(workspaceId, 'b'))
      const steps = [
        { stepId: 'taskboard.get_card', connectionId: 'con_1', input: { idCard: '{{input.id}}' } },
      ]
      const t1 = await tools.insert({
        workspace_id: workspaceId,
        agent_id: agent.id,
        name: 'copy',
        description: '',
        steps,
      })
      await tools.insert({
        workspace_id: workspaceId,
        agent_id: other.id,
        name: 'other',
        description: 'x',
        steps,
      })
      assert.deepEqual((await tools.get(workspaceId, agent.id, t1.id))!.steps, steps)
      assert.equal(await tools.get(workspaceId, other.id, t1.id), undefined, 'a tool belongs to one agent')
      assert.deepEqual(
        (await tools.list(workspaceId, agent.id)).map((t) => t.name),
        ['copy'],
      )
      assert.equal(await tools.update(workspaceId, agent.id, t1.id, { description: 'copies' }), true)
      assert.equal((await tools.get(workspaceId, agent.id, t1.id))?.description, 'copies')

      await runs.insert({
        id: 'trun_1',
        workspace_id: workspaceId,
        agent_id: agent.id,
        tool_id: t1.id,
        trigger_id: null,
        event_id: null,
        status: 'running',
        input: { id: 'x' },
        steps: [],
        error_code: null,
        error_message: null,
        created_at: new Date().toISOString(),
        finished_at: null,
      })
      await agents.delete(workspaceId, agent.id)
      assert.equal(await tools.get(workspaceId, agent.id, t1.id), undefined)
      assert.equal(await runs.get(workspaceId, 'trun_1'), undefined)
      assert.equal((await tools.list(workspaceId, other.id)).length, 1, "another agent's tools stay")
      await store.close()
    })

    test('tool runs: finish records the outcome; pages newest first with a cursor', async () => {
      const { store, workspaceId } = await open()
      const runs = new ToolRuns(store.db)
      const base = Date.parse('2026-01-01T00:00:00Z')
      for (let i = 0; i < 5; i++)
        await runs.insert({
          id: `trun_${i}`,
          workspace_id: workspaceId,
          agent_id: 'agt_1',
          tool_id: i % 2 ? 'tool_odd' : 'tool_even',
          trigger_id: i === 4 ? 'trg_1' : null,
          event_id: i === 4 ? 'evt_1' : null,
          status: 'running',
          input: { i },
          steps: [],
          error_code: null,
          error_message: null,
          // Two runs share a time: the id breaks the tie.
          created_at: new Date(base + Math.min(i, 3) * 1000).toISOString(),
          finished_at: null,
        })
      await runs.finish('trun_0', {
        status: 'failed',
        steps: [{ status: 'failed' }],
        error_code: 'SCOPE_DENIED',
        error_message: 'no',
        finished_at: new Date().toISOString(),
      })
      const done = await runs.get(workspaceId, 'trun_0')
      assert.equal(done?.status, 'failed')
      assert.equal(done?.error_code, 'SCOPE_DENIED')
      assert.deepEqual(done?.steps, [{ status: 'failed' }])
      assert.deepEqual((await runs.get(workspaceId, 'trun_2'))?.input, { i: 2 })
      assert.equal((await runs.get(workspaceId, 'trun_4'))?.trigger_id, 'trg_1')

      const seen: string[] = []
      let cursor: string | undefined
      for (;;) {
        const page = await runs.list(workspaceId, 'agt_1', { limit: 2, cursor })
        seen.push(...page.runs.map((r) => r.id))
        if (!page.next) break
        cursor = page.next
      }
      assert.deepEqual(seen, ['trun_4', 'trun_3', 'trun_2', 'trun_1', 'trun_0'])
      const odd = await runs.list(workspaceId, 'agt_1', { limit: 10, toolId: 'tool_odd' })
      assert.deepEqual(
        odd.runs.map((r) => r.id),
        ['trun_3', 'trun_1'],
      )
      assert.equal((await runs.list(workspaceId, 'agt_other', { limit: 10 })).runs.length, 0)
      await store.close()
    })

    test('agent keys: listed per agent, revoked together', async () => {
      const { store, workspaceId } = await open()
      const keys = new ApiKeys(store.db)
      const k1 = await keys.create({ workspaceId, kind: 'agent', agentId: 'agt_1', name: 'one' })
      const k2 = await keys.create({ workspaceId, kind: 'agent', agentId: 'agt_1', name: 'two' })
      await keys.create({ workspaceId, kind: 'agent', agentId: 'agt_2', name: 'other' })
      assert.deepEqual((await keys.listForAgent(workspaceId, 'agt_1')).map((k) => k.name).sort(), [
        'one',
        'two',
      ])
      await keys.revoke(k1.row.id)
      assert.deepEqual(await keys.revokeForAgent(workspaceId, 'agt_1'), [k2.row.id])
      assert.ok((await keys.findByKey(k2.key))?.revoked_at)
      assert.deepEqual(await keys.revokeForAgent(workspaceId, 'agt_1'), [])
      assert.equal((await keys.listForAgent(workspaceId, 'agt_2'))[0].revoked_at, null)
      await store.close()
    })
  })
}
