// Migration 0026 (the agents that use a connection, found by index) on a database that has agents:
// each connection an agent named before is found afterwards, in that agent's workspace only, and
// what the agent names afterwards (changed, removed, the agent deleted) is what is found.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Agents } from '../../src/store/agents.ts'
import { newId, nowIso } from '../../src/store/ids.ts'
import { testDatabases } from '../helpers/databases.ts'
import { bareDatabase, migrate } from '../helpers/migrations.ts'

const { databases } = await testDatabases()
const closers: (() => Promise<void>)[] = []
after(async () => {
  for (const c of closers.reverse()) await c()
})

for (const database of databases)
  test(`agents made before the agent-connections migration are found by the connections they name (${database.name})`, async () => {
    const { db, schema, close } = await bareDatabase(database)
    closers.push(close)
    await migrate(db, schema, '0026_agent_connections')

    const at = nowIso()
    const [ws, other] = [newId('ws'), newId('ws')]
    await db
      .insertInto('workspaces')
      .values([
        { id: ws, name: 'W', created_at: at },
        { id: other, name: 'O', created_at: at },
      ])
      .execute()
    const agent = (workspace: string, name: string, connectionIds: string[]) => ({
      id: newId('agt'),
      workspace_id: workspace,
      name,
      scope: '{}',
      connection_ids: JSON.stringify(connectionIds),
      delivery: '{"type":"stream"}',
      signing_secret: 'sealed',
      created_at: at,
      updated_at: at,
    })
    const [a, b] = [newId('con'), newId('con')]
    const both = agent(ws, 'both', [a, b])
    const onlyB = agent(ws, 'only b', [b, b])
    const none = agent(ws, 'none', [])
    // Another workspace's agent naming the same id is not this workspace's.
    const elsewhere = agent(other, 'elsewhere', [a])
    // More agents than the migration reads at once.
    const many = Array.from({ length: 1_200 }, (_, i) => agent(ws, `many ${i}`, [newId('con')]))
    await db.insertInto('agents').values([both, onlyB, none, elsewhere]).execute()
    for (let i = 0; i < many.length; i += 200)
      await db
        .insertInto('agents')
        .values(many.slice(i, i + 200))
        .execute()

    await migrate(db, schema)
    const agents = new Agents(db)
    const names = async (workspace: string, connectionId: string) =>
      (await agents.list(workspace, { connectionId })).map((x) => x.name).sort()

    assert.deepEqual(await names(ws, a), ['both'])
    assert.deepEqual(await names(ws, b), ['both', 'only b'])
    assert.deepEqual(await names(other, a), ['elsewhere'])
    assert.deepEqual(await names(ws, JSON.parse(many[1_199].connection_ids)[0]), ['many 1199'])
    assert.deepEqual(await names(ws, newId('con')), [])
    // Read back as it was written: the agent's own list, in its order, is not changed.
    assert.deepEqual((await agents.get(ws, onlyB.id))?.connection_ids, [b, b])

    // After the migration, what an agent names is what is found.
    assert.equal(await agents.update(ws, both.id, { connection_ids: [b] }), true)
    assert.deepEqual(await names(ws, a), [])
    assert.deepEqual(await names(ws, b), ['both', 'only b'])
    assert.equal(await agents.update(ws, both.id, { name: 'renamed' }), true)
    assert.deepEqual(await names(ws, b), ['only b', 'renamed'])
    assert.equal(
      await agents.update(other, both.id, { connection_ids: [a] }),
      false,
      "not another workspace's",
    )
    assert.deepEqual(await names(ws, a), [])
    assert.equal(await agents.delete(ws, onlyB.id), true)
    assert.deepEqual(await names(ws, b), ['renamed'])
    const made = await agents.insert({
      workspace_id: ws,
      name: 'new',
      scope: {},
      connection_ids: [a, b],
      delivery: { type: 'stream' },
      signing_secret: 'sealed',
    })
    assert.deepEqual(await names(ws, a), ['new'])
    assert.deepEqual(await names(ws, b), ['new', 'renamed'])
    assert.deepEqual((await agents.get(ws, made.id))?.connection_ids, [a, b])
  })
