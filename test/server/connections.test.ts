// Connections over real HTTP against the sandbox task-board, on every database.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { testDatabases } from '../helpers/databases.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { mintTaskboardToken } from '../helpers/taskboard.ts'

const { databases } = await testDatabases()

for (const db of databases) {
  describe(`connections (${db.name})`, () => {
    let sandbox: TaskboardSandbox
    let t: TestService
    before(async () => {
      sandbox = await startTaskboardSandbox()
      t = await startTestService({ db, taskboard: sandbox })
    })
    after(async () => {
      await t.close()
      await sandbox.close()
    })

    const demoCredentials = () => ({ key: sandbox.demo.key, token: sandbox.demo.token })

    test('an API key plus token is checked upstream and the connection is shown under the account name', async () => {
      const res = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: demoCredentials(),
      })
      assert.equal(res.status, 201)
      assert.equal(res.body.accountName, sandbox.demo.username)
      assert.equal(res.body.status, 'active')
      assert.ok(!JSON.stringify(res.body).includes(sandbox.demo.token))
      const listed = await t.api('GET', '/v1/connections?connector=taskboard')
      assert.ok(listed.body.connections.some((c: any) => c.id === res.body.id))
      assert.ok(!JSON.stringify(listed.body).includes(sandbox.demo.token))
      const one = await t.api('GET', `/v1/connections/${res.body.id}`)
      assert.equal(one.body.accountName, sandbox.demo.username)
    })

    test('several connections per connector, each under its own account name', async () => {
      const other = await mintTaskboardToken(sandbox, { username: `second${Date.now()}` })
      const res = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: other.key, token: other.token },
      })
      assert.equal(res.status, 201)
      assert.equal(res.body.accountName, other.username)
      const names = (await t.api('GET', '/v1/connections?connector=taskboard')).body.connections.map(
        (c: any) => c.accountName,
      )
      assert.ok(names.includes(sandbox.demo.username) && names.includes(other.username))
      assert.deepEqual((await t.api('GET', '/v1/connections?connector=codehost')).body.connections, [])
    })

    test('connecting an account again reconnects its connection in place, unless a second one is asked for', async () => {
      const first = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: demoCredentials(),
      })
      const again = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: demoCredentials(),
      })
      assert.equal(again.status, 200, JSON.stringify(again.body))
      assert.equal(again.body.reconnected, true)
      assert.equal(again.body.id, first.body.id)
      const mine = (await t.api('GET', '/v1/connections?connector=taskboard')).body.connections.filter(
        (c: any) => c.accountName === sandbox.demo.username && c.authMethod === 'api_key_token',
      )
      assert.equal(mine.length, 1, 'one connection for the account')
      // It works as before.
      const run = await t.api('POST', '/v1/steps/taskboard.get_boards/run', {
        connectionId: first.body.id,
        input: {},
      })
      assert.equal(run.status, 200)

      const second = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: demoCredentials(),
        second: true,
      })
      assert.equal(second.status, 201)
      assert.equal(second.body.reconnected, false)
      assert.notEqual(second.body.id, first.body.id)
      await t.api('DELETE', `/v1/connections/${second.body.id}`)
    })

    test('credentials the identity call refuses: 400 INVALID_CREDENTIALS naming the problem, nothing stored', async () => {
      const before = (await t.api('GET', '/v1/connections')).body.connections.length
      const res = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: sandbox.demo.key, token: 'f'.repeat(64) },
      })
      assert.equal(res.status, 400)
      assert.equal(res.body.error.code, 'INVALID_CREDENTIALS')
      assert.match(res.body.error.message, /invalid token/)
      assert.ok(!JSON.stringify(res.body).includes('f'.repeat(64)))
      assert.equal((await t.api('GET', '/v1/connections')).body.connections.length, before)
    })

    test('bad connection requests name what is wrong', async () => {
      const unknown = await t.api('POST', '/v1/connections', {
        connector: 'nope',
        authMethod: 'x',
        credentials: {},
      })
      assert.equal(unknown.body.error.code, 'UNKNOWN_CONNECTOR')
      const method = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'oauth9',
        credentials: {},
      })
      assert.equal(method.body.error.code, 'UNKNOWN_AUTH_METHOD')
      const missing = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: 'k' },
      })
      assert.equal(missing.status, 400)
      assert.equal(missing.body.error.code, 'VALIDATION_FAILED')
      assert.match(missing.body.error.message, /credentials\.token/)
      const noBody = await t.api('POST', '/v1/connections', {})
      assert.equal(noBody.body.error.code, 'VALIDATION_FAILED')
      assert.match(noBody.body.error.message, /connector/)
    })

    test('the stored credentials are ciphertext: the token appears nowhere in the database', async () => {
      const rows = await t.service.engine.store.db.selectFrom('connections').selectAll().execute()
      assert.ok(rows.length > 0)
      assert.ok(!JSON.stringify(rows).includes(sandbox.demo.token))
    })

    test('an unknown connection is a 404, and disconnecting removes it', async () => {
      const missing = await t.api('GET', '/v1/connections/con_nope')
      assert.equal(missing.status, 404)
      assert.equal(missing.body.error.code, 'CONNECTION_NOT_FOUND')
      const made = await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: demoCredentials(),
      })
      assert.equal((await t.api('DELETE', `/v1/connections/${made.body.id}`)).status, 200)
      assert.equal((await t.api('GET', `/v1/connections/${made.body.id}`)).status, 404)
      assert.equal((await t.api('DELETE', `/v1/connections/${made.body.id}`)).status, 404)
    })
  })
}
