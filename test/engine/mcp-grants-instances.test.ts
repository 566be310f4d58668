// MCP clients' OAuth on two Patchbay instances sharing one PostgreSQL database behind one public
// address (a round-robin balancer): the authorization server's records and keys are in the store,
// so a client registered on one instance, sent to the consent page by the other and given its
// token by either, uses it on both; and a grant revoked on one instance is refused by the other at
// the next request. The OAuth flow is driven over HTTP here (the browser walk is
// test/web/mcp-oauth.test.ts). Required under CI=true; skipped with the reason without PostgreSQL.
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { loadConfig } from '../../src/config.ts'
import { type RunningService, startService } from '../../src/service.ts'
import { type Balancer, startBalancer } from '../helpers/balancer.ts'
import { POSTGRES_URL, postgresUnavailableReason, tempDir } from '../helpers/databases.ts'
import { Person } from '../helpers/person.ts'
import { LOOPBACK_EGRESS, TEST_REDIS_PREFIX } from '../helpers/service.ts'

const unavailable = await postgresUnavailableReason()
if (unavailable && process.env.CI === 'true')
  throw new Error(`${unavailable}; under CI=true PostgreSQL is required.`)
if (unavailable) console.log(`# skipping the MCP OAuth on two instances suite: ${unavailable}`)

