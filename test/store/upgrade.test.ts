// Upgrade without loss: a database made by the release before people and workspaces (migrations
// 0001–0009 only, rows of their shapes: a "Default workspace", an admin key, an agent with its key,
// a connection sealed in the vault, a credit budget) is opened by today's service. It is workspace
// "Default" with everything it had, the old admin key acts as its owner, the agent key as its agent,
// the sealed credentials still open, and a one-time owner-setup link lets the first person claim it.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Kysely, type Migration, Migrator } from 'kysely'
import pg from 'pg'
import { hashKey } from '../../src/store/api-keys.ts'
import { OneSchemaPostgresDialect } from '../../src/store/database.ts'
import { newId, nowIso } from '../../src/store/ids.ts'
import { nodeSqliteDialect, openSqlite } from '../../src/store/node-sqlite-dialect.ts'
import { loadVault } from '../../src/store/vault.ts'
import { type TestDatabase, testDatabases } from '../helpers/databases.ts'
import { startTestService } from '../helpers/service.ts'

const { databases } = await testDatabases()
const closers: (() => Promise<void>)[] = []
after(async () => {
  for (const c of closers.reverse()) await c()
})

/** The previous release's schema: the migrations up to 0009, run as that release ran them. */
async function previousRelease(db: Kysely<any>, schema?: string) {
  const names = [
    '0001_foundation',
    '0002_agents_tools',
    '0003_contactdata_credits',
    '0004_triggers_events',
    '0005_claimed_work',
    '0006_event_safety',
    '0007_leases',
    '0008_tool_inputs',
    '0009_step_runs_listing',
  ]
  const migrations: Record<string, Migration> = {}
  for (const n of names) migrations[n] = await import(`../../src/store/migrations/${n}.ts`)
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  }).migrateToLatest()
  if (error) throw error
}

