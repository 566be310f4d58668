// Migration 0027 (the tools that use a connection, found by index) on a database that has tools:
// each connection a tool's steps ran through before is found afterwards, in that tool's workspace
// only; what its steps name afterwards (changed, the tool or its agent deleted) is what is found.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Agents } from '../../src/store/agents.ts'
import { newId, nowIso } from '../../src/store/ids.ts'
import { Tools } from '../../src/store/tools.ts'
import { testDatabases } from '../helpers/databases.ts'
import { bareDatabase, migrate } from '../helpers/migrations.ts'

const { databases } = await testDatabases()
const closers: (() => Promise<void>)[] = []
after(async () => {
  for (const c of closers.reverse()) await c()
})

for (const database of databases)
  test(`tools made before the tool-connections migration are found by the connections their steps run through (${database.name})`, async () => {
    const { db, schema, close } = await bareDatabase(database)
    closers.push(close)
    await migrate(db, schema, '0027_tool_connections')

    const at = nowIso()
    const [ws, other] = [newId('ws'), newId('ws')]
    await db
      .insertInto('workspaces')
      .values([
        { id: ws, name: 'W', created_at: at },
        { id: other, name: 'O', created_at: at },
      ])
      .execute()
    const agentOf = (workspace: string) => ({
      id: newId('agt'),
      workspace_id: workspace,
      name: 'agent',
      scope: '{}',
      connection_ids: '[]',
      delivery: '{"type":"stream"}',
      signing_secret: 'sealed',
      created_at: at,
      updated_at: at,
    })
    const [agent, otherAgent] = [agentOf(ws), agentOf(other)]
    await db.insertInto('agents').values([agent, otherAgent]).execute()
    const step = (connectionId: string | null) => ({ stepId: 'taskboard.get_card', connectionId, input: {} })
    const tool = (a: { id: string; workspace_id: string }, name: string, steps: object[]) => ({
      id: newId('tool'),
      workspace_id: a.workspace_id,
      agent_id: a.id,
      name,
      description: '',
      steps: JSON.stringify(steps),
      created_at: at,
      updated_at: at,
    })
    const [a, b] = [newId('con'), newId('con')]
    const both = tool(agent, 'both', [step(a), step(b), step(a)])
    const onlyB = tool(agent, 'only b', [step(b)])
    // A step whose connection was disconnected names none.
    const detached = tool(agent, 'detached', [step(null)])
    const elsewhere = tool(otherAgent, 'elsewhere', [step(a)])
    const many = Array.from({ length: 1_200 }, (_, i) => tool(agent, `many ${i}`, [step(newId('con'))]))
    await db.insertInto('tools').values([both, onlyB, detached, elsewhere]).execute()
    for (let i = 0; i < many.length; i += 200)
      await db
        .insertInto('tools')
        .values(many.slice(i, i + 200))
        .execute()

    await migrate(db, schema)
    const tools = new Tools(db)
    const names = async (workspace: string, connectionId: string) =>
      (await tools.usingConnection(workspace, connectionId)).map((t) => t.name).sort()

    assert.deepEqual(await names(ws, a), ['both'])
    assert.deepEqual(await names(ws, b), ['both', 'only b'])
    assert.deepEqual(await names(other, a), ['elsewhere'])
    assert.deepEqual(await names(ws, JSON.parse(many[1_199].steps)[0].connectionId), ['many 1199'])

    // After the migration, what a tool's steps name is what is found.
    assert.equal(await tools.update(ws, agent.id, both.id, { steps: [step(b), step(null)] }), true)
    assert.deepEqual(await names(ws, a), [])
    assert.equal(await tools.update(ws, agent.id, both.id, { name: 'renamed' }), true)
    assert.deepEqual(await names(ws, b), ['only b', 'renamed'])
    assert.equal(await tools.delete(ws, agent.id, onlyB.id), true)
    assert.deepEqual(await names(ws, b), ['renamed'])
    const made = await tools.insert({
      workspace_id: ws,
      agent_id: agent.id,
      name: 'new',
      description: '',
      steps: [step(a)],
    })
    assert.deepEqual(await names(ws, a), ['new'])
    assert.deepEqual((await tools.get(ws, agent.id, made.id))?.steps, [step(a)])
    // Deleting the agent deletes its tools, and they are no longer found.
    assert.equal(await new Agents(db).delete(ws, agent.id), true)
    assert.deepEqual(await names(ws, a), [])
    assert.deepEqual(await names(ws, b), [])
    assert.deepEqual(await names(other, a), ['elsewhere'])
  })