const schema = `pb_mcpauth_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
const PASSWORD = 'correct horse battery'
const REDIRECT = 'http://127.0.0.1:9/callback'

describe('MCP OAuth on two instances', { skip: unavailable ?? false }, () => {
  let sandbox: TaskboardSandbox
  let balancer: Balancer
  let instances: RunningService[] = []
  const adminKey = `pb_admin_mcp_${Math.random().toString(36).slice(2)}`

  before(async () => {
    sandbox = await startTaskboardSandbox()
    balancer = await startBalancer([])
    const config = {
      ...loadConfig({
        PATCHBAY_REDIS_PREFIX: TEST_REDIS_PREFIX,
        PATCHBAY_PUBLIC_URL: balancer.url,
        PATCHBAY_SIGNUP: 'open',
        ...LOOPBACK_EGRESS,
      }),
      port: 0,
      host: '127.0.0.1',
      databaseUrl: POSTGRES_URL,
      dataDir: tempDir(),
      adminKey,
    }
    const options = { baseUrls: { taskboard: sandbox.url }, pgSchema: schema, logging: false }
    instances.push(await startService(config, options))
    instances.push(await startService(config, options))
    balancer.targets = instances.map((s) => s.url)
  })
  after(async () => {
    for (const s of instances.reverse()) await s.close()
    instances = []
    await balancer?.close()
    await sandbox?.close()
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await client.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`)
    await client.end()
  })

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(balancer.url + path, {
      method,
      headers: {
        authorization: `Bearer ${adminKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }

  const toolsList = (base: string, token: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })

  test('a client registered, consented and tokened across instances; revoked on one, refused on the other at once', async () => {
    const ws = instances[0].workspaceId
    const ada = new Person(balancer.url)
    assert.equal((await ada.signUp('ada@example.test', PASSWORD, 'Ada')).status, 201)
    assert.equal(
      (await admin('POST', `/v1/workspaces/${ws}/members`, { email: 'ada@example.test', role: 'member' }))
        .status,
      201,
    )
    const agent = await admin('POST', '/v1/agents', {
      name: 'Shared agent',
      scope: { boards: [sandbox.demo.boardId] },
      connectionIds: [],
      delivery: { type: 'stream' },
    })
    assert.equal(agent.status, 201, JSON.stringify(agent.body))

    let signedIn = false
    /** The OAuth flow over HTTP, as an MCP client and the consent page make it, for one agent. */
    const grantFor = async (agentId: string) => {
      // Registration (RFC 7591), then the authorization request with PKCE and the resource.
      const reg = await fetch(`${balancer.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Two-instance client',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          token_endpoint_auth_method: 'none',
        }),
      })
      assert.equal(reg.status, 201)
      const clientId = (await reg.json()).client_id as string
      const verifier = randomBytes(32).toString('base64url')
      const challenge = createHash('sha256').update(verifier).digest('base64url')
      const resource = `${balancer.url}/mcp`
      const started = await ada.api(
        'GET',
        `/oauth/authorize?${new URLSearchParams({
          client_id: clientId,
          response_type: 'code',
          redirect_uri: REDIRECT,
          scope: 'mcp',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          resource,
        })}`,
      )
      assert.equal(started.status, 303)
      const consentPath = new URL(started.headers.get('location')!, balancer.url).pathname
      assert.match(consentPath, /^\/oauth\/interaction\//)

      const page = await ada.api('GET', consentPath)
      assert.equal(page.status, 200)
      assert.equal(page.headers.get('x-frame-options'), 'DENY', 'the consent page is never framed')
      // The consent page's calls, as the page makes them: signed in, the workspace, the agent.
      assert.equal((await ada.api('GET', `${consentPath}/details`)).body.client.name, 'Two-instance client')
      if (!signedIn) assert.equal((await ada.signIn('ada@example.test', PASSWORD)).status, 200)
      signedIn = true
      ada.workspaceId = ws
      const granted = await ada.api('POST', `${consentPath}/grant`, { agentId })
      assert.equal(granted.status, 200, JSON.stringify(granted.body))
      const resumed = await ada.api('GET', new URL(granted.body.redirectTo, balancer.url).pathname)
      assert.equal(resumed.status, 303)
      const back = new URL(resumed.headers.get('location')!)
      assert.equal(back.origin + back.pathname, REDIRECT)
      const code = back.searchParams.get('code')!
      assert.ok(code, String(back))

      const token = await fetch(`${balancer.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: clientId,
          code_verifier: verifier,
          resource,
        }),
      })
      assert.equal(token.status, 200)
      const tokens = (await token.json()) as {
        access_token: string
        refresh_token: string
        token_type: string
      }
      assert.equal(tokens.token_type.toLowerCase(), 'bearer')
      return tokens
    }
    const tokens = await grantFor(agent.body.id)

    // Either instance takes the token, as the granted agent.
    for (const s of instances) assert.equal((await toolsList(s.url, tokens.access_token)).status, 200, s.url)
    // Nothing usable is stored: the token is in no column of the records, in clear.
    const db = new pg.Client({ connectionString: POSTGRES_URL })
    await db.connect()
    try {
      const rows = await db.query(`SELECT * FROM "${schema}".oauth_provider_records`)
      assert.ok(rows.rows.length > 0)
      const dump = JSON.stringify(rows.rows)
      assert.ok(
        !dump.includes(tokens.access_token) && !dump.includes(tokens.refresh_token),
        'no token stored',
      )
    } finally {
      await db.end()
    }

    // Revoked through the first instance: the second refuses the token at its next request.
    const grants = await fetch(`${instances[0].url}/v1/mcp-grants`, {
      headers: { authorization: `Bearer ${adminKey}` },
    }).then((r) => r.json())
    assert.equal(grants.grants.length, 1)
    const revoked = await fetch(`${instances[0].url}/v1/mcp-grants/${grants.grants[0].id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminKey}` },
    })
    assert.equal(revoked.status, 200)
    const refused = await toolsList(instances[1].url, tokens.access_token)
    assert.equal(refused.status, 401)
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/)

    // An agent deleted takes its grants with it: its client's token is refused, nothing is listed.
    const other = await admin('POST', '/v1/agents', {
      name: 'Short-lived agent',
      scope: { boards: [] },
      connectionIds: [],
      delivery: { type: 'stream' },
    })
    const second = await grantFor(other.body.id)
    assert.equal((await toolsList(instances[0].url, second.access_token)).status, 200)
    assert.equal((await admin('DELETE', `/v1/agents/${other.body.id}`)).status, 204)
    assert.equal((await toolsList(instances[1].url, second.access_token)).status, 401)
    assert.deepEqual((await admin('GET', '/v1/mcp-grants')).body.grants, [])
  })
})