for (const database of databases)
  test(`a database of the previous release opens as workspace "Default" with nothing lost (${database.name})`, async () => {
    const location = database.fresh()
    let db: Kysely<any>
    if (location.databaseUrl) {
      const pool = new pg.Pool({
        connectionString: location.databaseUrl,
        options: `-c search_path=${location.pgSchema}`,
      })
      await pool.query(`CREATE SCHEMA IF NOT EXISTS "${location.pgSchema}"`)
      db = new Kysely({ dialect: new OneSchemaPostgresDialect({ pool }, location.pgSchema ?? null) })
    } else db = new Kysely({ dialect: nodeSqliteDialect(openSqlite(`${location.dataDir}/patchbay.db`)) })
    await previousRelease(db, location.pgSchema)

    // The previous release's rows, in its shapes.
    const vault = loadVault({ masterKey: null, previousMasterKeys: [], dataDir: location.dataDir })
    const at = nowIso()
    const ws = newId('ws')
    const adminKey = `pb_admin_${'a'.repeat(32)}`
    const agentKey = `pb_agent_${'b'.repeat(32)}`
    const agentId = newId('agt')
    const connectionId = newId('con')
    await db.insertInto('workspaces').values({ id: ws, name: 'Default workspace', created_at: at }).execute()
    const key = (id: string, kind: string, k: string, agent: string | null) => ({
      id,
      workspace_id: ws,
      kind,
      agent_id: agent,
      name: kind,
      key_prefix: k.slice(0, 12),
      key_hash: hashKey(k),
      created_at: at,
      last_used_at: null,
      revoked_at: null,
    })
    await db
      .insertInto('api_keys')
      .values([key(newId('key'), 'admin', adminKey, null), key(newId('key'), 'agent', agentKey, agentId)])
      .execute()
    await db
      .insertInto('connections')
      .values({
        id: connectionId,
        workspace_id: ws,
        connector: 'taskboard',
        auth_method: 'api_key_token',
        account_name: 'demo',
        account_id: 'acc1',
        status: 'active',
        status_reason: null,
        secret: vault.seal({ key: 'k', token: 't' }),
        created_at: at,
        updated_at: at,
      })
      .execute()
    await db
      .insertInto('agents')
      .values({
        id: agentId,
        workspace_id: ws,
        name: 'Old agent',
        scope: JSON.stringify({ boards: [], repositories: [] }),
        connection_ids: JSON.stringify([connectionId]),
        delivery: JSON.stringify({ type: 'stream' }),
        signing_secret: vault.seal('whsec_old'),
        created_at: at,
        updated_at: at,
      })
      .execute()
    await db
      .insertInto('credit_budgets')
      .values({
        workspace_id: ws,
        agent_id: agentId,
        credit_limit: 7,
        period: 'total',
        created_at: at,
        updated_at: at,
      })
      .execute()
    const before: Record<string, number> = {}
    for (const table of ['workspaces', 'api_keys', 'connections', 'agents', 'credit_budgets'])
      before[table] = Number(
        (await db.selectFrom(table).select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n,
      )
    await db.destroy()

    // Today's service on it.
    const t = await startTestService({ db: { name: database.name, fresh: () => location } as TestDatabase })
    closers.push(() => t.close())
    const asOld = (method: string, path: string, body?: unknown) => t.api(method, path, body, adminKey)

    const workspaces = await asOld('GET', '/v1/workspaces')
    assert.equal(workspaces.status, 200, JSON.stringify(workspaces.body))
    assert.deepEqual(
      workspaces.body.workspaces.map((w: any) => [w.id, w.name, w.role]),
      [[ws, 'Default', 'owner']],
    )
    const agents = await asOld('GET', '/v1/agents')
    assert.deepEqual(
      agents.body.agents.map((a: any) => [a.id, a.name, a.connectionIds]),
      [[agentId, 'Old agent', [connectionId]]],
    )
    const conn = await asOld('GET', `/v1/connections/${connectionId}`)
    assert.equal(conn.body.accountName, 'demo')
    assert.deepEqual(await t.service.engine.connections.load(ws, connectionId).then((l) => l.credentials), {
      key: 'k',
      token: 't',
    })
    assert.equal((await asOld('GET', `/v1/credits/budgets/${agentId}`)).body.limit, 7)
    // The old agent key acts as its agent, the old admin key as an owner.
    assert.equal((await t.api('GET', `/v1/agents/${agentId}`, undefined, agentKey)).status, 200)
    assert.equal((await t.api('GET', '/v1/agents', undefined, agentKey)).status, 403)
    const ownerKey = await asOld('POST', '/v1/keys', { name: 'made by the old key', role: 'owner' })
    assert.equal(ownerKey.status, 201, JSON.stringify(ownerKey.body))
    const listed = (await asOld('GET', '/v1/keys')).body.keys
    assert.ok(listed.some((k: any) => k.prefix === adminKey.slice(0, 12) && k.role === 'owner'))

    const counts = t.service.engine.store.db
    for (const [table, n] of Object.entries(before)) {
      const now = Number(
        (
          await counts
            .selectFrom(table as 'agents')
            .select(counts.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )
      assert.ok(now >= n, `${table}: ${now} rows, ${n} before`)
    }

    // The owner-setup link: printed at start while no person owns the workspace; works once.
    assert.ok(t.service.ownerSetupToken)
    assert.ok(t.service.ownerSetupUrl?.endsWith(`#claim-owner=${t.service.ownerSetupToken}`))
    const person = newId('per')
    await counts
      .insertInto('people')
      .values({ id: person, email: 'first@example.test', name: 'First', created_at: at, updated_at: at })
      .execute()
    const workspacesService = t.service.engine.workspaces
    await assert.rejects(workspacesService.claimOwner(`${ws}.forged`, person), {
      code: 'OWNER_SETUP_INVALID',
      status: 400,
    })
    const claimed = await workspacesService.claimOwner(t.service.ownerSetupToken, person)
    assert.equal(claimed.role, 'owner')
    assert.equal((await t.service.engine.memberships.find(ws, person))?.role, 'owner')
    await assert.rejects(workspacesService.claimOwner(t.service.ownerSetupToken, newId('per')), {
      code: 'OWNER_SETUP_INVALID',
      status: 409,
    })
    assert.equal(await workspacesService.ownerSetupToken(ws), null, 'no link once someone owns it')
  })
