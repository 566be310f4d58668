// Migration 0024 (a disconnection remembers whose connection it was) on a database that has
// disconnections: each gets the end user its agents act for, or stays the workspace's own (null)
// when they act for the workspace or are gone; nothing else changes.
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

for (const database of databases)
  test(`disconnections made before the owner migration get the end user their agents act for (${database.name})`, async () => {
    const { db, schema, close } = await bareDatabase(database)
    closers.push(close)
    await migrate(db, schema, '0024_disconnections_owner')

    const at = nowIso()
    const ws = newId('ws')
    await db.insertInto('workspaces').values({ id: ws, name: 'W', created_at: at }).execute()
    const agent = (endUser: string | null) => ({
      id: newId('agt'),
      workspace_id: ws,
      name: `agent of ${endUser ?? 'the workspace'}`,
      scope: '{}',
      connection_ids: '[]',
      delivery: '{"type":"stream"}',
      signing_secret: 'sealed',
      created_at: at,
      updated_at: at,
      end_user_id: endUser,
    })
    const alices = agent('alice')
    const workspaces = agent(null)
    await db.insertInto('agents').values([alices, workspaces]).execute()
    const disconnection = (bindings: object) => ({
      id: newId('con'),
      workspace_id: ws,
      connector: 'taskboard',
      auth_method: 'api_key_token',
      account_id: 'acc1',
      account_name: 'demo',
      bindings: JSON.stringify({ agents: [], triggers: [], tools: [], ...bindings }),
      disconnected_at: at,
    })
    const byAgent = disconnection({ agents: [{ id: alices.id, name: alices.name }] })
    const byTool = disconnection({ tools: [{ agentId: alices.id, toolId: 'tool_1', name: 't', steps: [0] }] })
    const ownAgent = disconnection({ agents: [{ id: workspaces.id, name: workspaces.name }] })
    const gone = disconnection({ agents: [{ id: 'agt_gone', name: 'deleted since' }] })
    await db.insertInto('disconnections').values([byAgent, byTool, ownAgent, gone]).execute()

    await migrate(db, schema)
    const rows = await db.selectFrom('disconnections').select(['id', 'end_user_id', 'bindings']).execute()
    const ownerOf = new Map(rows.map((r: any) => [r.id, r.end_user_id]))
    assert.equal(ownerOf.get(byAgent.id), 'alice')
    assert.equal(ownerOf.get(byTool.id), 'alice')
    assert.equal(ownerOf.get(ownAgent.id), null)
    assert.equal(ownerOf.get(gone.id), null)
    assert.equal(rows.length, 4)
    assert.equal(rows.find((r: any) => r.id === byAgent.id)?.bindings, byAgent.bindings)
  })
